"""Marker tones ("tags") that tie a recording to a timeline.

A tag is a 2 kHz sine, 15 ms long, at -12 dBFS peak, with 2 ms linear fades: the marker
the public turn-metrics method mixes into the first agent audio of each turn. We make the
same tone so recordings stay comparable, and find it with a matched filter: the 2 kHz
component, weighted by the tag's envelope, measured at every sample. A tag is where that
component peaks, is loud enough, carries most of the window's energy, and fades away a
tag-length either side (a long 2 kHz whistle is not a tag). On silence or noise a tag is
found at its exact first sample; mixed into loud speech, within one cycle of the tone.
"""

from __future__ import annotations

import numpy as np

from voxbench.audio.wav import Audio

TAG_FREQUENCY_HZ = 2000.0
TAG_SECONDS = 0.015
TAG_LEVEL_DBFS = -12.0
TAG_FADE_SECONDS = 0.002
_MIN_LEVEL_BELOW_TAG_DB = 8.0  # tags up to 8 dB quieter still count (a stereo mix halves one)
_MIN_TONE_SHARE = 0.4  # share of the window's energy that must be the 2 kHz tone


def _envelope(sample_rate: int) -> np.ndarray:
    n = round(TAG_SECONDS * sample_rate)
    fade = max(1, round(TAG_FADE_SECONDS * sample_rate))
    env = np.ones(n, np.float64)
    ramp = np.arange(1, fade + 1) / fade
    env[:fade] = ramp
    env[-fade:] = ramp[::-1]
    return env


def make_tag(sample_rate: int) -> np.ndarray:
    """The tag tone at ``sample_rate``: float32 samples, mono."""
    if sample_rate < 2 * TAG_FREQUENCY_HZ:
        raise ValueError(f"a 2 kHz tag needs a sample rate above 4 kHz, got {sample_rate}")
    env = _envelope(sample_rate)
    t = np.arange(len(env)) / sample_rate
    amplitude = 10 ** (TAG_LEVEL_DBFS / 20)
    return (amplitude * env * np.sin(2 * np.pi * TAG_FREQUENCY_HZ * t)).astype(np.float32)


def mix_tag(audio: Audio, at: float, channel: int | None = None) -> Audio:
    """``audio`` with a tag added at ``at`` seconds (into one channel, or all), clipped to ±1."""
    tag = make_tag(audio.sample_rate)
    start = round(at * audio.sample_rate)
    if start < 0 or start >= audio.frames:
        raise ValueError(f"tag position {at} s is outside the audio ({audio.duration:.3f} s)")
    samples = audio.samples.copy()
    stop = min(audio.frames, start + len(tag))
    part = tag[: stop - start]
    if samples.ndim == 1:
        samples[start:stop] += part
    elif channel is None:
        samples[start:stop] += part[:, None]
    else:
        samples[start:stop, channel] += part
    return Audio(np.clip(samples, -1.0, 1.0), audio.sample_rate)


def find_tag_samples(audio: Audio, channel: int | None = None) -> list[int]:
    """Sample index where each tag starts, in order."""
    # scipy is slow to import; only tag finding needs it
    from scipy.signal import fftconvolve

    if audio.sample_rate < 2 * TAG_FREQUENCY_HZ:
        return []
    x = (audio.mono() if channel is None else audio.channel(channel)).samples.astype(np.float64)
    env = _envelope(audio.sample_rate)
    tag = make_tag(audio.sample_rate).astype(np.float64)
    n = len(env)
    if len(x) < n:
        return []
    phase = 2 * np.pi * TAG_FREQUENCY_HZ * np.arange(n) / audio.sample_rate
    kernel = (env * np.exp(-1j * phase))[::-1]
    # response[k] = sum_m x[k + m] * env[m] * e^{-j w m}: the tone in the window starting at k
    response = np.abs(fftconvolve(x, kernel, mode="valid"))
    energy = np.convolve(x * x, np.ones(n), mode="valid")
    env_power = float(np.sum(env * env))
    amplitude = 10 ** ((TAG_LEVEL_DBFS - _MIN_LEVEL_BELOW_TAG_DB) / 20)
    floor = amplitude / 2 * env_power  # the response of the quietest tag we accept
    # Energy in the tone's subspace vs the window's energy (1.0 for a clean, aligned tag).
    share = 2 * response**2 / env_power / np.maximum(energy, 1e-12)
    candidates = np.flatnonzero((response >= floor) & (share >= _MIN_TONE_SHARE))
    found: list[int] = []
    for k in map(int, candidates):
        if found and k < found[-1] + n:
            continue
        lo, hi = k, min(len(response), k + n)
        peak = lo + int(np.argmax(response[lo:hi]))
        before = response[peak - n] if peak - n >= 0 else 0.0
        after = response[peak + n] if peak + n < len(response) else 0.0
        if max(before, after) < 0.5 * response[peak]:
            found.append(_align(x, peak, tag, audio.sample_rate))
    return found


def _align(x: np.ndarray, peak: int, tag: np.ndarray, sample_rate: int) -> int:
    """The exact start near ``peak``: the best real-valued match within half a tone period.

    The envelope detector's peak can sit a sample or two off (the tone's mirror frequency
    leaks into a 15 ms window); the tag's own waveform, phase included, pins it down.
    """
    half = int(np.ceil(sample_rate / TAG_FREQUENCY_HZ / 2))
    n = len(tag)
    best, best_score = peak, -np.inf
    for k in range(max(0, peak - half), min(len(x) - n, peak + half) + 1):
        score = float(np.dot(x[k : k + n], tag))
        if score > best_score:
            best, best_score = k, score
    return int(best)


def find_tags(audio: Audio, channel: int | None = None) -> list[float]:
    """Start time in seconds of each tag in ``audio`` (one channel, or the mix when None)."""
    return [k / audio.sample_rate for k in find_tag_samples(audio, channel)]
