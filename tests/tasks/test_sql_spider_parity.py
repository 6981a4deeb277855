"""``sql_execution_match`` against the Spider test suite's ``eval_exec_match`` defaults (issue 26
item 7): its ``result_eq`` ported as written, compared on seeded generated result pairs, and
DISTINCT dropped from both queries (``keep_distinct=False``)."""

from __future__ import annotations

import random
import sqlite3
from collections import Counter
from itertools import product
from pathlib import Path
from typing import Any

import pytest

from voxbench.metrics import sql
from voxbench.metrics.registry import METRICS, ScoringContext


def _unorder_row(row: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(sorted(row, key=lambda x: str(x) + str(type(x))))


def _quick_rej(r1: list[tuple[Any, ...]], r2: list[tuple[Any, ...]], order: bool) -> bool:
    s1, s2 = [_unorder_row(r) for r in r1], [_unorder_row(r) for r in r2]
    return s1 == s2 if order else set(s1) == set(s2)


def _multiset_eq(l1: list[Any], l2: list[Any]) -> bool:
    return len(l1) == len(l2) and Counter(l1) == Counter(l2)


def _permutations(sets_by_col: list[set[Any]], result2: list[tuple[Any, ...]]) -> Any:
    num_cols = len(result2[0])
    perm_constraints = [set(range(num_cols)) for _ in range(num_cols)]
    if num_cols <= 3:
        return product(*perm_constraints)
    for _ in range(20):
        row = random.choice(result2)
        for c in range(num_cols):
            for j in list(perm_constraints[c]):
                if row[c] not in sets_by_col[j]:
                    perm_constraints[c].remove(j)
    return product(*perm_constraints)


def spider_result_eq(r1: list[tuple[Any, ...]], r2: list[tuple[Any, ...]], order: bool) -> bool:
    if len(r1) == 0 and len(r2) == 0:
        return True
    if len(r1) != len(r2):
        return False
    num_cols = len(r1[0])
    if len(r2[0]) != num_cols:
        return False
    if not _quick_rej(r1, r2, order):
        return False
    sets_by_col = [{row[i] for row in r1} for i in range(num_cols)]
    for perm in _permutations(sets_by_col, r2):
        if len(perm) != len(set(perm)):
            continue
        r2p = r2 if num_cols == 1 else [tuple(e[i] for i in perm) for e in r2]
        if order:
            if r1 == r2p:
                return True
        elif set(r1) == set(r2p) and _multiset_eq(r1, r2p):
            return True
    return False


def _cell(rng: random.Random) -> Any:
    return rng.choice([1, 2, 2.0, 0.1 + 0.2, 0.3, 1.0000001, 1.0, "a", "b", None, 3])


def _result(rng: random.Random) -> list[tuple[Any, ...]]:
    width = rng.randint(1, 3)
    return [tuple(_cell(rng) for _ in range(width)) for _ in range(rng.randint(0, 4))]


def _variant(rng: random.Random, rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    roll = rng.random()
    if roll < 0.3 or not rows:
        return list(rows)
    if roll < 0.5:
        perm = list(range(len(rows[0])))
        rng.shuffle(perm)
        return [tuple(r[i] for i in perm) for r in rows]
    if roll < 0.65:
        return list(reversed(rows))
    if roll < 0.8:
        return [*rows, rows[0]]
    return [tuple(_cell(rng) if rng.random() < 0.3 else v for v in r) for r in rows]


def test_results_match_equals_spiders_result_eq() -> None:
    rng = random.Random(7)
    differ = []
    for _ in range(2000):
        gold = _result(rng)
        pred = _variant(rng, gold) if rng.random() < 0.8 else _result(rng)
        order = rng.random() < 0.3
        if gold and pred and len(pred[0]) != len(gold[0]):
            continue
        if sql.results_match(gold, pred, ordered=order) != spider_result_eq(gold, pred, order):
            differ.append((gold, pred, order))
    assert differ == []


def test_floats_are_not_rounded() -> None:
    assert not sql.results_match([(0.3,)], [(0.1 + 0.2,)], ordered=False)
    assert sql.results_match([(18,)], [(18.0,)], ordered=False)


@pytest.fixture
def database(tmp_path: Path) -> str:
    path = tmp_path / "t.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (a INTEGER, b TEXT)")
        conn.executemany("INSERT INTO t VALUES (?, ?)", [(1, "x"), (1, "x"), (2, "distinct")])
    return str(path)


def test_distinct_is_dropped_from_both_queries(database: str) -> None:
    assert sql.remove_distinct("SELECT DISTINCT a FROM t WHERE b = 'distinct'") == (
        "SELECT  a FROM t WHERE b = 'distinct'"
    )
    metric = METRICS["sql_execution_match"]
    ctx = ScoringContext(reference="SELECT DISTINCT a FROM t", language="en",
                         target_language="en", answer="sql", database=database)  # fmt: skip
    assert metric.score("SELECT a FROM t", ctx)["correct"] == 1  # as Spider: 1, 1, 2 both
    ctx = ScoringContext(reference="SELECT a FROM t", language="en", target_language="en",
                         answer="sql", database=database)  # fmt: skip
    assert metric.score("SELECT DISTINCT a FROM t", ctx)["correct"] == 1
