"""``voxbench fdb score`` as one call: ``score_fdb(options)`` scores a directory of outputs
and returns everything the command shows (``FdbScoreResult``), its errors included.

``scoring.score_directory`` runs the scorers and writes the scores, the summary and
``fdb_report.md``; around it this module checks the inputs, sets up the ASR and the LLM
judge, writes the CSV and the HTML page asked for, gates the summary against a baseline
(``gating.compare``) and decides what ends the command: regressions, samples that could not
be scored. Nothing is printed: the CLI shows the result and picks the exit code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from voxbench.core.errors import ConfigError, RunIncompleteError
from voxbench.fullduplex.annotations import load_gt_distribution
from voxbench.fullduplex.corpus import DERIVED_DIR
from voxbench.fullduplex.gating import GateResult, compare
from voxbench.fullduplex.html import write_fdb_html
from voxbench.fullduplex.judge import ChatJudge
from voxbench.fullduplex.progress import ProgressView, no_progress
from voxbench.fullduplex.report import REPORT_FILE
from voxbench.fullduplex.run import existing_dir
from voxbench.fullduplex.sample_context import MODES, Mode, SampleScore
from voxbench.fullduplex.scoring import ScoreReport, score_directory
from voxbench.fullduplex.summary import read_summary, write_csv
from voxbench.fullduplex.timings import RunTotals
from voxbench.fullduplex.transcripts import DEFAULT_ASR, TranscriptStore


@dataclass(frozen=True)
class FdbScoreOptions:
    """What to score and how (the flags of ``voxbench fdb score``); an unknown ``mode`` is
    refused when the options are made."""

    out_dir: Path
    """A directory of outputs in the FDB layout."""
    mode: str = "fdb-v1"
    """``fdb-v1`` (the public scripts) or ``voxbench`` (``sample_context.MODES``)."""
    results: Path | None = None
    """Where the scores, summary, reports and derived transcripts go (None: ``out_dir``)."""
    csv: Path | None = None
    """Also write the summary as CSV to this file."""
    baseline: Path | None = None
    """Gate against this stored summary (JSON or CSV)."""
    tolerance: float = 0.02
    """Allowed worsening of rates."""
    latency_tolerance: float = 0.1
    """Allowed latency increase (seconds)."""
    judge: str | None = None
    """LLM judge, ``provider/model`` (OpenAI-compatible); None: no judged metrics."""
    judge_base_url: str | None = None
    judge_seed: int = 0
    asr: str | None = DEFAULT_ASR
    """ASR for outputs without an ASR file; None is the metadata mode (never transcribe)."""
    gt: Path | None = None
    """``icc_gt_distribution.json`` (None: found upwards)."""
    target: str | None = None
    """Target name when no run record says it."""
    vad_model: Path | None = None
    """Another Silero VAD ONNX file for fdb-v1 mode."""
    html: bool = False
    """Also write ``fdb_report_<mode>.html``."""
    embed_audio: bool = False
    """With ``html``: put the audio into the page."""

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ConfigError(
                f"unknown mode {self.mode!r}", field="--mode", expected=" or ".join(MODES)
            )


@dataclass(frozen=True)
class AsrUse:
    """Whether ASR ran for a scoring, with which engine, and where its transcripts went."""

    made: int
    """Outputs transcribed by this scoring."""
    engine: str | None
    """The engine it transcribes with (None: metadata mode)."""
    saved_to: Path | None
    """Where the transcripts it made were kept (None: in memory only)."""
    reused: int
    """Transcripts made by an earlier scoring and used again."""
    engines_used: str | None
    """The engines of every transcript used (the summary's ``asr``)."""
    ran: bool
    """Some transcript came from an ASR engine, not from the outputs' own ASR files."""


@dataclass
class FdbScoreResult:
    """What one ``fdb score`` produced and how it ends."""

    report: ScoreReport
    asr: AsrUse
    totals: RunTotals
    """Samples scored ok and with errors, and the run's average time to first audio."""
    csv: Path | None = None
    """The CSV file written (``FdbScoreOptions.csv``)."""
    page: Path | None = None
    """The HTML page written (``FdbScoreOptions.html``)."""
    gates: list[GateResult] = field(default_factory=list)
    """Every metric compared with the baseline (none without one)."""
    gate_error: ConfigError | None = None
    """The baseline could not be read or does not match this scoring: the command's error
    once the summary is shown."""
    incomplete: RunIncompleteError | None = None
    """Some samples could not be scored: the command's error once the rest is shown."""

    @property
    def summary(self) -> dict[str, Any]:
        return self.report.summary

    @property
    def scores(self) -> list[SampleScore]:
        return self.report.scores

    @property
    def errors(self) -> list[SampleScore]:
        """The samples that could not be scored."""
        return [s for s in self.report.scores if s.error]

    @property
    def regressions(self) -> list[GateResult]:
        """The gated metrics worse than the baseline by more than their tolerance."""
        return [g for g in self.gates if g.regressed]

    @property
    def report_file(self) -> Path | None:
        """``fdb_report.md`` (None when nothing was written)."""
        results = self.report.results_dir
        return results / REPORT_FILE if results is not None else None


def score_fdb(options: FdbScoreOptions, *, progress: ProgressView = no_progress) -> FdbScoreResult:
    """Score every sample under ``options.out_dir`` and write the files asked for.

    A user error (a missing directory or ``--gt`` file, nothing to score) is raised; a
    baseline that cannot be used and samples that could not be scored are returned in the
    result, since the summary is still worth showing. ``progress`` is shown while the
    samples are scored."""
    out_dir = options.out_dir
    existing_dir(out_dir, "OUT_DIR", "a directory of FDB outputs")
    if options.gt is not None:  # a missing or broken file is one error, not one per sample
        load_gt_distribution(options.gt)
    store = TranscriptStore(options.asr)
    judge = (
        ChatJudge(options.judge, base_url=options.judge_base_url, seed=options.judge_seed)
        if options.judge
        else None
    )
    try:
        with progress(f"score ({options.mode})") as ticker:
            report = score_directory(
                out_dir, mode=cast(Mode, options.mode), transcripts=store, judge=judge,
                gt_file=options.gt, target=options.target, vad_model=options.vad_model,
                results_dir=options.results, on_found=ticker.total,
                progress=lambda sample: ticker.advance(sample.relative),
            )  # fmt: skip
    finally:
        if judge is not None:
            judge.close()
    if not report.scores:
        raise ConfigError(
            "nothing to score"
            + (f" ({len(report.skipped)} sample(s) skipped)" if report.skipped else ""),
            file=out_dir,
            field="OUT_DIR",
            expected="sample folders with output.wav or output.json (see voxbench fdb run)",
        )
    result = FdbScoreResult(report, _asr_use(report, store), _totals(report))
    if options.csv is not None:
        write_csv(report.summary, options.csv)
        result.csv = options.csv
    if options.html:
        result.page = write_fdb_html(
            report.results_dir or out_dir,
            mode=options.mode,
            embed_audio=options.embed_audio,
            samples_dir=out_dir,
        )
    if options.baseline is not None:
        try:
            result.gates = compare(
                report.summary,
                read_summary(options.baseline),
                tolerance=options.tolerance,
                latency_tolerance=options.latency_tolerance,
            )
        except ConfigError as exc:
            result.gate_error = exc
    errors = result.errors
    if errors:
        result.incomplete = RunIncompleteError(
            f"{len(errors)} of {len(report.scores)} sample(s) failed or could not be scored "
            "(listed above)"
        )
    return result


def _asr_use(report: ScoreReport, store: TranscriptStore) -> AsrUse:
    made = len(report.transcribed)
    return AsrUse(
        made=made,
        engine=store.asr_name,
        saved_to=report.results_dir / DERIVED_DIR if report.results_dir else None,
        reused=sum(store.engines.values()) - made,
        engines_used=report.summary.get("asr"),
        ran=bool(store.engines),
    )


def _totals(report: ScoreReport) -> RunTotals:
    """Samples scored ok / with errors, and the run's average time to first audio."""
    errors = sum(1 for s in report.scores if s.error)
    ttft = (report.summary.get("run_totals") or {}).get("average_ttft")
    return RunTotals(len(report.scores) - errors, errors, ttft)
