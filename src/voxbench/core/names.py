"""The one parser of component names (``provider/model`` for targets, judges, ASR and TTS) and
the one resolved identity of a model (``ModelSpec``).

A name splits at its first separator: ``/`` (the canonical spelling) or ``:`` (accepted as
an alias). Provider names never hold either, so the model part keeps every later ``/``,
``:`` and ``.``: ``bedrock/anthropic.claude-3-5-haiku-20241022-v1:0``, ``ollama/llama3.2:3b``,
``openrouter/meta-llama/llama-3.1-8b-instruct``, ``ollama:llama3.2:3b``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit, urlunsplit

from pydantic import AfterValidator, BaseModel, ConfigDict
from pydantic_core import PydanticCustomError

from voxbench.core.errors import ConfigError

_PROVIDER = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")

_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,127}")
SAFE_NAME_EXPECTED = (
    "a name, not a path: letters, digits, '.', '_', '+' and '-', starting with a letter or "
    "digit, at most 128 characters"
)
_WINDOWS_DEVICES = frozenset(
    {"con", "prn", "aux", "nul"}
    | {f"com{i}" for i in range(1, 10)}
    | {f"lpt{i}" for i in range(1, 10)}
)


def name_problem(text: object) -> str | None:
    """Why ``text`` cannot be a user-given name that becomes one path part, or None.

    Benchmark ids, task and model names, matrix labels and run names become directory and
    file names; a name with a separator (``/``, ``\\``, ``:``), a leading ``.`` (``..``) or
    an absolute spelling (``/tmp/x``, ``C:\\x``) would write outside the runs directory.
    """
    if not isinstance(text, str):
        return f"{text!r} is not a string"
    if not _SAFE_NAME.fullmatch(text):
        return f"{text!r} is not a name"
    if text.split(".")[0].lower() in _WINDOWS_DEVICES:
        return f"{text!r} is a reserved device name on Windows"
    return None


def safe_name(text: object, *, field: str = "name", file: str | Path | None = None) -> str:
    """``text`` when it is a name that can be one path part; else a ``ConfigError`` naming
    ``file`` and ``field``."""
    problem = name_problem(text)
    if problem is not None:
        raise ConfigError(problem, file=file, field=field, expected=SAFE_NAME_EXPECTED)
    assert isinstance(text, str)
    return text


def _checked_name(text: str) -> str:
    problem = name_problem(text)
    if problem is not None:
        raise PydanticCustomError(
            "safe_name",
            "{problem} (expected {expected})",
            {"problem": problem, "expected": SAFE_NAME_EXPECTED},
        )
    return text


SafeName = Annotated[str, AfterValidator(_checked_name)]
"""A pydantic field that holds a name which becomes a path part (see ``name_problem``)."""


def child_path(root: Path, *names: str, field: str = "name") -> Path:
    """``root / name / …`` with each name checked by ``safe_name``, and the result checked to
    lie under ``root`` (the last guard before anything is written).

    The check is on the spelling, not on resolved symlinks: a runs directory whose
    benchmark folder is a link the user made elsewhere stays theirs to make."""
    path = root
    for name in names:
        path = path / safe_name(name, field=field)
    base = Path(os.path.normpath(os.path.abspath(root)))
    joined = Path(os.path.normpath(os.path.abspath(path)))
    if joined != base and base not in joined.parents:
        raise ConfigError(f"{path} lies outside {root}", field=field, expected=SAFE_NAME_EXPECTED)
    return path


@dataclass(frozen=True)
class ComponentName:
    """A component named ``provider/model``; ``model`` is empty for a bare provider name."""

    provider: str
    model: str

    def __str__(self) -> str:
        return f"{self.provider}/{self.model}" if self.model else self.provider


def parse_component_name(
    text: str, *, field: str = "name", allow_bare: bool = False
) -> ComponentName:
    """``provider/model`` (or ``provider:model``) → ``ComponentName``.

    ``allow_bare`` accepts a name without a model (``openai``: the provider's default
    model); otherwise that is a ``ConfigError`` naming ``field``, as is an empty part.
    """
    name = text.strip() if isinstance(text, str) else ""
    cuts = [i for i in (name.find("/"), name.find(":")) if i >= 0]
    if cuts:
        cut = min(cuts)
        provider, model = name[:cut], name[cut + 1 :]
    else:
        provider, model = name, ""
    if not _PROVIDER.fullmatch(provider) or (not model and (cuts or not allow_bare)):
        raise ConfigError(
            f"{text!r} is not a component name",
            field=field,
            expected="provider/model, e.g. openai/gpt-4o-mini or local/espeak",
        )
    return ComponentName(provider, model)


class ModelSpec(BaseModel):
    """A model resolved once: the identity every run kind stores and every reader shows.

    ``name`` is the canonical ``provider/model`` (``provider:model`` becomes ``/``); ``label``
    is the user's own name for this configuration when it says more than the model part
    (``gpt-4o-t0`` for ``openai/gpt-4o`` at temperature 0): the two are different rows on a
    leaderboard. A label that only repeats the model (``oracle`` for ``local/oracle``) is
    dropped, so the oracle of a task run and of a conversation run are one model.
    """

    model_config = ConfigDict(frozen=True)

    name: str
    role: str
    """What the model does in the run: ``target``, ``task model``, ``judge``, ``asr``, ``tts``."""
    label: str | None = None
    endpoints: tuple[str, ...] = ()
    """Base URLs it was reached at (never credentials); empty for the provider's default."""

    @property
    def identity(self) -> str:
        """``provider/model``, or ``provider/model (label)`` for a named configuration."""
        return self.name if self.label is None else f"{self.name} ({self.label})"

    @classmethod
    def from_name(
        cls,
        text: str,
        *,
        role: str,
        label: str | None = None,
        endpoints: tuple[str, ...] | list[str] = (),
    ) -> ModelSpec:
        """The spec of ``text`` (``provider/model``); a name that does not parse is kept as
        given (an old run's free-form target name is still a name)."""
        try:
            parsed = parse_component_name(text, allow_bare=True)
        except ConfigError:
            name = text.strip()
            model_part = name
        else:
            name, model_part = str(parsed), parsed.model
        kept = (label or "").strip()
        redundant = kept in ("", name, model_part, text.strip())
        return cls(
            name=name,
            role=role,
            label=None if redundant else kept,
            endpoints=tuple(_public_url(url) for url in endpoints if url),
        )


def _public_url(url: str) -> str:
    """``url`` without what may be a credential: user info, query and fragment."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", "")) if parts.scheme else url
