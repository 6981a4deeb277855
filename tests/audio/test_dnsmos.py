"""DNSMOS P.835 offline: the pinned model file, the reference's windows, and the scores
moving the right way under noise on eSpeak NG speech."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from voxbench.audio.dnsmos import RATE, WINDOW, dnsmos, model_path, windows_of
from voxbench.audio.espeak import espeak_synthesize
from voxbench.audio.perturb import Noise
from voxbench.audio.wav import Audio
from voxbench.audio.weights import DNSMOS_P835, verify_model

SPEECH = (
    "Your table for four is booked for half past seven on Thursday evening. "
    "I am afraid the last train to Oxford has already left the station."
)


def test_the_model_file_is_the_pinned_one() -> None:
    path = model_path()
    assert path.name == "sig_bak_ovr.onnx"
    verify_model(path.parent, DNSMOS_P835)


def test_windows_follow_the_reference() -> None:
    """A short clip is doubled until it fills a 9.01 s window (3 s → 12 s: three windows a
    second apart); one window per second, except those the reference's float arithmetic
    leaves one sample short."""
    short = np.arange(1, RATE * 3 + 1, dtype=np.float32)
    windows = windows_of(short)
    assert windows.shape == (3, WINDOW)
    assert windows[0][RATE * 3] == 1.0 and windows[1][0] == short[RATE]  # the clip again
    long = np.zeros(RATE * 40, np.float32)
    windows = windows_of(long)
    # floor(40 − 9.01) + 1 = 31 windows, less 17 (i = 7 … 23) cut short by the reference.
    assert windows.shape == (14, WINDOW)


def one_window(text: str = SPEECH, voice: str = "en-gb") -> Audio:
    """eSpeak NG speech at 16 kHz, repeated to exactly one window (one model call)."""
    speech = espeak_synthesize(text, voice).resampled(RATE).samples
    return Audio(np.resize(speech, WINDOW), RATE)


def test_noise_lowers_background_and_overall_quality() -> None:
    clean = one_window()
    scores = {"clean": dnsmos(clean)}
    for snr in (20, 5):
        noisy = Noise("pink", snr).apply(clean, np.random.default_rng(0))
        scores[f"{snr} dB"] = dnsmos(noisy)
    assert all(s is not None for s in scores.values())
    bak = [scores[k].bak for k in ("clean", "20 dB", "5 dB")]  # type: ignore[union-attr]
    ovrl = [scores[k].ovrl for k in ("clean", "20 dB", "5 dB")]  # type: ignore[union-attr]
    assert bak[0] > bak[1] > bak[2]
    assert ovrl[0] > ovrl[1] > ovrl[2]
    for s in scores.values():
        assert s is not None and all(1.0 <= v <= 5.0 for v in (s.sig, s.bak, s.ovrl))


def test_stereo_is_mixed_and_a_blip_is_not_scored() -> None:
    assert dnsmos(Audio(np.zeros(100, np.float32), 16000)) is None
    speech = one_window("Thank you for calling.")
    stereo = Audio(np.stack([speech.samples, speech.samples], axis=1), speech.sample_rate)
    assert dnsmos(stereo) == dnsmos(speech)


@pytest.mark.skipif(
    importlib.util.find_spec("librosa") is None,
    reason="speechmos's own code needs librosa (not a voxbench dependency)",
)
def test_the_same_scores_as_speechmos_own_code() -> None:  # pragma: no cover - needs librosa
    from speechmos import dnsmos as reference

    for voice in ("en-gb", "en-us"):
        clip = espeak_synthesize(SPEECH, voice).resampled(RATE)
        ours = dnsmos(clip)
        theirs = reference.run(np.clip(clip.samples, -1, 1), RATE)
        assert ours is not None
        assert ours.sig == pytest.approx(theirs["sig_mos"], abs=1e-3)
        assert ours.bak == pytest.approx(theirs["bak_mos"], abs=1e-3)
        assert ours.ovrl == pytest.approx(theirs["ovrl_mos"], abs=1e-3)
