"""The house reads top-down: a room imports only rooms below it, and no module imports itself
back through others (every import counts: module level, in functions, for type checking)."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import voxbench

ROOMS = (
    "core",
    "audio",
    "providers",
    "benchmarks",
    "metrics",
    "targets",
    "runner",
    "toolserver",
    "analysis",
    "judging",
    "scoring",
    "store",
    "report",
    "fullduplex",
    "tasks",
    "evaluation",
    "importers",
    "scale",
    "viewer",
    "testing",
    "cli",
)
"""From the ground floor up (``ARCHITECTURE.md``): each room may import the rooms before it."""

ROOT = Path(voxbench.__file__).parent


def _modules() -> dict[str, Path]:
    out = {}
    for file in ROOT.rglob("*.py"):
        parts = file.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = file
    return out


def _imports(modules: dict[str, Path]) -> dict[str, set[tuple[str, int]]]:
    edges: dict[str, set[tuple[str, int]]] = defaultdict(set)
    for name, file in modules.items():
        package = name if file.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            for target in targets:
                if target in modules and target != name:
                    edges[name].add((target, node.lineno))
    return edges


def _room(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def test_every_room_is_in_the_plan() -> None:
    rooms = {p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    assert rooms <= set(ROOMS), f"rooms missing from the plan: {rooms - set(ROOMS)}"


def test_no_room_imports_a_room_above_it() -> None:
    upward = []
    for module, targets in _imports(_modules()).items():
        here = _room(module)
        for target, line in targets:
            there = _room(target)
            if here in ROOMS and there in ROOMS and ROOMS.index(there) > ROOMS.index(here):
                upward.append(f"{module}:{line} imports {target} ({here} → {there})")
    assert upward == []


def test_no_import_cycles() -> None:
    edges = {m: {t for t, _ in ts} for m, ts in _imports(_modules()).items()}
    cycles = []
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(edges):
        if module not in index:
            visit(module)
    assert cycles == []
