"""The realtime adapters' fixtures (``smoke``) serve the tool-server tests too."""

from tests.targets.realtime.conftest import smoke  # noqa: F401
