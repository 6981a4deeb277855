"""``ChatAudioBody``: the body made from a template per request shape is byte for byte the
one encoding the whole request at once makes."""

from __future__ import annotations

import base64
import dataclasses
import itertools
from typing import Any

import pytest

from voxbench.providers import openai_compat
from voxbench.providers.completion import AudioCompletionRequest, json_body
from voxbench.providers.openai_compat import AZURE, ChatAudioBody


def _encoded_at_once(provider: str, model: str, request: AudioCompletionRequest) -> bytes:
    """The body as one ``json_body`` of the whole request (what the template must equal)."""
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    data = base64.b64encode(request.audio_wav).decode()
    messages.append(
        {
            "role": "user",
            "content": [
                {"type": "text", "text": request.prompt},
                {"type": "input_audio", "input_audio": {"data": data, "format": "wav"}},
            ],
        }
    )
    for answer, text in request.followup:
        messages += [{"role": "assistant", "content": answer}, {"role": "user", "content": text}]
    body: dict[str, Any] = {"messages": messages}
    if provider != AZURE:
        body = {"model": model, **body}
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.max_tokens is not None:
        body["max_tokens"] = request.max_tokens
    if request.top_logprobs is not None:
        body["logprobs"] = True
        body["top_logprobs"] = request.top_logprobs
    if request.output_voice is not None:
        body["modalities"] = ["text", "audio"]
        body["audio"] = {"voice": request.output_voice, "format": "wav"}
    return json_body(body)


TEXTS = ["Transcribe.", "", 'Say "hi"\\n\n\ttab', "café ☕ 日本語 🎙️", "\x00\x1f\u2028\u2029</s>"]
SHAPES: list[dict[str, Any]] = [
    {},
    {"temperature": 0},
    {"temperature": -0.0},
    {"temperature": None, "max_tokens": 64},
    {"temperature": 0.7, "top_logprobs": 5, "output_voice": "alloy"},
    {"followup": (("an answer", 'a "correction"'),)},
]


@pytest.mark.parametrize("provider", ["openai", AZURE])
def test_every_request_shape_gives_the_bytes_of_one_encoding(provider: str) -> None:
    builder = ChatAudioBody(provider, "gpt-4o-audio-preview")
    wav = b"RIFF\x00\x01 any bytes"
    # Interleaved shapes and texts: each request finds its own template, not the last one.
    for shape, prompt, system in itertools.product(SHAPES, TEXTS, TEXTS[:3]):
        request = AudioCompletionRequest(audio_wav=wav, prompt=prompt, system=system, **shape)
        expected = _encoded_at_once(provider, "gpt-4o-audio-preview", request)
        assert builder(request) == expected
        head, tail = builder.around(dataclasses.replace(request, audio_wav=b""))
        assert head + base64.b64encode(wav) + tail == expected


def test_templates_are_bounded_and_remade(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(openai_compat, "TEMPLATES_KEPT", 2)
    monkeypatch.setattr(openai_compat, "_TEMPLATES", {})
    builder = ChatAudioBody("openai", "m")
    for tokens in [1, 2, 3, 1, 2, 3]:
        request = AudioCompletionRequest(audio_wav=b"x", prompt="p", max_tokens=tokens)
        assert builder(request) == _encoded_at_once("openai", "m", request)
        assert len(openai_compat._TEMPLATES) <= 2
