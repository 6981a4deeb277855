from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.store.fixture_runs import built_runs, runs  # noqa: F401

POSTGRES_ENV = "VOXBENCH_TEST_POSTGRES"
TABLES = ("runs", "run_judges", "results", "latency", "schema_version")


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Each store test runs on SQLite, and on PostgreSQL where one is given."""
    if request.param == "sqlite":
        return str(tmp_path / "store" / "voxbench.db")
    dsn = os.environ.get(POSTGRES_ENV)
    if not dsn:
        pytest.skip(f"no PostgreSQL: set {POSTGRES_ENV} to a DSN (.ci/run starts one)")
    import psycopg

    with psycopg.connect(dsn) as conn:  # every test starts from an empty database
        for table in TABLES:
            conn.execute(f"DROP TABLE IF EXISTS {table}")
    return dsn
