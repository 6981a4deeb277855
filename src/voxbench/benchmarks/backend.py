"""The tool backend simulator: a deterministic, stateful world behind a benchmark's tools.

``backend.yaml`` declares the world (bookable sessions with times and capacities, policies),
binds each tool to one operation, and lists injected faults. Faults are keyed by arguments
and state, never by call order, so a model that reorders its calls meets the same world.

Operations (``op``):

- ``register`` / ``schedule`` / ``vote``: act on one session (``session`` names the
  argument holding its id). Registration enforces the session's ``registration`` mode
  (``NO_REGISTRATION_NEEDED`` for open seating, ``REGISTRATION_CLOSED``), capacity
  (``SESSION_FULL``), ``max_registrations`` (``REGISTRATION_LIMIT``) and, with
  ``no_double_booking``, time conflicts with active registrations (``SCHEDULE_CONFLICT``).
- ``check_conflict``: compares the sessions named by the ``sessions`` arguments.
- ``request``: records a request of ``kind`` (dietary request, suggestion, support
  ticket); ``content`` names the argument holding its text.
- ``cancel``: cancels an earlier action; ``kind`` names the argument holding the action
  type, ``session`` / ``details`` the arguments that identify which one.
- ``end``: ends the conversation.
- ``info``: read-only lookup of a session (``session``).

A call identical to an earlier successful call in the same turn is a duplicate: it gets the
same answer without acting again, and is recorded as such (``harness.duplicate_calls:
replay``). Upstream harnesses answer any repeat of a call already made in the turn, failed or
not, with ``{"status": "duplicate_skipped"}`` instead (``skip``); see ``HarnessOptions``.
"""

from __future__ import annotations

import copy
import json
import re
from datetime import date, time
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from voxbench.core.benchmark import ExpectedCall
from voxbench.core.matching import args_match, normalize_text

Op = Literal["register", "schedule", "vote", "check_conflict", "request", "cancel", "end", "info"]

ACTION_KINDS = ("registration", "schedule", "vote")


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BookableSession(_Spec):
    """A session that can be registered for."""

    title: str
    day: date
    start: time
    end: time
    capacity: int | None = None
    registered: int = 0
    room: str | None = None
    registration: Literal["open", "closed", "none"] = "open"
    """``open``: takes registrations; ``closed``: no longer (it is over, or cancelled);
    ``none``: open seating, there is nothing to register for (``NO_REGISTRATION_NEEDED``)."""

    @model_validator(mode="after")
    def _order(self) -> BookableSession:
        if self.end <= self.start:
            raise ValueError("end must be after start")
        return self

    def overlaps(self, other: BookableSession) -> bool:
        """Whether the two sessions share any minute on the same day."""
        return self.day == other.day and self.start < other.end and other.start < self.end


class ToolBinding(_Spec):
    """How one tool maps onto a backend operation."""

    op: Op
    session: str | None = None
    sessions: tuple[str, ...] = ()
    kind: str | None = None
    content: str | None = None
    details: str | None = None
    attendee: str | None = None
    """Argument holding the attendee's name (recorded in the state)."""


class Fault(_Spec):
    """An injected error, keyed by arguments (and optionally by how often they were tried)."""

    tool: str
    when: dict[str, Any] = Field(default_factory=dict)
    error: str
    message: str
    times: int | None = None
    """Fail only the first N matching calls (a transient error); None fails every time."""


class CannedResponse(_Spec):
    """A fixed result for a call on a given turn (imported benchmarks)."""

    call: ExpectedCall | None = None
    result: Any = None
    every_call: bool = False
    """The turn's one result answers every call (upstream gave a single value, not a list)."""


UPSTREAM_NUDGE_TEXT = "Please go ahead."
"""The follow-up user message AIEWF's text pipeline sends when a required call is missing.
It is a protocol string, not prose: the model reads exactly these words, so a compat run
sends them unchanged for its numbers to be comparable."""

DUPLICATE_SKIPPED = {"status": "duplicate_skipped"}
"""What ConversationBench's and AIEWF's harnesses answer a repeated call with."""


