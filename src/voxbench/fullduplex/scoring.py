"""Score a directory of model outputs (FDB layout) in ``fdb-v1`` or ``voxbench`` mode.

One bad sample (malformed annotation, unreadable wav, a driver record saying the target
failed) becomes an error row for that sample: counted in ``errors``, no metric values; the
others are still scored. Per-sample scores go to ``fdb_scores_<mode>.jsonl``, the summary
to ``fdb_summary_<mode>.json`` and a readable report to ``fdb_report.md``, in the results
directory (the scored directory unless told otherwise). Nothing is written into a sample
folder: transcripts voxbench makes and judge answers go under ``fdb_derived/`` there.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from voxbench.core.errors import ConfigError, VoxbenchError
from voxbench.core.results import fdb_summary_name
from voxbench.core.versions import run_versions
from voxbench.fullduplex import score_fdb_v1, score_voxbench
from voxbench.fullduplex.corpus import (
    DERIVED_DIR,
    OUTPUT_JSON,
    OUTPUT_WAV,
    FdbSample,
    SkippedSample,
    scan_corpus,
)
from voxbench.fullduplex.judge import ChatJudge
from voxbench.fullduplex.report import REPORT_FILE, render_report
from voxbench.fullduplex.sample_context import MODES, Mode, SampleScore, ScoringContext
from voxbench.fullduplex.summary import summarize, write_json
from voxbench.fullduplex.timings import read_records, run_totals, stage_timings, target_errors
from voxbench.fullduplex.transcripts import TranscriptStore
from voxbench.runner.config import DEFAULT_RUNS_DIR
from voxbench.store import index_finished_run

log = logging.getLogger(__name__)

RUN_RECORD_FILE = "voxbench_fdb.json"
"""The driver's per-sample record; scoring reads the target name from it."""
UNNAMED_TARGET = "unnamed"


@dataclass
class ScoreReport:
    """The outcome of scoring one directory."""

    mode: Mode
    scores: list[SampleScore]
    summary: dict[str, Any]
    skipped: list[SkippedSample] = field(default_factory=list)
    transcribed: list[Path] = field(default_factory=list)
    """Derived transcripts this scoring made (one per output it ran ASR on)."""
    results_dir: Path | None = None
    """Where the scores, summary and report were written (None: not written)."""


def _record_of(sample: FdbSample) -> dict[str, Any]:
    """The driver's record of ``sample`` (empty when there is none or it is unreadable)."""
    path = sample.file(RUN_RECORD_FILE)
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def score_samples(
    samples: list[FdbSample],
    ctx: ScoringContext,
    mode: Mode,
    progress: Callable[[FdbSample], None] | None = None,
) -> list[SampleScore]:
    """Score each sample; errors are recorded per sample, never raised."""
    scorers = score_fdb_v1.SCORERS if mode == "fdb-v1" else score_voxbench.SCORERS
    out = []
    for sample in samples:
        record = _record_of(sample)
        name = record.get("target")
        score = SampleScore(
            sample=sample.relative,
            subset=sample.subset,
            category=sample.category,
            target=name if isinstance(name, str) and name else ctx.target or UNNAMED_TARGET,
        )
        failed = target_errors(record) if record else []
        try:
            if failed:
                # The target failed on this sample: an error row, never a score (its output,
                # if any, is silence or a fragment, and would score as a perfect pause).
                raise VoxbenchError("target failed: " + "; ".join(failed))
            scorers[sample.category](ctx, sample, score)
        except (VoxbenchError, OSError) as exc:
            score.error = str(exc)
            log.warning("cannot score %s: %s", sample.path, exc)
        out.append(score)
        if progress is not None:
            progress(sample)
    return out


def find_scorable(
    out_dir: Path, mode: Mode
) -> tuple[list[FdbSample], list[SkippedSample], list[str]]:
    """Samples under ``out_dir`` that have an output to score in ``mode``, and those whose
    target failed (no output: they are error rows)."""
    scan = scan_corpus(out_dir, require=())
    samples, skipped, notes = [], list(scan.skipped), []
    v15 = 0
    for s in scan.samples:
        if mode == "fdb-v1" and s.category == "behavior":
            v15 += 1
        elif target_errors(_record_of(s)):
            samples.append(s)  # the target failed here: an error row, output or not
        elif not (s.has(OUTPUT_WAV) or s.has(OUTPUT_JSON)):
            skipped.append(SkippedSample(s.path, "no output.wav or output.json"))
            log.warning("skipping %s: no output.wav or output.json", s.path)
        else:
            samples.append(s)
    if v15:
        notes.append(
            f"{v15} v1.5 overlap sample(s) not scored: the public v1 scripts have no metric "
            "for them (use --mode voxbench)"
        )
    return samples, skipped, notes


