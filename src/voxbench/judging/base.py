"""The ``RunJudge`` protocol: what every judge of a run (deterministic, LLM, turn-taking,
later the audio rubric judge) looks like to the evaluation that runs them.

A judge has a name and a version, says whether it applies to a run (and, when it does not,
the one-line status the scorecard shows instead), and turns a ``JudgeContext`` — the
benchmark, the recorded turns, the run directory, the run's analysis, the options, and the
findings of the judges that ran before it — into ``JudgeFindings``: its judgments plus typed
stats. Judges run in order (``judging.run.registered_judges``); absorption and scoring are passes over
all their judgments afterwards. Adding a judge is one class and one ``register_judge`` call.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pydantic import BaseModel

from voxbench.core.benchmark import Benchmark, ScoringRules
from voxbench.core.measures import RunAnalysis
from voxbench.core.records import Judgment, TurnRecord
from voxbench.core.rundir import RunDirectory

if TYPE_CHECKING:
    from voxbench.providers.completion import TextCompletionClient


@dataclass
class JudgeOptions:
    """How to judge a run."""

    judge: str | None = None
    """LLM judge as ``provider/model``; None judges with code only."""
    base_url: str | None = None
    only_turns: list[int] | None = None
    """Turn positions (0-based, as in the benchmark) to judge; None judges every turn."""
    skip_turn_taking: bool = False
    deterministic_only: bool = False
    use_cache: bool = True
    cache_dir: Path | None = None
    concurrency: int | None = None
    """Turns the LLM judge asks at once; None: its default."""
    client: TextCompletionClient | None = None
    """An LLM judge client to use instead of building one from ``judge`` (tests)."""
    scoring: ScoringRules | None = None
    """Scoring rules to judge by instead of the benchmark's own (a compat profile's)."""
    audio_rubric: str | None = None
    """An audio rubric (built-in name or file) to judge the agent's audio with."""
    audio_judge: str | None = None
    """The judge that hears the audio, as ``provider/model``."""
    audio_judge_base_url: str | None = None
    audio_rubric_options: dict[str, str] = field(default_factory=dict)
    """The rubric's parameters (``--audio-option target_accent=british``)."""
    audio_samples: int = 1
    audio_client: Any = None
    """An audio judge client to use instead of building one from ``audio_judge`` (tests)."""
    audio_quality: bool = False
    """Score the agent's audio per turn with DNSMOS P.835 (the ``audio_quality`` dimension)."""


@dataclass
class JudgeFindings:
    """What one judge produced on a run."""

    judgments: list[Judgment]
    stats: BaseModel | None = None
    """Typed run-level stats for the scorecard (``CheckTotals``, ``LLMJudgeStats``)."""
    status: str | None = None
    """A one-line status for the scorecard, when there is more to say than "ran"."""
    labels: list[str] = field(default_factory=list)
    """``name@version`` of the judges behind these judgments (the scorecard's ``judges``)."""
    details: Any = None
    """Raw findings later judges or passes read (the deterministic ``TurnChecks``, the LLM
    judge's per-turn outcomes)."""


@dataclass
class JudgeContext:
    """Everything a judge may read about the run it judges."""

    benchmark: Benchmark
    records: list[TurnRecord]
    """Every recorded turn, in conversation order (realignment needs the whole run)."""
    selected: set[str]
    """Ids of the turns to judge."""
    options: JudgeOptions
    run_dir: RunDirectory | None = None
    analysis: RunAnalysis | None = None
    """The run's latency and turn-taking measures (None when it could not be measured)."""
    analysis_error: str | None = None
    """Why measuring the run failed, when it did."""
    findings: dict[str, JudgeFindings] = field(default_factory=dict)
    """The findings of the judges that ran before, by judge name."""

    @property
    def scoring(self) -> ScoringRules:
        """The rules this run is judged by: the options' (a compat profile), else the
        benchmark's own."""
        return self.options.scoring or self.benchmark.scoring

    @property
    def selected_records(self) -> list[TurnRecord]:
        """The recorded turns to judge, in conversation order."""
        return [r for r in self.records if r.turn in self.selected]


@runtime_checkable
class RunJudge(Protocol):
    """A judge of a whole run."""

    name: str
    version: str

    def skip_reason(self, context: JudgeContext) -> str | None:
        """None when this judge applies to the run; otherwise why not, in one line."""
        ...

    async def judge(self, context: JudgeContext) -> JudgeFindings:
        """Judge the run."""
        ...


_REGISTRY: list[RunJudge] = []


def register_judge(judge: RunJudge) -> None:
    """Add ``judge`` after the judges already registered (it sees their findings)."""
    if any(j.name == judge.name for j in _REGISTRY):
        raise ValueError(f"a judge named {judge.name!r} is already registered")
    _REGISTRY.append(judge)


def plugin_judges() -> tuple[RunJudge, ...]:
    """The judges registered with ``register_judge``, in registration order."""
    return tuple(_REGISTRY)
