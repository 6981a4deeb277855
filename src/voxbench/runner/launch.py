"""Start and resume conversation runs: the run directory, ``run.json`` and the target factory.

``run_conversation`` starts a new run, ``resume_run`` continues a stopped one; both hand the
turn loop to ``ConversationRun`` and record how the run ended in ``run.json``.
"""

from __future__ import annotations

import asyncio
import logging
import secrets as _random_ids
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from voxbench.benchmarks.loader import load_benchmark, load_run_benchmark
from voxbench.core.benchmark import Benchmark
from voxbench.core.errors import ProviderError, RunError, RunIncompleteError, VoxbenchError
from voxbench.core.names import child_path
from voxbench.core.records import ComponentSpec, RunInfo, TurnRecord
from voxbench.core.rundir import RunDirectory
from voxbench.core.runlog import run_log
from voxbench.core.secrets import is_secret_key, redact, remember_secret
from voxbench.core.session import Session
from voxbench.core.versions import run_versions
from voxbench.runner.config import RunConfig
from voxbench.runner.conversation import ConversationRun, ProgressCallback
from voxbench.runner.credentials import check_credentials
from voxbench.targets.registry import canonical_name, resolve_target

log = logging.getLogger(__name__)


def new_run_path(config: RunConfig, benchmark: Benchmark) -> Path:
    """``runs/<benchmark>/<UTC timestamp>_<target>_<short id>``."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    target = canonical_name(config.target).replace("/", "-").replace(":", "-").replace(".", "-")
    # child_path: the benchmark id is a name (validated on load); checked again here, the
    # last guard before anything is written, so a run never lands outside ``runs_dir``.
    return child_path(
        config.runs_dir,
        benchmark.id,
        f"{stamp}_{target}_{_random_ids.token_hex(3)}",
        field="benchmark id",
    )


def target_options(config: RunConfig) -> dict[str, Any]:
    """The target's options; ``--stt`` / ``--tts`` configure a cascade target too."""
    options = dict(config.target_options)
    if config.target.startswith("cascade"):
        for key in ("stt", "tts"):
            value = getattr(config, key)
            if value is not None:
                options.setdefault(key, value)
    return options


def check_run_credentials(config: RunConfig) -> None:
    """Every key the run will need, checked before its first turn (``PrerequisiteError``)."""
    check_credentials(
        config.target,
        stt=config.stt,
        tts=config.tts,
        base_url=config.base_url,
        target_options=target_options(config),
    )
    if config.mode == "audio":
        # The user's voice and the transcription of what the agent was heard to say.
        check_credentials(None, stt=config.heard_asr, tts=config.user_tts)


async def run_conversation(
    config: RunConfig,
    *,
    progress: ProgressCallback | None = None,
    session_factory: Callable[[], Session] | None = None,
    run_path: Path | None = None,
) -> Path:
    """Start a new run; returns its directory."""
    benchmark = load_benchmark(config.benchmark)
    if session_factory is None:
        check_run_credentials(config)
    factory = session_factory or resolve_target(
        config.target, benchmark=benchmark, base_url=config.base_url, options=target_options(config)
    )
    path = run_path or new_run_path(config, benchmark)
    run_dir = RunDirectory(path)
    with run_dir.lock("voxbench run"):
        if any(p.name != RunDirectory.LOCK for p in path.iterdir()):
            raise RunError(f"{path}: run directory already exists; use --resume to continue it")
        return await _start(config, run_dir, benchmark, factory, progress)


