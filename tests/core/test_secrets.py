"""Secrets never reach what we write."""

from __future__ import annotations

import pytest

from voxbench.core.errors import PrerequisiteError
from voxbench.core.secrets import get_secret, load_dotenv, redact


def test_secret_keys_and_values_are_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_PROVIDER_KEY", "very-secret-value-123")
    assert get_secret("MY_PROVIDER_KEY") == "very-secret-value-123"
    data = {
        "api_key": "abc",
        "headers": {"Authorization": "Bearer abcdefghijklmnop"},
        "note": "the key is very-secret-value-123",
        "usage": {"input_tokens": 5},
        "text": "my key sk-abcdefghijklmnopqrstuvwx leaked",
        "author": "Dana",
    }
    out = redact(data)
    assert out["api_key"] == "***"
    assert out["headers"]["Authorization"] == "***"
    assert "very-secret" not in out["note"]
    assert out["usage"] == {"input_tokens": 5}
    assert "sk-abc" not in out["text"]
    assert out["author"] == "Dana"


def test_missing_key_names_the_variable() -> None:
    with pytest.raises(PrerequisiteError, match="NO_SUCH_KEY_VAR"):
        get_secret("NO_SUCH_KEY_VAR", purpose="a test")


def test_dotenv_does_not_override_environment(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = tmp_path / ".env"
    env.write_text("export FROM_DOTENV='yes'\nALREADY=file\n# comment\n")
    monkeypatch.setenv("ALREADY", "env")
    monkeypatch.delenv("FROM_DOTENV", raising=False)
    load_dotenv(env)
    import os

    assert os.environ["FROM_DOTENV"] == "yes"
    assert os.environ["ALREADY"] == "env"
    monkeypatch.delenv("FROM_DOTENV")
