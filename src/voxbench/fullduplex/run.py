"""``voxbench fdb run`` as one call: ``run_fdb(options)`` drives a target over an FDB corpus
and returns what the pass did (``FdbRunResult``), the command's errors included.

It checks the corpus and the target's options, builds the target's sessions, drives the
corpus (in this process, or through the caller's ``remote`` driver: the Ray executor lives
in ``scale``, a room above this one) and reads the samples' records back for the stage
timings and the totals. Nothing is printed: the CLI shows the result, raises its error and
picks the exit code.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from voxbench.audio.perturb import parse_perturbations
from voxbench.core.errors import ConfigError, RunIncompleteError
from voxbench.fullduplex.driver import DriveReport, drive_corpus, fdb_session_factory
from voxbench.fullduplex.progress import ProgressView, no_progress
from voxbench.fullduplex.scoring import RUN_RECORD_FILE
from voxbench.fullduplex.stream import DEFAULT_SYSTEM_PROMPT, StreamOptions
from voxbench.fullduplex.timings import RunTotals, read_records, run_totals, stage_timings
from voxbench.fullduplex.transcripts import DEFAULT_ASR
from voxbench.runner.credentials import check_credentials
from voxbench.targets.registry import canonical_name, check_target_options

DEFAULT_TTS = "local/espeak"
"""Text targets: the TTS of the cascade they are wrapped in."""


@dataclass(frozen=True)
class FdbRunOptions:
    """What to drive and how (the flags of ``voxbench fdb run``)."""

    corpus: Path
    """An FDB corpus: v1_0, v1_5, a subset, or one sample."""
    target: str
    """The system under test, ``provider/model`` or ``module:Class``."""
    out: Path | None = None
    """Mirror the corpus here; None writes the outputs beside the inputs."""
    concurrency: int = 1
    realtime: bool | None = None
    """True: real time; False: virtual time; None: virtual for in-process targets."""
    base_url: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    """Target options (``--option key=value``); they win over ``stt`` and ``tts``."""
    stt: str = DEFAULT_ASR
    """Text targets: the cascade's STT."""
    tts: str = DEFAULT_TTS
    """Text targets: the cascade's TTS."""
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    endpoint_ms: int = 600
    barge_in: bool = True
    clean: bool = True
    """v1.5: also stream ``clean_input.wav``."""
    benchmark: str | None = None
    """Knowledge base for local agents."""
    categories: tuple[str, ...] = ()
    """Only these categories or subset folders (none: all)."""
    limit: int | None = None
    """At most this many samples of each category, the first in corpus order."""
    perturb: str | None = None
    """What the target hears every input through (``--perturb``); needs ``out``."""
    seed: int = 0
    """Seeds the perturbations (each sample's input by its path too)."""


@dataclass(frozen=True)
class FdbJob:
    """Everything a driver needs to drive the corpus, resolved from ``FdbRunOptions``
    (picklable: a Ray shard's worker gets one, see ``scale.fdb``)."""

    corpus: Path
    target: str
    name: str
    base_url: str | None
    options: dict[str, Any]
    benchmark: str | None
    out_dir: Path | None
    opts: StreamOptions
    with_clean: bool
    categories: tuple[str, ...]
    limit: int | None
    concurrency: int
    in_process: bool
    """An in-process target (or local speech) computes on the worker's CPU."""


RemoteDrive = Callable[[FdbJob], DriveReport | None]
"""Drives a job elsewhere (e.g. ``scale.fdb.drive_on_ray``) and returns its report, or None
to have it driven in this process."""


@dataclass
class FdbRunResult:
    """What one ``fdb run`` did and how it ends."""

    report: DriveReport
    scored_dir: Path
    """Where ``voxbench fdb score`` finds the outputs (``--out``, else the corpus)."""
    stage_timings: list[dict[str, Any]] = field(default_factory=list)
    """Wall seconds per stage over the covered samples' records (``timings.stage_timings``)."""
    totals: RunTotals = field(default_factory=lambda: RunTotals(0, 0, None))
    nothing_to_run: ConfigError | None = None
    """The corpus had no sample to drive: the command's error, nothing else to show."""
    incomplete: RunIncompleteError | None = None
    """Some samples failed: the command's error once the rest is shown."""


