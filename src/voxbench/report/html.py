"""``report.html``: a run (or two runs compared) as one self-contained page.

The page holds the scorecard with its confidence intervals, every turn with what was said,
heard and called and every verdict with its reasoning, players for the user's and the
agent's part of each turn, the latency distributions, the turn-taking timeline and the end
state. It reads the run contract only (``core.rundir.RunDirectory``: the transcript, the saved
judgments and scorecard, ``analysis.json``); the caller that judges (``evaluation``, the CLI)
may pass its fresh scorecard and judgments instead of the saved ones.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import soundfile as sf

from voxbench.analysis import load_or_analyse
from voxbench.core.errors import RunError
from voxbench.core.measures import RunAnalysis, TurnMeasures
from voxbench.core.records import Judgment, RunInfo, Scorecard, TurnRecord
from voxbench.core.rundir import RunDirectory, write_text_atomic
from voxbench.core.timeline import RecordingStarted
from voxbench.report.audio_links import AudioLinks
from voxbench.report.markdown import checks_lines
from voxbench.report.page import render_page
from voxbench.report.svg import TimelineTurn, distribution_svg, rate_bar_svg, timeline_svg
from voxbench.scoring.compare import compare_runs
from voxbench.scoring.scorecard import strict_outcomes

PLAYER_PAD = 0.15
"""Seconds of recording kept before and after a turn's part in its player."""
DISTRIBUTIONS = (
    ("ttfb", "Time to first byte (TTFB)"),
    ("voice_to_voice", "Voice to voice (V2V)"),
    ("first_audio_latency", "First agent audio after the user finished"),
)
"""The latency distributions a page plots (those the run measured)."""
RESULT_LIMIT = 4000
"""Characters of a tool result shown (the whole result is in ``transcript.jsonl``)."""


@dataclass
class RunReportData:
    """What a run page shows, read from a run directory."""

    run: RunDirectory
    info: RunInfo
    records: list[TurnRecord]
    """Every recorded turn, in conversation order."""
    card: Scorecard | None
    judgments: list[Judgment]
    analysis: RunAnalysis | None
    analysis_error: str | None = None
    origin: float | None = None
    """Run-clock time of the recording's first sample (audio runs)."""
    duration: float | None = None
    """Seconds of recording (audio runs)."""
    notes: list[str] = field(default_factory=list)

    @classmethod
    def read(
        cls,
        run_dir: str | Path | RunDirectory,
        *,
        card: Scorecard | None = None,
        judgments: list[Judgment] | None = None,
        analysis: RunAnalysis | None = None,
    ) -> RunReportData:
        """The run's data; ``card``/``judgments``/``analysis`` replace the saved ones."""
        run = run_dir if isinstance(run_dir, RunDirectory) else RunDirectory.open_existing(run_dir)
        info = run.info()
        if card is None:
            card = run.scorecard()
            judgments = run.judgments() if card is not None else None
        error = None
        if analysis is None:
            try:
                analysis = load_or_analyse(run)
            except Exception as exc:  # the page still shows the turns; the error is on it
                error = f"{type(exc).__name__}: {exc}"
        data = cls(
            run=run,
            info=info,
            records=run.turns(),
            card=card,
            judgments=list(judgments or []),
            analysis=analysis,
            analysis_error=error,
        )
        if run.has_recording:
            data.origin = _recording_origin(run)
            data.duration = _duration(run.recording_file)
        if card is None:
            data.notes.append(
                "This run has not been judged yet: no verdicts are shown "
                "(voxbench judge RUN, or voxbench report RUN, judges it)."
            )
        if info.status == "started":
            data.notes.append("This run is still in progress (or was stopped): turns so far.")
        if analysis is not None:
            data.notes += analysis.warnings
        return data


def _recording_origin(run: RunDirectory) -> float:
    # Through the typed timeline: a schema-1 file keeps the origin inside ``data``.
    for event in run.events():
        if isinstance(event, RecordingStarted):
            return event.origin
    return 0.0


