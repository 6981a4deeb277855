"""Write an upstream benchmark as a voxbench package directory.

The package is built in a temporary directory next to the destination, validated with the
loader, and only then moved into place, so a failed import never leaves a half-written
benchmark behind and never touches an existing one unless asked to replace it.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from functools import partial
from pathlib import Path
from typing import Any

import yaml

from voxbench.audio.riff import parse_wave_layout
from voxbench.benchmarks.loader import FILES, validate_benchmark
from voxbench.core.benchmark import CORE_DIMENSIONS
from voxbench.core.errors import AudioError
from voxbench.importers.prompt import (
    SystemPrompt,
    find_current_date,
    place_knowledge_base,
    read_system_prompt,
)
from voxbench.importers.pyliteral import PyModule, UpstreamFormatError
from voxbench.importers.upstream import (
    ConvertedTurn,
    read_dimension_rules,
    read_tools,
    read_turns,
)

Labeller = Callable[[Path], str]


@dataclass(frozen=True)
class UpstreamLayout:
    """Where one upstream benchmark's files are in a checkout."""

    id: str
    title: str
    checkout: Path
    turns_file: Path
    tools_file: Path
    system_file: Path | None
    kb_file: Path
    audio_dirs: tuple[Path, ...]
    variant: str | None = None
    harness: dict[str, Any] = field(default_factory=dict)
    """Upstream's harness behaviour, written to ``backend.yaml`` (see ``HarnessOptions``)."""


@dataclass
class ImportedBenchmark:
    """What an import produced."""

    out_dir: Path
    id: str
    turns: int
    tools: int
    required_calls: int
    canned_results: int
    audio_files: int
    audio_seconds: float
    current_date: str
    upstream_commit: str | None
    notes: list[str] = field(default_factory=list)
    harness: str | None = None
    """The upstream harness the package reproduces, in words."""


def relative_label(path: Path, root: Path) -> str:
    """``path`` as shown in messages: relative to the checkout when it is inside it."""
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def import_upstream(
    layout: UpstreamLayout,
    out_dir: Path,
    *,
    current_date: date | None = None,
    audio_dir: Path | None = None,
    system_prompt_file: Path | None = None,
    force: bool = False,
    upstream_commit: str | None = None,
) -> ImportedBenchmark:
    """Convert the benchmark described by ``layout`` into a package at ``out_dir``.

    The package records the upstream commit it came from: read from the checkout's ``.git``,
    or given as ``upstream_commit`` for an exported tree (a tree with neither is refused)."""
    _check_destination(out_dir, force)
    commit = resolve_commit(layout.checkout, upstream_commit)
    label = partial(relative_label, root=layout.checkout)
    tools_module = PyModule(layout.tools_file, label(layout.tools_file))
    tools, notes = read_tools(tools_module)
    turns_module = PyModule(layout.turns_file, label(layout.turns_file))
    turns, turn_notes = read_turns(turns_module, tools)
    dimensions = read_dimension_rules(turns_module)
    notes += turn_notes
    knowledge_base = _read_text(layout.kb_file, label(layout.kb_file))
    prompt = _system_prompt(layout, knowledge_base, system_prompt_file, label)
    notes += prompt.notes
    day = current_date or find_current_date(prompt.template)
    if day is None:
        raise UpstreamFormatError(
            "the system prompt states no date (like 'Today is June 2, 2025')",
            file=label(layout.system_file) if layout.system_file else str(system_prompt_file),
            expected="--current-date YYYY-MM-DD",
        )

    out_dir.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{out_dir.name}-", dir=out_dir.parent) as tmp:
        build = Path(tmp) / "package"
        build.mkdir()
        dirs = ((audio_dir,) if audio_dir else ()) + layout.audio_dirs
        seconds, missing = _copy_audio(turns, layout.turns_file.parent, dirs, build, label)
        if missing and missing < len(turns):
            notes.append(f"{missing} of {len(turns)} turns have no audio file; they run text-only")
        elif missing:
            where = ", ".join(label(d) for d in dirs)
            notes.append(f"no audio files found (looked in {where}); the benchmark is text-only")
        _write_package(
            build, layout, turns, tools, knowledge_base, prompt.template, day, commit, dimensions
        )
        problems = validate_benchmark(build)
        if problems:
            listing = "\n".join(f"  - {p}" for p in problems)
            raise UpstreamFormatError(
                f"the converted benchmark does not validate:\n{listing}",
                file=label(layout.turns_file),
            )
        if out_dir.exists():
            # Set the old package aside first; it goes with the temporary directory.
            out_dir.rename(Path(tmp) / "replaced")
        shutil.move(str(build), str(out_dir))

    return ImportedBenchmark(
        out_dir=out_dir,
        id=layout.id,
        turns=len(turns),
        tools=len(tools),
        required_calls=sum(t.calls for t in turns),
        canned_results=sum(len(t.canned) for t in turns),
        audio_files=len(turns) - missing,
        audio_seconds=seconds,
        current_date=day.isoformat(),
        upstream_commit=commit,
        notes=notes,
        harness=describe_harness(layout.harness) if layout.harness else None,
    )


