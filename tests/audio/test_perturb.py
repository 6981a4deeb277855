"""Perturbations: each one measured on its signal, the spec's one spelling, determinism."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from voxbench.audio import perturb as P
from voxbench.audio.perturb import (
    ACTIVE_RANGE_DB,
    G711,
    Band,
    Clip,
    Gain,
    Loss,
    Noise,
    Opus,
    Perturbation,
    Reverb,
    active_power,
    alaw_decode,
    alaw_encode,
    loss_mask,
    parse_perturbations,
    ulaw_decode,
    ulaw_encode,
)
from voxbench.audio.wav import Audio
from voxbench.core.errors import ConfigError

RATE = 16_000
ROOT = Path(__file__).resolve().parents[2]


def tone(freq: float, seconds: float = 1.0, rate: int = RATE, amp: float = 0.3) -> Audio:
    t = np.arange(round(seconds * rate)) / rate
    return Audio((amp * np.sin(2 * np.pi * freq * t)).astype(np.float32), rate)


@pytest.fixture(scope="module")
def speech(spoken_with_gaps: tuple[Audio, list[tuple[float, float]]]) -> Audio:
    return spoken_with_gaps[0].resampled(RATE)


def snr_db(clean: np.ndarray, noisy: np.ndarray, signal_power: float) -> float:
    noise = noisy.astype(np.float64) - clean.astype(np.float64)
    return 10 * np.log10(signal_power / np.mean(np.square(noise)))


# -- noise --------------------------------------------------------------------------------------


@pytest.mark.parametrize("color", ["white", "pink", "brown", "babble"])
@pytest.mark.parametrize("snr", [20.0, 10.0, 5.0, 0.0])
def test_noise_snr_on_active_speech_within_a_tenth_of_a_db(
    speech: Audio, color: str, snr: float
) -> None:
    noisy = Noise(color, snr).apply(speech, np.random.default_rng(3))
    assert noisy.frames == speech.frames and noisy.sample_rate == RATE
    measured = snr_db(speech.samples, noisy.samples, active_power(speech.samples, RATE))
    assert abs(measured - snr) < 0.1


def test_noise_snr_on_the_whole_signal(speech: Audio) -> None:
    noisy = Noise("pink", 10.0, on="whole").apply(speech, np.random.default_rng(3))
    whole = float(np.mean(np.square(speech.samples.astype(np.float64))))
    assert abs(snr_db(speech.samples, noisy.samples, whole) - 10.0) < 0.1
    # Speech with pauses: its active level is above its whole-signal level.
    assert active_power(speech.samples, RATE) > whole


def test_active_speech_ignores_silence_between_words(speech: Audio) -> None:
    padded = np.concatenate([speech.samples, np.zeros(RATE * 5, dtype=np.float32)])
    assert active_power(padded, RATE) == pytest.approx(active_power(speech.samples, RATE))
    assert ACTIVE_RANGE_DB == 40.0


def test_noise_colors_have_their_spectral_slopes() -> None:
    def slope(color: str) -> float:
        x = P.colored_noise(color, 2**16, np.random.default_rng(0))
        spectrum = np.abs(np.fft.rfft(x)) ** 2
        f = np.fft.rfftfreq(x.size, 1 / RATE)
        band = (f > 100) & (f < 4000)
        return float(np.polyfit(np.log10(f[band]), 10 * np.log10(spectrum[band]), 1)[0])

    assert abs(slope("white")) < 1.0
    assert slope("pink") == pytest.approx(-10.0, abs=1.0)  # -3 dB/octave
    assert slope("brown") == pytest.approx(-20.0, abs=1.0)  # -6 dB/octave


def test_babble_is_several_espeak_talkers_without_pauses() -> None:
    bed = P.babble_bed(RATE)
    assert bed.shape[0] > 20 * RATE  # long enough that turns rarely hear the same stretch
    assert np.mean(np.square(bed)) == pytest.approx(1.0)
    # Six talkers at once: no 20 ms frame falls near silence, as one talker's pauses would.
    frames = np.mean(np.square(bed[: bed.shape[0] // 320 * 320].reshape(-1, 320)), axis=1)
    assert frames.min() > 1e-3
    a = P.babble_noise(RATE, RATE, np.random.default_rng(1))
    b = P.babble_noise(RATE, RATE, np.random.default_rng(2))
    assert not np.array_equal(a, b)  # a seed picks where in the bed a turn's babble starts
    assert np.array_equal(a, P.babble_noise(RATE, RATE, np.random.default_rng(1)))


def test_noise_on_silence_adds_nothing() -> None:
    silent = Audio(np.zeros(RATE, dtype=np.float32), RATE)
    assert not Noise("white", 10).apply(silent, np.random.default_rng(0)).samples.any()


# -- gain and clipping --------------------------------------------------------------------------


def test_gain_and_clip() -> None:
    x = tone(440, amp=0.5)
    louder = Gain(6.0).apply(x, np.random.default_rng(0))
    assert np.max(louder.samples) == pytest.approx(0.5 * 10 ** (6 / 20), rel=1e-4)
    clipped = Clip(-12.0).apply(x, np.random.default_rng(0))
    level = 10 ** (-12 / 20)
    assert np.max(np.abs(clipped.samples)) == pytest.approx(level, rel=1e-6)
    assert np.mean(np.abs(clipped.samples) >= level - 1e-6) > 0.5


# -- band-limiting ------------------------------------------------------------------------------


def _gain_db(freq: float, step: Band, rate: int = RATE) -> float:
    x = tone(freq, 2.0, rate)
    y = step.apply(x, np.random.default_rng(0))
    mid = slice(rate // 2, -rate // 2)  # away from the filter's edges
    return 10 * np.log10(np.mean(y.samples[mid] ** 2) / np.mean(x.samples[mid] ** 2))


def test_telephone_band_passes_speech_band_and_attenuates_outside() -> None:
    band = parse_perturbations("band:telephone").steps[0]
    assert band == Band(300.0, 3400.0)
    assert abs(_gain_db(1000, band)) < 0.5
    assert _gain_db(100, band) < -40
    assert _gain_db(6000, band) < -40


def test_band_reaching_nyquist_is_a_high_pass() -> None:
    band = Band(300.0, 8000.0)
    assert abs(_gain_db(4000, band)) < 0.5
    assert _gain_db(60, band) < -40


# -- G.711 --------------------------------------------------------------------------------------

ALL_INT16 = np.arange(-32768, 32768, dtype=np.int32).astype(np.int16)


def test_mulaw_reference_code_points() -> None:
    # ITU-T G.711 / the reference g711.c: 0 → 0xFF, full scale → 0x80 / 0x00, decode ±32124.
    codes = ulaw_encode(np.array([0, -1, 32767, -32768, 8, -8], dtype=np.int16))
    assert list(codes) == [0xFF, 0x7E, 0x80, 0x00, 0xFE, 0x7E]
    decoded = ulaw_decode(np.array([0xFF, 0x7F, 0x80, 0x00], dtype=np.uint8))
    assert list(decoded) == [0, 0, 32124, -32124]


def test_alaw_reference_code_points() -> None:
    # 0 → 0xD5 (decoded 8), -1 → 0x55 (-8), ±256 → 0xC5 / 0x5A, full scale → 0xAA / 0x2A (±32256).
    codes = alaw_encode(np.array([0, -1, 32767, -32768, 256, -256], dtype=np.int16))
    assert list(codes) == [0xD5, 0x55, 0xAA, 0x2A, 0xC5, 0x5A]
    decoded = alaw_decode(np.array([0xD5, 0x55, 0xAA, 0x2A], dtype=np.uint8))
    assert list(decoded) == [8, -8, 32256, -32256]


@pytest.mark.parametrize(
    ("encode", "decode"), [(ulaw_encode, ulaw_decode), (alaw_encode, alaw_decode)]
)
def test_g711_round_trip_error_is_within_half_a_segment_step(encode, decode) -> None:  # noqa: ANN001
    back = decode(encode(ALL_INT16)).astype(np.int32)
    x = ALL_INT16.astype(np.int32)
    err = np.abs(back - x)
    # 8-bit companding: 16 steps a segment, each segment twice the last, decoded at the step's
    # middle (the reference encoder truncates): ≤ |x|/16 plus the first segment's step, up to
    # the top level (μ-law 32124, A-law 32256) …
    top = int(decode(encode(np.array([32767], dtype=np.int16)))[0])
    assert top in (32124, 32256)
    inside = np.abs(x) <= top
    assert np.all(err[inside] <= np.abs(x[inside]) / 16 + 12)
    big = np.abs(x) > 1024
    assert np.median(err[big] / np.abs(x[big])) < 0.02
    # … and beyond it the clipping to that level.
    assert np.array_equal(err[~inside], np.abs(x[~inside]) - top)
    # Decoding is idempotent on its own output.
    assert np.array_equal(decode(encode(back.astype(np.int16))), back.astype(np.int16))
    # Every code decodes to a distinct level except the two zeros of μ-law.
    assert len(np.unique(decode(np.arange(256, dtype=np.uint8)))) >= 255


@pytest.mark.parametrize("law", ["mulaw", "alaw"])
def test_g711_step_round_trips_at_8k_and_keeps_length_and_rate(speech: Audio, law: str) -> None:
    out = G711(law).apply(speech, np.random.default_rng(0))
    assert out.sample_rate == speech.sample_rate and out.frames == speech.frames
    x, y = speech.samples, out.samples
    # Narrowband: what is below 3.4 kHz survives with the codec's ~35 dB SNR or so.
    lp = Band(60, 3400).apply(speech, np.random.default_rng(0)).samples
    assert 10 * np.log10(np.sum(lp**2) / np.sum((y - lp) ** 2)) > 20
    assert not np.array_equal(x, y)


def test_g711_sine_snr() -> None:
    x = tone(1000, amp=0.3, rate=8000)
    for law in ("mulaw", "alaw"):
        y = G711(law).apply(x, np.random.default_rng(0)).samples
        assert 10 * np.log10(np.sum(x.samples**2) / np.sum((y - x.samples) ** 2)) > 35


# -- packet loss --------------------------------------------------------------------------------


def _runs(mask: np.ndarray) -> np.ndarray:
    padded = np.concatenate([[False], mask, [False]]).astype(np.int8)
    d = np.diff(padded)
    return np.flatnonzero(d == -1) - np.flatnonzero(d == 1)


@pytest.mark.parametrize("burst", [None, 4.0])
def test_loss_rate_within_tolerance(burst: float | None) -> None:
    mask = loss_mask(200_000, 0.05, burst, np.random.default_rng(7))
    assert mask.mean() == pytest.approx(0.05, abs=0.005)


def test_gilbert_elliott_is_bursty_and_random_is_not() -> None:
    rng = np.random.default_rng(11)
    random_runs = _runs(loss_mask(200_000, 0.10, None, rng))
    bursty_runs = _runs(loss_mask(200_000, 0.10, 5.0, rng))
    assert random_runs.mean() == pytest.approx(1 / 0.9, rel=0.05)  # geometric, p = 0.1
    assert bursty_runs.mean() == pytest.approx(5.0, rel=0.1)
    assert len(bursty_runs) < len(random_runs) / 3


def test_loss_zeros_whole_20ms_frames_with_the_seeds_pattern() -> None:
    x = Audio(np.full(RATE * 4, 0.25, dtype=np.float32), RATE)  # 200 frames of 320 samples
    step = Loss(25.0)
    mask = step.mask(x, np.random.default_rng(5))
    y = step.apply(x, np.random.default_rng(5)).samples.reshape(200, 320)
    assert np.array_equal(np.all(y == 0, axis=1), mask)
    assert np.all((y == 0.25) | (y == 0))
    assert 0.15 < mask.mean() < 0.35


def test_loss_concealment_repeats_the_last_frame_received() -> None:
    x = Audio(np.arange(RATE, dtype=np.float32) / RATE, RATE)  # a ramp: every frame differs
    step = Loss(30.0, conceal="repeat")
    mask = step.mask(x, np.random.default_rng(2))
    y = step.apply(x, np.random.default_rng(2)).samples.reshape(50, 320)
    frames = x.samples.reshape(50, 320)
    last = None
    for i, lost in enumerate(mask):
        if not lost:
            last = i
            assert np.array_equal(y[i], frames[i])
        elif last is None:
            assert not y[i].any()
        else:
            assert np.array_equal(y[i], frames[last])


# -- Opus and reverberation ---------------------------------------------------------------------


@pytest.mark.skipif(not P.codec_available(P.OPUS_ENCODER), reason="PyAV without libopus")
@pytest.mark.parametrize("rate", [16_000, 24_000, 48_000])
def test_opus_round_trip_keeps_length_rate_and_alignment(speech: Audio, rate: int) -> None:
    clip = speech.resampled(rate)
    out = Opus(24_000).apply(clip, np.random.default_rng(0))
    assert out.sample_rate == rate and out.frames == clip.frames
    x, y = clip.samples, out.samples
    # Lined up with the input (the look-ahead removed): the best lag is within 2 samples.
    window = slice(rate // 2, rate // 2 + rate)
    lags = range(-rate // 100, rate // 100)
    scores = [np.dot(y[window], np.roll(x, -lag)[window]) for lag in lags]
    assert abs(list(lags)[int(np.argmax(scores))]) <= 2
    assert 10 * np.log10(np.sum(x**2) / np.sum((y - x) ** 2)) > 5


@pytest.mark.skipif(not P.codec_available(P.OPUS_ENCODER), reason="PyAV without libopus")
def test_lower_opus_bitrate_loses_more(speech: Audio) -> None:
    def err(bitrate: int) -> float:
        y = Opus(bitrate).apply(speech, np.random.default_rng(0)).samples
        return float(np.sum((y - speech.samples) ** 2))

    assert err(8_000) > err(64_000)


def test_reverb_rir_decays_60_db_in_rt60() -> None:
    rir = Reverb(0.4).rir(RATE, np.random.default_rng(0))
    tail = rir[1:] ** 2
    # Energy decay (Schroeder integral) falls ~60 dB over RT60 (fit over -5..-35 dB).
    edc = 10 * np.log10(np.cumsum(tail[::-1])[::-1] / np.sum(tail))
    t = np.arange(edc.size) / RATE
    fit = (edc < -5) & (edc > -35)
    slope = np.polyfit(t[fit], edc[fit], 1)[0]
    assert -60 / slope == pytest.approx(0.4, rel=0.1)


def test_reverb_keeps_length_and_level_and_smears(speech: Audio) -> None:
    out = Reverb(0.6).apply(speech, np.random.default_rng(0))
    assert out.frames == speech.frames
    assert active_power(out.samples, RATE) == pytest.approx(
        active_power(speech.samples, RATE), rel=0.05
    )
    # Energy spills into the pauses between utterances.
    quiet = np.abs(speech.samples) < 1e-5
    assert np.mean(out.samples[quiet] ** 2) > 1e-6


# -- the spec -----------------------------------------------------------------------------------


def test_parse_the_example_chain() -> None:
    chain = parse_perturbations("noise:pink@10dB+codec:mulaw+loss:5%")
    assert chain.steps == (Noise("pink", 10.0), G711("mulaw"), Loss(5.0))
    assert str(chain) == "noise:pink@10dB+codec:mulaw+loss:5%"


@pytest.mark.parametrize(
    ("spec", "canonical"),
    [
        ("noise:white@5dB,on=whole", "noise:white@5dB,on=whole"),
        ("noise:brown@0", "noise:brown@0dB"),
        ("noise:babble@10dB", "noise:babble@10dB"),
        ("gain@-6dB + clip@-3dB", "gain@-6dB+clip@-3dB"),
        ("band:telephone", "band@300-3400Hz"),
        ("band@50-7000Hz", "band@50-7000Hz"),
        ("codec:ulaw", "codec:mulaw"),
        ("codec:alaw", "codec:alaw"),
        ("codec:opus@12k", "codec:opus@12k"),
        ("codec:opus@12000", "codec:opus@12k"),
        ("codec:opus@12.5kbps", "codec:opus@12500"),
        ("loss:10%,burst=3,conceal=repeat", "loss:10%,burst=3,conceal=repeat"),
        ("loss:2.5%,conceal=zeros", "loss:2.5%"),
        ("reverb@500ms", "reverb@0.5s"),
        ("none", "none"),
        ("", "none"),
    ],
)
def test_canonical_spelling(spec: str, canonical: str) -> None:
    chain = parse_perturbations(spec)
    assert str(chain) == canonical
    assert parse_perturbations(str(chain)) == chain


def test_a_list_of_steps_is_the_same_chain() -> None:
    assert parse_perturbations(["noise:pink@10dB", "codec:mulaw"]) == parse_perturbations(
        "noise:pink@10dB+codec:mulaw"
    )
    assert not parse_perturbations(None)


_steps = st.one_of(
    st.builds(
        Noise,
        st.sampled_from([c for c in Noise.COLORS if c != "dir"]),  # dir needs a folder
        st.floats(-20, 60, allow_nan=False).map(lambda v: round(v, 2)),
        st.sampled_from(["speech", "whole"]),
    ),
    st.builds(Gain, st.floats(-40, 40).map(lambda v: round(v, 3))),
    st.builds(Clip, st.floats(-40, 0).map(lambda v: round(v, 3))),
    st.tuples(st.integers(20, 2000), st.integers(1, 20000)).map(
        lambda t: Band(float(t[0]), float(t[0] + t[1]))
    ),
    st.builds(G711, st.sampled_from(["mulaw", "alaw"])),
    st.builds(Opus, st.integers(6000, 510_000)),
    st.builds(
        Loss,
        st.integers(0, 10000).map(lambda v: v / 100),
        st.one_of(st.none(), st.integers(1, 50).map(float)),
        st.sampled_from(Loss.CONCEALMENTS),
    ),
    st.builds(Reverb, st.integers(5, 1000).map(lambda v: v / 100)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_steps, max_size=5))
def test_spec_round_trips(steps: list) -> None:  # noqa: ANN001
    chain = Perturbation(tuple(steps))
    assert parse_perturbations(str(chain)) == chain
    assert str(parse_perturbations(str(chain))) == str(chain)


@pytest.mark.parametrize(
    ("spec", "names"),
    [
        ("nosie:pink@10dB", ["'nosie'", "noise:white|pink|brown|babble", "codec:mulaw", "reverb@"]),
        ("noise:purple@10dB", ["'purple'", "noise:white|pink|brown|babble"]),
        ("noise:pink", ["missing @value", "noise:pink"]),
        ("noise:pink@loud", ["bad number 'loud'"]),
        ("codec:speex", ["unknown codec 'speex'", "codec:mulaw | codec:alaw"]),
        ("codec:gsm", ["no GSM encoder", "codec:amrnb"]),
        ("codec:opus@1k", ["bitrate"]),
        ("loss:150%", ["outside 0-100"]),
        ("loss:5%,burts=3", ["unknown option burts"]),
        ("loss:5%,conceal=interp", ["conceal=interp"]),
        ("clip@3dB", ["above 0 dBFS"]),
        ("band@3400-300", ["low < high"]),
        ("reverb@20s", ["RT60"]),
        ("noise:pink@10dB++codec:mulaw", ["empty step"]),
        ("gain:x@3dB", ["unexpected :x"]),
    ],
)
def test_errors_name_the_bad_part(spec: str, names: list[str]) -> None:
    with pytest.raises(ConfigError) as info:
        parse_perturbations(spec)
    for name in names:
        assert name in str(info.value)
    assert info.value.field == "perturb"


# -- determinism --------------------------------------------------------------------------------

CHAIN = "noise:babble@15dB+noise:pink@10dB+band:telephone+codec:mulaw+loss:5%,burst=3,conceal=repeat+reverb@0.3s"


def _digest(seed: int, key: str) -> str:
    t = np.arange(2 * RATE) / RATE
    clean = Audio((0.2 * np.sin(2 * np.pi * 220 * t) * np.sin(2 * np.pi * 3 * t)), RATE)
    out = parse_perturbations(CHAIN + "+codec:opus@16k").apply(clean, seed, key)
    return hashlib.sha256(out.samples.tobytes()).hexdigest()


def test_same_seed_same_bytes_different_seed_or_key_different_bytes() -> None:
    assert _digest(1, "turn-1") == _digest(1, "turn-1")
    assert _digest(1, "turn-1") != _digest(2, "turn-1")
    assert _digest(1, "turn-1") != _digest(1, "turn-2")


def test_same_seed_same_bytes_in_two_processes() -> None:
    code = "from tests.audio.test_perturb import _digest; print(_digest(7, 'turn-3'))"
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=ROOT
        ).stdout.strip()
        for _ in range(2)
    }
    assert outputs == {_digest(7, "turn-3")}


def test_a_step_keeps_its_randomness_when_others_are_added() -> None:
    x = tone(440)
    alone = parse_perturbations("noise:white@10dB").apply(x, 3, "k")
    with_gain = parse_perturbations("noise:white@10dB+gain@0dB").apply(x, 3, "k")
    assert np.array_equal(alone.samples, with_gain.samples)
