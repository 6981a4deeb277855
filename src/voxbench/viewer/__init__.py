"""The local web viewer (``voxbench view``): leaderboard, run explorer, compare, artifacts.

The app lives in ``voxbench.viewer.app`` (``create_app``, ``serve``); importing this package
alone loads no web stack, so the CLI starts fast.
"""

LOOPBACK = "127.0.0.1"
"""Where the viewer listens unless told otherwise: this machine only."""
