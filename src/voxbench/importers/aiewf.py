"""Import AIEWF (aiewf-eval), the original 30-turn AI Engineer World's Fair benchmark.

Its turns, tools and audio are shared by every variant (``benchmarks/_shared/``); each
variant (``benchmarks/aiwf_long_context/``, ``aiwf_medium_context/``, ...) has its own
knowledge base (``data/knowledge_base.txt``) and prompt (``prompts/system.py`` or
``system.py``). A variant may override the shared turns or tools with its own files.
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

DEFAULT_VARIANT = "aiwf_medium_context"
"""The variant of upstream's published results table (its README's leaderboard)."""
HARNESS = {
    "upstream": "aiewf",
    "duplicate_calls": "skip",
    "canned_results": "success",
    "nudge": True,
    "nudge_match": "aiewf",
}
"""Its text pipeline: a repeated call in a turn gets ``duplicate_skipped``, every call gets
``{"status": "success"}`` (its ``function_call_response`` values are not used), and a reply
missing the required call (by its own loose argument rule) gets one "Please go ahead."
follow-up, which is not scored."""
SHARED = "_shared"
KB_FILE = Path("data") / "knowledge_base.txt"


def aiewf_variants(src: Path) -> list[str]:
    """The variants of a checkout: benchmark directories that have a knowledge base."""
    root = src / "benchmarks"
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.name != SHARED and (p / KB_FILE).is_file())


def _first(*paths: Path) -> Path | None:
    return next((p for p in paths if p.is_file()), None)


def aiewf_layout(src: Path, variant: str = DEFAULT_VARIANT) -> UpstreamLayout:
    """Locate the files of ``variant`` in an aiewf-eval checkout."""
    bench, shared = src / "benchmarks" / variant, src / "benchmarks" / SHARED
    if not (bench / KB_FILE).is_file():
        known = ", ".join(aiewf_variants(src)) or "none found"
        raise UpstreamFormatError(
            f"no variant {variant!r} (missing benchmarks/{variant}/{KB_FILE.as_posix()})",
            file=src,
            expected=f"an aiewf-eval checkout and one of its variants ({known})",
        )
    turns = _first(bench / "turns.py", shared / "turns.py")
    tools = _first(bench / "tools.py", shared / "tools.py", shared / "__init__.py")
    if turns is None or tools is None:
        what = "turns.py" if turns is None else "tools.py"
        raise UpstreamFormatError(
            f"no {what} in benchmarks/{variant}/ or benchmarks/{SHARED}/",
            file=src,
            expected="an aiewf-eval checkout",
        )
    return UpstreamLayout(
        id=variant,
        title="AIEWF",
        checkout=src,
        turns_file=turns,
        tools_file=tools,
        system_file=_first(bench / "prompts" / "system.py", bench / "system.py"),
        kb_file=bench / KB_FILE,
        audio_dirs=(bench / "audio", shared / "audio"),
        variant=variant,
        harness=HARNESS,
    )


def import_aiewf(
    src: Path,
    out_dir: Path,
    *,
    variant: str = DEFAULT_VARIANT,
    current_date: date | None = None,
    audio_dir: Path | None = None,
    system_prompt_file: Path | None = None,
    force: bool = False,
    upstream_commit: str | None = None,
) -> ImportedBenchmark:
    """Convert one variant of an aiewf-eval checkout into a voxbench benchmark."""
    return import_upstream(
        aiewf_layout(src, variant),
        out_dir,
        current_date=current_date,
        audio_dir=audio_dir,
        system_prompt_file=system_prompt_file,
        force=force,
        upstream_commit=upstream_commit,
    )


__all__ = ["DEFAULT_VARIANT", "aiewf_layout", "aiewf_variants", "import_aiewf"]
