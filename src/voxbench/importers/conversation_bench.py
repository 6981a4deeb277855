"""Import ConversationBench (``benchmarks/conversation_bench/`` of its checkout).

The benchmark directory holds ``turns.py``, ``tools.py``, ``system.py``,
``data/knowledge_base.txt`` and, when downloaded, ``audio/turn_NNN.wav``.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from voxbench.importers.package import (
    ImportedBenchmark,
    UpstreamLayout,
    import_upstream,
)
from voxbench.importers.pyliteral import UpstreamFormatError

DEFAULT_NAME = "conversation_bench"
BENCHMARK_FILES = ("turns.py", "tools.py", "system.py", "data/knowledge_base.txt")
HARNESS = {
    "upstream": "conversation-bench",
    "duplicate_calls": "skip",
    "canned_results": "in_order",
}
"""Its harness: a repeated call in a turn gets ``duplicate_skipped``; the k-th distinct call
gets the k-th ``function_call_response`` (a single one answers every call); no nudge."""


def conversation_bench_layout(src: Path, name: str = DEFAULT_NAME) -> UpstreamLayout:
    """Locate the benchmark in a checkout (or in the benchmark directory itself)."""
    if (src / "turns.py").is_file():
        bench, checkout = src, _checkout_root(src)
    else:
        bench, checkout = src / "benchmarks" / name, src
    missing = [f for f in BENCHMARK_FILES if not (bench / f).is_file()]
    if missing:
        raise UpstreamFormatError(
            f"not a ConversationBench checkout: missing {', '.join(missing)} in {bench}",
            file=src,
            expected=f"a checkout holding benchmarks/{name}/turns.py, or that directory itself",
        )
    return UpstreamLayout(
        id=bench.name,
        title="ConversationBench",
        checkout=checkout,
        turns_file=bench / "turns.py",
        tools_file=bench / "tools.py",
        system_file=bench / "system.py",
        kb_file=bench / "data" / "knowledge_base.txt",
        audio_dirs=(bench / "audio",),
        harness=HARNESS,
    )


def _checkout_root(bench: Path) -> Path:
    # benchmarks/<name>/ inside a checkout: report paths and the commit from its root.
    for parent in (bench, *bench.resolve().parents):
        if (parent / ".git").exists():
            return parent
    return bench


def import_conversation_bench(
    src: Path,
    out_dir: Path,
    *,
    name: str = DEFAULT_NAME,
    current_date: date | None = None,
    audio_dir: Path | None = None,
    system_prompt_file: Path | None = None,
    force: bool = False,
    upstream_commit: str | None = None,
) -> ImportedBenchmark:
    """Convert a ConversationBench checkout into a voxbench benchmark at ``out_dir``."""
    return import_upstream(
        conversation_bench_layout(src, name),
        out_dir,
        current_date=current_date,
        audio_dir=audio_dir,
        system_prompt_file=system_prompt_file,
        force=force,
        upstream_commit=upstream_commit,
    )


__all__ = ["DEFAULT_NAME", "conversation_bench_layout", "import_conversation_bench"]
