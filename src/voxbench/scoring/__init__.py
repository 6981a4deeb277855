"""scoring room."""
