"""``voxbench fdb run|score``: Full-Duplex-Bench with any target, scored two ways.

Each command parses its flags, calls one function (``fullduplex.run.run_fdb``,
``evaluation.fdb.evaluate_fdb``), shows its progress bar, prints the result and exits with
the result's error. What to drive, what to score, which files to write and what counts as a
failure is decided there.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from voxbench.cli.console import make_console
from voxbench.cli.tables import print_table
from voxbench.core.errors import ConfigError
from voxbench.fullduplex.driver import DriveReport
from voxbench.fullduplex.progress import ProgressView, Ticker
from voxbench.fullduplex.report import STAGE_HEADER, metric_cell, stage_rows
from voxbench.fullduplex.run import DEFAULT_TTS, FdbJob, FdbRunOptions, FdbRunResult, run_fdb
from voxbench.fullduplex.score import AsrUse, FdbScoreOptions
from voxbench.fullduplex.stream import DEFAULT_SYSTEM_PROMPT
from voxbench.fullduplex.summary import TIMING_METRICS, write_csv
from voxbench.fullduplex.transcripts import DEFAULT_ASR

if TYPE_CHECKING:
    from voxbench.fullduplex.run import RemoteDrive

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


class _BarTicker:
    """A ``fullduplex.progress.Ticker`` on one task of a progress bar."""

    def __init__(self, progress: Progress, task: TaskID) -> None:
        self.progress, self.task = progress, task

    def total(self, count: int, note: str | None = None) -> None:
        if note is None:
            self.progress.update(self.task, total=count)
        else:
            self.progress.update(self.task, total=count, last=note)

    def advance(self, note: str) -> None:
        self.progress.update(self.task, advance=1, last=note)


def _progress_view(out: Console) -> ProgressView:
    """The rooms' ``ProgressView`` as a bar on ``out``."""

    @contextmanager
    def view(title: str) -> Iterator[Ticker]:
        with _progress(out) as progress:
            yield _BarTicker(progress, progress.add_task(title, total=None, last=""))

    return view


def _fail() -> None:
    # SystemExit, not typer.Exit: the root runs click with standalone_mode=False, which turns
    # typer.Exit into a return value that would be lost.
    raise SystemExit(1)


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
    tts: str = typer.Option(DEFAULT_TTS, "--tts", help="Text targets: the cascade's TTS."),
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
    perturb: str = typer.Option(
        None,
        "--perturb",
        metavar="SPEC",
        help="The target hears every input perturbed, e.g. noise:pink@10dB+codec:mulaw "
        "(needs --out; saved there as perturbed_input.wav; scored against the clean annotations).",
    ),
    seed: int = typer.Option(0, "--seed", help="Seeds --perturb."),
) -> None:
    """Stream every input.wav to a target and write time-aligned output.wav files."""
    console, messages = make_console(), make_console(stderr=True)
    options = FdbRunOptions(
        corpus=corpus, target=target, out=out, concurrency=concurrency, realtime=realtime,
        base_url=base_url, options=_parse_options(option), stt=stt, tts=tts,
        system_prompt=system_prompt, endpoint_ms=endpoint_ms, barge_in=barge_in, clean=clean,
        benchmark=benchmark, categories=tuple(category), limit=limit, perturb=perturb, seed=seed,
    )  # fmt: skip
    result = run_fdb(
        options, remote=_executor(executor, ray_address), progress=_progress_view(messages)
    )
    _print_drive(result, console)


def _executor(name: str, ray_address: str | None) -> RemoteDrive:
    """``--executor``: Ray drives the job in shards (``scale.fdb``); local returns None, so
    ``run_fdb`` drives it in this process. Called once the options are checked."""

    def drive(job: FdbJob) -> DriveReport | None:
        from voxbench.scale.executors import make_executor

        chosen = make_executor(name, ray_address=ray_address)
        if chosen.name != "ray":
            return None
        from voxbench.scale.fdb import drive_on_ray

        return drive_on_ray(job, chosen)  # type: ignore[arg-type]

    return drive


def _print_drive(result: FdbRunResult, console: Console) -> None:
    """What ``fdb run`` did; ends with its error (exit 2 or 4) when it has one."""
    report = result.report
    console.print(
        f"completed {len(report.completed)}, already done {len(report.resumed)}, "
        f"failed {len(report.failed)}, skipped {len(report.skipped)}"
    )
    for path, why in report.failed.items():
        console.print(f"[red]✗[/red] {escape(str(path))}: {escape(why)}")
    for item in report.skipped:
        console.print(f"[yellow]skipped[/yellow] {escape(str(item.path))}: {escape(item.reason)}")
    if result.nothing_to_run is not None:
        raise result.nothing_to_run
    _print_stage_timings({"stage_timings": result.stage_timings}, console)
    console.print(f"score with: voxbench fdb score {escape(str(result.scored_dir))}")
    console.print(result.totals.line())
    if result.incomplete is not None:
        raise result.incomplete


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
    print_table(out, table)


