"""``voxbench run`` and ``voxbench demo``."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from voxbench.benchmarks.loader import load_benchmark
from voxbench.cli.console import ConsoleLogHandler, escape, make_console
from voxbench.cli.gates import FAIL_UNDER_HELP, enforce_gates
from voxbench.cli.repeats import run_repeats
from voxbench.core.errors import ConfigError
from voxbench.core.records import TurnRecord
from voxbench.core.rundir import RunDirectory
from voxbench.core.runlog import log_to
from voxbench.core.yamlfile import parse_yaml
from voxbench.evaluation import EvaluationOptions, evaluate_run
from voxbench.evaluation.gates import check_gate_dimensions, parse_fail_under, refuse_incomplete
from voxbench.report.terminal import scorecards_table
from voxbench.runner.config import (
    RunConfig,
    build_config,
    check_turns_exist,
    split_harness_options,
)
from voxbench.runner.conversation import ProgressCallback
from voxbench.runner.credentials import check_credentials
from voxbench.runner.launch import (
    check_run_credentials,
    new_run_path,
    resume_run,
    run_conversation,
)
from voxbench.scale.repeats import is_repeat_group

T = TypeVar("T")


@contextmanager
def log_shown(verbose: bool, messages: Console) -> Iterator[None]:
    """Warnings on ``messages`` while the command runs; with ``verbose``, every line of
    run.log and each turn's texts and tool calls too.

    ``messages`` is the command's stderr console, the one its progress bars use too, so that
    log lines print above the bars: stdout carries the scorecard alone."""
    with log_to(ConsoleLogHandler(messages), level=logging.DEBUG if verbose else logging.WARNING):
        yield


def _progress(messages: Console) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[last]}"),
        console=messages,
        transient=False,
    )


def _progress_callback(progress: Progress, task: TaskID) -> ProgressCallback:
    def on_turn(done: int, total: int, record: TurnRecord) -> None:
        mark = "" if record.status == "ok" else f" ({record.status})"
        progress.update(task, completed=done, total=total, last=f"turn {record.turn}{mark}")

    return on_turn


def execute(config: RunConfig | None, messages: Console, resume: Path | None = None) -> Path:
    """Run (or resume) with a progress bar on ``messages``; returns the run directory.

    Ctrl-C stops the run cleanly (``run.json`` says ``cancelled``) and says how to continue."""
    if resume is not None:
        path = resume
    else:
        assert config is not None
        path = new_run_path(config, load_benchmark(config.benchmark))
    try:
        with _progress(messages) as progress:
            label = config.target if config else "resume"
            on_turn = _progress_callback(progress, progress.add_task(label, total=None, last=""))
            if resume is not None:
                return asyncio.run(resume_run(resume, progress=on_turn))
            assert config is not None
            return asyncio.run(run_conversation(config, progress=on_turn, run_path=path))
    except KeyboardInterrupt:
        if not (path / RunDirectory.RUN).is_file():
            raise
        where = escape(str(path))
        messages.print(
            f"interrupted: {where} keeps every completed turn; continue with\n"
            f"  voxbench run --resume {where}"
        )
        raise typer.Exit(130) from None


def execute_side_by_side(
    configs: list[RunConfig], messages: Console, then: Callable[[Path], T]
) -> list[tuple[Path, T]]:
    """Run several configs at once (one progress bar each), each followed by ``then`` on its
    run directory in a worker thread; returns (run directory, what ``then`` gave) in order.

    Local speech models decode on one core each, so runs side by side use the machine's
    cores instead of waiting for each other; and a run that finishes first is judged while the
    others still run, so its core is not left idle.
    """
    with _progress(messages) as progress:

        async def run_then(config: RunConfig) -> tuple[Path, T]:
            path = await run_conversation(
                config,
                progress=_progress_callback(
                    progress, progress.add_task(config.target, total=None, last="")
                ),
            )
            return path, await asyncio.to_thread(then, path)

        async def run_all() -> list[tuple[Path, T]]:
            return list(await asyncio.gather(*(run_then(config) for config in configs)))

        return asyncio.run(run_all())


def run_command(
    benchmark: str = typer.Argument(
        None,
        help="Built-in benchmark name (see `voxbench list benchmarks`) or a benchmark directory.",
    ),
    target: str = typer.Option(
        None,
        "--target",
        "-t",
        help="System under test as provider/model, e.g. local/oracle, openai/gpt-4o-mini.",
    ),
    base_url: str = typer.Option(
        None, "--base-url", help="Endpoint override (a proxy, a self-hosted server, a fake server)."
    ),
    only_turns: str = typer.Option(None, "--only-turns", help="Turn positions to run, e.g. 0,3-5."),
    runs_dir: Path = typer.Option(
        None, "--runs-dir", help="Where run directories go (default ./runs)."
    ),
    turn_timeout: float = typer.Option(None, "--turn-timeout", help="Seconds a turn may take."),
    config_file: Path = typer.Option(
        None, "--config", "-c", help="A YAML RunConfig; flags override it."
    ),
    resume: Path = typer.Option(
        None, "--resume", help="Continue a stopped run directory after its last completed turn."
    ),
    mode: str = typer.Option(
        None,
        "--mode",
        help="text (default) or audio: stream spoken turns and record conversation.wav.",
    ),
    stt: str = typer.Option(
        None,
        "--stt",
        help="Audio mode, text targets: speech recognition of the cascade (local/whisper-tiny.en).",
    ),
    tts: str = typer.Option(
        None,
        "--tts",
        help="Audio mode, text targets: speech synthesis of the cascade (local/espeak).",
    ),
    heard_asr: str = typer.Option(
        None,
        "--heard-asr",
        help="Audio mode: ASR of the agent channel (local/whisper-tiny.en, or none).",
    ),
    user_tts: str = typer.Option(
        None, "--user-tts", help="Audio mode: voice for turns without shipped audio (local/espeak)."
    ),
    option: list[str] = typer.Option(
        None,
        "--option",
        "-o",
        help="Target option KEY=VALUE, repeatable (e.g. turn_detection=server_vad, voice=alloy); "
        "harness=voxbench drops an imported benchmark's upstream harness, harness.KEY=VALUE sets "
        "one harness option (nudge, duplicate_calls, canned_results).",
    ),
    tags: str = typer.Option(
        None,
        "--tags",
        help="Audio mode: tag tones where answers start: off, track (tags.wav) or mix.",
    ),
    clock: str = typer.Option(
        None,
        "--clock",
        help="Audio mode: auto (virtual time for in-process targets), real or virtual.",
    ),
    perturb: str = typer.Option(
        None,
        "--perturb",
        help="Audio mode: perturb what the target hears, e.g. noise:pink@10dB+codec:mulaw+loss:5%"
        " (kinds: noise, gain, clip, band, codec, loss, reverb; seeded by the run's seed). The "
        "recording keeps the clean user audio; perturbed/ holds what the target heard.",
    ),
    judge: str = typer.Option(
        None, "--judge", "-j", help="Also judge with an LLM at the end, as provider:model."
    ),
    judge_base_url: str = typer.Option(None, "--judge-base-url", help="Endpoint of the judge."),
    fail_under: list[str] = typer.Option(None, "--fail-under", help=FAIL_UNDER_HELP),
    verbose: bool = typer.Option(
        False,
        "--verbose",
        "-v",
        help="Print the run's log on stderr as it runs (each turn's texts and tool calls too);"
        " run.log in the run directory keeps it either way.",
    ),
    repeats: int = typer.Option(
        None,
        "--repeats",
        min=1,
        help="Run K independent times (fresh sessions, seeds seed..seed+K-1) and summarise "
        "them: mean pass rates with intervals, pass@K, pass^K, turns that flip.",
    ),
    executor: str = typer.Option(
        "local", "--executor", help="With --repeats: local (default) or ray."
    ),
    ray_address: str = typer.Option(
        None,
        "--ray-address",
        help="With --executor ray: auto, ray://HOST:PORT, or none for a local Ray started now.",
    ),
) -> None:
    """Run a benchmark against a target and print its scorecard."""
    console, messages = make_console(), make_console(stderr=True)
    with log_shown(verbose, messages):
        gates = parse_fail_under(fail_under)
        if judge:  # the judge's key is checked before the first turn, not after the whole run
            check_credentials(None, judge=judge)
        grouped = repeats is not None or (resume is not None and is_repeat_group(resume))
        if not grouped and (executor != "local" or ray_address):
            raise ConfigError(
                "--executor and --ray-address apply to repeated runs",
                field="--executor",
                expected="--repeats K (or voxbench matrix)",
            )
        if grouped and resume is not None:
            run_repeats(None, None, executor=executor, ray_address=ray_address, resume=resume,
                        judge=judge, judge_base_url=judge_base_url, gates=gates,
                        progress_console=messages)  # fmt: skip
            return
        if resume is not None:
            path = execute(None, messages, resume=resume)
        else:
            flags = {
                "benchmark": benchmark,
                "target": target,
                "base_url": base_url,
                "only_turns": only_turns,
                "runs_dir": runs_dir,
                "turn_timeout": turn_timeout,
                "mode": mode,
                "stt": stt,
                "tts": tts,
                "heard_asr": heard_asr,
                "user_tts": user_tts,
                "clock": clock,
                "tags": tags,
                "perturb": perturb,
            }
            options = _parse_options(option) if option else {}
            flags.update(split_harness_options(options))  # -o harness=…, -o harness.KEY=…
            flags["target_options"] = options or None
            if config_file is not None:
                config = RunConfig.from_file(config_file, **flags)
            else:
                if benchmark is None:
                    raise ConfigError(
                        "missing benchmark", field="BENCHMARK", expected="a name or a directory"
                    )
                config = build_config({k: v for k, v in flags.items() if v is not None})
            check_before_run(config, from_file=config_file)
            if gates:
                check_gate_dimensions(gates, scorable_dimensions(config))
            if repeats is not None:
                run_repeats(config, repeats, executor=executor, ray_address=ray_address,
                            judge=judge, judge_base_url=judge_base_url, gates=gates,
                            progress_console=messages)  # fmt: skip
                return
            path = execute(config, messages)
        evaluation = evaluate_run(
            path, EvaluationOptions(judge=judge, judge_base_url=judge_base_url)
        )
        card = evaluation.card
        title = escape(f"{card.benchmark} · {card.target}")
        console.print(scorecards_table([card], title=title))
        where = escape(str(path))
        console.print(
            f"run directory: [b]{where}[/b]  (details: voxbench show {where})", soft_wrap=True
        )
        refuse_incomplete(card, evaluation.records, evaluation.judgments, path)
        enforce_gates(card, gates, console)


def check_before_run(config: RunConfig, *, from_file: Path | None) -> None:
    """Refuse what would fail only after a run directory exists: one line, no directory.

    The target must be named (``-t`` or the config file): running the oracle by default
    would score a run nobody asked for. ``only_turns`` must name turns the benchmark has,
    an audio run's turn wavs must be audio, the runs directory must be writable, and every
    key the run needs must be set."""
    from voxbench.benchmarks.loader import load_benchmark, turn_audio_problems

    benchmark = load_benchmark(config.benchmark)
    if "target" not in config.model_fields_set:
        raise ConfigError(
            "no target given",
            file=from_file,
            field="--target" if from_file is None else "--target (or the file's target)",
            expected="a system under test such as -t local/oracle or -t openai/gpt-4o-mini",
        )
    check_turns_exist(config, len(benchmark.turns))
    if config.mode == "audio":
        # A broken turn wav would otherwise fail its turn mid-run, after the directory exists.
        problems = turn_audio_problems(benchmark)
        if problems:
            raise problems[0]
    check_writable_dir(config.runs_dir, field="runs_dir")
    check_run_credentials(config)  # a missing key is one line, before any progress bar


def scorable_dimensions(config: RunConfig) -> set[str]:
    """Every dimension a run of ``config`` may be scored on: strict pass, the code-decided,
    analysis and LLM dimensions, the benchmark's own (by category) and its declared audio
    rubrics' criteria."""
    from voxbench.benchmarks.loader import load_benchmark
    from voxbench.judging.audio.run_judge import declared_rubrics
    from voxbench.scoring.scorecard import (
        ANALYSIS_DIMENSIONS,
        CODE_DIMENSIONS,
        LLM_CORE_DIMENSIONS,
    )

    benchmark = load_benchmark(config.benchmark)
    known = {"strict_pass", *CODE_DIMENSIONS, *ANALYSIS_DIMENSIONS, *LLM_CORE_DIMENSIONS}
    known |= set(benchmark.dimensions.core)
    known |= {d for dims in benchmark.dimensions.by_category.values() for d in dims}
    for declared in declared_rubrics(benchmark):
        known |= {c.dimension for c in declared.bound.criteria}
    return known


