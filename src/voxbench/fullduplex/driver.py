"""Drive a target over a Full-Duplex-Bench corpus: one streamed session per input wav.

For each sample the driver writes ``output.wav`` (time-aligned, the input's length and
rate) and, for v1.5 samples, ``clean_output.wav`` from ``clean_input.wav``, plus a record
``voxbench_fdb.json`` (target, timings, transcripts, errors). Without ``out_dir`` the
outputs go beside the inputs, as the public scripts expect; with it, the corpus layout is
mirrored there and the annotation files are copied along, so the directory can be scored
on its own. A sample whose record says completed (and whose wavs exist) is skipped, so a
stopped run resumes where it was.

A sample whose target reported an error on any stream (a dead endpoint, a failed cascade
stage, a turn that never completed) is failed: its record says ``failed`` with the errors,
no output wav is written for it (a silent output would score as a perfect pause handler),
and the next run drives it again.
"""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from voxbench.audio.perturb import parse_perturbations
from voxbench.audio.wav import read_wav, write_wav
from voxbench.core.errors import ConfigError, VoxbenchError
from voxbench.core.secrets import redact
from voxbench.core.session import Session
from voxbench.core.versions import run_versions
from voxbench.fullduplex.annotations import GT_DISTRIBUTION_FILE
from voxbench.fullduplex.corpus import (
    CATEGORIES,
    CLEAN_INPUT_WAV,
    CLEAN_OUTPUT_WAV,
    INPUT_WAV,
    OUTPUT_WAV,
    CorpusScan,
    FdbSample,
    SkippedSample,
    find_upwards,
    scan_corpus,
)
from voxbench.fullduplex.sample_context import BEHAVIOR_CACHE, RELEVANCE_CACHE
from voxbench.fullduplex.scoring import RUN_RECORD_FILE
from voxbench.fullduplex.stream import StreamOptions, stream_input
from voxbench.fullduplex.timings import target_errors
from voxbench.fullduplex.transcripts import FULL_OUTPUT_JSON

log = logging.getLogger(__name__)

RECORD_SCHEMA_VERSION = 1
_CARRIED_FILES = (
    INPUT_WAV,
    CLEAN_INPUT_WAV,
    "pause.json",
    "turn_taking.json",
    "interrupt.json",
    "transcription.json",
    "metadata.json",
)
"""What a mirrored output directory needs to be scored on its own."""


PERTURBED_PREFIX = "perturbed_"
"""A perturbed pass saves what the target heard of ``input.wav`` as ``perturbed_input.wav``
(scoring reads the clean input and annotations beside it)."""


@dataclass
class DriveReport:
    """What one pass over a corpus did."""

    completed: list[Path] = field(default_factory=list)
    resumed: list[Path] = field(default_factory=list)
    """Samples skipped because a previous run completed them."""
    failed: dict[Path, str] = field(default_factory=dict)
    skipped: list[SkippedSample] = field(default_factory=list)

    @property
    def record_files(self) -> list[Path]:
        """The run record of every sample this pass covered (driven now or before)."""
        dests = [*self.completed, *self.resumed, *self.failed]
        return [d / RUN_RECORD_FILE for d in dests]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def is_complete(dest: Path) -> bool:
    """Whether ``dest`` holds a completed record and every output it names."""
    record = dest / RUN_RECORD_FILE
    if not record.is_file():
        return False
    try:
        data = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if data.get("status") != "completed":
        return False
    if target_errors(data):
        return False  # written by an earlier driver that called a failed target "completed"
    return all((dest / s.get("output", "")).is_file() for s in data.get("streams", []))