class HarnessOptions(_Spec):
    """How the harness treats the agent's calls: voxbench's rules, or an upstream harness's.

    Imported benchmarks declare their upstream's harness in ``backend.yaml`` (``harness:``);
    a run can switch it off (``-o harness=voxbench``) or change one option
    (``-o harness.nudge=false``).
    """

    upstream: str | None = None
    """The upstream harness these options reproduce (``conversation-bench``, ``aiewf``)."""
    duplicate_calls: Literal["replay", "skip"] = "replay"
    """``replay``: a repeat of a successful call in the same turn gets the same answer without
    acting again. ``skip``: any repeat of a call already made in the turn (same name, same
    arguments as sent, in the same order), failed or not, gets ``duplicate_skipped``."""
    canned_results: Literal["by_call", "in_order", "success"] = "by_call"
    """``by_call``: a canned result goes to the call it was written for (a model that reorders
    its calls meets the same results; a retry gets its own call's result again).
    ``in_order``: the k-th distinct call of the turn gets the k-th listed result whatever it
    is, ``{"status": "success"}`` past the end of the list (ConversationBench).
    ``success``: every call gets ``{"status": "success"}`` (AIEWF)."""
    nudge: bool = False
    """Text runs: when the reply lacks a required call, send ``nudge_text`` once as a user
    follow-up (AIEWF). The follow-up exchange is recorded apart from the turn and never
    scored, as upstream leaves its recovery turns out of the judgment."""
    nudge_text: str = UPSTREAM_NUDGE_TEXT
    nudge_match: Literal["benchmark", "aiewf"] = "benchmark"
    """How a made call is compared with a required one to decide the nudge: the benchmark's
    own argument matchers, or AIEWF's harness rule (``upstream_matching``)."""


class BackendSpec(_Spec):
    """The contents of ``backend.yaml``."""

    engine: Literal["stateful", "canned"] = "stateful"
    sessions: dict[str, BookableSession] = Field(default_factory=dict)
    no_double_booking: bool = True
    max_registrations: int | None = None
    tools: dict[str, ToolBinding] = Field(default_factory=dict)
    faults: tuple[Fault, ...] = ()
    canned: dict[str, tuple[CannedResponse, ...]] = Field(default_factory=dict)
    """Engine ``canned``: per turn id, the results (see ``HarnessOptions.canned_results``)."""
    harness: HarnessOptions = Field(default_factory=HarnessOptions)


def choose_harness(
    declared: HarnessOptions, which: str = "benchmark", overrides: dict[str, Any] | None = None
) -> HarnessOptions:
    """The harness a run uses: the benchmark's own (or voxbench's), with single options set."""
    base = declared if which == "benchmark" else HarnessOptions()
    return HarnessOptions.model_validate({**base.model_dump(), **(overrides or {})})


def _ok(**fields: Any) -> dict[str, Any]:
    return {"status": "success", **fields}


def _err(code: str, message: str, **fields: Any) -> dict[str, Any]:
    return {"status": "error", "error": code, "message": message, **fields}


def _call_key(name: str, args: dict[str, Any]) -> str:
    norm = {k: normalize_text(v) if isinstance(v, str) else v for k, v in args.items()}
    return name + json.dumps(norm, sort_keys=True, default=str)


