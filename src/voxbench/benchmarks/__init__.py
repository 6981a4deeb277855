"""benchmarks room."""