def scores_file(root: Path, mode: str) -> Path:
    """Where a scoring pass writes its per-sample scores."""
    return root / f"fdb_scores_{mode}.jsonl"


def summary_file(root: Path, mode: str) -> Path:
    """Where a scoring pass writes its summary."""
    return root / fdb_summary_name(mode)


def score_directory(
    out_dir: str | Path,
    *,
    mode: Mode = "fdb-v1",
    transcripts: TranscriptStore | None = None,
    judge: ChatJudge | None = None,
    gt_file: Path | None = None,
    target: str | None = None,
    write: bool = True,
    progress: Callable[[FdbSample], None] | None = None,
    on_found: Callable[[int], None] | None = None,
    vad_model: Path | None = None,
    results_dir: str | Path | None = None,
) -> ScoreReport:
    """Score every sample under ``out_dir``; write the per-sample scores and the summary.

    ``vad_model``: the Silero ONNX file fdb-v1 mode runs (default: the one faster-whisper
    ships, equal to silero-vad 6.0's); the summary records its SHA-256, since two Silero
    releases give different segments. ``results_dir``: where the files go (default
    ``out_dir``). The summary's ``asr`` names the engines whose transcripts were used (None
    when every word came from the directory's own ASR files)."""
    if mode not in MODES:
        raise VoxbenchError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
    root = Path(out_dir)
    store = transcripts or TranscriptStore()
    if vad_model is not None and not Path(vad_model).is_file():
        raise ConfigError(
            "no such file", file=vad_model, field="--vad-model", expected="a Silero VAD ONNX model"
        )
    results = Path(results_dir) if results_dir is not None else root
    ctx = ScoringContext(
        store, judge=judge, gt_file=gt_file, target=target, vad_model=vad_model,
        derived_root=results / DERIVED_DIR if write else None,
    )  # fmt: skip
    samples, skipped, notes = find_scorable(root, mode)
    if on_found is not None:
        on_found(len(samples))
    scores = score_samples(samples, ctx, mode, progress)
    records = read_records(s.file(RUN_RECORD_FILE) for s in samples)
    totals = run_totals(records)
    meta = {
        "scored_dir": str(root.resolve()),
        "asr": ", ".join(sorted(store.engines)) or None,
        "transcribed": len(store.transcribed),
        "transcripts_by_engine": dict(sorted(store.engines.items())),
        "vad_model": _describe_model(vad_model),
        "versions": run_versions(),
        "judge": judge.describe() if judge is not None else None,
        "skipped": [{"path": str(s.path), "reason": s.reason} for s in skipped],
    }
    summary = summarize(scores, mode=mode, meta=meta)
    summary["notes"] = notes + summary["notes"]
    summary["stage_timings"] = stage_timings(records)
    heard = sorted({r.get("perturbations") or "none" for r in records})
    summary["perturbations"] = None if heard in ([], ["none"]) else " | ".join(heard)
    summary["run_totals"] = {
        "records": len(records),
        "ok": totals.ok,
        "errors": totals.errors,
        "average_ttft": totals.average_ttft,
    }
    if not write:
        return ScoreReport(mode, scores, summary, skipped, list(store.transcribed))
    results.mkdir(parents=True, exist_ok=True)
    lines = "".join(json.dumps(s.to_json(), ensure_ascii=False) + "\n" for s in scores)
    scores_file(results, mode).write_text(lines, encoding="utf-8")
    write_json(summary, summary_file(results, mode))
    (results / REPORT_FILE).write_text(render_report(results), encoding="utf-8")
    # A scored directory can lie anywhere (beside the corpus's inputs by default): its
    # scoring joins the store of the runs directory voxbench runs write to.
    index_finished_run(results, runs_dir=DEFAULT_RUNS_DIR)
    return ScoreReport(mode, scores, summary, skipped, list(store.transcribed), results)


def _describe_model(path: Path | None) -> dict[str, str]:
    """The VAD model a scoring used: its file and SHA-256."""
    from voxbench.audio.vad import silero_model_path

    file = Path(path) if path is not None else silero_model_path()
    digest = hashlib.sha256(file.read_bytes()).hexdigest()
    return {"path": str(file), "sha256": digest}