def _duration(file: Path) -> float | None:
    try:
        return float(sf.info(str(file)).duration)
    except (RuntimeError, OSError):  # unreadable: the players are left out
        return None


# -- one turn ---------------------------------------------------------------------------


@dataclass
class TurnView:
    """One turn as the page shows it."""

    record: TurnRecord
    judgments: list[Judgment]
    measures: TurnMeasures | None
    verdict: str
    """``pass``, ``fail``, ``undecided`` or ``unjudged``."""
    user_audio: Any = None
    agent_audio: Any = None
    user_span: tuple[float, float] | None = None
    agent_span: tuple[float, float] | None = None

    @property
    def failed_dimensions(self) -> list[str]:
        return [j.dimension for j in self.judgments if j.passed is False]

    @property
    def tool_calls(self) -> list[dict[str, str]]:
        return [
            {
                "name": call.name,
                "arguments": _json(call.arguments)
                if call.parse_error is None
                else (call.raw_arguments or ""),
                "parse_error": call.parse_error or "",
                "result": _json(call.result)[:RESULT_LIMIT],
                "duplicate": "duplicate" if call.is_duplicate else "",
            }
            for call in self.record.tool_calls
        ]


def _json(value: Any) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False, sort_keys=True, default=str)


_VERDICTS = {True: "pass", False: "fail", None: "undecided"}


def _span(a: float | None, b: float | None, data: RunReportData) -> tuple[float, float] | None:
    """A run-clock interval as seconds on the recording, padded and clamped to it."""
    if a is None or b is None or data.origin is None or data.duration is None:
        return None
    start = max(a - data.origin - PLAYER_PAD, 0.0)
    end = min(b - data.origin + PLAYER_PAD, data.duration)
    return (round(start, 2), round(end, 2)) if end > start else None


def _first(*values: float | None) -> float | None:
    present = [v for v in values if v is not None]
    return min(present) if present else None


def _last(*values: float | None) -> float | None:
    present = [v for v in values if v is not None]
    return max(present) if present else None


def turn_views(data: RunReportData, links: AudioLinks) -> list[TurnView]:
    """Every recorded turn with its judgments, measures and players."""
    by_turn: dict[str, list[Judgment]] = {}
    for j in data.judgments:
        by_turn.setdefault(j.turn, []).append(j)
    # A turn's verdict is its strict per-turn outcome, as the scorecard counts it.
    # Turns without any judgment (a run judged with --only-turns) stay unjudged.
    judged = [r for r in data.records if r.turn in by_turn]
    strict = strict_outcomes(judged, data.judgments) if data.card is not None else {}
    views = []
    for record in data.records:
        m = data.analysis.turn(record.turn) if data.analysis is not None else None
        t = record.timings
        user = _span(
            _first(m.user_speech_start if m else None, t.start),
            _last(m.user_speech_end if m else None, t.user_end),
            data,
        )
        agent = _span(
            _first(
                m.first_agent_audio if m else None,
                m.agent_speech_start if m else None,
                t.first_audio,
            ),
            _last(m.agent_speech_end if m else None, t.end),
            data,
        )
        judgments = by_turn.get(record.turn, [])
        agent_spoke = t.first_audio is not None or (
            m is not None and m.first_agent_audio is not None
        )
        view = TurnView(
            record=record,
            judgments=judgments,
            measures=m,
            verdict=_VERDICTS[strict[record.turn]] if record.turn in strict else "unjudged",
            user_span=user,
            agent_span=agent if agent_spoke else None,
        )
        recording = data.run.recording_file
        if view.user_span is not None:
            view.user_audio = links.src(recording, *view.user_span)
        if view.agent_span is not None:
            view.agent_audio = links.src(recording, *view.agent_span)
        views.append(view)
    return views


# -- plots and tables --------------------------------------------------------------------


