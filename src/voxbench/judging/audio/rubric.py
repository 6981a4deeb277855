"""Audio rubrics: the YAML schema, the built-in rubrics, parameters and the rubric hash.

A rubric names one or several criteria (each with a scale, default 1–5, and the score from
which a clip passes), the context the judge needs (free text, tables allowed), the
evaluation steps — written out, or ``generate_steps: true`` to have the judge model write
them once from the criteria (stored by the rubric's hash, see ``steps``) — the channels it
hears (``scope: agent`` or ``both``), whether a run is judged per agent turn or whole, how
the scores of a recording split on silences combine (``mean`` or ``min``), and the form the
answer takes.

``{name}`` placeholders in the text fields are filled from ``parameters`` (defaults in the
rubric, values from ``-o name=value``); an unknown or missing one is an error naming it.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import string
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from voxbench.core.errors import ConfigError
from voxbench.core.yamlfile import parse_yaml, read_text_file

BUILTIN_PACKAGE = "voxbench.judging.audio"
BUILTIN_FOLDER = "rubrics"
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


class Parameter(BaseModel):
    """A ``{placeholder}`` of the rubric's text: what it means, and its default."""

    model_config = ConfigDict(extra="forbid")

    description: str = ""
    default: str | None = None
    """None: the user must give it (``-o name=value``)."""


class Criterion(BaseModel):
    """One quality the judge scores."""

    model_config = ConfigDict(extra="forbid")

    name: str
    """Lower-case identifier (it names the scorecard dimension ``audio_<name>``)."""
    description: str
    """What a high and a low score mean."""
    scale: tuple[int, int] = (1, 5)
    pass_at: int | None = None
    """The lowest passing score; default: the top 40% of the scale (4 on 1–5)."""

    @field_validator("name")
    @classmethod
    def _identifier(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError("a lower-case identifier (letters, digits, _), e.g. accent")
        return value

    @model_validator(mode="after")
    def _scale_and_pass(self) -> Criterion:
        low, high = self.scale
        if low >= high:
            raise ValueError(f"scale {list(self.scale)}: the first number must be below the second")
        if self.pass_at is None:
            self.pass_at = min(high, low + math.ceil(0.6 * (high - low)))
        if not low <= self.pass_at <= high:
            raise ValueError(f"pass_at {self.pass_at} is outside the scale {list(self.scale)}")
        return self

    @property
    def low(self) -> int:
        return self.scale[0]

    @property
    def high(self) -> int:
        return self.scale[1]

    @property
    def dimension(self) -> str:
        """The scorecard dimension of this criterion."""
        return f"audio_{self.name}"


class Rubric(BaseModel):
    """A rubric as its YAML file gives it (placeholders not yet filled)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str
    """The task introduction: what the judge listens for."""
    criteria: list[Criterion] = Field(min_length=1)
    context: str = ""
    steps: list[str] = Field(default_factory=list)
    generate_steps: bool = False
    scope: Literal["agent", "both"] = "agent"
    """``agent``: the judge hears only the agent's channel of a conversation (the people
    who called are not sent to a third party); ``both``: both channels, mixed."""
    segments: Literal["per_turn", "whole"] = "per_turn"
    """Judge a run's agent turns one by one, or the whole recording at once."""
    combine: Literal["mean", "min"] = "mean"
    """How the scores of a recording split on silences (longer than the judge's input
    limit) combine into one."""
    needs_transcript: bool = False
    """The judge compares the audio with a transcript (the agent's text in a run; the
    ``.txt`` beside a wav file)."""
    form: Literal["lines", "json"] = "lines"
    """``lines``: ``- Criterion (1-5): score - explanation`` per criterion (the seed's
    form); ``json``: one JSON object."""
    parameters: dict[str, Parameter] = Field(default_factory=dict)

    @field_validator("name")
    @classmethod
    def _rubric_name(cls, value: str) -> str:
        if not re.match(r"^[a-z][a-z0-9_-]*$", value):
            raise ValueError("a lower-case name (letters, digits, - and _)")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Rubric:
        problems = _whole_rubric_problems(
            [c.name for c in self.criteria],
            bool(self.steps),
            self.generate_steps,
            self.texts(),
            set(self.parameters),
        )
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def texts(self) -> list[str]:
        """Every text field that may hold ``{placeholders}``."""
        out = [self.description, self.context, *self.steps]
        for c in self.criteria:
            out.append(c.description)
        return out

    def placeholders(self) -> set[str]:
        """The ``{names}`` used in the text fields."""
        return _placeholders(self.texts())

    def bind(self, values: dict[str, str] | None = None, *, field: str = "-o") -> BoundRubric:
        """The rubric with its placeholders filled: defaults, then ``values``."""
        values = dict(values or {})
        unknown = sorted(set(values) - set(self.parameters))
        if unknown:
            known = ", ".join(sorted(self.parameters)) or "none"
            raise ConfigError(
                f"rubric {self.name!r} has no parameter {unknown[0]!r}",
                field=field,
                expected=f"one of its parameters: {known}",
            )
        filled: dict[str, str] = {}
        for name, spec in self.parameters.items():
            value = values.get(name, spec.default)
            if value is None:
                raise ConfigError(
                    f"rubric {self.name!r} needs a value for {name!r}"
                    + (f" ({spec.description})" if spec.description else ""),
                    field=field,
                    expected=f"-o {name}=VALUE",
                )
            filled[name] = value

        def fill(text: str) -> str:
            return _fill(text, filled)

        criteria = [
            c.model_copy(update={"description": fill(c.description)}) for c in self.criteria
        ]
        rubric = self.model_copy(
            update={
                "description": fill(self.description),
                "context": fill(self.context),
                "steps": [fill(s) for s in self.steps],
                "criteria": criteria,
            }
        )
        return BoundRubric(rubric=rubric, values=filled)


