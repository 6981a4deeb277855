"""Without Pipecat installed, ``pipecat/<module:factory>`` says which extra to install."""

from __future__ import annotations

import importlib.util

import pytest

from voxbench.core.errors import ConfigError
from voxbench.targets.registry import check_target_options, resolve_target


@pytest.mark.skipif(
    importlib.util.find_spec("pipecat") is not None, reason="pipecat-ai is installed here"
)
def test_the_target_names_the_extra_to_install() -> None:
    factory = resolve_target("pipecat/mybot.pipeline:create")  # resolving needs no Pipecat
    check_target_options("pipecat/mybot.pipeline:create", {"turn_detection": "agent"})
    with pytest.raises(ConfigError) as info:
        factory()
    assert "voxbench[pipecat]" in str(info.value)
    assert info.value.field == "target"
