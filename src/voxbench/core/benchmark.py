"""The benchmark domain model: turns, tools, expectations and the dimension rule table.

A benchmark is declarative data (YAML + markdown on disk, loaded by
``voxbench.benchmarks``); nothing here executes benchmark-provided code. Every model is
strict: an unknown key is an error, not silently ignored.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from voxbench.core.names import SafeName

CORE_DIMENSIONS = ("tool_use", "instruction_following", "kb_grounding")
"""Dimensions scored on every turn."""


class Strict(BaseModel):
    """Base of every domain model: unknown keys are rejected, models are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


# --------------------------------------------------------------------------------------
# Argument matchers


class ArgMatcher(Strict):
    """How one argument of a made call is compared with the golden value.

    Exactly one rule applies: ``exact`` (equal after JSON normalisation), ``normalized``
    (case, whitespace and punctuation folded), ``one_of`` (any listed value, normalized),
    ``fuzzy`` (rapidfuzz token-set ratio ≥ the given 0–100 score), ``regex`` (search,
    case-insensitive), ``free_text`` (judged for meaning: a normalised token match, and the
    LLM judge decides a mismatch when one is given) or ``any`` (present with any value).
    Ids, dates and enums keep ``exact`` / ``one_of``: only prose should be ``free_text``.
    """

    rule: Literal["exact", "normalized", "one_of", "fuzzy", "regex", "free_text", "any"]
    values: tuple[Any, ...] = ()
    min_ratio: float = 85.0

    @model_validator(mode="before")
    @classmethod
    def _from_shorthand(cls, data: Any) -> Any:
        # YAML shorthand: "exact" | "normalized" | "any" | {fuzzy: 80} | {one_of: [...]} |
        # {regex: "..."}; the long form {rule: ..., values: ..., min_ratio: ...} also works.
        if isinstance(data, str):
            if data not in ("exact", "normalized", "any", "fuzzy", "free_text"):
                raise ValueError(f"unknown matcher {data!r}")
            return {"rule": data}
        if isinstance(data, dict) and "rule" not in data:
            if len(data) != 1:
                raise ValueError("a matcher has exactly one rule, e.g. {fuzzy: 85}")
            ((key, value),) = data.items()
            if key == "fuzzy":
                return {"rule": "fuzzy", "min_ratio": float(value)}
            if key == "one_of":
                if not isinstance(value, list) or not value:
                    raise ValueError("one_of takes a non-empty list")
                return {"rule": "one_of", "values": tuple(value)}
            if key == "regex":
                return {"rule": "regex", "values": (str(value),)}
            raise ValueError(
                f"unknown matcher {key!r} (exact, normalized, one_of, fuzzy, regex, free_text, any)"
            )
        return data

    @model_validator(mode="after")
    def _check(self) -> ArgMatcher:
        if self.rule == "regex":
            try:
                re.compile(str(self.values[0]))
            except (re.error, IndexError) as exc:
                raise ValueError(f"invalid regex: {exc}") from exc
        if not 0 <= self.min_ratio <= 100:
            raise ValueError("fuzzy ratio must be between 0 and 100")
        return self


class ExpectedCall(Strict):
    """A tool call a turn requires (or forbids, or allows).

    ``args`` holds golden values: the oracle sends them verbatim and they must satisfy their
    own matchers. ``match`` overrides the matcher per argument; the default is ``exact`` for
    id-like arguments (``id`` or ``*_id``) and non-strings, ``normalized`` for other strings.
    For forbidden and allowed calls only the listed arguments are compared.
    """

    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    match: dict[str, ArgMatcher] = Field(default_factory=dict)

    def matcher_for(self, arg: str) -> ArgMatcher:
        """The matcher that applies to argument ``arg``."""
        if arg in self.match:
            return self.match[arg]
        value = self.args.get(arg)
        if arg == "id" or arg.endswith("_id") or not isinstance(value, str):
            return ArgMatcher(rule="exact")
        return ArgMatcher(rule="normalized")


