"""The house reads top-down: a room imports only rooms below it, and of those only the ones its
allow-list names, and no module imports itself back through others (every import counts:
module level, in functions, for type checking)."""

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

ALLOWED: dict[str, frozenset[str]] = {
    "core": frozenset(),
    "audio": frozenset({"core"}),
    "providers": frozenset({"core", "audio"}),
    "benchmarks": frozenset({"core", "audio", "providers"}),
    "metrics": frozenset({"core", "audio", "benchmarks"}),
    "targets": frozenset({"core", "audio", "providers"}),
    "runner": frozenset({"core", "audio", "providers", "benchmarks", "targets"}),
    "toolserver": frozenset({"core", "benchmarks", "targets", "runner"}),
    "analysis": frozenset({"core", "audio"}),
    "judging": frozenset({"core", "audio", "providers", "benchmarks", "targets"}),
    "scoring": frozenset({"core"}),
    "store": frozenset({"core"}),
    "report": frozenset({"core", "audio", "analysis", "scoring"}),
    "fullduplex": frozenset(
        {"core", "audio", "providers", "benchmarks", "targets", "runner", "store", "report"}
    ),
    "tasks": frozenset(
        {"core", "audio", "providers", "benchmarks", "metrics", "judging", "store", "report"}
    ),
    "evaluation": frozenset(
        {
            "core",
            "providers",
            "benchmarks",
            "runner",
            "analysis",
            "judging",
            "scoring",
            "store",
            "report",
            "fullduplex",
        }
    ),
    "importers": frozenset({"core", "audio", "providers", "benchmarks", "metrics", "tasks"}),
    "scale": frozenset(
        {
            "core",
            "providers",
            "benchmarks",
            "targets",
            "runner",
            "judging",
            "scoring",
            "fullduplex",
            "tasks",
            "evaluation",
        }
    ),
    "viewer": frozenset({"core", "scoring", "store", "report"}),
    "testing": frozenset({"core", "audio", "targets"}),
    "cli": frozenset(
        {
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
        }
    ),
}
"""Which rooms each room imports, named one by one (today's imports, each below the room in
``ROOMS``): a room that starts to need another one says so here, in review, and a room added
to ``ROOMS`` gets its line."""

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


def _rooms_on_disk() -> set[str]:
    return {p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}


def test_every_room_has_an_allow_list() -> None:
    missing = sorted((set(ROOMS) | _rooms_on_disk()) - set(ALLOWED))
    assert missing == [], "; ".join(f"room {room} has no allow-list" for room in missing)


def test_allow_lists_follow_the_order() -> None:
    wrong = []
    for room, allowed in ALLOWED.items():
        if room not in ROOMS:
            wrong.append(f"room {room} has an allow-list but is not in ROOMS")
            continue
        for there in sorted(allowed):
            if there not in ROOMS or ROOMS.index(there) >= ROOMS.index(room):
                wrong.append(f"room {room} may import {there}, which is not below it in ROOMS")
    assert wrong == [], "\n".join(wrong)


def test_each_room_imports_only_its_allow_list() -> None:
    outside = []
    for module, targets in sorted(_imports(_modules()).items()):
        here = _room(module)
        if here is None:
            continue
        if here not in ALLOWED:
            missing = f"room {here} has no allow-list"
            if missing not in outside:
                outside.append(missing)
            continue
        allowed = ALLOWED[here]
        for target, line in sorted(targets, key=lambda t: (t[1], t[0])):
            there = _room(target)
            if there is None or there == here or there in allowed:
                continue
            names = ", ".join(sorted(allowed, key=_floor)) or "no other room"
            outside.append(
                f"{module}:{line} imports {target} (room {here} may import only: {names})"
            )
    assert outside == [], "\n".join(outside)


def _floor(room: str) -> int:
    return ROOMS.index(room) if room in ROOMS else len(ROOMS)


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


def test_docs_architecture_lists_the_allow_lists_enforced_here() -> None:
    # docs/architecture.md is the plan people read: its rooms table says what each room may
    # import, and must say what this file enforces.
    import re

    doc = (ROOT.parent.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    documented: dict[str, set[str]] = {}
    for room, allowed in re.findall(r"^\| `([a-z]+)/` \| ([^|]*) \|", doc, re.M):
        allowed = allowed.strip()
        if allowed == "nothing":
            documented[room] = set()
        elif allowed == "every room":
            documented[room] = set(ROOMS) - {room}
        else:
            documented[room] = {name.strip() for name in allowed.split(",")}
    assert list(documented) == list(ROOMS)  # the table is in the house's order
    assert documented == {room: set(allowed) for room, allowed in ALLOWED.items()}
