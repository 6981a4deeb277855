"""fdb_bench's model-dir flags (``--stt parakeet``, ``--tts kokoro``, ``--models-dir``) have no
voxbench equivalent: the README says what to pass instead (issue 30 item 9). Every engine it
names must be a registered ASR/TTS engine, and ``fdb run`` must take the flags it names."""

from __future__ import annotations

import re
from pathlib import Path

from voxbench.providers.registry import Role, providers_for, resolve_name

README = Path(__file__).resolve().parents[2] / "README.md"


def _section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("**Coming from fdb_bench.**")
    return text[start : text.index("\n## ", start)]


def test_the_readme_says_what_replaces_each_fdb_bench_flag() -> None:
    section = _section()
    rows = {
        m.group(1): m.group(2)
        for m in re.finditer(r"^\| `(--[a-z-]+[^`]*)` \| (.+) \|$", section, re.M)
    }
    assert set(rows) == {"--stt parakeet", "--tts kokoro", "--models-dir DIR"}
    for flag, role in (("--stt", Role.ASR), ("--tts", Role.TTS)):
        named = re.findall(rf"`{flag} ([a-z0-9-]+/[A-Za-z0-9._-]+)[` ]", section)
        assert named, flag
        for engine in named:
            resolve_name(engine, role, field=flag)  # raises for an unknown provider
            provider, model = engine.split("/", 1)
            models = {p.name: p.roles[role].models for p in providers_for(role)}[provider]
            assert model in models, (engine, models)  # a model the engine has
    assert "--vad-model FILE" in rows["--models-dir DIR"]


def test_fdb_run_takes_the_flags_and_options_the_readme_names() -> None:
    from voxbench.cli import fdb
    from voxbench.targets import cascade

    text = Path(fdb.__file__).read_text(encoding="utf-8")
    for flag in ('"--stt"', '"--tts"', '"--vad-model"', '"--option"'):
        assert flag in text, flag
    options = re.findall(r"-o ([a-z_]+)=", _section())
    assert set(options) == {"stt_base_url", "tts_base_url"}
    source = Path(cascade.__file__).read_text(encoding="utf-8")
    assert all(f'"{option}"' in source for option in options)  # the cascade's own options
