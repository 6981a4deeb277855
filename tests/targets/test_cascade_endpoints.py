"""The cascade's hosted STT and TTS take their own server (``stt_base_url``/``tts_base_url``):
``--base-url`` is the text model's, and before these options a hosted STT always called
api.openai.com (found during issue 30)."""

from __future__ import annotations

import pytest

from voxbench.benchmarks.loader import load_benchmark
from voxbench.core.errors import ConfigError
from voxbench.targets.registry import check_target_options, resolve_target


def _cascade(options: dict[str, str]):
    return resolve_target(
        "cascade/local/baseline", benchmark=load_benchmark("smoke"), options=options
    )()


def test_stt_and_tts_base_urls_reach_the_hosted_engines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0000")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    options = {
        "stt": "openai/whisper-1",
        "stt_base_url": "http://127.0.0.1:8001/v1",
        "tts": "openai/tts-1",
        "tts_base_url": "http://127.0.0.1:8002/v1",
    }
    check_target_options("cascade/local/baseline", options)  # known options
    session = _cascade(options)
    assert session.stt.base_url == "http://127.0.0.1:8001/v1"
    assert session.tts.base_url == "http://127.0.0.1:8002/v1"
    plain = _cascade({"stt": "openai/whisper-1", "tts": "openai/tts-1"})
    assert plain.stt.base_url == plain.tts.base_url == "https://api.openai.com/v1"


def test_a_base_url_for_a_local_engine_is_refused_naming_the_option() -> None:
    with pytest.raises(ConfigError) as caught:
        _cascade({"stt_base_url": "http://127.0.0.1:8001/v1"})
    assert caught.value.field == "target_options.stt_base_url"
    assert "local/whisper-tiny.en" in str(caught.value)