def _latencies(data: RunReportData, metric: str) -> list[float]:
    if data.analysis is None:
        return []
    return [v for m in data.analysis.turns if m.scored and (v := getattr(m, metric)) is not None]


def timeline(data: RunReportData) -> Any:
    """The turn-taking timeline of an audio run (None for a text run)."""
    if data.analysis is None or not data.analysis.turn_taking or data.origin is None:
        return None
    o = data.origin
    by_id = {r.turn: r for r in data.records}
    turns = []
    for m in data.analysis.turns:
        record = by_id.get(m.turn)
        if record is None:
            continue
        t = record.timings
        end = _last(t.end, m.agent_speech_end, t.user_end, t.start)
        user = (
            (m.user_speech_start - o, m.user_speech_end - o)
            if m.user_speech_start is not None and m.user_speech_end is not None
            else None
        )
        agent = (
            (m.agent_speech_start - o, m.agent_speech_end - o)
            if m.agent_speech_start is not None and m.agent_speech_end is not None
            else None
        )
        tag = (
            m.first_agent_audio - m.tag_alignment - o
            if m.tag_alignment is not None and m.first_agent_audio is not None
            else None
        )
        turns.append(
            TimelineTurn(
                turn=m.turn,
                start=t.start - o,
                end=(end or t.start) - o,
                user=user,
                agent=agent,
                overlaps=[(a - o, b - o) for a, b in m.overlaps],
                issues=list(m.issues),
                tag=tag,
            )
        )
    duration = data.duration or max((t.end for t in turns), default=1.0)
    return timeline_svg(
        turns, duration=duration, unprompted=[(a - o, b - o) for a, b in data.analysis.unprompted]
    )


def end_state_rows(data: RunReportData) -> list[dict[str, str]]:
    """Expected against final backend state, key by key (none when not checked)."""
    card = data.card
    end = card.checks.end_state if card is not None and card.checks is not None else None
    if end is None:
        return []
    final = data.records[-1].state_after if data.records else {}
    # The check's own diff decides (it compares as the benchmark says, e.g. lists as sets).
    differing = {line.split(":", 1)[0].strip() for line in end.diff}
    return [
        {
            "key": key,
            "expected": _json(expected),
            "actual": _json(final.get(key)) if key in final else "(absent)",
            "ok": "differs" if key in differing else "ok",
        }
        for key, expected in end.expected.items()
    ]


def scorecard_rows(card: Scorecard) -> list[dict[str, Any]]:
    """The scorecard's rows (strict pass first) with their rate bars."""
    return [
        {
            "name": "strict per-turn pass" if score is card.strict_pass else score.dimension,
            "strict": score is card.strict_pass,
            "score": score,
            "bar": rate_bar_svg(score.rate, score.ci95),
        }
        for score in [card.strict_pass, *card.dimensions]
    ]


def run_context(data: RunReportData, links: AudioLinks) -> dict[str, Any]:
    """Everything the run template needs."""
    card = data.card
    distributions = [
        distribution_svg({data.info.target.name: values}, title=title)
        for metric, title in DISTRIBUTIONS
        if (values := _latencies(data, metric))
    ]
    return {
        "info": data.info,
        "card": card,
        "scorecard": scorecard_rows(card) if card is not None else [],
        "checks": [line.removeprefix("- ") for line in checks_lines(card.checks)]
        if card is not None and card.checks is not None
        else [],
        "latency": (card.latency if card is not None and card.latency else None)
        or (data.analysis.latency if data.analysis is not None else {}),
        "turns": turn_views(data, links),
        "distributions": distributions,
        "timeline": timeline(data),
        "end_state": end_state_rows(data),
        "end_state_diff": card.checks.end_state.diff
        if card is not None and card.checks is not None and card.checks.end_state is not None
        else [],
        "notes": data.notes,
        "analysis_error": data.analysis_error,
        "audio": data.run.has_recording,
    }


# -- the public functions ----------------------------------------------------------------


