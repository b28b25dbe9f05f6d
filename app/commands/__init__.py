"""Commands that manage what the service faces use (API keys), one module per command."""
