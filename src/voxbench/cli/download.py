"""``voxbench download conversation-bench|aiewf``: fetch upstream's public dataset and import it."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from voxbench.cli.console import make_console
from voxbench.cli.importing import parse_date, print_import
from voxbench.importers.aiewf import DEFAULT_VARIANT
from voxbench.importers.download import DATASETS, download_benchmark


def download_command(
    benchmark: str = typer.Argument(..., help=f"Which benchmark: {', '.join(DATASETS)}."),
    cache: Path = typer.Option(
        None, "--cache", help="Hugging Face cache directory (default: HF_HOME's hub cache)."
    ),
    revision: str = typer.Option(
        None, "--revision", help="Dataset branch, tag or commit (default: main)."
    ),
    repo: str = typer.Option(
        None, "--repo", help="Another Hugging Face dataset id (owner/name) holding its files."
    ),
    source: Path = typer.Option(
        None,
        "--source",
        help="A local checkout for the Python sources when the dataset holds only audio.",
    ),
    out: Path = typer.Option(
        None, "--out", help="Destination directory (default ./imported/<id>)."
    ),
    variant: str = typer.Option(DEFAULT_VARIANT, "--variant", help="AIEWF: which variant."),
    current_date: str = typer.Option(
        None, "--current-date", help="Conversation date YYYY-MM-DD (default: the prompt's own)."
    ),
    force: bool = typer.Option(False, "--force", help="Replace a benchmark already at --out."),
) -> None:
    """Download a public upstream benchmark (its Hugging Face dataset, audio included) and
    import it. With HF_HUB_OFFLINE=1 only the cache is used."""
    name = "conversation_bench" if benchmark == "conversation-bench" else variant
    result = download_benchmark(
        benchmark,
        out or Path("imported") / name,
        cache_dir=cache,
        revision=revision,
        repo_id=repo,
        source=source,
        variant=variant,
        current_date=parse_date(current_date),
        force=force,
    )
    how = "from the cache (offline)" if result.from_cache else "downloaded or found in the cache"
    make_console().print(
        f"dataset [b]{escape(result.repo_id)}[/b]"
        + (f" at {result.dataset_commit[:12]}" if result.dataset_commit else "")
        + f": {how}, {escape(str(result.snapshot))}"
    )
    print_import(result.imported)
