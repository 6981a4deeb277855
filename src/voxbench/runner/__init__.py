"""runner room."""
