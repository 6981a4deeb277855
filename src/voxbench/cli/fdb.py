"""``voxbench fdb run|score``: Full-Duplex-Bench with any target, scored two ways."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from voxbench.cli.console import make_console
from voxbench.core.errors import ConfigError, RunIncompleteError
from voxbench.core.session import Session
from voxbench.fullduplex.annotations import load_gt_distribution
from voxbench.fullduplex.corpus import DERIVED_DIR
from voxbench.fullduplex.driver import DriveReport, drive_corpus, fdb_session_factory
from voxbench.fullduplex.gating import compare
from voxbench.fullduplex.html import write_fdb_html
from voxbench.fullduplex.judge import ChatJudge
from voxbench.fullduplex.report import REPORT_FILE, STAGE_HEADER, metric_cell, stage_rows
from voxbench.fullduplex.sample_context import MODES
from voxbench.fullduplex.scoring import score_directory
from voxbench.fullduplex.stream import DEFAULT_SYSTEM_PROMPT, StreamOptions
from voxbench.fullduplex.summary import TIMING_METRICS, read_summary, write_csv
from voxbench.fullduplex.timings import RunTotals, read_records, run_totals, stage_timings
from voxbench.fullduplex.transcripts import DEFAULT_ASR, TranscriptStore
from voxbench.scale.executors import make_executor
from voxbench.targets.registry import canonical_name, check_target_options

app = typer.Typer(
    help="Full-Duplex-Bench: drive a target over FDB corpora and score the outputs.",
    no_args_is_help=True,
)


def _progress(out: Console) -> Progress:
    """A progress bar on ``out``: the stderr console of the command's messages, so that
    stdout carries only results (a table, JSON or CSV)."""
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[last]}"),
        console=out,
    )


def _fail() -> None:
    # SystemExit, not typer.Exit: the root runs click with standalone_mode=False, which turns
    # typer.Exit into a return value that would be lost.
    raise SystemExit(1)


def _existing_dir(path: Path, field: str, expected: str) -> None:
    """A directory argument that is not there is a user error, before any work starts."""
    if not path.exists():
        raise ConfigError("not found", file=path, field=field, expected=expected)
    if not path.is_dir():
        raise ConfigError("is a file", file=path, field=field, expected=expected)


def _parse_options(pairs: list[str]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ConfigError(f"bad option {pair!r}", field="--option", expected="key=value")
        try:
            options[key] = json.loads(value)
        except ValueError:
            options[key] = value
    return options


@app.command("run")
def run_command(
    corpus: Path = typer.Argument(..., help="FDB corpus (v1_0, v1_5, a subset, or one sample)."),
    target: str = typer.Option(..., "--target", "-t", help="System under test, provider/model."),
    out: Path = typer.Option(
        None, "--out", help="Mirror the corpus here (default: beside inputs)."
    ),
    concurrency: int = typer.Option(
        1, "--concurrency", help="Samples streamed at once (-j is --judge everywhere)."
    ),
    realtime: bool = typer.Option(
        None, "--realtime/--virtual", help="Clock (default: virtual for in-process targets)."
    ),
    base_url: str = typer.Option(None, "--base-url", help="Endpoint override for the target."),
    option: list[str] = typer.Option([], "--option", "-o", help="Target option key=value."),
    stt: str = typer.Option(DEFAULT_ASR, "--stt", help="Text targets: the cascade's STT."),
    tts: str = typer.Option("local/espeak", "--tts", help="Text targets: the cascade's TTS."),
    system_prompt: str = typer.Option(DEFAULT_SYSTEM_PROMPT, "--system-prompt"),
    endpoint_ms: int = typer.Option(
        600, "--endpoint-ms", help="Client-side end of turn after this much user silence."
    ),
    barge_in: bool = typer.Option(True, "--barge-in/--no-barge-in", help="Client-side barge-in."),
    clean: bool = typer.Option(True, "--clean/--no-clean", help="v1.5: also run clean_input.wav."),
    benchmark: str = typer.Option(
        None,
        "--benchmark",
        "-b",
        help="Knowledge base for local agents (local/baseline needs one).",
    ),
    category: list[str] = typer.Option(
        [],
        "--category",
        help="Only this category (pause_handling, smooth_turn_taking, user_interruption,"
        " backchannel, behavior) or subset folder; repeatable.",
    ),
    limit: int = typer.Option(
        None, "--limit", help="At most N samples of each category (the first, in corpus order)."
    ),
    executor: str = typer.Option(
        "local",
        "--executor",
        help="local (default) or ray: the corpus in shards, one Ray task each (the output "
        "directory must be on a filesystem every node sees).",
    ),
    ray_address: str = typer.Option(
        None,
        "--ray-address",
        help="With --executor ray: auto, ray://HOST:PORT, or none for a local Ray started now.",
    ),
) -> None:
    """Stream every input.wav to a target and write time-aligned output.wav files."""
    console, messages = make_console(), make_console(stderr=True)
    _existing_dir(corpus, "CORPUS", "an FDB corpus directory (samples with input.wav)")
    options = {"stt": stt, "tts": tts, **_parse_options(option)}
    check_target_options(target, options)
    make = fdb_session_factory(target, base_url, options, benchmark)
    name = canonical_name(target)
    opts = StreamOptions(
        realtime=realtime, system_prompt=system_prompt, endpoint_ms=endpoint_ms, barge_in=barge_in
    )
    chosen = make_executor(executor, ray_address=ray_address)
    if chosen.name == "ray":
        from voxbench.scale.fdb import FdbJob, drive_on_ray

        job = FdbJob(
            corpus=corpus.resolve(), target=target, name=name, base_url=base_url,
            options=options, benchmark=benchmark, out_dir=out.resolve() if out else None,
            opts=opts, with_clean=clean, categories=tuple(category), limit=limit,
            concurrency=concurrency, in_process=name.split("/", 1)[0] in ("local", "cascade"),
        )  # fmt: skip
        report = drive_on_ray(job, chosen)  # type: ignore[arg-type]
    else:
        report = _drive_here(
            corpus, make, name, out, concurrency, opts, clean, category, limit, messages
        )  # fmt: skip
    _report_drive(report, corpus, out, console)


def _drive_here(
    corpus: Path,
    make: Callable[[], Session],
    name: str,
    out: Path | None,
    concurrency: int,
    opts: StreamOptions,
    clean: bool,
    category: list[str],
    limit: int | None,
    messages: Console,
) -> DriveReport:
    """``fdb run`` in this process, with a progress bar on ``messages``."""
    with _progress(messages) as progress:
        task = progress.add_task(f"fdb · {name}", total=None, last="")

        def started(todo: int, resumed: int) -> None:
            progress.update(task, total=todo, last=f"{resumed} already done" if resumed else "")

        def done(sample: Any, record: dict[str, Any]) -> None:
            mark = "" if record["status"] == "completed" else " (failed)"
            progress.update(task, advance=1, last=f"{sample.relative}{mark}")

        report = asyncio.run(
            drive_corpus(
                corpus, make, name, out_dir=out, concurrency=concurrency, opts=opts,
                with_clean=clean, on_start=started, on_done=done, categories=category,
                limit=limit,
            )
        )  # fmt: skip
    return report


def _report_drive(report: DriveReport, corpus: Path, out: Path | None, console: Console) -> None:
    """What ``fdb run`` did, and its exit code."""
    console.print(
        f"completed {len(report.completed)}, already done {len(report.resumed)}, "
        f"failed {len(report.failed)}, skipped {len(report.skipped)}"
    )
    for path, why in report.failed.items():
        console.print(f"[red]✗[/red] {escape(str(path))}: {escape(why)}")
    for item in report.skipped:
        console.print(f"[yellow]skipped[/yellow] {escape(str(item.path))}: {escape(item.reason)}")
    if not (report.completed or report.resumed or report.failed):
        raise ConfigError(
            "no sample to run" + (f" ({len(report.skipped)} skipped)" if report.skipped else ""),
            file=corpus,
            field="CORPUS",
            expected="sample folders with input.wav and an annotation (pause.json, "
            "turn_taking.json, interrupt.json or metadata.json)",
        )
    records = read_records(report.record_files)
    _print_stage_timings({"stage_timings": stage_timings(records)}, console)
    console.print(f"score with: voxbench fdb score {escape(str(out or corpus))}")
    console.print(run_totals(records).line())
    if report.failed:
        raise RunIncompleteError(
            f"{len(report.failed)} of {len(report.failed) + len(report.completed)} "
            "sample(s) failed (listed above)"
        )


def _print_stage_timings(summary: dict[str, Any], out: Console) -> None:
    rows = stage_rows(summary)
    if not rows:
        return
    table = Table(title="stage timings (wall seconds; errored samples excluded)",
                  title_justify="left")  # fmt: skip
    for col in STAGE_HEADER:
        table.add_column(col)
    for row in rows:
        table.add_row(*(escape(c) for c in row))
    out.print(table)


def _print_summary(summary: dict[str, Any], out: Console) -> None:
    for category in dict.fromkeys(r["category"] for r in summary["rows"]):
        rows = [r for r in summary["rows"] if r["category"] == category]
        metrics = list(dict.fromkeys(m for r in rows for m in r["metrics"]))
        table = Table(title=escape(f"{category} ({summary['mode']})"), title_justify="left")
        for col in ("target", "subset", "samples", "errors", *metrics):
            table.add_column(col)
        for r in rows:
            cells = [
                metric_cell(r["metrics"].get(m), m in TIMING_METRICS, multiline=True)
                for m in metrics
            ]
            table.add_row(
                escape(r["target"]),
                escape(r["subset"]),
                str(r["samples"]),
                str(r["errors"]),
                *cells,
            )
        out.print(table)
    for line in summary.get("method", []):
        out.print(f"[dim]method: {escape(line)}[/dim]")
    for note in summary.get("notes", []):
        out.print(f"[yellow]note[/yellow]: {escape(note)}")
    _print_stage_timings(summary, out)


@app.command("score")
def score_command(
    out_dir: Path = typer.Argument(..., help="A directory of outputs (FDB layout)."),
    mode: str = typer.Option("fdb-v1", "--mode", help="fdb-v1 (public scripts) or voxbench."),
    json_out: bool = typer.Option(False, "--json", help="Print the summary as JSON (stdout)."),
    csv_file: str = typer.Option(
        None, "--csv", help="Write the summary as CSV to FILE, or to stdout with '-'."
    ),
    results: Path = typer.Option(
        None,
        "--out",
        help="Write scores, summary, fdb_report.md and derived transcripts here"
        " (default: OUT_DIR; sample folders are never written).",
    ),
    baseline: Path = typer.Option(None, "--baseline", help="Gate against a stored summary."),
    tolerance: float = typer.Option(0.02, "--tolerance", help="Allowed worsening of rates."),
    latency_tolerance: float = typer.Option(
        0.1, "--latency-tolerance", help="Allowed latency increase (s)."
    ),
    judge: str = typer.Option(
        None, "--judge", "-j", help="LLM judge, provider/model (OpenAI-compatible)."
    ),
    judge_base_url: str = typer.Option(None, "--judge-base-url", help="Judge endpoint override."),
    judge_seed: int = typer.Option(0, "--judge-seed"),
    asr: str = typer.Option(DEFAULT_ASR, "--asr", help="ASR for outputs without output.json."),
    no_asr: bool = typer.Option(
        False,
        "--no-asr",
        help="Metadata mode: score from the existing output.json files only, never transcribe.",
    ),
    gt: Path = typer.Option(
        None, "--gt", help="icc_gt_distribution.json (default: found upwards)."
    ),
    target: str = typer.Option(
        None, "--target", "-t", help="Target name when no run record says it."
    ),
    vad_model: Path = typer.Option(
        None,
        "--vad-model",
        help="Another Silero VAD ONNX file for fdb-v1 mode (default: silero-vad 6.0's, shipped"
        " with faster-whisper); its SHA-256 is recorded in the summary.",
    ),
    html: bool = typer.Option(
        False, "--html", help="Also write fdb_report_<mode>.html: every sample with players."
    ),
    embed_audio: bool = typer.Option(
        False, "--embed-audio", help="With --html: put the audio into the page."
    ),
) -> None:
    """Score outputs; writes fdb_scores_<mode>.jsonl, fdb_summary_<mode>.json, fdb_report.md."""
    if mode not in MODES:
        raise ConfigError(f"unknown mode {mode!r}", field="--mode", expected=" or ".join(MODES))
    to_stdout = csv_file == "-"
    if json_out and to_stdout:
        raise ConfigError(
            "--json and --csv - both write to stdout", field="--csv", expected="a FILE with --json"
        )
    _existing_dir(out_dir, "OUT_DIR", "a directory of FDB outputs")
    if gt is not None:
        load_gt_distribution(gt)  # a missing or broken --gt file is one error, not one per sample
    store = TranscriptStore(None if no_asr else asr)
    # With --json or --csv -, stdout carries only that document; the rest goes to stderr.
    messages = make_console(stderr=True)
    out = messages if (json_out or to_stdout) else make_console()
    chat_judge = ChatJudge(judge, base_url=judge_base_url, seed=judge_seed) if judge else None
    try:
        with _progress(messages) as progress:
            task = progress.add_task(f"score ({mode})", total=None, last="")
            report = score_directory(
                out_dir, mode=mode, transcripts=store, judge=chat_judge,  # type: ignore[arg-type]
                gt_file=gt, target=target, vad_model=vad_model, results_dir=results,
                on_found=lambda n: progress.update(task, total=n),
                progress=lambda s: progress.update(task, advance=1, last=s.relative),
            )  # fmt: skip
    finally:
        if chat_judge is not None:
            chat_judge.close()
    if not report.scores:
        raise ConfigError(
            "nothing to score"
            + (f" ({len(report.skipped)} sample(s) skipped)" if report.skipped else ""),
            file=out_dir,
            field="OUT_DIR",
            expected="sample folders with output.wav or output.json (see voxbench fdb run)",
        )
    summary = report.summary
    if to_stdout:
        write_csv(summary, sys.stdout)
    elif csv_file is not None:
        write_csv(summary, Path(csv_file))
    if html:
        results = report.results_dir or Path(out_dir)
        page = write_fdb_html(results, mode=mode, embed_audio=embed_audio, samples_dir=out_dir)
        make_console(stderr=json_out or to_stdout).print(
            f"report: {escape(str(page))}", soft_wrap=True
        )
    if json_out:
        print(json.dumps(summary, indent=2, ensure_ascii=False))
    else:
        _print_summary(summary, out)  # on stderr when stdout carries the CSV
    _say_transcribed(report, store, messages)
    if report.results_dir is not None:
        messages.print(f"report: {escape(str(report.results_dir / REPORT_FILE))}")
    if baseline is not None:
        gates = compare(
            summary,
            read_summary(baseline),
            tolerance=tolerance,
            latency_tolerance=latency_tolerance,
        )
        regressions = [r for r in gates if r.regressed]
        for r in gates:
            mark = "[red]REGRESSED[/red]" if r.regressed else "[green]ok[/green]"
            out.print(
                f"{mark} {r.category}/{r.subset} {r.metric}: {r.baseline:.3f} → {r.current:.3f} "
                f"(Δ {r.delta:+.3f}, tolerance {r.tolerance:g})"
            )
        if regressions:
            out.print(_final_line(report.scores, summary))
            _fail()
    errors = [s for s in report.scores if s.error]
    for score in errors:
        out.print(f"[red]✗[/red] {escape(score.sample)}: {escape(score.error)}", soft_wrap=True)
    out.print(_final_line(report.scores, summary))
    if errors:
        raise RunIncompleteError(
            f"{len(errors)} of {len(report.scores)} sample(s) could not be scored (listed above)"
        )


def _say_transcribed(report: Any, store: TranscriptStore, out: Console) -> None:
    """Say whether ASR ran, with which engine, and where its transcripts went."""
    made = len(report.transcribed)
    reused = sum(store.engines.values()) - made
    if made:
        where = report.results_dir / DERIVED_DIR if report.results_dir else "memory"
        out.print(
            f"transcribed {made} output(s) with {escape(str(store.asr_name))} "
            f"→ {escape(str(where))}"
        )
    if reused > 0:
        out.print(f"reused {reused} transcript(s) made earlier by {escape(report.summary['asr'])}")
    if not store.engines:
        out.print("no ASR ran: every word came from the outputs' own ASR files")


def _final_line(scores: list[Any], summary: dict[str, Any]) -> str:
    """Samples scored ok / with errors, and the run's average time to first audio."""
    errors = sum(1 for s in scores if s.error)
    ttft = (summary.get("run_totals") or {}).get("average_ttft")
    return RunTotals(len(scores) - errors, errors, ttft).line()
