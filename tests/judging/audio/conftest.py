"""Audio judge tests: a key for the fakes (no waiting between retries: ``tests/conftest.py``)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge")