class FactPattern(Strict):
    """A fact the agent must mention (or a claim it must not make).

    It holds when any of the regex alternatives matches what the agent said
    (case-insensitive). Alternatives let "$1,299", "1299 dollars" and "twelve ninety-nine"
    all count.
    """

    any_of: tuple[str, ...]
    label: str = ""
    kind: Literal["kb", "derived", "action"] = "kb"
    """``kb``: stated in the knowledge base or an earlier turn (checked by ``bench check``);
    ``derived``: worked out from them (arithmetic, dates); ``action``: reports an action or a
    tool result."""

    @model_validator(mode="before")
    @classmethod
    def _from_shorthand(cls, data: Any) -> Any:
        if isinstance(data, str):
            return {"any_of": (data,)}
        if isinstance(data, list):
            return {"any_of": tuple(data)}
        return data

    @field_validator("any_of")
    @classmethod
    def _compile(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        if not v:
            raise ValueError("needs at least one pattern")
        for pattern in v:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"invalid regex {pattern!r}: {exc}") from exc
        return v

    def matches(self, text: str) -> bool:
        """Whether any alternative occurs in ``text``."""
        return any(re.search(p, text, re.IGNORECASE) for p in self.any_of)

    @property
    def name(self) -> str:
        """A short human name for reports."""
        return self.label or self.any_of[0]


class Expectation(Strict):
    """What a turn must and must not do, checkable by code."""

    required_calls: tuple[ExpectedCall, ...] = ()
    allowed_calls: tuple[ExpectedCall, ...] = ()
    forbidden_calls: tuple[ExpectedCall, ...] = ()
    must_mention: tuple[FactPattern, ...] = ()
    must_not_claim: tuple[FactPattern, ...] = ()
    state: dict[str, Any] | None = None
    """Expected backend state after the turn: a partial snapshot (see ``ToolBackend.snapshot``)."""


class Turn(Strict):
    """One user turn of a scripted conversation."""

    id: str
    text: str
    golden_text: str
    categories: tuple[str, ...] = ()
    subcategory: str | None = None
    audio: str | None = None
    """Path of the spoken turn, relative to the benchmark directory."""
    expect: Expectation = Field(default_factory=Expectation)

    @field_validator("id", mode="before")
    @classmethod
    def _id_as_text(cls, v: Any) -> Any:
        return str(v) if isinstance(v, int) else v


class ToolSpec(Strict):
    """A function the agent may call; ``parameters`` is a JSON-schema object."""

    name: str
    description: str
    parameters: dict[str, Any] = Field(
        default_factory=lambda: {"type": "object", "properties": {}, "required": []}
    )

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_\-]{0,63}", v):
            raise ValueError("tool names are letters, digits, _ and -, starting with a letter")
        return v

    @field_validator("parameters")
    @classmethod
    def _schema(cls, v: dict[str, Any]) -> dict[str, Any]:
        if v.get("type") != "object":
            raise ValueError("parameters must be a JSON schema with type: object")
        props = v.get("properties", {})
        if not isinstance(props, dict):
            raise ValueError("parameters.properties must be a mapping")
        required = v.get("required", [])
        # ``required: name`` (a string) would otherwise be read letter by letter.
        if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
            raise ValueError(f"parameters.required must be a list of names, not {required!r}")
        missing = [r for r in required if r not in props]
        if missing:
            raise ValueError(f"required parameters not in properties: {missing}")
        return v

    @property
    def required(self) -> tuple[str, ...]:
        """Names of the required parameters."""
        return tuple(self.parameters.get("required", []))


class DimensionRules(Strict):
    """Which dimensions are scored on a turn: the core ones plus those its categories add."""

    core: tuple[str, ...] = CORE_DIMENSIONS
    by_category: dict[str, tuple[str, ...]] = Field(default_factory=dict)

    def for_turn(self, turn: Turn) -> tuple[str, ...]:
        """Dimensions scored on ``turn``, in a stable order."""
        dims = list(self.core)
        for category in turn.categories:
            for dim in self.by_category.get(category, ()):
                if dim not in dims:
                    dims.append(dim)
        return tuple(dims)


NoCallTurnRule = Literal["fail_unexpected_calls", "pass_any_call", "pass_if_no_call"]
DueTurnRule = Literal["penalize_due_turn", "credit_due_turn"]


class ToolUseRules(Strict):
    """How ``tool_use`` is decided on a turn: one benchmark family's counting rules, as data.

    - ``no_expected_call_turn``: a turn that requires no call. ``fail_unexpected_calls``
      (voxbench): a call that is neither allowed nor credited to a neighbouring turn fails
      it; ``pass_any_call``: it passes whatever was called; ``pass_if_no_call``: it passes
      only when no call was made (calls credited to a neighbouring turn excepted).
    - ``early_calls``: a required call made one turn early. ``penalize_due_turn`` (voxbench):
      the turn it was due on fails, once; ``credit_due_turn``: it is already satisfied there.
    - ``late_calls``: a required call made one turn late. ``penalize_due_turn``: the turn it
      was due on fails (the turn it was made on is credited); ``credit_due_turn``: the late
      call rescues the turn it was due on.
    """

    no_expected_call_turn: NoCallTurnRule = "fail_unexpected_calls"
    early_calls: DueTurnRule = "penalize_due_turn"
    late_calls: DueTurnRule = "penalize_due_turn"


