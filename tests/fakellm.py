"""The scripted OpenAI-compatible server, where the tests have always imported it from.

It lives in ``benchmarks/fakellm.py`` because ``huichat bench loop`` runs it too.
"""

from benchmarks.fakellm import (
    STREAMING_TOOLS_UNSUPPORTED,
    TEXT_FORMS,
    FakeLLM,
    Reply,
    Responder,
    ToolCall,
    print_call,
)

__all__ = ["STREAMING_TOOLS_UNSUPPORTED", "TEXT_FORMS", "FakeLLM", "Reply", "Responder", "ToolCall", "print_call"]