def _mirror(sample: FdbSample, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for name in _CARRIED_FILES:
        src = sample.file(name)
        if src.is_file() and not (dest / name).is_file():
            shutil.copy2(src, dest / name)


def _streams(sample: FdbSample, with_clean: bool) -> list[tuple[str, str]]:
    pairs = [(INPUT_WAV, OUTPUT_WAV)]
    if with_clean and sample.category == "behavior" and sample.has(CLEAN_INPUT_WAV):
        pairs.append((CLEAN_INPUT_WAV, CLEAN_OUTPUT_WAV))
    return pairs


_DERIVED = {
    OUTPUT_WAV: ("output.json", FULL_OUTPUT_JSON, RELEVANCE_CACHE, BEHAVIOR_CACHE),
    CLEAN_OUTPUT_WAV: ("clean_output.json", BEHAVIOR_CACHE),
}
"""Files computed from an output wav, stale once the wav is rewritten (ASR files beside it;
the rest is what earlier versions kept there; scoring now keeps its own under
``fdb_derived/``, checked against the wav's hash)."""


def _forget_derived(dest: Path, output_name: str) -> None:
    for name in _DERIVED.get(output_name, ()):
        (dest / name).unlink(missing_ok=True)


def _write_record(dest: Path, record: dict[str, Any]) -> None:
    path = dest / RUN_RECORD_FILE
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(
        json.dumps(redact(record), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    tmp.replace(path)


async def drive_sample(
    sample: FdbSample,
    dest: Path,
    make_session: Callable[[], Session],
    target: str,
    opts: StreamOptions,
    *,
    with_clean: bool = True,
) -> dict[str, Any]:
    """Stream each input of ``sample``; write its outputs and record into ``dest``."""
    record: dict[str, Any] = {
        "schema_version": RECORD_SCHEMA_VERSION,
        "target": target,
        "sample": sample.relative,
        "category": sample.category,
        "subset": sample.subset,
        "status": "started",
        "started_at": _now(),
        "versions": run_versions(),
        "options": {
            "chunk_ms": opts.chunk_ms,
            "endpoint_ms": opts.endpoint_ms,
            "barge_in": opts.barge_in,
        },
        "streams": [],
    }
    if opts.perturb:
        record["perturbations"] = opts.perturb
        record["seed"] = opts.seed
    _write_record(dest, record)
    began = time.monotonic()
    try:
        outputs: list[tuple[str, Any]] = []
        for input_name, output_name in _streams(sample, with_clean):
            audio = read_wav(sample.file(input_name))
            if opts.perturb:  # what the target hears, kept beside its output
                heard = parse_perturbations(opts.perturb)
                audio = heard.apply(audio, opts.seed, f"{sample.relative}/{input_name}")
                write_wav(dest / f"{PERTURBED_PREFIX}{input_name}", audio)
            out, result = await stream_input(
                make_session, audio, opts, input_name=input_name, output_name=output_name
            )
            for r in result.responses:
                eot, first = r.get("end_of_turn"), r.get("first_audio")
                r["latency"] = (
                    round(first - eot, 4) if eot is not None and first is not None else None
                )
            record["streams"].append(result.to_json())
            if out is not None:
                outputs.append((output_name, out))
        errors = target_errors(record)
        if errors:
            # The target failed: an error row, never an output to score.
            record["status"] = "failed"
            record["error"] = "; ".join(errors)
        else:
            for output_name, out in outputs:
                write_wav(dest / output_name, out)
                _forget_derived(dest, output_name)
            record["status"] = "completed"
    except (VoxbenchError, OSError) as exc:
        record["status"] = "failed"
        record["error"] = str(exc)
    except Exception as exc:  # a target's bug fails this sample, not the corpus
        record["status"] = "failed"
        record["error"] = f"{type(exc).__name__}: {exc}"
    record["finished_at"] = _now()
    record["wall_s"] = round(time.monotonic() - began, 4)
    _write_record(dest, record)
    return record


def _copy_ground_truth(scan_root: Path, samples: list[FdbSample], out_dir: Path) -> None:
    for s in samples:
        if s.category != "backchannel":
            continue
        found = find_upwards(s.path, GT_DISTRIBUTION_FILE, scan_root)
        if found is not None and not (out_dir / GT_DISTRIBUTION_FILE).is_file():
            out_dir.mkdir(parents=True, exist_ok=True)
            shutil.copy2(found, out_dir / GT_DISTRIBUTION_FILE)
        return


def select_samples(
    samples: list[FdbSample], categories: Sequence[str] = (), limit: int | None = None
) -> list[FdbSample]:
    """The samples of the named categories (or subsets), at most ``limit`` of each category.

    A name is a category (``pause_handling``, ...) or a subset folder (``candor_pause_handling``);
    ``limit`` keeps the first samples of each category in corpus order, so the same command
    picks (and resumes) the same samples."""
    if limit is not None and limit < 1:
        raise ConfigError(f"must be at least 1, got {limit}", field="--limit")
    subsets = {s.subset for s in samples}
    unknown = [c for c in categories if c not in CATEGORIES and c not in subsets]
    if unknown:
        raise ConfigError(
            f"unknown category {', '.join(map(repr, unknown))}",
            field="--category",
            expected="one of " + ", ".join(CATEGORIES)
            + (" or a subset of this corpus: " + ", ".join(sorted(subsets)) if subsets else ""),
        )  # fmt: skip
    wanted = set(categories)
    chosen = [s for s in samples if not wanted or s.category in wanted or s.subset in wanted]
    if limit is None:
        return chosen
    taken: Counter[str] = Counter()
    out = []
    for sample in chosen:
        if taken[sample.category] < limit:
            taken[sample.category] += 1
            out.append(sample)
    return out


def plan_corpus(
    corpus: str | Path,
    out_dir: str | Path | None,
    *,
    categories: Sequence[str] = (),
    limit: int | None = None,
    shard: tuple[int, int] | None = None,
) -> tuple[CorpusScan, Path | None, list[tuple[FdbSample, Path]], list[Path]]:
    """The samples to drive (with their destination) and those a previous run completed.

    ``shard=(i, n)`` keeps every n-th sample from the i-th, in corpus order, before looking at
    what is done: the n shards of one corpus never overlap, whatever each one finds done."""
    scan = scan_corpus(corpus)
    scan.samples = select_samples(scan.samples, categories, limit)
    if shard is not None:
        scan.samples = scan.samples[shard[0] :: shard[1]]
    dest_root = Path(out_dir).resolve() if out_dir is not None else None
    todo: list[tuple[FdbSample, Path]] = []
    resumed: list[Path] = []
    for sample in scan.samples:
        dest = dest_root / sample.relative if dest_root is not None else sample.path
        if is_complete(dest):
            resumed.append(dest)
        else:
            todo.append((sample, dest))
    if dest_root is not None:
        _copy_ground_truth(scan.root, scan.samples, dest_root)
    return scan, dest_root, todo, resumed


def fdb_session_factory(
    target: str, base_url: str | None, options: dict[str, Any], benchmark: str | None
) -> Callable[[], Session]:
    """The sessions ``fdb run`` drives: the target, and a text target wrapped in a cascade
    (it answers in words: hear it through STT, speak it with TTS)."""
    from voxbench.benchmarks.loader import load_benchmark
    from voxbench.targets.registry import resolve_target

    bench = load_benchmark(benchmark) if benchmark else None
    factory = resolve_target(target, benchmark=bench, base_url=base_url, options=options)

    def make() -> Session:
        session = factory()
        if session.info.output_modality == "text":
            from voxbench.targets.cascade import build_cascade

            return build_cascade(session, options)
        return session

    return make


def _check_virtual(make_session: Callable[[], Session]) -> None:
    probe = make_session()
    if not probe.info.in_process:
        raise ConfigError(
            f"virtual time needs an in-process target; {probe.info.name} runs elsewhere",
            field="--virtual",
            expected="--realtime for network targets",
        )


async def drive_corpus(
    corpus: str | Path,
    make_session: Callable[[], Session],
    target: str,
    *,
    out_dir: str | Path | None = None,
    concurrency: int = 1,
    opts: StreamOptions | None = None,
    with_clean: bool = True,
    on_start: Callable[[int, int], None] | None = None,
    on_done: Callable[[FdbSample, dict[str, Any]], None] | None = None,
    categories: Sequence[str] = (),
    limit: int | None = None,
    shard: tuple[int, int] | None = None,
) -> DriveReport:
    """Drive every sample of ``corpus`` through ``make_session`` (a target factory); with
    ``shard=(i, n)`` only the i-th of n disjoint shards (see ``plan_corpus``)."""
    if concurrency < 1:
        raise ConfigError("must be at least 1", field="--concurrency")
    opts = opts or StreamOptions()
    if opts.realtime is False:
        _check_virtual(make_session)
    scan, dest_root, todo, resumed = plan_corpus(
        corpus, out_dir, categories=categories, limit=limit, shard=shard
    )
    report = DriveReport(resumed=resumed, skipped=list(scan.skipped))
    if on_start is not None:
        on_start(len(todo), len(report.resumed))
    semaphore = asyncio.Semaphore(concurrency)

    async def one(sample: FdbSample, dest: Path) -> None:
        async with semaphore:
            if dest_root is not None:
                _mirror(sample, dest)
            record = await drive_sample(
                sample, dest, make_session, target, opts, with_clean=with_clean
            )
        if record["status"] == "completed":
            report.completed.append(dest)
        else:
            report.failed[dest] = record.get("error", "failed")
            log.warning("sample %s failed: %s", sample.path, record.get("error"))
        if on_done is not None:
            on_done(sample, record)

    await asyncio.gather(*(one(s, d) for s, d in todo))
    return report
