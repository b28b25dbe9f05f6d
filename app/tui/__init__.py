"""The terminal UI: the Textual app, its screens and widgets, and its gateway to memory and the LLM."""
