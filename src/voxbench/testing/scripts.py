"""What a fake server answers: scripts (the model's behaviour) and faults (the transport's).

Shared by every fake server, HTTP or websocket. A server turns its wire request into the
provider-neutral conversation (a list of ``ScriptMessage``) and asks its ``Script`` for a
``Reply``: words to say and/or tool calls to make. Faults are separate and keyed by the
number of the request (1-based, counted per server), so a test says "the 2nd request gets
a 429" whatever the conversation is.

The public surface is small on purpose:

- ``Script.reply(conversation) -> Reply`` and ``Script.transcribe(number) -> str``
- ``GoldenScript(benchmark)``: the benchmark's oracle through the wire — each turn's
  required calls, a retry of a call that got a transient error, then its golden text
- ``ListScript(replies)``: explicit replies in order; ``load_script_file(path)`` reads one
  (with optional faults) from YAML
- ``Fault.parse("rate_limit@2:retry_after=1")`` and ``FaultPlan.for_request(n)``
"""

from __future__ import annotations

import abc
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from voxbench.core.benchmark import Benchmark, Turn
from voxbench.core.errors import ConfigError
from voxbench.core.yamlfile import read_yaml

TRANSIENT_ERRORS = frozenset({"INTERNAL_ERROR", "TEMPORARILY_UNAVAILABLE", "TIMEOUT"})


@dataclass(frozen=True)
class ScriptCall:
    """A tool call the fake model makes; ``raw_arguments`` replaces the JSON when set."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    raw_arguments: str | None = None

    def arguments_json(self) -> str:
        """The arguments as sent on the wire."""
        if self.raw_arguments is not None:
            return self.raw_arguments
        return json.dumps(self.arguments, ensure_ascii=False)


@dataclass(frozen=True)
class ToolOutcome:
    """A tool result the client sent back."""

    call_id: str
    name: str
    result: Any


@dataclass(frozen=True)
class ScriptMessage:
    """One message of the conversation a server received, provider-neutral."""

    role: Literal["user", "assistant", "tool"]
    text: str = ""
    calls: tuple[ScriptCall, ...] = ()
    results: tuple[ToolOutcome, ...] = ()


@dataclass(frozen=True)
class Reply:
    """What the fake model answers: words (said first), then tool calls."""

    text: str = ""
    calls: tuple[ScriptCall, ...] = ()
    stop_reason: str | None = None
    """The provider's stop / finish value to report instead of the natural one (``end_turn``
    or ``tool_use``, ``STOP``…): a filter, a length cut, a value the docs do not list."""


class ScriptExhausted(Exception):
    """A list script was asked for more replies than it has."""


class Script(abc.ABC):
    """The fake model's behaviour."""

    @abc.abstractmethod
    def reply(self, conversation: Sequence[ScriptMessage]) -> Reply:
        """The answer to the conversation so far (its last message is the newest)."""

    def transcribe(self, number: int) -> str:
        """What a transcription request (the ``number``-th, 1-based) returns."""
        return ""


def last_user_index(conversation: Sequence[ScriptMessage]) -> int:
    """Position of the newest user message (-1 when there is none)."""
    for i in range(len(conversation) - 1, -1, -1):
        if conversation[i].role == "user":
            return i
    return -1