def _placeholders(texts: list[str]) -> set[str]:
    found: set[str] = set()
    for text in texts:
        for _, name, _, _ in string.Formatter().parse(text):
            if name:
                found.add(name)
    return found


def _whole_rubric_problems(
    names: list[str], steps: bool, generate_steps: bool, texts: list[str], parameters: set[str]
) -> list[str]:
    """What is wrong with the rubric as a whole (each problem, not only the first)."""
    problems: list[str] = []
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        problems.append(f"criteria named twice: {', '.join(twice)}")
    if steps and generate_steps:
        problems.append("give steps or generate_steps: true, not both")
    if not steps and not generate_steps:
        problems.append("no evaluation steps: give steps, or generate_steps: true")
    try:
        unknown = sorted(_placeholders(texts) - parameters)
    except ValueError as exc:
        problems.append(f"a text field has a malformed {{placeholder}}: {exc}")
        unknown = []
    if unknown:
        problems.append(
            "placeholders without a parameter: "
            + ", ".join("{" + u + "}" for u in unknown)
            + " (declare them under parameters:)"
        )
    return problems


def _raw_whole_rubric_problems(data: dict[str, Any]) -> list[str]:
    """``_whole_rubric_problems`` on the raw mapping, for a rubric whose fields failed too
    (pydantic skips the whole-model check then)."""
    raw_criteria = data.get("criteria")
    criteria = raw_criteria if isinstance(raw_criteria, list) else []
    items = [c for c in criteria if isinstance(c, dict)]
    names = [str(c.get("name")) for c in items if c.get("name") is not None]
    steps = data.get("steps")
    step_texts = [str(t) for t in steps] if isinstance(steps, list) else []
    texts = [str(data.get("description") or ""), str(data.get("context") or ""), *step_texts]
    texts += [str(c.get("description") or "") for c in items]
    parameters = data.get("parameters")
    return _whole_rubric_problems(
        names,
        bool(steps),
        data.get("generate_steps") is True,
        texts,
        set(parameters) if isinstance(parameters, dict) else set(),
    )


def _fill(text: str, values: dict[str, str]) -> str:
    # Only {name} placeholders are filled; other braces (tables, JSON) stay as written.
    return re.sub(
        r"\{([a-z_][a-z0-9_]*)\}",
        lambda m: values.get(m.group(1), m.group(0)),
        text,
    )


