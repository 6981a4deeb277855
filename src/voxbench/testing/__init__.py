"""testing room."""
