from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from tests.store.fixture_runs import Runs, built_runs, runs  # noqa: F401
from voxbench.store import open_store
from voxbench.viewer.app import create_app

BASE_URL = "http://127.0.0.1:8765"


@pytest.fixture
def client(runs: Runs) -> Iterator[TestClient]:  # noqa: F811
    """The viewer over a fresh copy of the fixture runs, with its own SQLite store."""
    with (
        open_store(str(runs.root / "voxbench.db"), runs.root) as store,
        TestClient(create_app(runs.root, store), base_url=BASE_URL) as http,
    ):
        yield http
