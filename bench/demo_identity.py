"""Did two ``voxbench demo`` runs give the same results? (a speed change must not move them)

Compares two ``--runs-dir`` trees of ``voxbench demo`` (or of any runs of the same targets),
pairing their run directories by target, and prints per target whether each file matches:

- ``transcript.jsonl``, ``judged.jsonl``, ``checkpoints.jsonl``: every field of every line
  (``judged.jsonl``: but the turn-taking verdicts' evidence, which quotes latencies)
- ``conversation.wav`` (and ``tags.wav``): byte for byte
- ``scorecard.json``: every field but the latency figures and the run id
- ``events.jsonl``: every event, every field but ``wall`` and ``seq``, as a set, the heard
  text's event (``agent_speech``) without its time: it is stamped when the turn's ASR (a
  worker thread) finishes, among the next turn's events, at a place that depends on the
  host's speed

What is left out differs between any two runs of the same code (two baseline demos show it):
the wall-clock stamps and the latencies measured from them (``analysis.json``, the
scorecard's ``latency``, the turn-taking evidence), the order of events from concurrent tasks,
run ids, paths and creation times (``run.json``, ``report.md``, ``run.log``). On a virtual
clock (the demo's in-process agents) everything else is the same on a fast, slow or busy host.

Usage: python bench/demo_identity.py RUNS_DIR_A RUNS_DIR_B   (exit status 1 when anything differs)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

IGNORED_KEYS = {
    "events.jsonl": {"wall", "seq"},
    "scorecard.json": {"latency", "run_id"},
}
"""Per file, the keys (at any depth) whose values differ between two runs of the same code."""
UNORDERED = {"events.jsonl"}
"""Files compared as a set of lines (their order depends on the host's speed)."""
JSONL_FILES = ("transcript.jsonl", "judged.jsonl", "checkpoints.jsonl", "events.jsonl")
BYTE_FILES = ("conversation.wav", "tags.wav")


def runs_by_target(runs_dir: Path) -> dict[str, Path]:
    """Each run directory under ``runs_dir`` by its target's name."""
    out: dict[str, Path] = {}
    for info in sorted(runs_dir.rglob("run.json")):
        target = json.loads(info.read_text(encoding="utf-8"))["target"]["name"]
        if target in out:
            raise SystemExit(f"{runs_dir}: two runs of {target}; compare one demo's tree each")
        out[target] = info.parent
    return out


def strip(value: Any, ignored: set[str]) -> Any:
    """``value`` without the ``ignored`` keys, at any depth."""
    if isinstance(value, dict):
        return {k: strip(v, ignored) for k, v in value.items() if k not in ignored}
    if isinstance(value, list):
        return [strip(v, ignored) for v in value]
    return value


def first_difference(a: Any, b: Any, where: str = "") -> str | None:
    """The first dotted path at which two JSON values differ, or None."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            found = first_difference(a.get(key), b.get(key), f"{where}.{key}" if where else key)
            if found is not None:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = first_difference(x, y, f"{where}[{i}]")
            if found is not None:
                return found
        return None
    return None if a == b else (where or "(root)")


def comparable(name: str, value: Any) -> Any:
    """What of file ``name``'s ``value`` two runs of the same code agree on."""
    value = strip(value, IGNORED_KEYS.get(name, set()))
    if name == "judged.jsonl" and value is not None:
        value = [
            strip(row, {"evidence"}) if row["dimension"] == "turn_taking" else row for row in value
        ]
    if name == "events.jsonl" and value is not None:
        value = [strip(row, {"t"}) if row["type"] == "agent_speech" else row for row in value]
    if name in UNORDERED and value is not None:
        value = sorted(json.dumps(row, sort_keys=True) for row in value)
    return value


def load_json(path: Path) -> Any:
    """A JSON file's value, or a JSON-lines file's list of rows (None when absent)."""
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return json.loads(text)


def compare_run(a: Path, b: Path) -> list[tuple[str, str | None, str]]:
    """(file, first difference or None, what was compared) for each compared file."""
    out: list[tuple[str, str | None, str]] = []
    for name in (*JSONL_FILES, "scorecard.json"):
        left, right = comparable(name, load_json(a / name)), comparable(name, load_json(b / name))
        size = f"{len(left)} lines" if isinstance(left, list) else "fields"
        out.append((name, first_difference(left, right), size))
    for name in BYTE_FILES:
        left_file, right_file = a / name, b / name
        if not left_file.is_file() and not right_file.is_file():
            continue
        digests = [
            hashlib.sha256(f.read_bytes()).hexdigest() if f.is_file() else "absent"
            for f in (left_file, right_file)
        ]
        size = left_file.stat().st_size if left_file.is_file() else 0
        out.append((name, None if digests[0] == digests[1] else "bytes", f"{size} bytes"))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    args = parser.parse_args()
    left, right = runs_by_target(args.a), runs_by_target(args.b)
    if set(left) != set(right) or not left:
        raise SystemExit(f"different targets: {sorted(left)} vs {sorted(right)}")
    same = True
    for target in sorted(left):
        print(target)
        for name, difference, size in compare_run(left[target], right[target]):
            same &= difference is None
            verdict = "identical" if difference is None else f"DIFFERS at {difference}"
            print(f"  {name:18} {verdict} ({size})")
    print("all identical" if same else "DIFFERENCES")
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