def check_writable_dir(path: Path, *, field: str) -> None:
    """Create ``path`` if needed; a file there, or a place we cannot write, is a user error."""
    if path.exists() and not path.is_dir():
        raise ConfigError("is a file", file=path, field=field, expected="a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(
            f"cannot create the directory: {exc.strerror or exc}", file=path, field=field
        ) from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise ConfigError(
            "cannot write there", file=path, field=field, expected="a writable directory"
        )


def _parse_options(pairs: list[str]) -> dict[str, object]:
    """``["a=1", "b=x"]`` → ``{"a": 1, "b": "x"}`` (values parsed as YAML scalars)."""
    out: dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"bad option {pair!r}", field="--option", expected="KEY=VALUE")
        out[key.strip()] = parse_yaml(value, source=f"--option {key.strip()}") if value else ""
    return out


def demo_command(
    benchmark: str = typer.Option("conference", "--benchmark", "-b", help="Benchmark to run."),
    mode: str = typer.Option(
        "audio", "--mode", help="audio (spoken turns, recorded and timed) or text."
    ),
    runs_dir: Path = typer.Option(Path("runs"), "--runs-dir", help="Where run directories go."),
) -> None:
    """The offline demo: the oracle and a local agent, scored side by side.

    In audio mode the user's turns are spoken by eSpeak NG (synthesized once, then cached),
    the oracle answers through eSpeak, and the local agent is a cascade: local Whisper →
    the no-LLM baseline → eSpeak NG. Each run is recorded, timed and judged.
    """
    targets = ("local/oracle", "cascade/local/baseline" if mode == "audio" else "local/baseline")
    configs = [
        build_config({"benchmark": benchmark, "target": t, "runs_dir": runs_dir, "mode": mode})
        for t in targets
    ]
    console, messages = make_console(), make_console(stderr=True)
    with log_shown(False, messages):
        judged = execute_side_by_side(configs, messages, then=evaluate_run)
    paths, cards = [path for path, _ in judged], [evaluation.card for _, evaluation in judged]
    console.print(scorecards_table(cards, title=f"{benchmark} ({mode}): oracle vs local agent"))
    console.print(
        "Per-turn details: [b]voxbench show RUN_DIR[/b]"
        + (
            "; turn-taking and latency: [b]voxbench analyze RUN_DIR -v[/b]"
            if mode == "audio"
            else ""
        )
    )
    for path in paths:
        console.print(f"  {escape(str(path))}", highlight=False, soft_wrap=True)  # never cut
