"""analysis room."""
