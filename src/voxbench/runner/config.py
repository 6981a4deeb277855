"""``RunConfig``: the one object that says what to run. The CLI builds it; the API takes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from voxbench.core.errors import ConfigError
from voxbench.core.yamlfile import read_yaml

DEFAULT_RUNS_DIR = Path("runs")
"""Where run directories go unless told otherwise (relative to the working directory)."""


class RunConfig(BaseModel):
    """Everything a conversation run needs; unknown keys are rejected."""

    model_config = ConfigDict(extra="forbid")

    benchmark: str
    """A built-in benchmark name or a benchmark directory."""
    target: str = "local/oracle"
    base_url: str | None = None
    target_options: dict[str, Any] = Field(default_factory=dict)
    mode: Literal["text", "audio"] = "text"
    only_turns: list[int] | None = None
    """Turn positions to run (0-based); None runs every turn."""
    runs_dir: Path = DEFAULT_RUNS_DIR
    turn_timeout: float = Field(default=120.0, gt=0)
    """Seconds a turn may take before it is recorded as failed (wall seconds from the user's
    end; on a virtual clock also the only limit on an answer that has not begun)."""
    max_tool_calls_per_turn: int = Field(default=16, ge=1)
    max_retries: int = Field(default=3, ge=0)
    seed: int = 0
    harness: Literal["benchmark", "voxbench"] = "benchmark"
    """``benchmark``: the harness the benchmark declares (an imported one reproduces its
    upstream's: nudges, ``duplicate_skipped``, canned-result order); ``voxbench``: voxbench's
    own rules whatever the benchmark declares."""
    harness_options: dict[str, Any] = Field(default_factory=dict)
    """Single harness options over that (``HarnessOptions`` keys, e.g. ``nudge: false``)."""
    # -- audio mode -------------------------------------------------------------------
    chunk_ms: int = Field(default=20, gt=0, le=1000)
    """User audio is streamed in chunks of this many milliseconds, in real time."""
    no_response_timeout: float = Field(default=15.0, gt=0)
    """Seconds after the user's turn without any agent output before it is a no-response (on
    a real clock: a virtual clock stands still while an in-process target computes, so a
    slow host never makes a no-response; it waits ``turn_timeout`` wall seconds instead)."""
    inter_turn_gap: float = Field(default=0.8, ge=0)
    """Silence between the end of the agent's playback and the next user turn."""
    clock: Literal["auto", "real", "virtual"] = "auto"
    """``auto``: virtual time for in-process targets (faster than real time, and standing
    still while they compute), real otherwise."""
    user_tts: str = "local/espeak"
    """Voice of the user for turns that ship no audio (synthesized once and cached)."""
    user_voice: str | None = None
    """The simulated user's voice (``local/espeak``: an eSpeak NG voice, or ``VOICE@WPM`` at its
    own speaking rate, e.g. ``en-gb-scotland@140``: accents and paces)."""
    stt: str | None = None
    """Cascade speech recognition for text targets in audio mode (default local/whisper-tiny.en;
    the oracle needs none)."""
    tts: str | None = None
    """Cascade speech synthesis for text targets in audio mode (default local/espeak)."""
    tags: Literal["off", "track", "mix"] = "off"
    """Marker tones where each answer starts playing: on their own ``tags.wav`` (``track``),
    mixed into the agent channel like the public turn-metrics method (``mix``), or none."""
    heard_asr: str | None = "local/whisper-tiny.en"
    """Transcribes the agent channel (what the agent was heard to say); ``none`` disables."""
    perturb: str | None = None
    """Perturbations of the user's audio the target hears (``voxbench.audio.perturb`` spec,
    e.g. ``noise:pink@10dB+codec:mulaw+loss:5%``; a config may say ``perturbations:`` and give
    a list of steps), kept in its canonical spelling; seeded by ``seed`` and the turn id. Audio
    mode only. The recording keeps the clean user channel."""

    @model_validator(mode="before")
    @classmethod
    def _perturbations_key(cls, data: Any) -> Any:
        # ``perturbations:`` (the config key, a string or a list) is ``perturb``.
        if isinstance(data, dict) and "perturbations" in data:
            data = dict(data)
            value = data.pop("perturbations")
            if value is not None:
                if data.get("perturb") is not None:
                    raise ConfigError(
                        "both perturb and perturbations given",
                        field="perturbations",
                        expected="one of them",
                    )
                data["perturb"] = value
        return data

    @field_validator("perturb", mode="before")
    @classmethod
    def _canonical_perturbations(cls, v: Any) -> Any:
        return None if v is None else canonical_perturbations(v)

    @model_validator(mode="after")
    def _perturb_needs_audio(self) -> RunConfig:
        if self.perturb is not None and self.mode != "audio":
            raise ConfigError(
                f"perturbations {self.perturb!r} need audio mode",
                field="perturb",
                expected="mode: audio (--mode audio)",
            )
        return self

    @field_validator("only_turns", mode="before")
    @classmethod
    def _parse_turns(cls, v: Any) -> Any:
        return parse_turn_selection(v) if isinstance(v, str) else v

    @field_validator("only_turns")
    @classmethod
    def _some_turns(cls, v: list[int] | None) -> list[int] | None:
        if v is not None and (not v or min(v) < 0):
            # An empty selection would run nothing and still report success.
            raise ConfigError(
                "selects no turn" if not v else "negative turn position",
                field="only_turns",
                expected="turn positions like 0,3-5",
            )
        return v

    @field_validator("harness_options")
    @classmethod
    def _known_harness_options(cls, v: dict[str, Any]) -> dict[str, Any]:
        from voxbench.benchmarks.backend import HarnessOptions

        try:
            HarnessOptions.model_validate(v)
        except ValidationError as exc:
            err = exc.errors()[0]
            key = ".".join(str(p) for p in err["loc"])
            known = ", ".join(HarnessOptions.model_fields)
            raise ConfigError(
                "unknown harness option" if err["type"] == "extra_forbidden" else err["msg"],
                field=f"harness_options.{key}",
                expected=known if err["type"] == "extra_forbidden" else None,
            ) from None
        return v

    @classmethod
    def from_file(cls, path: str | Path, **overrides: Any) -> RunConfig:
        """Load a YAML run config; non-None ``overrides`` (CLI flags) win."""
        p = Path(path)
        data = read_yaml(p, what="run config YAML") or {}
        if not isinstance(data, dict):
            raise ConfigError("wrong shape", file=p, expected="a mapping of run settings")
        data.update({k: v for k, v in overrides.items() if v is not None})
        if overrides.get("perturb") is not None:
            data.pop("perturbations", None)  # --perturb wins over the file's list
        return build_config(data, source=p)


