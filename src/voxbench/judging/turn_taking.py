"""The ``turn_taking`` dimension: a hook the audio turn-taking analysis fills.

Turn-taking is measured from a run's recording and timeline (``analysis/``), never guessed
by a language model. Judging does not import ``analysis`` (rooms import downwards); the
caller passes an analyser:

    ``analyser(run_path: Path, records: list[TurnRecord]) -> list[Judgment]``

returning one ``turn_taking`` judgment per analysed turn. The CLI passes the analysis of
``voxbench.analysis.turn_taking`` (``judge_turn_taking`` when it defines one, otherwise
``turn_taking_judgments(analyse_recorded_run(run_path))``). Nothing is faked: without an analyser,
without a recording, or with ``--skip-turn-taking``, the dimension is absent from the
scorecard and its status says why; an analyser that fails makes every turn a recorded judge
failure (undecided), not a pass.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from voxbench.core.records import Judgment, TurnRecord
from voxbench.core.rundir import RunDirectory

DIMENSION = "turn_taking"

TurnTakingAnalyser = Callable[[Path, list[TurnRecord]], list[Judgment]]


def turn_taking_judgments(
    run_path: Path | None,
    records: list[TurnRecord],
    analyser: TurnTakingAnalyser | None,
    *,
    skip: bool = False,
) -> tuple[list[Judgment], str]:
    """Turn-taking judgments of a run and a one-line status for the scorecard."""
    if skip:
        return [], "skipped (--skip-turn-taking)"
    if run_path is None or not RunDirectory(run_path).has_recording:
        return [], f"not analysed: the run has no {RunDirectory.RECORDING} (text run)"
    if analyser is None:
        return [], "not analysed: no turn-taking analyser is installed"
    wanted = {r.turn for r in records}
    try:
        produced = analyser(run_path, records)
    except Exception as exc:  # a broken analysis is reported, never a silent pass
        reason = f"turn-taking analysis failed: {type(exc).__name__}: {exc}"
        return [
            Judgment(
                turn=r.turn,
                dimension=DIMENSION,
                passed=None,
                judge_failed=True,
                reasoning=reason,
                judge="turn-taking-analysis",
            )
            for r in records
        ], reason
    judgments = [j for j in produced if j.dimension == DIMENSION and j.turn in wanted]
    missing = wanted - {j.turn for j in judgments}
    judgments += [
        Judgment(
            turn=turn,
            dimension=DIMENSION,
            passed=None,
            judge_failed=True,
            reasoning="the turn-taking analysis returned no verdict for this turn",
            judge="turn-taking-analysis",
        )
        for turn in sorted(missing, key=lambda t: [r.turn for r in records].index(t))
    ]
    return judgments, "analysed"
