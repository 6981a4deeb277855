"""Speech-to-speech (realtime) targets: provider websocket protocols mapped onto ``Session``.

Each provider has its own package: ``events.py`` holds the wire models (shared with the
fake server in ``voxbench.testing``) and ``session.py`` maps them onto Session events.
``base.py`` holds what every realtime adapter shares (connection lifecycle, event queue,
drop handling); ``providers.py`` registers the providers with the target registry.
"""