def canonical_perturbations(spec: Any) -> str | None:
    """A perturbation spec (a string or a list of steps) in its canonical spelling; None for
    none (``none``, ``clean``, empty). A bad step is a ``ConfigError`` naming it."""
    from voxbench.audio.perturb import parse_perturbations  # numpy: only when asked

    chain = parse_perturbations(spec)
    return str(chain) if chain else None


def build_config(data: dict[str, Any], source: str | Path | None = None) -> RunConfig:
    """Validate ``data`` into a RunConfig, naming the offending key on error.

    ``target_options`` are checked against what the chosen target accepts, so a misspelt
    option is an error instead of a setting silently ignored."""
    try:
        config = RunConfig.model_validate(data)
        if config.target_options:
            from voxbench.targets.registry import check_target_options

            check_target_options(config.target, config.target_options)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        message = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
        expected = ", ".join(RunConfig.model_fields) if err["type"] == "extra_forbidden" else None
        raise ConfigError(message, file=source, field=field, expected=expected) from None
    except ConfigError as exc:
        # Validators raise ConfigError (pydantic passes it through): add the file it came from.
        if exc.file is not None or source is None:
            raise
        raise ConfigError(exc.detail, file=source, field=exc.field, expected=exc.expected) from None
    return config


def split_harness_options(options: dict[str, Any]) -> dict[str, Any]:
    """Take the harness settings out of ``-o KEY=VALUE`` options (the rest are the target's).

    ``harness=voxbench`` (or ``benchmark``) picks the harness; ``harness.KEY=VALUE`` sets one
    of its options. Returns the RunConfig fields they make (empty when none was given)."""
    fields: dict[str, Any] = {}
    for key in [k for k in options if k == "harness" or k.startswith("harness.")]:
        value = options.pop(key)
        if key == "harness":
            fields["harness"] = value
        else:
            fields.setdefault("harness_options", {})[key.removeprefix("harness.")] = value
    return fields


def check_turns_exist(config: RunConfig, turn_count: int) -> None:
    """Refuse an ``only_turns`` that names a turn the benchmark does not have."""
    if config.only_turns is None:
        return
    missing = [i for i in config.only_turns if i >= turn_count]
    if missing:
        raise ConfigError(
            f"no turn {', '.join(map(str, missing))} in benchmark {config.benchmark!r}",
            field="only_turns",
            expected=f"turn positions 0-{turn_count - 1}",
        )


def parse_turn_selection(spec: str) -> list[int]:
    """``"0,3-5"`` → ``[0, 3, 4, 5]``."""
    out: set[int] = set()
    for part in spec.replace(" ", "").split(","):
        if not part:
            continue
        try:
            if "-" in part:
                lo, hi = (int(x) for x in part.split("-", 1))
                if hi < lo:
                    raise ValueError
                out.update(range(lo, hi + 1))
            else:
                out.add(int(part))
        except ValueError:
            raise ConfigError(
                f"bad turn selection {part!r}",
                field="only_turns",
                expected="numbers and ranges like 0,3-5",
            ) from None
    if not out:
        raise ConfigError(
            f"selects no turn: {spec!r}",
            field="only_turns",
            expected="numbers and ranges like 0,3-5",
        )
    return sorted(out)
