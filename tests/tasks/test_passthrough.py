"""A clip whose source bytes already hold what is sent (mono 16-bit PCM at the task's rate,
WAV or FLAC) is passed through without decoding: the same WAV, digest and request body as
decoding, resampling and re-encoding it gives."""

from __future__ import annotations

import base64
import io
import json
import struct
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from voxbench.core.errors import AudioError
from voxbench.providers.completion import AudioCompletionRequest, json_body
from voxbench.providers.openai_compat import ChatAudioBody
from voxbench.tasks.engine.prepare import (
    Cut,
    audio_of_wav,
    decode_encoded,
    prepare_clip,
    prepare_encoded,
    source_pcm16,
)

CUT = Cut(16000, "chunk", 30.0, 1.0)


def _encoded(fmt: str, rate: int = 16000, channels: int = 1, subtype: str = "PCM_16") -> bytes:
    t = np.arange(int(rate * 1.3)) / rate
    wave = 0.3 * np.sin(2 * np.pi * 440 * t) + 0.05 * np.random.default_rng(1).standard_normal(
        len(t)
    )
    samples = np.stack([wave] * channels, axis=1) if channels > 1 else wave
    buffer = io.BytesIO()
    sf.write(buffer, samples.astype(np.float32), rate, format=fmt, subtype=subtype)
    return buffer.getvalue()


def _with_list_chunk(wav: bytes) -> bytes:
    """The WAV with a LIST chunk (odd length, padded) between fmt and data, as editors write."""
    extra = b"LIST" + struct.pack("<I", 5) + b"INFOx" + b"\0"
    body = wav[12:36] + extra + wav[36:]
    return b"RIFF" + struct.pack("<I", 4 + len(body)) + b"WAVE" + body


@pytest.mark.parametrize(
    "source",
    ["wav", "flac", "wav_list_chunk", "wav_extensible"],
)
def test_passed_through_clips_are_the_bytes_reencoding_gives(source: str) -> None:
    data = {
        "wav": lambda: _encoded("WAV"),
        "flac": lambda: _encoded("FLAC"),
        "wav_list_chunk": lambda: _with_list_chunk(_encoded("WAV")),
        "wav_extensible": lambda: _encoded("WAVEX"),
    }[source]()
    assert source_pcm16(data, 16000) is not None  # passed through, not decoded
    passed, pieces = prepare_encoded(data, None, "clip", CUT)
    reencoded, audio = prepare_clip(decode_encoded(data, None, "clip"), CUT)
    assert passed.wavs == reencoded.wavs and passed.digests == reencoded.digests
    assert pieces is None  # read back from the WAV: the very samples decoding gives
    np.testing.assert_array_equal(audio_of_wav(passed.wavs[0], 16000).samples, audio[0].samples)


@pytest.mark.parametrize(
    "data",
    [
        _encoded("WAV", rate=22050),
        _encoded("WAV", channels=2),
        _encoded("WAV", subtype="PCM_24"),
        _encoded("FLAC", rate=44100),
        _encoded("WAV", subtype="FLOAT"),
    ],
    ids=["22k", "stereo", "24bit", "flac44k", "float"],
)
def test_other_clips_are_decoded_resampled_and_reencoded_as_before(data: bytes) -> None:
    assert source_pcm16(data, 16000) is None
    passed, _ = prepare_encoded(data, None, "clip", CUT)
    reencoded, _ = prepare_clip(decode_encoded(data, None, "clip"), CUT)
    assert passed.wavs == reencoded.wavs and passed.digests == reencoded.digests


def test_a_manifest_wav_file_is_read_as_bytes_and_passed_through(tmp_path: Path) -> None:
    (tmp_path / "a.wav").write_bytes(_encoded("WAV"))
    passed, _ = prepare_encoded(None, str(tmp_path / "a.wav"), "a", CUT)
    reencoded, _ = prepare_clip(decode_encoded(None, str(tmp_path / "a.wav"), "a"), CUT)
    assert passed.wavs == reencoded.wavs


def test_a_long_clip_is_still_cut_and_an_empty_one_still_fails(tmp_path: Path) -> None:
    data = _encoded("WAV")
    short = Cut(16000, "chunk", 0.5, 0.1)
    passed, _ = prepare_encoded(data, None, "clip", short)
    reencoded, _ = prepare_clip(decode_encoded(data, None, "clip"), short)
    assert len(passed.wavs) > 1 and passed.wavs == reencoded.wavs
    assert passed.pieces == reencoded.pieces
    empty = bytearray(_encoded("WAV")[:44])
    empty[40:44] = struct.pack("<I", 0)
    (tmp_path / "empty.wav").write_bytes(bytes(empty))
    with pytest.raises(AudioError, match="no audio frames"):
        prepare_encoded(None, str(tmp_path / "empty.wav"), "empty", CUT)


def test_the_spliced_body_is_the_json_encoding_of_the_request() -> None:
    wav = prepare_encoded(_encoded("FLAC"), None, "clip", CUT)[0].wavs[0]
    request = AudioCompletionRequest(
        audio_wav=wav, prompt='Say "é" / \\ <audio 00>', system="Be exact.", temperature=0.0
    )
    body = ChatAudioBody("openai", "gpt-4o-audio-preview")(request)
    expected = {
        "model": "gpt-4o-audio-preview",
        "messages": [
            {"role": "system", "content": "Be exact."},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": request.prompt},
                    {
                        "type": "input_audio",
                        "input_audio": {"data": base64.b64encode(wav).decode(), "format": "wav"},
                    },
                ],
            },
        ],
        "temperature": 0.0,
    }
    assert body == json_body(expected)
    sent = json.loads(body)["messages"][1]["content"][1]["input_audio"]["data"]
    assert base64.b64decode(sent) == wav
