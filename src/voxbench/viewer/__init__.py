"""The local web viewer (``voxbench view``): leaderboard, run explorer, compare, artifacts."""

from voxbench.viewer.app import create_app, serve

__all__ = ["create_app", "serve"]