def describe_harness(harness: dict[str, Any]) -> str:
    """``{"upstream": "aiewf", "nudge": True, ...}`` → ``aiewf (nudge=True, ...)``."""
    rest = ", ".join(f"{k}={v}" for k, v in harness.items() if k != "upstream")
    return f"{harness.get('upstream', 'upstream')} ({rest})"


def _check_destination(out_dir: Path, force: bool) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise UpstreamFormatError("exists and is not a directory", file=out_dir)
    if not out_dir.exists() or not any(out_dir.iterdir()):
        return
    if not (out_dir / "benchmark.yaml").is_file():
        raise UpstreamFormatError(
            "is not empty and holds no benchmark; refusing to replace it",
            file=out_dir,
            expected="a new or empty directory",
        )
    if not force:
        raise UpstreamFormatError(
            "already holds a benchmark", file=out_dir, expected="--force to replace it"
        )


def _read_text(path: Path, label: str) -> str:
    if not path.is_file():
        raise UpstreamFormatError("file is missing", file=label)
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UpstreamFormatError(f"cannot read it as UTF-8 text: {exc}", file=label) from exc


def _system_prompt(
    layout: UpstreamLayout, knowledge_base: str, override: Path | None, label: Labeller
) -> SystemPrompt:
    if override is not None:
        notes: list[str] = []
        text = _read_text(override, str(override))
        if "{knowledge_base}" in text:
            return SystemPrompt(template=text)
        return SystemPrompt(template=place_knowledge_base(text, knowledge_base, notes), notes=notes)
    if layout.system_file is None:
        raise UpstreamFormatError(
            "no system.py found", file=label(layout.kb_file.parent.parent), expected="system.py"
        )
    return read_system_prompt(
        PyModule(layout.system_file, label(layout.system_file)), knowledge_base
    )


def _audio_source(
    index: int, audio_file: str | None, turns_dir: Path, dirs: tuple[Path, ...]
) -> Path | None:
    names = [f"turn_{index:03d}.wav"]
    candidates: list[Path] = []
    if audio_file:
        names.insert(0, Path(audio_file).name)
        candidates.append(turns_dir / audio_file)
    # An explicit --audio-dir comes first; their audio_file paths are not always right.
    candidates = [d / n for d in dirs[:1] for n in names] + candidates
    candidates += [d / n for d in dirs[1:] for n in names]
    return next((c for c in candidates if c.suffix.lower() == ".wav" and c.is_file()), None)


def _copy_audio(
    turns: list[ConvertedTurn],
    turns_dir: Path,
    dirs: tuple[Path, ...],
    build: Path,
    label: Labeller,
) -> tuple[float, int]:
    seconds, missing = 0.0, 0
    for index, converted in enumerate(turns):
        source = _audio_source(index, converted.audio_file, turns_dir, dirs)
        if source is None:
            missing += 1
            continue
        try:
            layout = parse_wave_layout(source)
        except AudioError as exc:
            raise UpstreamFormatError(
                f"turns[{index}] audio: {exc}", file=label(source), expected="a RIFF/WAVE file"
            ) from exc
        if layout.block_align and layout.sample_rate:
            seconds += layout.data_bytes / layout.block_align / layout.sample_rate
        relative = f"audio/turn_{index:03d}.wav"
        (build / "audio").mkdir(exist_ok=True)
        # Copied byte for byte: the streaming headers (0xFFFFFFFF sizes) are read by
        # voxbench.audio, and keeping the bytes keeps the audio identical to upstream.
        shutil.copyfile(source, build / relative)
        converted.turn["audio"] = relative
    return seconds, missing


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def _str_presenter(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str_presenter)


