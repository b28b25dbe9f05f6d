"""The scripted OpenAI-compatible server, where the tests have always imported it from.

It lives in ``app/bench/fakellm.py`` because ``huichat bench loop`` runs it too.
"""

from app.bench.fakellm import (
    STREAMING_TOOLS_UNSUPPORTED,
    TEXT_FORMS,
    FakeLLM,
    Reply,
    Responder,
    ToolCall,
    print_call,
)

__all__ = ["STREAMING_TOOLS_UNSUPPORTED", "TEXT_FORMS", "FakeLLM", "Reply", "Responder", "ToolCall", "print_call"]
