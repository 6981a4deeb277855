"""The realtime adapters' fixtures (``smoke``) serve the agent targets too."""

from tests.targets.realtime.conftest import smoke  # noqa: F401
