"""The perturbations added second (issue 31): a noise folder, a measured RIR, AMR-NB, jitter,
speed and pitch — each measured on its signal, spelled one way, deterministic across processes."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from voxbench.audio.perturb import (
    AMR_DELAY,
    AMR_ENCODER,
    AMR_RATE,
    Amr,
    Jitter,
    Noise,
    Pitch,
    RirFile,
    Speed,
    active_power,
    codec_available,
    parse_perturbations,
)
from voxbench.audio.wav import Audio, write_wav
from voxbench.core.errors import ConfigError

RATE = 16_000
ROOT = Path(__file__).resolve().parents[2]


def tone(freq: float, seconds: float = 1.0, rate: int = RATE, amp: float = 0.3) -> Audio:
    t = np.arange(round(seconds * rate)) / rate
    return Audio((amp * np.sin(2 * np.pi * freq * t)).astype(np.float32), rate)


def peak_hz(audio: Audio) -> float:
    spectrum = np.abs(np.fft.rfft(audio.samples * np.hanning(audio.frames)))
    return float(np.fft.rfftfreq(audio.frames, 1 / audio.sample_rate)[np.argmax(spectrum)])


@pytest.fixture(scope="module")
def speech(spoken_with_gaps: tuple[Audio, list[tuple[float, float]]]) -> Audio:
    return spoken_with_gaps[0].resampled(RATE)


def _noise_folder(root: Path) -> Path:
    rng = np.random.default_rng(5)
    folder = root / "noise"
    folder.mkdir(parents=True, exist_ok=True)
    write_wav(folder / "hum.wav", Audio((0.1 * rng.standard_normal(8000)).astype(np.float32), 8000))
    t = np.arange(44100 * 2) / 44100
    write_wav(
        folder / "sub" / "fan.wav",
        Audio((0.3 * np.sin(2 * np.pi * 120 * t)).astype(np.float32), 44100),
    )
    return folder


# -- a folder of noise WAVs ------------------------------------------------------------------------


@pytest.mark.parametrize("snr", [0.0, 10.0, 20.0])
def test_folder_noise_sets_the_snr_on_active_speech(
    speech: Audio, tmp_path: Path, snr: float
) -> None:
    folder = _noise_folder(tmp_path)
    for seed in range(4):  # whichever file the seed picks, the SNR holds
        out = parse_perturbations(f"noise:dir@{snr}dB,path={folder}").apply(speech, seed, "t")
        assert out.frames == speech.frames and out.sample_rate == RATE
        noise = out.samples.astype(np.float64) - speech.samples
        measured = 10 * np.log10(active_power(speech.samples, RATE) / np.mean(np.square(noise)))
        assert abs(measured - snr) <= 0.5


def test_folder_noise_spec_round_trips_and_names_a_missing_folder(tmp_path: Path) -> None:
    folder = _noise_folder(tmp_path)
    chain = parse_perturbations(f"noise:dir@5dB,path={folder}")
    assert chain.steps == (Noise("dir", 5.0, "speech", str(folder.resolve())),)
    assert parse_perturbations(str(chain)) == chain
    with pytest.raises(ConfigError, match="no folder"):
        parse_perturbations(f"noise:dir@5dB,path={tmp_path / 'nope'}")
    with pytest.raises(ConfigError, match="path= goes with noise:dir"):
        parse_perturbations("noise:dir@5dB")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ConfigError, match="no .wav or .flac"):
        parse_perturbations(f"noise:dir@5dB,path={empty}").apply(tone(300), 0, "t")


# -- a measured room impulse response ------------------------------------------------------------


def test_a_user_rir_is_convolved_keeping_length_and_level(tmp_path: Path) -> None:
    rir = np.zeros(4000, dtype=np.float32)
    rir[100], rir[100 + 800] = 1.0, 0.5  # the direct path, one echo 50 ms later (at 16 kHz)
    write_wav(tmp_path / "rir.wav", Audio(rir, RATE))
    click = np.zeros(RATE, dtype=np.float32)
    click[1000] = 0.5
    out = parse_perturbations(f"reverb:file,path={tmp_path / 'rir.wav'}").apply(Audio(click, RATE))
    assert out.frames == RATE and out.sample_rate == RATE
    peaks = np.flatnonzero(np.abs(out.samples) > 0.05)
    assert list(peaks) == [1000, 1800]  # started at the RIR's peak: no added delay
    assert out.samples[1800] == pytest.approx(out.samples[1000] / 2, rel=1e-3)
    assert str(parse_perturbations(f"reverb:file,path={tmp_path / 'rir.wav'}")) == (
        f"reverb:file,path={(tmp_path / 'rir.wav').resolve()}"
    )
    assert parse_perturbations(f"reverb:file,path={tmp_path / 'rir.wav'}").steps[0] == RirFile(
        str((tmp_path / "rir.wav").resolve())
    )
    with pytest.raises(ConfigError, match="reverb:file needs path"):
        parse_perturbations("reverb:file")


# -- AMR-NB ----------------------------------------------------------------------------------------


@pytest.mark.skipif(not codec_available(AMR_ENCODER), reason="PyAV without libopencore-amrnb")
@pytest.mark.parametrize("mode", ["4.75k", "12.2k"])
def test_amr_round_trip_keeps_length_rate_and_lines_up(speech: Audio, mode: str) -> None:
    out = parse_perturbations(f"codec:amrnb@{mode}").apply(speech)
    assert out.frames == speech.frames and out.sample_rate == RATE
    # Aligned: the best lag between input and output (both taken to 8 kHz) is within 2 samples.
    from voxbench.audio.resample import resample

    x = resample(speech.samples, RATE, AMR_RATE).astype(np.float64)
    y = resample(out.samples, RATE, AMR_RATE).astype(np.float64)
    n = x.shape[0] - 200
    scores = [float(np.dot(x[100 : 100 + n - 100], y[100 + d : n + d])) for d in range(-20, 21)]
    assert abs(int(np.argmax(scores)) - 20) <= 2, AMR_DELAY
    # Narrowband: nothing left above 4 kHz.
    spectrum = np.abs(np.fft.rfft(out.samples))
    freqs = np.fft.rfftfreq(out.frames, 1 / RATE)
    assert spectrum[freqs > 4200].sum() < 0.01 * spectrum.sum()


def test_amr_spelling_and_gsm_says_why_not() -> None:
    assert parse_perturbations("codec:amrnb@12.2k").steps == (Amr(12200),)
    assert str(parse_perturbations("codec:amrnb@4750")) == "codec:amrnb@4.75k"
    with pytest.raises(ConfigError, match="not one of its modes"):
        parse_perturbations("codec:amrnb@13k")
    with pytest.raises(ConfigError, match="no GSM encoder"):
        parse_perturbations("codec:gsm")


# -- jitter ----------------------------------------------------------------------------------------


def test_jitter_loses_the_frames_later_than_the_buffer() -> None:
    step = parse_perturbations("jitter@30ms").steps[0]
    assert step == Jitter(30.0, 90.0)  # the buffer: 3x the mean by default
    rng = np.random.default_rng(1)
    late = step.late(200_000, rng)
    assert late.mean() == pytest.approx(np.exp(-3), abs=0.003)  # P(exp(30 ms) > 90 ms)
    x = Audio(np.full(RATE * 10, 0.5, dtype=np.float32), RATE)
    out = parse_perturbations("jitter@30ms,buffer=40ms").apply(x, 4, "t")
    frames = out.samples.reshape(-1, 320)
    lost = np.all(frames == 0, axis=1)
    assert lost.mean() == pytest.approx(np.exp(-4 / 3), abs=0.05)
    assert out.frames == x.frames
    # The same seed and key: the same frames lost; concealment repeats the last frame.
    again = parse_perturbations("jitter@30ms,buffer=40ms").apply(x, 4, "t")
    assert np.array_equal(out.samples, again.samples)
    kept = parse_perturbations("jitter@30ms,buffer=40ms,conceal=repeat").apply(x, 4, "t")
    assert np.all(kept.samples[320:] == 0.5)
    assert str(parse_perturbations("jitter@30ms,buffer=40ms,conceal=repeat")) == (
        "jitter@30ms,buffer=40ms,conceal=repeat"
    )


# -- speed and pitch -------------------------------------------------------------------------------


def test_speed_moves_pitch_and_tempo_together_keeping_the_length() -> None:
    x = tone(200, seconds=2.0)
    x.samples[RATE:] = 0.0  # one second of tone, one of silence
    fast = parse_perturbations("speed@1.25").apply(x)
    assert fast.frames == x.frames and fast.sample_rate == RATE
    assert peak_hz(fast) == pytest.approx(250, abs=3)
    voiced = np.flatnonzero(np.abs(fast.samples) > 0.05)
    assert voiced[-1] / RATE == pytest.approx(0.8, abs=0.01)  # the second now lasts 0.8 s
    assert parse_perturbations("speed@1.25").steps == (Speed(1.25),)
    with pytest.raises(ConfigError, match="speed outside"):
        parse_perturbations("speed@3")


@pytest.mark.parametrize("semitones", [-12, 4, 12])
def test_pitch_moves_the_pitch_and_keeps_duration_and_level(semitones: int) -> None:
    x = tone(300, seconds=1.0)
    out = parse_perturbations(f"pitch@{semitones}st").apply(x)
    assert out.frames == x.frames and out.sample_rate == RATE
    assert peak_hz(out) == pytest.approx(300 * 2 ** (semitones / 12), rel=0.03)
    ratio = active_power(out.samples, RATE) / active_power(x.samples, RATE)
    assert abs(10 * np.log10(ratio)) < 0.5
    assert parse_perturbations(f"pitch@{semitones}st").steps == (Pitch(float(semitones)),)


# -- determinism across processes ------------------------------------------------------------------

CHAIN = "speed@1.1+pitch@-2st+jitter@20ms,conceal=repeat+noise:babble@5dB"


def _digest(seed: int, key: str) -> str:
    t = np.arange(RATE) / RATE
    clean = Audio((0.2 * np.sin(2 * np.pi * 220 * t) * np.sin(2 * np.pi * 3 * t)), RATE)
    chain = CHAIN + ("+codec:amrnb@7.95k" if codec_available(AMR_ENCODER) else "")
    out = parse_perturbations(chain).apply(clean, seed, key)
    return hashlib.sha256(out.samples.tobytes()).hexdigest()


def test_the_new_steps_give_the_same_bytes_in_two_processes() -> None:
    code = "from tests.audio.test_perturb_more import _digest; print(_digest(9, 'turn-2'))"
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=ROOT
        ).stdout.strip()
        for _ in range(2)
    }
    assert outputs == {_digest(9, "turn-2")}
    assert _digest(9, "turn-2") != _digest(10, "turn-2")
