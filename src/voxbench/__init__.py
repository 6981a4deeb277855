"""voxbench: evaluate voice AI systems."""

__version__ = "0.1.0"