def render_run_html(
    run_dir: str | Path,
    *,
    embed_audio: bool = False,
    links: AudioLinks | None = None,
    card: Scorecard | None = None,
    judgments: list[Judgment] | None = None,
    analysis: RunAnalysis | None = None,
) -> str:
    """The run's ``report.html`` as text.

    Players link to ``conversation.wav`` relative to the run directory (where ``report.html``
    is written), or carry their audio with ``embed_audio``; ``links`` overrides both (a web
    viewer's URLs). ``card`` and ``judgments`` replace the saved ones (a fresh judging)."""
    data = RunReportData.read(run_dir, card=card, judgments=judgments, analysis=analysis)
    links = links or AudioLinks(base_dir=data.run.path, embed=embed_audio)
    return render_page("run.html.j2", **run_context(data, links))


def write_run_html(
    run_dir: str | Path,
    *,
    embed_audio: bool = False,
    card: Scorecard | None = None,
    judgments: list[Judgment] | None = None,
    analysis: RunAnalysis | None = None,
) -> Path:
    """Write the run's ``report.html`` (atomically) and return its path."""
    run = RunDirectory.open_existing(run_dir)
    text = render_run_html(
        run.path, embed_audio=embed_audio, card=card, judgments=judgments, analysis=analysis
    )
    write_text_atomic(run.report_html_file, text)
    return run.report_html_file


@dataclass
class _Side:
    data: RunReportData
    views: dict[str, TurnView]


def render_compare_html(
    a: str | Path,
    b: str | Path,
    *,
    embed_audio: bool = False,
    links: AudioLinks | None = None,
    out_dir: Path | None = None,
    judged: tuple[tuple[Scorecard, list[Judgment]], tuple[Scorecard, list[Judgment]]] | None = None,
) -> str:
    """Runs A and B of one benchmark side by side: per-dimension deltas with the paired test
    (exact McNemar), latency distributions overlaid, and every turn of both with players.

    Links are relative to ``out_dir`` (where the page is written; default the working
    directory); a web viewer passes ``links=AudioLinks.served({a: "/run/A/", b: "/run/B/"})``.
    ``judged`` gives each run's scorecard and judgments (else the saved ones)."""
    links = links or AudioLinks(base_dir=out_dir or Path.cwd(), embed=embed_audio)
    sides = []
    for i, path in enumerate((a, b)):
        card, judgments = judged[i] if judged is not None else (None, None)
        data = RunReportData.read(path, card=card, judgments=judgments)
        if data.card is None:
            raise RunError(f"{data.run.path}: not judged yet (run voxbench judge on it first)")
        sides.append(_Side(data, {v.record.turn: v for v in turn_views(data, links)}))
    da, db = sides[0].data, sides[1].data
    assert da.card is not None and db.card is not None
    comparison = compare_runs(da.card, da.records, da.judgments, db.card, db.records, db.judgments)
    label_a, label_b = f"A: {da.info.target.name}", f"B: {db.info.target.name}"
    distributions = []
    for metric, title in DISTRIBUTIONS:
        va, vb = _latencies(da, metric), _latencies(db, metric)
        if va or vb:
            distributions.append(distribution_svg({label_a: va, label_b: vb}, title=title))
    order = list(sides[0].views) + [t for t in sides[1].views if t not in sides[0].views]
    rows = [{"turn": t, "a": sides[0].views.get(t), "b": sides[1].views.get(t)} for t in order]
    judges_a, judges_b = sorted(set(da.card.judges)), sorted(set(db.card.judges))
    return render_page(
        "compare.html.j2",
        comparison=comparison,
        a=da,
        b=db,
        label_a=label_a,
        label_b=label_b,
        distributions=distributions,
        rows=rows,
        judges_note=(
            f"The runs were judged by different judges ({', '.join(judges_a)} vs "
            f"{', '.join(judges_b)})."
            if judges_a != judges_b
            else None
        ),
    )