def _dump(path: Path, data: Any) -> None:
    text = yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    path.write_text(text, encoding="utf-8")


def _write_package(
    build: Path,
    layout: UpstreamLayout,
    turns: list[ConvertedTurn],
    tools: list[dict[str, Any]],
    knowledge_base: str,
    template: str,
    day: date,
    commit: str | None,
    dimensions: dict[str, list[str]],
) -> None:
    source = f"{layout.title}" + (f" ({layout.variant})" if layout.variant else "")
    provenance = f" at upstream commit {commit}" if commit else ""
    header = {
        "id": layout.id,
        "version": f"upstream-{commit[:12]}" if commit else "imported",
        "description": f"{source}, imported from its Python sources{provenance}. "
        "No machine-checkable facts: tool calls are checked, answers need a judge.",
        "current_date": day.isoformat(),
        "system_prompt": template,
        "dimensions": {"core": list(CORE_DIMENSIONS), "by_category": dimensions},
    }
    canned = {t.turn["id"]: t.canned for t in turns if t.canned}
    backend: dict[str, Any] = {"engine": "canned"}
    if layout.harness:
        backend["harness"] = dict(layout.harness)
    if any(t["name"] == "end_session" for t in tools):
        backend["tools"] = {"end_session": {"op": "end"}}
    backend["canned"] = canned
    files = dict(
        zip(
            FILES,
            (header, None, {"tools": tools}, {"turns": [t.turn for t in turns]}, backend),
            strict=True,
        )
    )
    for name, data in files.items():
        if name == "knowledge_base.md":
            (build / name).write_text(knowledge_base, encoding="utf-8")
        else:
            _dump(build / name, data)


def resolve_commit(checkout: Path, given: str | None) -> str:
    """The upstream commit: the checkout's own, else the one given; refuses neither or a clash."""
    found = git_commit(checkout)
    if given is not None:
        sha = given.strip().lower()
        if not (7 <= len(sha) <= 64 and all(c in "0123456789abcdef" for c in sha)):
            raise UpstreamFormatError(
                f"not a commit id: {given!r}",
                file=checkout,
                expected="--upstream-commit with a hexadecimal git commit id (7-64 digits)",
            )
        if found is not None and not found.startswith(sha):
            raise UpstreamFormatError(
                f"--upstream-commit {given} differs from the checkout's own commit {found}",
                file=checkout,
                expected="the commit the checkout is at, or no --upstream-commit",
            )
        return found or sha
    if found is None:
        raise UpstreamFormatError(
            "no git checkout here (no .git), so the upstream commit is unknown",
            file=checkout,
            expected="--upstream-commit SHA naming the upstream commit this tree was exported from",
        )
    return found


def git_commit(checkout: Path) -> str | None:
    """The commit a git checkout is at, read from ``.git`` without running git."""
    git = checkout / ".git"
    try:
        if git.is_file():  # a worktree or submodule: "gitdir: <path>"
            pointer = git.read_text(encoding="utf-8").strip()
            if not pointer.startswith("gitdir:"):
                return None
            git = (checkout / pointer.split(":", 1)[1].strip()).resolve()
        head = (git / "HEAD").read_text(encoding="utf-8").strip()
        if not head.startswith("ref:"):
            return head if _is_sha(head) else None
        ref = head.split(":", 1)[1].strip()
        for base in (git, _common_dir(git)):
            ref_file = base / ref
            if ref_file.is_file():
                sha = ref_file.read_text(encoding="utf-8").strip()
                return sha if _is_sha(sha) else None
            packed = base / "packed-refs"
            if packed.is_file():
                for line in packed.read_text(encoding="utf-8").splitlines():
                    parts = line.split()
                    if len(parts) == 2 and parts[1] == ref and _is_sha(parts[0]):
                        return parts[0]
    except OSError:
        return None
    return None


def _common_dir(git: Path) -> Path:
    common = git / "commondir"
    if common.is_file():
        return (git / common.read_text(encoding="utf-8").strip()).resolve()
    return git


def _is_sha(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


__all__ = [
    "ImportedBenchmark",
    "UpstreamLayout",
    "git_commit",
    "import_upstream",
    "resolve_commit",
]