class GoldenScript(Script):
    """Answers each benchmark turn as its golden data says (the oracle, through the wire)."""

    def __init__(self, benchmark: Benchmark) -> None:
        self.benchmark = benchmark
        self._by_text = {_fold(t.text): t for t in benchmark.turns}

    def turn_for(self, conversation: Sequence[ScriptMessage]) -> Turn:
        """The benchmark turn the newest user message belongs to."""
        at = last_user_index(conversation)
        text = conversation[at].text if at >= 0 else ""
        turn = self._by_text.get(_fold(text))
        if turn is not None:
            return turn
        # Not a benchmark line (a paraphrase, a transcript): go by position.
        users = sum(1 for m in conversation if m.role == "user")
        turns = self.benchmark.turns
        return turns[min(max(users - 1, 0), len(turns) - 1)]

    def reply(self, conversation: Sequence[ScriptMessage]) -> Reply:
        turn = self.turn_for(conversation)
        since = conversation[last_user_index(conversation) + 1 :]
        made = [c for m in since if m.role == "assistant" for c in m.calls]
        required = tuple(
            ScriptCall(name=c.name, arguments=dict(c.args)) for c in turn.expect.required_calls
        )
        if not made:
            if required:
                return Reply(calls=required)
            return Reply(text=turn.golden_text)
        # Like the oracle: retry, once, a required call whose newest result was a transient
        # error; re-send a call whose arguments did not parse, with the golden arguments.
        newest = since[-1].results if since and since[-1].role == "tool" else ()
        retry = []
        for outcome in newest:
            error = outcome.result.get("error") if isinstance(outcome.result, dict) else None
            if error not in TRANSIENT_ERRORS and error != "MALFORMED_ARGUMENTS":
                continue
            golden = next((c for c in required if c.name == outcome.name), None)
            if golden is not None and made.count(golden) < 2 and golden not in retry:
                retry.append(golden)
        if retry:
            return Reply(calls=tuple(retry))
        return Reply(text=turn.golden_text)

    def transcribe(self, number: int) -> str:
        turns = self.benchmark.turns
        return turns[(number - 1) % len(turns)].text if turns else ""