class BoundRubric(BaseModel):
    """A rubric with its parameters filled: what a judge is asked with."""

    rubric: Rubric
    values: dict[str, str] = Field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.rubric.name

    @property
    def criteria(self) -> list[Criterion]:
        return self.rubric.criteria

    def digest(self) -> str:
        """SHA-256 (hex, 16 chars) of everything that decides the judgment: the filled text,
        the scales, the form. Generated steps are stored under it; judgments are cached by it."""
        data = self.rubric.model_dump(mode="json", exclude={"parameters"})
        text = json.dumps(data, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    def criterion(self, name: str) -> Criterion:
        return next(c for c in self.criteria if c.name == name)


def builtin_rubric_names() -> list[str]:
    """The names of the built-in rubrics."""
    folder = resources.files(BUILTIN_PACKAGE) / BUILTIN_FOLDER
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".yaml"))


def parse_rubric(text: str, *, source: str | Path) -> Rubric:
    """A rubric from YAML text; every problem is a ``ConfigError`` naming the file and field."""
    data = parse_yaml(text, source=source, what="rubric YAML")
    if not isinstance(data, dict):
        raise ConfigError("a rubric is a YAML mapping", file=source, expected="name:, criteria:, …")
    try:
        return Rubric.model_validate(data)
    except ValidationError as exc:
        problems: list[tuple[str | None, str]] = []
        for error in exc.errors():
            where = ".".join(str(p) for p in error.get("loc", ())) or None
            message = str(error.get("msg", exc)).removeprefix("Value error, ")
            problems.append((where, message))
        if all(where is not None for where, _ in problems):
            # The fields failed, so pydantic never checked the rubric as a whole: do it here.
            problems += [(None, p) for p in _raw_whole_rubric_problems(data)]
        where, message = problems[0]
        if len(problems) > 1:
            message = f"{len(problems)} problems: " + "; ".join(
                f"{w}: {m}" if w else m for w, m in problems
            )
            where = None
        raise ConfigError(message, file=source, field=where) from None


def load_rubric(name_or_path: str | Path) -> Rubric:
    """A built-in rubric by name, or a rubric file."""
    text = str(name_or_path)
    path = Path(text)
    if path.suffix in (".yaml", ".yml") or path.exists():
        return parse_rubric(read_text_file(path), source=path)
    if text in builtin_rubric_names():
        file = resources.files(BUILTIN_PACKAGE) / BUILTIN_FOLDER / f"{text}.yaml"
        return parse_rubric(file.read_text(encoding="utf-8"), source=f"built-in rubric {text}")
    raise ConfigError(
        f"no rubric {text!r}",
        field="--rubric",
        expected="a rubric file (.yaml) or a built-in rubric: " + ", ".join(builtin_rubric_names()),
    )


def parse_options(pairs: list[str] | None, *, field: str = "-o") -> dict[str, str]:
    """``["target_accent=british"]`` → ``{"target_accent": "british"}``."""
    out: dict[str, str] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{pair!r} is not KEY=VALUE", field=field, expected="name=value")
        out[key.strip()] = value.strip()
    return out


def describe(bound: BoundRubric) -> dict[str, Any]:
    """The rubric as ``rubric show`` prints it."""
    r = bound.rubric
    return {
        "name": r.name,
        "hash": bound.digest(),
        "description": r.description,
        "criteria": [
            {
                "name": c.name,
                "scale": list(c.scale),
                "pass_at": c.pass_at,
                "description": c.description,
            }
            for c in r.criteria
        ],
        "context": r.context,
        "steps": r.steps or "generated by the judge model on first use",
        "scope": r.scope,
        "segments": r.segments,
        "combine": r.combine,
        "needs_transcript": r.needs_transcript,
        "form": r.form,
        "parameters": {
            k: {"description": p.description, "default": p.default, "value": bound.values.get(k)}
            for k, p in r.parameters.items()
        },
    }