def existing_dir(path: Path, field: str, expected: str) -> None:
    """A directory argument that is not there is a user error, before any work starts."""
    if not path.exists():
        raise ConfigError("not found", file=path, field=field, expected=expected)
    if not path.is_dir():
        raise ConfigError("is a file", file=path, field=field, expected=expected)


def checked_perturbation(options: FdbRunOptions) -> str | None:
    """``--perturb`` spelled canonically (None: clean). A perturbed pass writes into its own
    ``--out``: never beside the clean inputs, nor over a pass that heard something else (a
    completed sample would be resumed as if it had heard this)."""
    chain = parse_perturbations(options.perturb)
    if not chain:
        return None
    spec = str(chain)
    if options.out is None:
        raise ConfigError(
            f"a pass perturbed by {spec} needs its own output folder",
            field="--out",
            expected="--out DIR (the corpus keeps its clean outputs)",
        )
    for record in read_records(options.out.rglob(RUN_RECORD_FILE)):
        if record.get("perturbations") != spec:
            heard = record.get("perturbations") or "clean audio"
            raise ConfigError(
                f"holds samples driven with {heard}, not {spec}",
                file=options.out,
                field="--out",
                expected="an output folder of its own for each perturbation",
            )
    return spec


def run_fdb(
    options: FdbRunOptions,
    *,
    remote: RemoteDrive | None = None,
    progress: ProgressView = no_progress,
) -> FdbRunResult:
    """Drive ``options.target`` over ``options.corpus``; resumes what an earlier pass
    completed. ``progress`` is shown while this process drives; a user error in the
    options (a missing corpus, an unknown target option) is raised before any work."""
    existing_dir(options.corpus, "CORPUS", "an FDB corpus directory (samples with input.wav)")
    target_options = {"stt": options.stt, "tts": options.tts, **options.options}
    check_target_options(options.target, target_options)
    # A missing key is one error (exit 3) before the first sample, not a failure per sample.
    check_credentials(options.target, base_url=options.base_url, target_options=target_options)
    perturb = checked_perturbation(options)
    make = fdb_session_factory(options.target, options.base_url, target_options, options.benchmark)
    name = canonical_name(options.target)
    job = FdbJob(
        corpus=options.corpus.resolve(), target=options.target, name=name,
        base_url=options.base_url, options=target_options, benchmark=options.benchmark,
        out_dir=options.out.resolve() if options.out else None,
        opts=StreamOptions(
            realtime=options.realtime, system_prompt=options.system_prompt,
            endpoint_ms=options.endpoint_ms, barge_in=options.barge_in,
            perturb=perturb, seed=options.seed,
        ),
        with_clean=options.clean, categories=options.categories, limit=options.limit,
        concurrency=options.concurrency, in_process=name.split("/", 1)[0] in ("local", "cascade"),
    )  # fmt: skip
    report = remote(job) if remote is not None else None
    if report is None:
        with progress(f"fdb · {name}") as ticker:

            def started(todo: int, resumed: int) -> None:
                ticker.total(todo, f"{resumed} already done" if resumed else "")

            def done(sample: Any, record: dict[str, Any]) -> None:
                mark = "" if record["status"] == "completed" else " (failed)"
                ticker.advance(f"{sample.relative}{mark}")

            report = asyncio.run(
                drive_corpus(
                    options.corpus, make, name, out_dir=options.out,
                    concurrency=options.concurrency, opts=job.opts, with_clean=options.clean,
                    on_start=started, on_done=done, categories=options.categories,
                    limit=options.limit,
                )
            )  # fmt: skip
    result = FdbRunResult(report, options.out or options.corpus)
    if not (report.completed or report.resumed or report.failed):
        skipped = f" ({len(report.skipped)} skipped)" if report.skipped else ""
        result.nothing_to_run = ConfigError(
            "no sample to run" + skipped,
            file=options.corpus,
            field="CORPUS",
            expected="sample folders with input.wav and an annotation (pause.json, "
            "turn_taking.json, interrupt.json or metadata.json)",
        )
        return result
    records = read_records(report.record_files)
    result.stage_timings = stage_timings(records)
    result.totals = run_totals(records)
    if report.failed:
        result.incomplete = RunIncompleteError(
            f"{len(report.failed)} of {len(report.failed) + len(report.completed)} "
            "sample(s) failed (listed above)"
        )
    return result