class ScoringRules(Strict):
    """A benchmark's scoring rules (``scoring:`` in ``benchmark.yaml``, or a compat profile).

    ``arguments``: ``declared`` compares each argument with its matcher (``match:``, or the
    default: exact ids and non-strings, normalized strings); ``upstream_semantic`` compares
    every string argument that is not an id the way ConversationBench/AIEWF do (see
    ``core.matching.upstream_text_matches``) and lets the LLM judge decide a mismatch.
    """

    tool_use: ToolUseRules = Field(default_factory=ToolUseRules)
    arguments: Literal["declared", "upstream_semantic"] = "declared"
    judge_sees_turn_taking: bool = False
    """Tell the LLM judge each turn's turn-taking verdict, and to be lenient on instruction
    following when turn-taking failed on that turn (garbled audio), as ConversationBench's
    and AIEWF's judges are."""


class CompatProfile(Strict):
    """A public benchmark's counting rules, so voxbench's numbers can sit beside its
    published ones (``voxbench judge --compat NAME``)."""

    name: str
    title: str
    scoring: ScoringRules
    llm_dimensions: tuple[str, ...] = ("instruction_following", "kb_grounding")
    """Dimensions its pass needs that only an LLM judge decides."""
    turn_pass: tuple[str, ...] = ("tool_use", "instruction_following", "kb_grounding")
    """Dimensions that must all pass on a turn for its per-turn pass."""
    reproduces: tuple[str, ...] = ()
    """What the profile reproduces, one line each (shown in the summary and the README)."""
    cannot_reproduce: tuple[str, ...] = ()
    """What it cannot, one line each."""


class Benchmark(Strict):
    """A loaded benchmark package."""

    id: SafeName
    """A name, never a path: runs are written under ``<runs_dir>/<id>/``."""
    version: str
    description: str
    system_prompt: str
    """Template; ``{knowledge_base}``, ``{current_date}`` and ``{tools}`` are filled in."""
    current_date: str
    """The date the conversation takes place on, ISO ``YYYY-MM-DD``."""
    dimensions: DimensionRules = Field(default_factory=DimensionRules)
    knowledge_base: str
    tools: tuple[ToolSpec, ...]
    turns: tuple[Turn, ...]
    backend: dict[str, Any] = Field(default_factory=dict)
    """The tool backend simulator's spec (``backend.yaml``), validated by ``benchmarks``."""
    scoring: ScoringRules = Field(default_factory=ScoringRules)
    """How its turns are scored; not part of ``content_hash`` (a run can be re-judged under
    other rules without being re-run)."""
    root: Path | None = Field(default=None, exclude=True)

    def render_system_prompt(self) -> str:
        """The system prompt with the knowledge base and date filled in."""
        from datetime import date

        day = date.fromisoformat(self.current_date)
        values = {
            "knowledge_base": self.knowledge_base.strip(),
            "current_date": f"{day:%A}, {day:%B} {day.day}, {day.year}",
            "tools": "\n".join(f"- {t.name}: {t.description}" for t in self.tools),
        }
        return re.sub(
            r"\{(knowledge_base|current_date|tools)\}",
            lambda m: values[m.group(1)],
            self.system_prompt,
        )

    def tool(self, name: str) -> ToolSpec | None:
        """The tool named ``name``, if the benchmark has it."""
        return next((t for t in self.tools if t.name == name), None)

    def turn_index(self, turn_id: str) -> int:
        """Position of the turn with id ``turn_id``."""
        for i, turn in enumerate(self.turns):
            if turn.id == turn_id:
                return i
        raise KeyError(turn_id)

    def audio_path(self, turn: Turn) -> Path | None:
        """Absolute path of a turn's audio, if it has one."""
        if turn.audio is None or self.root is None:
            return None
        return self.root / turn.audio

    @property
    def content_hash(self) -> str:
        """A short hash of everything that defines the benchmark (not its location)."""
        blob = json.dumps(self.model_dump(mode="json", exclude={"scoring"}), sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]