class ToolBackend:
    """Executes tool calls against the simulated world and keeps its state."""

    def __init__(
        self,
        spec: BackendSpec,
        tool_names: set[str] | None = None,
        harness: HarnessOptions | None = None,
    ) -> None:
        self.spec = spec
        self.harness = harness if harness is not None else spec.harness
        self.tool_names = tool_names if tool_names is not None else set(spec.tools)
        self.turn: str | None = None
        self._state: dict[str, Any] = {
            "attendee": None,
            "registrations": [],
            "schedule": [],
            "votes": [],
            "requests": [],
            "cancelled": [],
            "ended": False,
            "fault_hits": {},
            "extra_registered": {},
        }
        self._turn_calls: dict[str, Any] = {}
        self._calls_made: set[str] = set()
        self._canned_used: set[int] = set()
        self._canned_next = 0

    # -- state -------------------------------------------------------------------------

    def begin_turn(self, turn_id: str) -> None:
        """Start a new turn: duplicate detection and canned results are per turn."""
        self.turn = turn_id
        self._turn_calls = {}
        self._calls_made = set()
        self._canned_used = set()
        self._canned_next = 0

    def forget_duplicates(self) -> None:
        """A new attempt within the turn (a nudge): earlier calls are no longer repeats.

        Canned results already handed out stay handed out, as upstream's index does."""
        self._turn_calls = {}
        self._calls_made = set()

    def export_state(self) -> dict[str, Any]:
        """Everything needed to restore the backend (saved with each turn for resume)."""
        return copy.deepcopy(self._state)

    def restore_state(self, state: dict[str, Any]) -> None:
        """Restore what ``export_state`` returned."""
        self._state = copy.deepcopy(state)

    def snapshot(self) -> dict[str, Any]:
        """A readable view of the world, the shape that expected states are written in."""
        s = self._state
        requests: dict[str, list[str]] = {}
        for req in s["requests"]:
            if req["active"]:
                requests.setdefault(req["kind"], []).append(req["content"])
        cancelled: dict[str, list[str]] = {}
        for item in s["cancelled"]:
            cancelled.setdefault(item["kind"], []).append(item["what"])
        return {
            "registrations": sorted(s["registrations"]),
            "schedule": sorted(s["schedule"]),
            "votes": sorted(s["votes"]),
            "requests": requests,
            "cancelled": cancelled,
            "ended": s["ended"],
        }

    # -- calls -------------------------------------------------------------------------

    def call(self, name: str, args: dict[str, Any]) -> tuple[Any, bool]:
        """Execute one call; returns ``(result, is_duplicate)``."""
        if self.harness.duplicate_calls == "skip":
            # Upstream keys a call by its name and its arguments exactly as sent.
            sent = name + repr(args)
            if sent in self._calls_made:
                return dict(DUPLICATE_SKIPPED), True
            self._calls_made.add(sent)
            return self._execute(name, args), False
        key = _call_key(name, args)
        if key in self._turn_calls:
            return copy.deepcopy(self._turn_calls[key]), True
        result = self._execute(name, args)
        if not (isinstance(result, dict) and result.get("status") == "error"):
            self._turn_calls[key] = copy.deepcopy(result)
        return result, False

    def _execute(self, name: str, args: dict[str, Any]) -> Any:
        if name not in self.tool_names:
            return _err("UNKNOWN_TOOL", f"there is no tool named {name!r}")
        if self.spec.engine == "canned":
            # An `end` binding still ends the conversation, as upstream harnesses do.
            if (bound := self.spec.tools.get(name)) is not None and bound.op == "end":
                self._state["ended"] = True
            return self._canned(name, args)
        binding = self.spec.tools.get(name)
        if binding is None:
            return _ok()
        fault = self._fault_for(name, args)
        if fault is not None:
            return _err(fault.error, fault.message)
        if binding.attendee and isinstance(args.get(binding.attendee), str):
            self._state["attendee"] = self._state["attendee"] or args[binding.attendee]
        handler = getattr(self, f"_op_{binding.op}")
        return handler(binding, args)

    def _fault_for(self, name: str, args: dict[str, Any]) -> Fault | None:
        for i, fault in enumerate(self.spec.faults):
            if fault.tool != name:
                continue
            probe = ExpectedCall(name=name, args=fault.when)
            if not args_match(probe, args):
                continue
            if fault.times is None:
                return fault
            hits = self._state["fault_hits"].get(str(i), 0)
            if hits < fault.times:
                self._state["fault_hits"][str(i)] = hits + 1
                return fault
        return None

    def _session_arg(
        self, binding: ToolBinding, args: dict[str, Any], param: str | None
    ) -> str | dict[str, Any]:
        """The session id named by ``args[param]``, or the error result to return."""
        if param is None:
            return _err("BACKEND_CONFIG", "tool binding names no session argument")
        raw = args.get(param)
        if raw in (None, ""):
            return _err("INVALID_ARGUMENTS", f"missing required argument {param!r}")
        sid = str(raw).strip()
        if sid not in self.spec.sessions:
            match = next((k for k in self.spec.sessions if k.lower() == sid.lower()), None)
            if match is None:
                return _err("UNKNOWN_SESSION", f"no session with id {sid!r}")
            sid = match
        return sid

    def _op_register(self, binding: ToolBinding, args: dict[str, Any]) -> Any:
        sid = self._session_arg(binding, args, binding.session)
        if isinstance(sid, dict):
            return sid
        s = self._state
        session = self.spec.sessions[sid]
        if session.registration == "none":
            return _err(
                "NO_REGISTRATION_NEEDED",
                f"{sid} ({session.title}) is open seating: there is nothing to register for",
                session_id=sid,
            )
        if session.registration == "closed":
            return _err(
                "REGISTRATION_CLOSED",
                f"registration for {sid} ({session.title}) is closed",
                session_id=sid,
            )
        if sid in s["registrations"]:
            return _err("ALREADY_REGISTERED", f"already registered for {sid}", session_id=sid)
        taken = session.registered + s["extra_registered"].get(sid, 0)
        if session.capacity is not None and taken >= session.capacity:
            return _err("SESSION_FULL", f"{sid} ({session.title}) is full", session_id=sid)
        if self.spec.max_registrations is not None and (
            len(s["registrations"]) >= self.spec.max_registrations
        ):
            return _err(
                "REGISTRATION_LIMIT",
                f"at most {self.spec.max_registrations} registrations per attendee",
            )
        if self.spec.no_double_booking:
            for other in s["registrations"]:
                if self.spec.sessions[other].overlaps(session):
                    return _err(
                        "SCHEDULE_CONFLICT",
                        f"{sid} overlaps {other} ({self.spec.sessions[other].title})",
                        session_id=sid,
                        conflicts_with=other,
                    )
        s["registrations"].append(sid)
        s["extra_registered"][sid] = s["extra_registered"].get(sid, 0) + 1
        return _ok(session_id=sid, title=session.title, confirmation=f"REG-{sid}")

    def _op_schedule(self, binding: ToolBinding, args: dict[str, Any]) -> Any:
        sid = self._session_arg(binding, args, binding.session)
        if isinstance(sid, dict):
            return sid
        if sid in self._state["schedule"]:
            return _err("ALREADY_IN_SCHEDULE", f"{sid} is already in the schedule", session_id=sid)
        self._state["schedule"].append(sid)
        return _ok(session_id=sid, title=self.spec.sessions[sid].title)

    def _op_vote(self, binding: ToolBinding, args: dict[str, Any]) -> Any:
        sid = self._session_arg(binding, args, binding.session)
        if isinstance(sid, dict):
            return sid
        if sid in self._state["votes"]:
            return _err("ALREADY_VOTED", f"already voted for {sid}", session_id=sid)
        self._state["votes"].append(sid)
        return _ok(session_id=sid)

    def _op_info(self, binding: ToolBinding, args: dict[str, Any]) -> Any:
        sid = self._session_arg(binding, args, binding.session)
        if isinstance(sid, dict):
            return sid
        return _ok(session_id=sid, **self.spec.sessions[sid].model_dump(mode="json"))

    def _op_check_conflict(self, binding: ToolBinding, args: dict[str, Any]) -> Any:
        ids = []
        for param in binding.sessions:
            sid = self._session_arg(binding, args, param)
            if isinstance(sid, dict):
                return sid
            ids.append(sid)
        clashes = [
            [a, b]
            for i, a in enumerate(ids)
            for b in ids[i + 1 :]
            if self.spec.sessions[a].overlaps(self.spec.sessions[b])
        ]
        return _ok(conflict=bool(clashes), overlapping=clashes)

    def _op_request(self, binding: ToolBinding, args: dict[str, Any]) -> Any:
        content = str(args.get(binding.content, "")).strip() if binding.content else ""
        if binding.content and not content:
            return _err("INVALID_ARGUMENTS", f"missing required argument {binding.content!r}")
        kind = binding.kind or "request"
        requests = self._state["requests"]
        request_id = f"{kind.upper()[:3]}-{len(requests) + 1:03d}"
        requests.append({"id": request_id, "kind": kind, "content": content, "active": True})
        return _ok(request_id=request_id)

    def _op_end(self, binding: ToolBinding, args: dict[str, Any]) -> Any:
        self._state["ended"] = True
        return _ok()

    def _op_cancel(self, binding: ToolBinding, args: dict[str, Any]) -> Any:
        kind = (
            normalize_text(str(args.get(binding.kind, ""))).replace(" ", "_")
            if binding.kind
            else ""
        )
        if not kind:
            return _err("INVALID_ARGUMENTS", f"missing required argument {binding.kind!r}")
        details = str(args.get(binding.details, "") or "") if binding.details else ""
        sid = str(args.get(binding.session, "") or "").strip() if binding.session else ""
        if not sid and details:
            sid = next(
                (
                    k
                    for k in self.spec.sessions
                    if re.search(rf"\b{re.escape(k)}\b", details, re.IGNORECASE)
                ),
                "",
            )
        # Registrations are stored under the canonical id, whatever case the agent used.
        sid = next((k for k in self.spec.sessions if k.lower() == sid.lower()), sid)
        s = self._state
        if kind in ACTION_KINDS:
            bucket = {"registration": "registrations", "schedule": "schedule", "vote": "votes"}[
                kind
            ]
            if not sid:
                return _err("INVALID_ARGUMENTS", "say which session to cancel (its session id)")
            if sid not in s[bucket]:
                return _err("NOT_FOUND", f"no active {kind} for {sid}")
            s[bucket].remove(sid)
            if kind == "registration":
                s["extra_registered"][sid] -= 1
            s["cancelled"].append({"kind": kind, "what": sid})
            return _ok(cancelled=kind, session_id=sid)
        active = [r for r in s["requests"] if r["active"] and r["kind"] == kind]
        if not active:
            return _err("NOT_FOUND", f"no active {kind} to cancel")
        wanted = normalize_text(details)
        # An exact match wins over a partial one: "vegan" cancels the vegan request, not a
        # later "vegan_gluten_free" one.
        chosen = next(
            (r for r in reversed(active) if wanted and normalize_text(r["content"]) == wanted),
            None,
        ) or next(
            (
                r
                for r in reversed(active)
                if wanted
                and (
                    wanted in normalize_text(r["content"]) or normalize_text(r["content"]) in wanted
                )
            ),
            None,
        )
        if chosen is None:
            if wanted and len(active) > 1:
                return _err("NOT_FOUND", f"no active {kind} matching {details!r}")
            chosen = active[-1]
        chosen["active"] = False
        s["cancelled"].append({"kind": kind, "what": chosen["content"]})
        return _ok(cancelled=kind, request_id=chosen["id"])

    def _canned(self, name: str, args: dict[str, Any]) -> Any:
        entries = self.spec.canned.get(self.turn or "", ())
        rule = self.harness.canned_results
        if rule == "success" or not entries:
            return _ok()
        shared = next((e for e in entries if e.every_call), None)
        if shared is not None:
            return copy.deepcopy(shared.result)
        if rule == "in_order":
            k, self._canned_next = self._canned_next, self._canned_next + 1
            return copy.deepcopy(entries[k].result) if k < len(entries) else _ok()
        matching = [
            i
            for i, e in enumerate(entries)
            if e.call is not None and e.call.name == name and args_match(e.call, args)
        ]
        for i in matching:
            if i not in self._canned_used:
                self._canned_used.add(i)
                return copy.deepcopy(entries[i].result)
        if matching:
            # A retry of a call already answered gets its own result again, not the next
            # unused result (which was written for another call).
            return copy.deepcopy(entries[matching[0]].result)
        for i, entry in enumerate(entries):
            if i not in self._canned_used and (entry.call is None or entry.call.name == name):
                self._canned_used.add(i)
                return copy.deepcopy(entry.result)
        return _ok()