def _print_summary(summary: dict[str, Any], out: Console) -> None:
    for category in dict.fromkeys(r["category"] for r in summary["rows"]):
        rows = [r for r in summary["rows"] if r["category"] == category]
        metrics = list(dict.fromkeys(m for r in rows for m in r["metrics"]))
        heard = (
            f", heard through {summary['perturbations']}" if summary.get("perturbations") else ""
        )
        title = f"{category} ({summary['mode']}{heard})"
        table = Table(title=escape(title), title_justify="left")
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
        print_table(out, table)
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
        help="Another Silero VAD ONNX file for fdb-v1 mode: silero-vad's own silero_vad.onnx"
        " (inputs input, state, sr) or faster-whisper's repackaged one (default: silero-vad"
        " 6.0's, shipped with faster-whisper); its SHA-256 is recorded in the summary.",
    ),
    html: bool = typer.Option(
        False, "--html", help="Also write fdb_report_<mode>.html: every sample with players."
    ),
    embed_audio: bool = typer.Option(
        False, "--embed-audio", help="With --html: put the audio into the page."
    ),
) -> None:
    """Score outputs; writes fdb_scores_<mode>.jsonl, fdb_summary_<mode>.json, fdb_report.md."""
    to_stdout = csv_file == "-"
    options = FdbScoreOptions(
        out_dir=out_dir, mode=mode, results=results,
        csv=Path(csv_file) if csv_file is not None and not to_stdout else None,
        baseline=baseline, tolerance=tolerance, latency_tolerance=latency_tolerance,
        judge=judge, judge_base_url=judge_base_url, judge_seed=judge_seed,
        asr=None if no_asr else asr, gt=gt, target=target, vad_model=vad_model, html=html,
        embed_audio=embed_audio,
    )  # fmt: skip
    if json_out and to_stdout:
        raise ConfigError(
            "--json and --csv - both write to stdout", field="--csv", expected="a FILE with --json"
        )
    # With --json or --csv -, stdout carries only that document; the rest goes to stderr.
    messages = make_console(stderr=True)
    out = messages if (json_out or to_stdout) else make_console()
    from voxbench.evaluation.fdb import evaluate_fdb  # the evaluation room: loaded to score

    result = evaluate_fdb(options, progress=_progress_view(messages))
    summary = result.summary
    if to_stdout:
        write_csv(summary, sys.stdout)
    if result.page is not None:
        make_console(stderr=json_out or to_stdout).print(
            f"report: {escape(str(result.page))}", soft_wrap=True
        )
    if json_out:
        print(json.dumps(summary, indent=2, ensure_ascii=False))
    else:
        _print_summary(summary, out)  # on stderr when stdout carries the CSV
    _say_transcribed(result.asr, messages)
    if result.report_file is not None:
        messages.print(f"report: {escape(str(result.report_file))}")
    if result.gate_error is not None:
        raise result.gate_error
    for r in result.gates:
        mark = "[red]REGRESSED[/red]" if r.regressed else "[green]ok[/green]"
        out.print(
            f"{mark} {r.category}/{r.subset} {r.metric}: {r.baseline:.3f} → {r.current:.3f} "
            f"(Δ {r.delta:+.3f}, tolerance {r.tolerance:g})"
        )
    for score in result.errors:  # failed or unscorable samples: every one listed
        out.print(
            f"[red]✗[/red] {escape(score.sample)}: {escape(str(score.error))}", soft_wrap=True
        )
    out.print(result.totals.line())
    if result.incomplete is not None:  # an incomplete scoring wins over a failed gate
        raise result.incomplete
    if result.regressions:
        _fail()


def _say_transcribed(asr: AsrUse, out: Console) -> None:
    """Say whether ASR ran, with which engine, and where its transcripts went."""
    if asr.made:
        where = asr.saved_to if asr.saved_to is not None else "memory"
        out.print(
            f"transcribed {asr.made} output(s) with {escape(str(asr.engine))} "
            f"→ {escape(str(where))}"
        )
    if asr.reused > 0:
        out.print(
            f"reused {asr.reused} transcript(s) made earlier by {escape(str(asr.engines_used))}"
        )
    if not asr.ran:
        out.print("no ASR ran: every word came from the outputs' own ASR files")
