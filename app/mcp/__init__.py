"""The MCP face: memory for MCP hosts over stdio."""
