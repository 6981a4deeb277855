"""Scale: repeats, evaluation matrices and the executors that run their cells (local, Ray)."""