def _fold(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


class ListScript(Script):
    """Replies in order, one per model request; transcripts in order, one per request."""

    def __init__(self, replies: Sequence[Reply], transcripts: Sequence[str] = ()) -> None:
        self.replies = list(replies)
        self.transcripts = list(transcripts)
        self.position = 0

    def reply(self, conversation: Sequence[ScriptMessage]) -> Reply:
        if self.position >= len(self.replies):
            raise ScriptExhausted(f"the script has only {len(self.replies)} replies")
        self.position += 1
        return self.replies[self.position - 1]

    def transcribe(self, number: int) -> str:
        if not self.transcripts:
            return ""
        return self.transcripts[(number - 1) % len(self.transcripts)]


# -- faults ------------------------------------------------------------------------------

FaultKind = Literal[
    "rate_limit", "server_error", "unauthorized", "hang", "drop", "malformed_args", "duplicate"
]
FAULT_KINDS: tuple[str, ...] = FaultKind.__args__  # type: ignore[attr-defined]
_ALIASES = {
    "429": "rate_limit",
    "500": "server_error",
    "401": "unauthorized",
    "malformed": "malformed_args",
    "dup": "duplicate",
    "duplicates": "duplicate",
}


@dataclass(frozen=True)
class Fault:
    """A transport fault injected on some requests.

    - ``rate_limit``: HTTP 429 (or the protocol's equivalent) with ``Retry-After: retry_after``
    - ``server_error``: HTTP 500; ``unauthorized``: HTTP 401
    - ``hang``: never answers; ``drop``: cuts the connection after the first content chunk
    - ``malformed_args``: tool-call arguments are cut-off JSON
    - ``duplicate``: every structural event (openers, finish, usage, terminators) is sent twice
    """

    kind: FaultKind
    requests: frozenset[int] | None = None
    """1-based request numbers it hits; ``None``: every request."""
    retry_after: float = 1.0

    def hits(self, number: int) -> bool:
        """Whether the ``number``-th request gets this fault."""
        return self.requests is None or number in self.requests

    @classmethod
    def parse(cls, spec: str) -> Fault:
        """``KIND[@N[,M|N-M…]][:retry_after=SECONDS]``, e.g. ``429@1``, ``drop@2-3``, ``hang``."""
        text = spec.strip()
        options: dict[str, str] = {}
        if ":" in text:
            text, _, opts = text.partition(":")
            for item in filter(None, opts.split(",")):
                key, eq, value = item.partition("=")
                if not eq:
                    raise _bad_fault(spec, f"option {item!r} is not key=value")
                options[key.strip()] = value.strip()
        kind, _, when = text.partition("@")
        kind = _ALIASES.get(kind.strip().lower(), kind.strip().lower())
        if kind not in FAULT_KINDS:
            raise _bad_fault(spec, f"unknown fault {kind!r}")
        requests: set[int] | None = None
        if when.strip() not in ("", "*"):
            requests = set()
            for part in when.split(","):
                try:
                    lo, dash, hi = part.partition("-")
                    first, last = int(lo), int(hi) if dash else int(lo)
                except ValueError:
                    raise _bad_fault(spec, f"bad request number {part!r}") from None
                if first < 1 or last < first:
                    raise _bad_fault(spec, f"bad request range {part!r}")
                requests.update(range(first, last + 1))
        unknown = set(options) - {"retry_after"}
        if unknown:
            raise _bad_fault(spec, f"unknown option(s) {sorted(unknown)}")
        try:
            retry_after = float(options.get("retry_after", 1.0))
        except ValueError:
            raise _bad_fault(spec, "retry_after must be a number of seconds") from None
        return cls(
            kind=kind,  # type: ignore[arg-type]
            requests=frozenset(requests) if requests is not None else None,
            retry_after=retry_after,
        )


def _bad_fault(spec: str, why: str) -> ConfigError:
    return ConfigError(
        f"bad fault {spec!r}: {why}",
        field="fault",
        expected=f"KIND[@N[-M]][:retry_after=S] with KIND among {', '.join(FAULT_KINDS)}",
    )


@dataclass
class FaultPlan:
    """The faults of one server."""

    faults: list[Fault] = field(default_factory=list)

    @classmethod
    def parse(cls, specs: Sequence[str | Fault]) -> FaultPlan:
        """Build from specs (strings are parsed with ``Fault.parse``)."""
        return cls([s if isinstance(s, Fault) else Fault.parse(s) for s in specs])

    def for_request(self, number: int) -> list[Fault]:
        """Faults that hit the ``number``-th request."""
        return [f for f in self.faults if f.hits(number)]


# -- script files ---------------------------------------------------------------------------


def load_script_file(path: str | Path) -> tuple[ListScript, FaultPlan]:
    """Read a YAML script: ``replies`` (each ``say`` and/or ``call``/``args`` or ``calls``),
    optional ``transcripts`` and ``faults``."""
    p = Path(path)
    data = read_yaml(p, what="script YAML") or {}
    if not isinstance(data, dict) or not isinstance(data.get("replies"), list):
        raise ConfigError("wrong shape", file=p, field="replies", expected="a list of replies")
    unknown = set(data) - {"replies", "transcripts", "faults"}
    if unknown:
        raise ConfigError(
            f"unknown key(s) {sorted(unknown)}", file=p, expected="replies, transcripts, faults"
        )
    replies = [_reply_from(item, p, i) for i, item in enumerate(data["replies"])]
    transcripts = [str(t) for t in data.get("transcripts") or []]
    faults = FaultPlan.parse([str(f) for f in data.get("faults") or []])
    return ListScript(replies, transcripts), faults


def _reply_from(item: Any, path: Path, i: int) -> Reply:
    where = f"replies[{i}]"
    if isinstance(item, str):
        return Reply(text=item)
    if not isinstance(item, dict):
        raise ConfigError("wrong shape", file=path, field=where, expected="a mapping or a string")
    unknown = set(item) - {"say", "call", "args", "raw_args", "calls"}
    if unknown:
        raise ConfigError(
            f"unknown key(s) {sorted(unknown)}",
            file=path,
            field=where,
            expected="say, call, args, raw_args, calls",
        )
    specs = list(item.get("calls") or [])
    if "call" in item:
        specs.insert(
            0, {"name": item["call"], "args": item.get("args"), "raw_args": item.get("raw_args")}
        )
    calls = []
    for j, spec in enumerate(specs):
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
            raise ConfigError(
                "a call needs a name",
                file=path,
                field=f"{where}.calls[{j}]",
                expected="{name, args}",
            )
        args = spec.get("args") or {}
        if not isinstance(args, dict):
            raise ConfigError("args must be a mapping", file=path, field=f"{where}.calls[{j}].args")
        raw = spec.get("raw_args")
        calls.append(ScriptCall(spec["name"], dict(args), None if raw is None else str(raw)))
    return Reply(text=str(item.get("say") or ""), calls=tuple(calls))
