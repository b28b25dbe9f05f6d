"""The chat screen: transcript, prompt, memory panel and status — it owns the conversation.

It is built in layers, one concern a module, each a screen class extending the one before:
``base`` (state and children), ``provider`` (which model answers, and what is missing),
``sessions`` (open, continue, start, export), ``memory`` (loading, catch-up, the panel),
``reply`` (sending, streaming, stop and retry) and ``screen`` (keys, layout, focus).
"""

from huichat.app.tui.screens.chat.base import MemorySynced
from huichat.app.tui.screens.chat.screen import ChatScreen

__all__ = ["ChatScreen", "MemorySynced"]
