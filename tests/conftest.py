"""Test-wide fixtures: a hermetic environment and no real waiting."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"

_SECRET_VARS = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "XAI_API_KEY",
    "GROQ_API_KEY",
    "OPENROUTER_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "ULTRAVOX_API_KEY",
)


@pytest.fixture(autouse=True)
def hermetic_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No developer key or .env leaks into a test; caches go to a temporary directory."""
    for var in _SECRET_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("VOXBENCH_CACHE_DIR", str(tmp_path / "cache"))
    # Finished runs are indexed into this test's own results store, never one shared by
    # tests (an FDB scoring's default store is two levels above the scored directory).
    monkeypatch.setenv("VOXBENCH_STORE", str(tmp_path / "cache" / "voxbench.db"))
    monkeypatch.chdir(tmp_path)


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retry backoff is zero in tests (a ``Retry-After`` is still waited)."""
    from voxbench.providers import backoff

    monkeypatch.setattr(backoff, "WAIT", False)


@pytest.fixture(scope="session")
def sdk_models_loaded() -> None:
    """The SDK type models, imported and built once per session (see ``warm_up``)."""
    from tests.conformance.sdk_models import warm_up

    warm_up()


@pytest.fixture(autouse=True)
def sdk_conformance(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, sdk_models_loaded: None
):
    """Every message a fake server receives or sends is checked with the official SDK's model.

    A test that makes a fake break the protocol on purpose is marked ``wire_nonconforming``.
    """
    from tests.conformance.wire import WireConformance

    conformance = WireConformance()
    conformance.install(monkeypatch)
    yield conformance
    if request.node.get_closest_marker("wire_nonconforming") is None:
        assert not conformance.violations, "\n".join(conformance.violations[:20])


@pytest.fixture(autouse=True)
def artifacts_hold_no_secrets(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    """Every run directory a test leaves behind is scanned for secrets: the keys the test
    set, credentials in URLs, auth headers and key-shaped strings (``find_secrets``)."""
    yield
    if request.node.get_closest_marker("secrets_on_purpose") is not None:
        return
    from voxbench.testing.secrets_scan import find_secrets

    keys = [os.environ[v] for v in _SECRET_VARS if os.environ.get(v)]
    leaks = [
        leak
        for run_json in tmp_path.rglob("run.json")
        for leak in find_secrets(run_json.parent, secrets=keys)
    ]
    assert not leaks, "secrets in run artifacts:\n" + "\n".join(leaks[:20])


@pytest.fixture
def shared_dir() -> Path:
    """The shared reference data; tests that need it skip when it is absent."""
    if not SHARED.is_dir():
        pytest.skip("../shared is not present (a user's clone has none)")
    return SHARED


def pytest_configure(config: pytest.Config) -> None:
    os.environ.setdefault("VOXBENCH_TESTING", "1")
