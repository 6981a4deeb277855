"""``voxbench import conversation-bench|aiewf``: convert upstream checkouts into benchmarks."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import typer
from rich.markup import escape

from voxbench.cli.console import make_console
from voxbench.core.errors import ConfigError
from voxbench.importers.aiewf import DEFAULT_VARIANT, import_aiewf
from voxbench.importers.conversation_bench import import_conversation_bench
from voxbench.importers.package import ImportedBenchmark

app = typer.Typer(
    help="Import upstream benchmarks (ConversationBench, AIEWF) from a local checkout. "
    "Their Python files are parsed, never executed.",
    no_args_is_help=True,
)

_OUT = typer.Option(None, "--out", help="Destination directory (default ./imported/<id>).")
_DATE = typer.Option(
    None, "--current-date", help="Conversation date YYYY-MM-DD (default: the prompt's own date)."
)
_AUDIO = typer.Option(
    None, "--audio-dir", help="Where turn_NNN.wav files are, if not in the checkout."
)
_PROMPT = typer.Option(
    None,
    "--system-prompt",
    help="A text file to use as system prompt instead of system.py "
    "({knowledge_base} marks where the knowledge base goes).",
)
_FORCE = typer.Option(False, "--force", help="Replace a benchmark already at --out.")
_COMMIT = typer.Option(
    None,
    "--upstream-commit",
    help="The upstream commit SHA of an exported tree (required when SRC has no .git).",
)


def parse_date(value: str | None) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError as exc:
        raise ConfigError(
            f"not a date: {value!r}", field="--current-date", expected="YYYY-MM-DD"
        ) from exc


def print_import(result: ImportedBenchmark) -> None:
    console = make_console()
    audio = (
        f"{result.audio_files} audio files ({result.audio_seconds:.1f} s)"
        if result.audio_files
        else "no audio"
    )
    console.print(
        f"[green]imported[/green] [b]{escape(result.id)}[/b] → {escape(str(result.out_dir))}: "
        f"{result.turns} turns, {result.tools} tools, {result.required_calls} required calls, "
        f"{result.canned_results} canned results, {audio}, date {result.current_date}"
        + (f", upstream commit {result.upstream_commit[:12]}" if result.upstream_commit else "")
    )
    if result.harness:
        console.print(
            f"harness: {escape(result.harness)} (a run can use voxbench's own with -o harness=voxbench)"
        )
    for note in result.notes:
        console.print(f"[yellow]note[/yellow]: {escape(note)}")
    console.print(f"check it with: voxbench bench check {escape(str(result.out_dir))}")


@app.command("conversation-bench")
def conversation_bench(
    src_dir: Path = typer.Argument(
        ..., help="A ConversationBench checkout (or its benchmark dir)."
    ),
    out: Path = _OUT,
    name: str = typer.Option(
        "conversation_bench", "--name", help="Which benchmarks/<name>/ of the checkout."
    ),
    current_date: str = _DATE,
    audio_dir: Path = _AUDIO,
    system_prompt: Path = _PROMPT,
    force: bool = _FORCE,
    upstream_commit: str = _COMMIT,
) -> None:
    """Import ConversationBench's 75-turn benchmark."""
    result = import_conversation_bench(
        src_dir,
        out or Path("imported") / name,
        name=name,
        current_date=parse_date(current_date),
        audio_dir=audio_dir,
        system_prompt_file=system_prompt,
        force=force,
        upstream_commit=upstream_commit,
    )
    print_import(result)


@app.command("aiewf")
def aiewf(
    src_dir: Path = typer.Argument(..., help="An aiewf-eval checkout."),
    variant: str = typer.Option(
        DEFAULT_VARIANT,
        "--variant",
        help="Which benchmarks/<variant>/ (knowledge base + prompt); the default is the one "
        "upstream's published leaderboard uses.",
    ),
    out: Path = _OUT,
    current_date: str = _DATE,
    audio_dir: Path = _AUDIO,
    system_prompt: Path = _PROMPT,
    force: bool = _FORCE,
    upstream_commit: str = _COMMIT,
) -> None:
    """Import AIEWF's 30-turn benchmark in one of its knowledge-base variants."""
    make_console().print(
        f"variant: [b]{escape(variant)}[/b]"
        + (
            " (default: the variant of upstream's published leaderboard)"
            if variant == DEFAULT_VARIANT
            else ""
        )
    )
    result = import_aiewf(
        src_dir,
        out or Path("imported") / variant,
        variant=variant,
        current_date=parse_date(current_date),
        audio_dir=audio_dir,
        system_prompt_file=system_prompt,
        force=force,
        upstream_commit=upstream_commit,
    )
    print_import(result)


@app.command("mt-bench-audio")
def mt_bench_audio(
    source: str = typer.Argument(
        "ServiceNow-AI/mt-bench_audio",
        help="The Hub dataset (read into the Hugging Face cache) or a save_to_disk copy of it.",
    ),
    out: Path = typer.Option(
        None, "--out", help="Where to write it (default: where the mtbench_audio task reads it)."
    ),
    split: str = typer.Option("test", "--split", help="The dataset's split."),
) -> None:
    """Write MT-Bench spoken as the multi-turn manifest the mtbench_audio task reads."""
    from voxbench.importers.mtbench_audio import DEFAULT_OUT, write_manifest

    target = (out or DEFAULT_OUT).expanduser()
    count = write_manifest(source, target, split=split)
    console = make_console()
    console.print(
        f"[green]wrote[/green] {count} MT-Bench records → {escape(str(target))}/manifest.jsonl"
    )
    if out is not None and target != DEFAULT_OUT.expanduser():
        console.print(
            "the registry task mtbench_audio reads "
            f"{escape(str(DEFAULT_OUT))}: extend it with dataset: {{path: {escape(str(target))}}}"
        )
