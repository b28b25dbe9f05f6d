"""LLM access through litellm: provider config, streaming and tool-call assembly.

Importing this package is cheap; ``providers.llm`` (the only module importing litellm)
is loaded when a client is built.
"""
