"""Who is who in a shared huichat: each user's memory, and the API keys that name them."""
