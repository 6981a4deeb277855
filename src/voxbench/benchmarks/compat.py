"""Compat profiles: public benchmarks' counting rules as data (``compat_profiles/*.yaml``).

``voxbench judge --compat NAME`` judges a run under the profile's scoring rules (tool-use
rules, argument matching, what the LLM judge is told) and writes a summary counted the way
that benchmark counts. The rules are read by the judges; nothing here decides a verdict.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from voxbench.core.benchmark import CompatProfile
from voxbench.core.errors import ConfigError
from voxbench.core.yamlfile import read_yaml

PROFILE_DIR = Path(__file__).parent / "compat_profiles"


def compat_names() -> tuple[str, ...]:
    """The names ``--compat`` accepts."""
    return tuple(sorted(p.stem for p in PROFILE_DIR.glob("*.yaml")))


def load_compat_profile(name: str) -> CompatProfile:
    """The profile called ``name``; a ``ConfigError`` naming ``--compat`` when there is none."""
    path = PROFILE_DIR / f"{name}.yaml"
    if name not in compat_names():
        raise ConfigError(
            f"unknown compatibility profile {name!r}",
            field="--compat",
            expected=", ".join(compat_names()),
        )
    try:
        return CompatProfile.model_validate(read_yaml(path))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(first["msg"], file=path, field=where) from exc
