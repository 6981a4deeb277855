"""WAV I/O on the files real recorders leave behind."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from voxbench.audio.wav import Audio, concatenate, read_wav, read_wav_span, write_wav
from voxbench.core.errors import AudioError

RATES = (8000, 16000, 22050, 24000, 44100, 48000)
TOLERANCE = {"PCM_16": 1 / 32768, "PCM_24": 1 / 2**23, "FLOAT": 1e-7}


def tone(rate: int, seconds: float = 0.25, channels: int = 1, freq: float = 440.0) -> Audio:
    t = np.arange(round(rate * seconds)) / rate
    left = 0.5 * np.sin(2 * np.pi * freq * t)
    if channels == 1:
        return Audio(left, rate)
    return Audio(np.stack([left, -0.25 * np.sin(2 * np.pi * 2 * freq * t)], axis=1), rate)


def with_placeholder_sizes(path: Path, value: int, riff: bool = True, data: bool = True) -> None:
    """Overwrite the RIFF and/or data chunk size as a streaming writer would leave it."""
    raw = bytearray(path.read_bytes())
    if riff:
        raw[4:8] = struct.pack("<I", value)
    if data:
        at = raw.index(b"data")
        raw[at + 4 : at + 8] = struct.pack("<I", value)
    path.write_bytes(bytes(raw))


@pytest.mark.parametrize("rate", RATES)
@pytest.mark.parametrize("subtype", ["PCM_16", "PCM_24", "FLOAT"])
@pytest.mark.parametrize("channels", [1, 2])
def test_round_trip_every_rate_encoding_and_layout(tmp_path, rate, subtype, channels):
    original = tone(rate, channels=channels)
    path = tmp_path / "a.wav"
    write_wav(path, original, subtype=subtype)
    back = read_wav(path)
    assert back.sample_rate == rate
    assert back.channels == channels
    assert back.samples.dtype == np.float32
    np.testing.assert_allclose(back.samples, original.samples, atol=TOLERANCE[subtype])


@pytest.mark.parametrize("channels", [1, 2])
def test_pcm16_reads_exactly_as_libsndfile_does(tmp_path, channels):
    # 16-bit WAVs skip libsndfile (it is ~10x slower on a run's recording): same floats.
    rng = np.random.default_rng(0)
    ints = rng.integers(-32768, 32768, size=(4801, channels), dtype=np.int16)
    ints[:2] = [[-32768] * channels, [32767] * channels]
    path = tmp_path / "pcm16.wav"
    sf.write(path, ints, 24000, subtype="PCM_16")
    expected, _ = sf.read(path, dtype="float32", always_2d=True)
    back = read_wav(path)
    assert back.samples.dtype == np.float32
    np.testing.assert_array_equal(back.samples, expected if channels > 1 else expected[:, 0])


@pytest.mark.parametrize("value", [0xFFFFFFFF, 0])
@pytest.mark.parametrize("subtype", ["PCM_16", "PCM_24", "FLOAT", "PCM_U8", "PCM_32"])
def test_placeholder_sizes_read_to_end_of_file(tmp_path, value, subtype):
    original = tone(22050, channels=2)
    path = tmp_path / "streamed.wav"
    write_wav(path, original, subtype=subtype)
    with_placeholder_sizes(path, value)
    back = read_wav(path)
    assert back.frames == original.frames
    assert back.channels == 2
    atol = 1 / 128 if subtype == "PCM_U8" else 1 / 32768
    np.testing.assert_allclose(back.samples, original.samples, atol=atol)


def test_placeholder_data_size_only_and_extensible_header(tmp_path):
    original = tone(48000, channels=2)
    path = tmp_path / "wavex.wav"
    sf.write(path, original.samples, 48000, subtype="PCM_24", format="WAV")
    raw = path.read_bytes()
    # Rewrite as WAVE_FORMAT_EXTENSIBLE by hand: libsndfile only writes it for >2 channels.
    data_at = raw.index(b"data")
    pcm = raw[data_at + 8 :]
    guid_pcm = struct.pack("<H", 1) + bytes.fromhex("000000001000800000aa00389b71")
    fmt = struct.pack("<HHIIHHHHI", 0xFFFE, 2, 48000, 48000 * 6, 6, 24, 22, 24, 3) + guid_pcm
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + b"\xff" * 4 + pcm
    path.write_bytes(b"RIFF" + struct.pack("<I", len(body)) + body)
    back = read_wav(path)
    assert back.frames == original.frames
    np.testing.assert_allclose(back.samples, original.samples, atol=1 / 2**23)


def test_data_size_past_end_of_file_is_clipped_to_what_is_there(tmp_path):
    original = tone(16000, seconds=1.0)
    path = tmp_path / "cut.wav"
    write_wav(path, original)
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2 + 1])  # a recorder killed mid-write, odd length
    back = read_wav(path)
    expected = (len(raw) // 2 + 1 - 44) // 2
    assert back.frames == expected
    np.testing.assert_allclose(back.samples, original.samples[:expected], atol=1 / 32768)


def test_chunks_before_data_are_skipped(tmp_path):
    original = tone(24000)
    path = tmp_path / "list.wav"
    write_wav(path, original)
    raw = path.read_bytes()
    fmt_end = raw.index(b"data")
    extra = b"LIST" + struct.pack("<I", 5) + b"abcde\x00"  # odd size, padded
    patched = bytearray(raw[:fmt_end] + extra + raw[fmt_end:])
    patched[4:8] = b"\xff\xff\xff\xff"
    path.write_bytes(bytes(patched))
    np.testing.assert_allclose(read_wav(path).samples, original.samples, atol=1 / 32768)


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"", "empty"),
        (b"hello, this is a text file\n" * 10, "not a readable audio file"),
        (bytes(range(256)) * 8, "not a readable audio file"),
        (b"RIFF\x24\x00\x00\x00WAVE", "no 'fmt ' chunk"),
        (
            b"RIFF\x2c\x00\x00\x00WAVEfmt \x10\x00\x00\x00"
            + b"\x00" * 16
            + b"data\x04\x00\x00\x00\x00\x00\x00\x00",
            "0 channels",
        ),
        (b"RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00" + b"\x01\x00" + b"\x00" * 14, "no 'data'"),
        (b"RIFF\xff\xff\xff\xffWAVEdata\xff\xff\xff\xff\x00\x01", "before the 'fmt ' chunk"),
    ],
)
def test_bad_files_raise_audio_error_naming_the_file(tmp_path, content, why):
    path = tmp_path / "bad.wav"
    path.write_bytes(content)
    with pytest.raises(AudioError, match=why) as info:
        read_wav(path)
    assert str(path) in str(info.value)


def test_header_only_wav_has_no_frames(tmp_path):
    path = tmp_path / "header_only.wav"
    write_wav(path, Audio(np.zeros(0, np.float32), 16000))
    with pytest.raises(AudioError, match="no audio frames") as info:
        read_wav(path)
    assert info.value.file == str(path)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(AudioError, match="file not found"):
        read_wav(tmp_path / "nope.wav")
    with pytest.raises(AudioError, match="not a regular file"):
        read_wav(tmp_path)


def test_other_formats_go_through_libsndfile(tmp_path):
    path = tmp_path / "a.flac"
    sf.write(path, tone(16000).samples, 16000, format="FLAC")
    assert read_wav(path).frames == 4000


def test_pcm16_bytes_round_trip_and_clipping():
    audio = Audio(np.array([[0.0, -1.0], [0.5, 1.5]], np.float32), 8000)
    data = audio.to_pcm16()
    assert np.frombuffer(data, "<i2").tolist() == [0, -32768, 16384, 32767]
    back = Audio.from_pcm16(data, 8000, channels=2)
    assert back.channels == 2
    assert back.samples[1, 0] == 0.5
    with pytest.raises(AudioError, match="whole number"):
        Audio.from_pcm16(b"\x00\x00\x00", 8000)


def test_mono_duration_resample_and_slice():
    stereo = tone(44100, seconds=0.5, channels=2)
    assert stereo.duration == pytest.approx(0.5)
    mono = stereo.mono()
    assert mono.channels == 1
    np.testing.assert_allclose(mono.samples, stereo.samples.mean(axis=1), atol=1e-7)
    down = tone(48000, seconds=1.0, freq=1000).resampled(16000)
    assert down.frames == 16000
    spectrum = np.abs(np.fft.rfft(down.samples))
    assert np.argmax(spectrum) == 1000  # 1 Hz bins: the tone stays at 1 kHz
    assert concatenate([mono, mono]).duration == pytest.approx(1.0)
    assert mono.slice(0.1, 0.2).frames == 4410


def test_write_wav_is_atomic_and_rejects_bad_subtype(tmp_path):
    path = tmp_path / "sub" / "x.wav"
    write_wav(path, tone(16000))
    with pytest.raises(AudioError, match="subtype"):
        write_wav(path, tone(16000), subtype="NOPE")
    assert read_wav(path).frames == 4000  # the old file survives a failed write
    assert [p.name for p in path.parent.iterdir()] == ["x.wav"]


def test_read_wav_span_decodes_only_the_part_asked_for(tmp_path: Path) -> None:
    rate = 24_000
    t = np.arange(rate * 3) / rate
    stereo = np.stack([np.sin(2 * np.pi * 220 * t), np.sin(2 * np.pi * 330 * t)], axis=1) * 0.5
    write_wav(tmp_path / "x.wav", Audio(stereo, rate))
    whole = read_wav(tmp_path / "x.wav")
    part = read_wav_span(tmp_path / "x.wav", 1.25, 2.5)
    assert part.sample_rate == rate and part.channels == 2
    np.testing.assert_array_equal(part.samples, whole.slice(1.25, 2.5).samples)
    # Past the end it stops at the last frame; before the start it starts at the first.
    assert read_wav_span(tmp_path / "x.wav", 2.5, 9.0).frames == whole.slice(2.5).frames
    assert read_wav_span(tmp_path / "x.wav", -1.0, 0.5).frames == rate // 2
