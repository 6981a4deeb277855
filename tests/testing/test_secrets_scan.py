"""The secrets scan finds every kind of leak in a run directory, and nothing in a clean one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from voxbench.testing.secrets_scan import find_secrets


@pytest.mark.secrets_on_purpose
def test_each_kind_of_leak_is_found_without_printing_the_secret(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text(
        json.dumps({"base_url": "http://alice:hunter2-pass@host/v1", "note": "key abc-live-7788"})
    )
    (tmp_path / "events.jsonl").write_text(
        json.dumps({"headers": {"Authorization": "Bearer tok_live_abcdef123456"}}) + "\n"
    )
    (tmp_path / "report.md").write_text("leaked sk-abcdefghijklmnopqrstuvwx here\n")
    found = find_secrets(tmp_path, secrets=["abc-live-7788"])
    text = "\n".join(found)
    assert "run.json:1: the secret" in text
    assert "run.json:1: credentials in a URL" in text
    assert "events.jsonl:1: the Authorization header" in text
    assert "report.md:1: a key-shaped string" in text
    assert "hunter2" not in text and "abc-live-7788" not in text and "tok_live" not in text


def test_a_redacted_run_is_clean(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text(
        json.dumps(
            {"base_url": "http://***@host/v1", "api_key": "***", "key_env": "OPENAI_API_KEY"}
        )
    )
    (tmp_path / "events.jsonl").write_text(json.dumps({"Authorization": "***"}) + "\n")
    (tmp_path / "conversation.wav").write_bytes(b"RIFF sk-abcdefghijklmnopqrstuvwx")  # audio
    assert find_secrets(tmp_path, secrets=["never-written-secret"]) == []
