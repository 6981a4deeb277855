"""Secrets never reach what we write."""

from __future__ import annotations

import pytest

from voxbench.core.errors import PrerequisiteError
from voxbench.core.secrets import get_secret, load_dotenv, redact, redact_text, remember_secret


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


def test_dotenv_comments_stay_out_of_values_and_the_file_is_found_upward(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    (tmp_path / ".env").write_text(
        "VOXBENCH_T_KEY=sk-test-0123456789abcdef  # the team key\n"
        "VOXBENCH_T_QUOTED='a # not a comment'\n"
    )
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    for var in ("VOXBENCH_T_KEY", "VOXBENCH_T_QUOTED"):
        monkeypatch.delenv(var, raising=False)
    assert load_dotenv() == tmp_path / ".env"
    assert os.environ["VOXBENCH_T_KEY"] == "sk-test-0123456789abcdef"
    assert os.environ["VOXBENCH_T_QUOTED"] == "a # not a comment"
    for var in ("VOXBENCH_T_KEY", "VOXBENCH_T_QUOTED"):
        monkeypatch.delenv(var)


def test_credentials_in_a_url_are_redacted_and_the_host_kept() -> None:
    row = {"base_url": "http://alice:hunter2-pass@gateway.internal:8080/v1"}
    assert redact(row) == {"base_url": "http://***@gateway.internal:8080/v1"}
    message = "cannot connect to wss://bob:s3cret@rt.example/ws (refused)"
    assert redact_text(message) == "cannot connect to wss://***@rt.example/ws (refused)"
    assert redact_text("https://api.openai.com/v1") == "https://api.openai.com/v1"


def test_a_secret_holding_another_is_redacted_whole() -> None:
    # Remembered in either order, the longer one goes whole: none of it is left behind.
    remember_secret("shorty")
    remember_secret("prefix-shorty-suffix")
    assert redact_text("key prefix-shorty-suffix and shorty") == "key *** and ***"
