"""tasks room."""
