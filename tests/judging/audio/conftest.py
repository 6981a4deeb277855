"""Audio judge tests: no waiting between retries, a key for the fakes."""

from __future__ import annotations

import pytest

from voxbench.providers import backoff


@pytest.fixture(autouse=True)
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backoff, "BACKOFF_BASE", 0.0)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge")
