"""The faces of huichat (the TUI, the CLI, ``serve``, ``mcp``), the conversation loop they share, and the wiring."""
