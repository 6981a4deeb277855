"""audio room."""
