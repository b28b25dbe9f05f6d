"""Reading other chat tools' histories into one neutral model (``huichat import``, phase one).

``iter_conversations(path)`` streams ``ImportedConversation`` objects from ChatGPT, Claude and
DeepSeek exports, simonw/llm and elia databases, chat JSONL and huichat transcripts; the
format is told by shape. ``group_turns`` cuts a visible branch into huichat turns and
``summarise`` counts what a dry run would import. Pure Python: no textual, no litellm.
"""
