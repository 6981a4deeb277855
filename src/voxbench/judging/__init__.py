"""judging room."""
