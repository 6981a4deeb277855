"""Where a report's players get their audio: relative links, a viewer's URLs, or embedded."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import numpy as np
import soundfile as sf

from voxbench.audio.wav import Audio, write_wav
from voxbench.report.audio_links import AudioLinks


def _recording(path: Path, seconds: float = 4.0, rate: int = 24_000) -> Path:
    t = np.arange(int(rate * seconds)) / rate
    write_wav(path, Audio(np.stack([np.sin(t * 1000), np.sin(t * 1500)], axis=1) * 0.3, rate))
    return path


def test_a_time_range_is_cut_into_a_clip_beside_the_recording(tmp_path: Path) -> None:
    """Issue 27 item 9: a turn's player scrubs the turn, not the whole recording."""
    wav = _recording(tmp_path / "run 1" / "conversation.wav")
    src = AudioLinks(base_dir=wav.parent).src(wav, 1.234, 2.5)
    assert src == "clips/conversation_1.23-2.50.flac"
    clip, rate = sf.read(wav.parent / src)
    assert rate == 24_000 and clip.shape == (round(2.5 * rate) - round(1.234 * rate), 2)
    expected, _ = sf.read(wav, start=round(1.234 * rate), stop=round(2.5 * rate))
    assert np.allclose(clip, expected, atol=1 / 32768)  # lossless: the recording's samples
    # Made once: a second page reuses it; the whole file stays a plain link.
    made = (wav.parent / src).stat().st_mtime_ns
    assert AudioLinks(base_dir=wav.parent).src(wav, 1.234, 2.5) == src
    assert (wav.parent / src).stat().st_mtime_ns == made
    assert AudioLinks(base_dir=tmp_path).src(wav) == "run%201/conversation.wav"
    assert AudioLinks(base_dir=tmp_path).src(tmp_path / "missing.wav") is None


def test_a_folder_that_cannot_be_written_falls_back_to_a_media_fragment(tmp_path: Path) -> None:
    wav = _recording(tmp_path / "run" / "conversation.wav")
    (wav.parent / "clips").write_text("a file where the clips folder would go")
    assert AudioLinks(base_dir=wav.parent).src(wav, 1.234, 2.5) == "conversation.wav#t=1.23,2.50"


def test_served_links_map_each_folder_to_its_url(tmp_path: Path) -> None:
    a = _recording(tmp_path / "a" / "conversation.wav")
    b = _recording(tmp_path / "b" / "conversation.wav")
    other = _recording(tmp_path / "elsewhere.wav")
    links = AudioLinks.served({a.parent: "/run/A/", b.parent: "/run/B/"})
    assert links.src(a, 0.5, 1.0) == "/run/A/clips/conversation_0.50-1.00.flac"
    assert links.src(b) == "/run/B/conversation.wav"
    assert links.src(other) is None


def test_embedded_audio_is_the_range_alone(tmp_path: Path) -> None:
    wav = _recording(tmp_path / "conversation.wav")
    src = AudioLinks(embed=True).src(wav, 1.0, 2.5)
    assert src is not None and src.startswith("data:audio/flac;base64,")
    clip, rate = sf.read(io.BytesIO(base64.b64decode(src.split(",", 1)[1])))
    assert rate == 16_000 and clip.ndim == 1 and len(clip) == 24_000  # 1.5 s, both channels mixed
