"""Giving memory back out in open formats (``huichat export``): Markdown, JSONL and ChatGPT's.

Read from the transcripts and import records — the source of truth — never from the index.
"""
