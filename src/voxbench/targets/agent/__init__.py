"""Targets for a team's own voice agent: the voxbench agent protocol over a websocket."""
