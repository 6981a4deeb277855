"""Scoring speed of the code-scored reasoning metrics, and how promptly the SQL limit stops a
runaway query.

Scores N synthetic replies per metric on one core (what a worker process pays per record):
``instruction_following`` (5 IFEval instructions a record, one of them langdetect's language
check), ``numeric_match`` (GSM8K-style worked answers), ``refusal``, ``sql_execution_match``
(gold and predicted query on an in-memory copy of the built-in conference database: the copy
is most of its cost). Then runs a query that never ends under several limits and prints how
long each took to be stopped.

    python bench/reasoning_metrics.py [--records 500]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from voxbench.metrics import sql
from voxbench.metrics.registry import METRICS, ScoringContext

IFEVAL_IDS = [
    "punctuation:no_comma",
    "length_constraints:number_words",
    "keywords:existence",
    "detectable_format:number_bullet_lists",
    "language:response_language",
]
IFEVAL_KWARGS = [
    {},
    {"num_words": 40, "relation": "at least"},
    {"keywords": ["river"]},
    {"num_bullets": 3},
    {"language": "en"},
]
RUNAWAY = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n"


def _ctx(reference: str, **extra: object) -> ScoringContext:
    return ScoringContext(
        reference=reference, language="en", target_language="en", answer="text", **extra
    )  # type: ignore[arg-type]


def _reply(rng: random.Random) -> str:
    words = ["the", "river", "runs", "past", "old", "mills", "and", "quiet", "fields", "today"]
    lines = [" ".join(rng.choice(words) for _ in range(12)) for _ in range(3)]
    return "Here is my answer.\n" + "\n".join(f"* {line}" for line in lines)


def _rate(name: str, pairs: list[tuple[str, ScoringContext]]) -> None:
    metric = METRICS[name]
    metric.score(*pairs[0])  # imports and caches paid before timing
    start = time.perf_counter()
    stats = [metric.score(p, c) for p, c in pairs]
    scored = time.perf_counter() - start
    metric.pool(stats, None)
    print(
        f"{name:24s} {len(pairs) / scored:10.0f} records/s  ({1000 * scored / len(pairs):.3f} ms each)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=500)
    args = parser.parse_args()
    rng = random.Random(0)
    n = args.records
    columns = {"instruction_id_list": IFEVAL_IDS, "kwargs": IFEVAL_KWARGS}
    _rate("instruction_following", [(_reply(rng), _ctx("p", columns=columns)) for _ in range(n)])
    numbers = [rng.randint(1, 10_000) for _ in range(n)]
    _rate(
        "numeric_match",
        [(f"First 3 * 4 = 12, then 12 + {x - 12} = {x}. The answer is \\boxed{{{x}}}.",
          _ctx(f"3 * 4 = <<3*4=12>>12\n#### {x:,}")) for x in numbers],
    )  # fmt: skip
    replies = ["I'm sorry, but I can't help with that.", "Sure! Here are the steps: first, ..."]
    _rate("refusal", [(replies[i % 2], _ctx("")) for i in range(n)])
    with tempfile.TemporaryDirectory() as tmp:
        database = str(sql.builtin_database("conference", Path(tmp)))
        gold = "SELECT title FROM sessions WHERE day = 1 ORDER BY start_time"
        ctx = _ctx(gold, database=database)
        _rate("sql_execution_match", [(f"```sql\n{gold}\n```", ctx)] * n)
        for limit in (0.1, 0.5, 1.0):
            start = time.perf_counter()
            try:
                sql.run_query(database, RUNAWAY, limit)
            except sql.QueryError as exc:
                took = time.perf_counter() - start
                print(f"runaway query, limit {limit:.1f} s: stopped after {took:.3f} s ({exc})")


if __name__ == "__main__":
    main()
