"""The memory kernel: turns, transcripts, the LanceDB index, embedding and retrieval.

Plain synchronous Python; never imports textual or litellm. Heavy modules (lancedb,
sentence-transformers) load only when the store or an embedder is built.
"""
