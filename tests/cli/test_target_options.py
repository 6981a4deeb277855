"""``KNOWN_TARGET_OPTIONS`` stays true to the option keys the built-in targets read."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import voxbench
from voxbench.core.errors import ConfigError
from voxbench.providers import registry as one_registry
from voxbench.targets import anthropic, gemini, openai_chat
from voxbench.targets.registry import (
    KNOWN_TARGET_OPTIONS,
    TargetProvider,
    check_target_options,
    providers,
    register_provider,
)

TARGETS_DIR = Path(voxbench.__file__).parent / "targets"
# ``options.get("key"`` and ``options["key"]``, however the options object is named.
_READ = re.compile(r"options(?:\.get\(|\[)\s*\"([a-z_]+)\"")


def test_every_option_a_target_reads_is_known() -> None:
    read = {m for f in TARGETS_DIR.rglob("*.py") for m in _READ.findall(f.read_text())}
    passed_through = (
        set(anthropic.PASSTHROUGH_OPTIONS)
        | set(openai_chat.PASSTHROUGH_OPTIONS)
        | set(gemini.GENERATION_OPTIONS)
    )
    assert read, "the pattern no longer finds option reads: update it"
    assert (read | passed_through) - KNOWN_TARGET_OPTIONS == set()


def test_a_provider_that_declares_its_options_accepts_only_those(monkeypatch) -> None:
    providers()  # every built-in registered first: the copy below keeps them
    monkeypatch.setattr(one_registry, "_PROVIDERS", dict(one_registry._PROVIDERS))
    register_provider(
        TargetProvider(
            name="declared-options-test",
            factory=lambda context: None,  # type: ignore[arg-type,return-value]
            description="a provider that declares its options",
            kind="local",
            default_model="m",
            options=frozenset({"speed"}),
        )
    )
    check_target_options("declared-options-test/m", {"speed": 2})
    with pytest.raises(ConfigError) as err:
        check_target_options("declared-options-test/m", {"temperature": 0.2})
    assert err.value.field == "target_options.temperature" and "speed" in str(err.value)


def test_a_users_own_session_class_takes_any_option() -> None:
    check_target_options("tests.fullduplex.tone_session:ToneSession", {"delay": 0.05})