async def _start(
    config: RunConfig,
    run_dir: RunDirectory,
    benchmark: Benchmark,
    factory: Callable[[], Session],
    progress: ProgressCallback | None,
) -> Path:
    path = run_dir.path
    info = RunInfo(
        run_id=path.name,
        benchmark=benchmark.id,
        benchmark_version=benchmark.version,
        benchmark_hash=benchmark.content_hash,
        benchmark_path=str(benchmark.root) if benchmark.root else None,
        target=ComponentSpec(name=canonical_name(config.target), args=config.target_options),
        config=config.model_dump(mode="json"),
        mode=config.mode,
        only_turns=[str(i) for i in config.only_turns] if config.only_turns is not None else None,
        seed=config.seed,
        perturbations=config.perturb,
        versions=run_versions(),
        started_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    run_dir.write_info(info)
    return await _execute(config, run_dir, benchmark, factory, info, progress)


async def resume_run(
    path: str | Path,
    *,
    progress: ProgressCallback | None = None,
    session_factory: Callable[[], Session] | None = None,
) -> Path:
    """Continue a stopped run after its last completed turn.

    The run's writer lock is held throughout: a second resume of the same run is refused
    instead of running the same turns twice."""
    run_dir = RunDirectory.open_existing(path)
    with run_dir.lock("voxbench run --resume"):
        return await _resume(run_dir, progress, session_factory)


async def _resume(
    run_dir: RunDirectory,
    progress: ProgressCallback | None,
    session_factory: Callable[[], Session] | None,
) -> Path:
    info = run_dir.info()
    config = RunConfig.model_validate(info.config)
    benchmark = load_run_benchmark(info, run_dir.path)
    if session_factory is None:
        check_run_credentials(config)
    factory = session_factory or resolve_target(
        config.target, benchmark=benchmark, base_url=config.base_url, options=target_options(config)
    )
    info = info.model_copy(
        update={"status": "started", "resumed": info.resumed + 1, "ended_at": None}
    )
    run_dir.write_info(info)
    return await _execute(config, run_dir, benchmark, factory, info, progress)


async def _execute(
    config: RunConfig,
    run_dir: RunDirectory,
    benchmark: Benchmark,
    factory: Callable[[], Session],
    info: RunInfo,
    progress: ProgressCallback | None,
) -> Path:
    for key, value in config.target_options.items():
        if is_secret_key(key) and isinstance(value, str):
            remember_secret(value)  # so run.log scrubs it wherever it shows up
    with run_log(run_dir.log_file):
        log.info(
            "%s %s: benchmark %s v%s, target %s, mode %s%s, options %s",
            "resumed" if info.resumed else "started",
            run_dir.path,
            benchmark.id,
            benchmark.version,
            info.target.name,
            config.mode,
            f" heard through {config.perturb} (seed {config.seed})" if config.perturb else "",
            redact(config.target_options) or "none",
        )
        try:
            return await _run_and_record(
                config, run_dir, benchmark, factory, info, _logged(progress)
            )
        except (KeyboardInterrupt, asyncio.CancelledError):
            log.warning("cancelled: the completed turns are kept (voxbench run --resume)")
            raise
        except Exception as exc:
            log.error("the run stopped: %s: %s", type(exc).__name__, exc)
            raise


def _logged(progress: ProgressCallback | None) -> ProgressCallback:
    """The progress callback, writing each completed turn to the log first."""

    def on_turn(done: int, total: int, record: TurnRecord) -> None:
        log_turn(done, total, record)
        if progress is not None:
            progress(done, total, record)

    return on_turn


def log_turn(done: int, total: int, record: TurnRecord) -> None:
    """One line per turn (more for a turn in trouble); the turn's texts at debug level."""
    extra = []
    if record.tool_calls:
        extra.append(f"{len(record.tool_calls)} tool call(s)")
    if record.retries:
        extra.append(f"{record.retries} retries")
    if record.reconnected:
        extra.append("reconnected")
    level = logging.INFO if record.status in ("ok", "ended_early") else logging.WARNING
    log.log(
        level,
        "turn %s (%d/%d) %s%s",
        record.turn,
        done,
        total,
        record.status,
        f", {', '.join(extra)}" if extra else "",
    )
    for error in record.errors:
        log.warning("turn %s: %s", record.turn, error)
    log.debug("turn %s user: %s", record.turn, record.user_text)
    for call in record.tool_calls:
        log.debug("turn %s call: %s %s → %s", record.turn, call.name, call.arguments, call.result)
    log.debug("turn %s agent: %s", record.turn, record.spoken_text)


async def _run_and_record(
    config: RunConfig,
    run_dir: RunDirectory,
    benchmark: Benchmark,
    factory: Callable[[], Session],
    info: RunInfo,
    progress: ProgressCallback,
) -> Path:
    runner = ConversationRun(config, run_dir, benchmark, factory, progress)
    try:
        await runner.run()
    except (VoxbenchError, ProviderError) as exc:
        run_dir.write_info(
            info.model_copy(
                update={
                    "status": "error",
                    "error": str(exc),
                    "ended_at": datetime.now(UTC).isoformat(timespec="seconds"),
                }
            )
        )
        raise
    except (KeyboardInterrupt, asyncio.CancelledError):
        run_dir.write_info(
            info.model_copy(
                update={
                    "status": "cancelled",
                    "ended_at": datetime.now(UTC).isoformat(timespec="seconds"),
                }
            )
        )
        raise
    failure = every_turn_failed(runner.records)
    run_dir.write_info(
        info.model_copy(
            update={
                "status": "error" if failure else "success",
                "error": failure,
                "ended_at": datetime.now(UTC).isoformat(timespec="seconds"),
            }
        )
    )
    if failure:
        raise RunIncompleteError(f"{run_dir.path}: {failure}")
    log.info("finished: %d turn(s) recorded, status success", len(runner.records))
    return run_dir.path


def every_turn_failed(records: list[TurnRecord]) -> str | None:
    """Why the run produced nothing to judge, when every turn it ran ended in error."""
    ran = [r for r in records if r.status != "ended_early"]
    if not ran or any(r.status != "error" for r in ran):
        return None
    first = next((e for r in ran for e in r.errors), "no error recorded")
    return (
        f"every turn failed ({len(ran)} of {len(ran)} ended in error; the first: {first}); "
        "fix the cause and start a new run"
    )
