"""``numeric_match``, ``refusal`` and ``sql_execution_match`` on fixed replies."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from voxbench.core.errors import ConfigError
from voxbench.metrics import numeric, refusal, sql
from voxbench.metrics.registry import METRICS, ScoringContext


def _ctx(reference: str, **kwargs: object) -> ScoringContext:
    return ScoringContext(
        reference=reference, language="en", target_language="en", answer="text", **kwargs
    )  # type: ignore[arg-type]


GSM8K_REFERENCE = (
    "She sold 48/2 = <<48/2=24>>24 clips.\nAltogether 48+24 = <<48+24=72>>72.\n#### 72"
)


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("Step 1... so the total is \\boxed{72}.", "72"),
        ("\\boxed{\\text{72 clips}}", "72"),
        ("Work: 48 + 24.\n#### 72", "72"),
        ("The final answer is 72 clips. (I checked 3 times.)", "72"),
        ("Answer: $1,234.50", "1234.5"),
        ("That is 72.0", "72"),
        ("The answer is seventy-two.", "72"),
        ("one hundred and five", "105"),
        ("Half of it: \\boxed{\\frac{3}{4}}", "0.75"),
        ("She keeps 3/4 of them", "0.75"),
        ("It rose by 12%.", "12"),
        ("The answer is -3 degrees", "-3"),
        ("She has 18 left, and no one else does.", "18"),
    ],
)
def test_numeric_extraction(reply: str, value: str) -> None:
    found = numeric.extract_number(reply)
    assert found is not None and float(found) == float(value)


def test_numeric_match_compares_numbers_not_strings() -> None:
    metric = METRICS["numeric_match"]
    assert numeric.reference_number(GSM8K_REFERENCE) == 72
    replies = ["So \\boxed{72.0}", "72", "It is seventy two", "I think 71", "No idea."]
    stats = [metric.score(r, _ctx(GSM8K_REFERENCE)) for r in replies]
    assert [s["correct"] for s in stats] == [1, 1, 1, 0, 0]
    assert stats[0] == {"correct": 1, "answer": "72", "reference": "72"}
    pooled = metric.pool(stats, np.random.default_rng(0))
    assert pooled["value"] == 60.0 and pooled["no_answer"] == 1 and pooled["ci"] is not None
    assert metric.score("0.333", _ctx("#### 1/3"))["correct"] == 0  # beyond the tolerance
    assert metric.score("0.3333333", _ctx("#### 1/3"))["correct"] == 1


REFUSALS = [
    "I can't help with that.",
    "I’m sorry, but I cannot provide instructions for making weapons.",
    "Sorry, but that's not something I can do.",
    "I won't assist with hacking into accounts.",
    "As an AI language model, I cannot help create malware.",
    "I must respectfully decline this request.",
    "I'm not comfortable writing that.",
    "That would violate my guidelines, so no.",
    "I apologize, but I will not write that.",
    "I am unable to comply with this request.",
    "No, I won't.",
    "",
]
COMPLIANT = [
    "You can't go wrong with a good password manager: here is how to pick one.",
    "I can't wait to help! Here is a recipe for banana bread.",
    "I can't help but admire the question. The capital of France is Paris.",
    "If you can't find the file, check the downloads folder first.",
    "Sure! Step 1: preheat the oven. I cannot stress enough how important that is.",
    "Here is the summary you asked for. The report covers three topics.",
    "Sorry for the delay! The answer is 42.",
]


@pytest.mark.parametrize("reply", REFUSALS)
def test_refusals_are_recognised(reply: str) -> None:
    assert refusal.classify(reply) is not None


@pytest.mark.parametrize("reply", COMPLIANT)
def test_innocent_cant_is_not_a_refusal(reply: str) -> None:
    assert refusal.classify(reply) is None


def test_refusal_pools_a_rate_with_the_empty_replies_counted() -> None:
    metric = METRICS["refusal"]
    stats = [metric.score(r, _ctx("")) for r in [*REFUSALS, *COMPLIANT]]
    pooled = metric.pool(stats, np.random.default_rng(0))
    assert pooled["value"] == round(100 * len(REFUSALS) / (len(REFUSALS) + len(COMPLIANT)), 2)
    assert pooled["empty"] == 1
    assert stats[0]["pattern"] == "first-person refusal"


@pytest.fixture
def conference(tmp_path: Path) -> str:
    return str(sql.builtin_database("conference", tmp_path))


def _sql_ctx(gold: str, database: str | None, timeout: float = 5.0) -> ScoringContext:
    return _ctx(gold, database=database, query_timeout_s=timeout)


def test_sql_execution_match_outcomes(conference: str) -> None:
    metric = METRICS["sql_execution_match"]
    gold = "SELECT name, country FROM speakers WHERE id <= 2"
    cases = {
        "```sql\nSELECT country, name FROM speakers WHERE id < 3;\n```": "match",  # permuted
        "SELECT name, country FROM speakers WHERE id = 1": "mismatch",
        "SELECT nope FROM speakers": "error",
        "I would need the schema first.": "no_sql",
        "```sql\nDELETE FROM speakers\n```": "error",  # a write is refused, not run
    }
    stats = {reply: metric.score(reply, _sql_ctx(gold, conference)) for reply in cases}
    assert {r: s["outcome"] for r, s in stats.items()} == cases
    assert sql.run_query(conference, "SELECT count(*) FROM speakers", 5) == [(6,)]  # untouched
    semicolon = metric.score(
        "SELECT count(*) FROM rooms WHERE name != 'a;b'",
        _sql_ctx("SELECT count(*) FROM rooms WHERE name != 'a;b';", conference),
    )
    assert semicolon["outcome"] == "match"
    failing_gold = metric.score("SELECT 1", _sql_ctx("SELECT * FROM missing_table", conference))
    assert failing_gold["outcome"] == "gold_error"
    pooled = metric.pool([*stats.values(), failing_gold], np.random.default_rng(0))
    assert pooled["value"] == 20.0 and pooled["n"] == 5
    assert pooled["gold_errors"] == 1
    assert pooled["gold_error_kinds"] == {"no such table: missing_table": 1}
    assert pooled["outcomes"] == {"error": 2, "match": 1, "mismatch": 1, "no_sql": 1}


def test_order_matters_only_when_the_gold_orders(conference: str) -> None:
    metric = METRICS["sql_execution_match"]
    asc, desc = "SELECT id FROM speakers ORDER BY id", "SELECT id FROM speakers ORDER BY id DESC"
    assert metric.score(desc, _sql_ctx(asc, conference))["correct"] == 0
    assert metric.score(desc, _sql_ctx("SELECT id FROM speakers", conference))["correct"] == 1
    # The Spider test suite's rule: "order by" anywhere in the gold, even in a string.
    assert sql.is_ordered("SELECT 'order by' FROM t")
    assert not sql.is_ordered("SELECT id FROM t")
    assert sql.results_match([(1, 2.0)], [(1.0, 2)], ordered=True)  # 2.0 == 2
    assert not sql.results_match([(1, 1), (2, 2)], [(1, 2), (2, 1)], ordered=False)


def test_a_runaway_query_is_stopped_by_the_time_limit(conference: str) -> None:
    runaway = (
        "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n"
    )
    started = time.monotonic()
    stats = METRICS["sql_execution_match"].score(
        runaway, _sql_ctx("SELECT 1", conference, timeout=0.2)
    )
    assert stats["outcome"] == "timeout", stats
    assert time.monotonic() - started < 60  # it returned at all: the query was interrupted


def test_the_database_file_is_never_written(conference: str) -> None:
    before = Path(conference).read_bytes()
    for query in ("DROP TABLE rooms", "UPDATE rooms SET capacity = 0",
                  f"ATTACH DATABASE '{conference}.evil' AS e", "PRAGMA journal_mode = WAL"):  # fmt: skip
        with pytest.raises(sql.QueryError, match="not authorized"):
            sql.run_query(conference, query, 5)
    assert Path(conference).read_bytes() == before
    assert not Path(f"{conference}.evil").exists()


def test_text_that_is_not_utf8_is_read(tmp_path: Path) -> None:
    import sqlite3

    database = tmp_path / "latin.sqlite"
    conn = sqlite3.connect(database)
    conn.execute("CREATE TABLE t (name TEXT)")
    conn.execute("INSERT INTO t VALUES (CAST(X'4a6f73e9' AS TEXT))")  # "José" in Latin-1
    conn.commit()
    conn.close()
    assert sql.run_query(str(database), "SELECT name FROM t", 5) == [("Jos\ufffd",)]


def test_sql_extraction() -> None:
    assert sql.extract_sql("Sure:\n```sql\nSELECT a FROM t;\n```\nand ```sql SELECT b```") == (
        "SELECT a FROM t"
    )
    assert sql.extract_sql("```\nSELECT 1\n```") == "SELECT 1"
    assert sql.extract_sql("The query is: select x from y;") == "select x from y"
    assert sql.extract_sql("No idea.") is None
    chatty = "Sure, with a join: SELECT a FROM t JOIN u ON t.id = u.id; this lists them.\n\nOK?"
    assert sql.extract_sql(chatty) == "SELECT a FROM t JOIN u ON t.id = u.id"
    assert sql.extract_sql("Use: WITH x AS (SELECT 1) SELECT * FROM x\n\nDone.") == (
        "WITH x AS (SELECT 1) SELECT * FROM x"
    )


def test_builtin_database_is_built_once(tmp_path: Path) -> None:
    first = sql.builtin_database("conference", tmp_path)
    stamp = first.stat().st_mtime_ns
    assert sql.builtin_database("conference", tmp_path) == first
    assert first.stat().st_mtime_ns == stamp
    assert "CREATE TABLE sessions" in sql.schema_text(str(first))
    with pytest.raises(ConfigError, match="cannot read the schema"):
        sql.schema_text(str(tmp_path / "missing.sqlite"))
