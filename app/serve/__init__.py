"""``huichat serve``: the HTTP face — OpenAI-compatible chat with memory, the memory API, the dashboard.

One module per concern: ``command`` (the CLI command), ``app`` (the factory), ``auth`` and
``ratelimit`` (who may ask, how often), ``bodylimit``, ``conversations`` (which session a
request continues), ``chat`` and ``memory_api`` (the routes), ``transcripts`` (reading files
safely), ``dashboard``, ``jobs``.
"""