def state_matches(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    """Differences between an expected partial snapshot and an actual one, as readable lines.

    Lists compare as sets (order never matters); request contents compare normalized.
    """
    problems: list[str] = []
    for key, want in expected.items():
        have = actual.get(key)
        if isinstance(want, dict):
            have = have if isinstance(have, dict) else {}
            for sub, sub_want in want.items():
                problems += _diff_list(f"{key}.{sub}", sub_want, have.get(sub, []))
        elif isinstance(want, list):
            problems += _diff_list(key, want, have or [])
        elif want != have:
            problems.append(f"{key}: expected {want!r}, got {have!r}")
    return problems


def _diff_list(where: str, want: list[Any], have: list[Any]) -> list[str]:
    norm_want = {normalize_text(str(v)) for v in want}
    norm_have = {normalize_text(str(v)) for v in have}
    lines = []
    missing = sorted(v for v in want if normalize_text(str(v)) not in norm_have)
    extra = sorted(v for v in have if normalize_text(str(v)) not in norm_want)
    if missing:
        lines.append(f"{where}: missing {', '.join(map(str, missing))}")
    if extra:
        lines.append(f"{where}: unexpected {', '.join(map(str, extra))}")
    return lines


__all__ = [
    "DUPLICATE_SKIPPED",
    "UPSTREAM_NUDGE_TEXT",
    "BackendSpec",
    "BookableSession",
    "Fault",
    "HarnessOptions",
    "ToolBackend",
    "ToolBinding",
    "choose_harness",
    "state_matches",
]
