"""Perturbations of what a system under test hears: noise, gain, clipping, band-limiting,
telephone codecs, packet loss, Opus and reverberation — deterministic, composable, one spelling.

A spec is steps joined by ``+``; each step is ``kind[:variant][@value][,key=value…]``::

    noise:pink@10dB          additive pink noise at 10 dB SNR (white | pink | brown | babble)
    noise:white@5dB,on=whole SNR against the whole signal instead of its active speech
    gain@-6dB                gain in dB
    clip@-12dB               hard clipping at -12 dBFS
    band@300-3400Hz          band-limit (``band:telephone`` = 300-3400 Hz, ``band:wideband`` = 50-7000)
    codec:mulaw  codec:alaw  G.711 at 8 kHz, encoded to 8-bit codes and decoded
    codec:opus@12k           Opus at 12 kbit/s through PyAV's libopus
    loss:5%                  5 % of 20 ms frames lost at random (zeros in their place)
    loss:5%,burst=4          Gilbert–Elliott bursts of 4 frames on average, same loss rate
    loss:5%,conceal=repeat   a lost frame replaced by the last frame received
    reverb@0.5s              a synthetic exponential-decay room response with RT60 0.5 s

``parse_perturbations`` is the one parser; ``str()`` of what it returns is the canonical spelling
and parses back to an equal chain. Every step keeps the audio's length and sample rate (codecs
resample to their own rate and back), so a perturbed turn lasts exactly as long as the clean one.

Determinism: ``Perturbation.apply(audio, seed, key)`` draws each step's randomness from
``SeedSequence([seed, crc32(key), step])``: the same seed, key and input give byte-identical
output in any process (``key`` is e.g. the turn id, so turns differ and a resumed run hears the
same audio). The SNR of ``noise`` is measured on active speech by default: the 20 ms frames within
``ACTIVE_RANGE_DB`` of the loudest frame (silence between words does not dilute the speech
level); ``on=whole`` measures it over the whole signal.
"""

from __future__ import annotations

import functools
import math
import re
import zlib
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from voxbench.audio.mulaw import mulaw_decode, mulaw_encode
from voxbench.audio.resample import resample
from voxbench.audio.wav import Audio
from voxbench.core.errors import ConfigError

FRAME_SECONDS = 0.020
"""Packet-loss frames and the active-speech frames of the SNR are 20 ms."""
ACTIVE_RANGE_DB = 40.0
"""A frame is active speech when its energy is within this many dB of the loudest frame's."""
G711_RATE = 8_000
OPUS_RATE = 48_000
OPUS_FRAME = 960  # 20 ms at 48 kHz
OPUS_DELAY = 309
"""Samples at 48 kHz by which a libopus round trip through PyAV lags its input: measured (best
waveform match on speech; PyAV reports no ``delay`` for libopus, whose nominal look-ahead is
312), checked by ``tests/audio/test_perturb.py``."""
TELEPHONE_BAND = (300.0, 3400.0)
WIDEBAND_BAND = (50.0, 7000.0)

# -- G.711 (ITU-T G.711 companding, numpy) ----------------------------------------------------

_ALAW_SEGMENT_ENDS = np.array([0x1F, 0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF])


def alaw_encode(pcm: np.ndarray) -> np.ndarray:
    """int16 samples → G.711 A-law codes (uint8), the reference implementation's bytes."""
    x = np.asarray(pcm, dtype=np.int32) >> 3  # 13-bit
    mask = np.where(x >= 0, 0xD5, 0x55)
    magnitude = np.where(x >= 0, x, -x - 1)
    segment = np.searchsorted(_ALAW_SEGMENT_ENDS, magnitude)  # 8: beyond the last segment
    shift = np.where(segment < 2, 1, np.minimum(segment, 7))
    code = np.where(segment > 7, 0x7F, (np.minimum(segment, 7) << 4) | ((magnitude >> shift) & 0xF))
    return (code ^ mask).astype(np.uint8)


def _alaw_decode_table() -> np.ndarray:
    a = np.arange(256, dtype=np.int32) ^ 0x55
    t = (a & 0x0F) << 4
    segment = (a & 0x70) >> 4
    t = np.where(segment == 0, t + 8, t + 0x108)
    t = np.where(segment > 1, t << np.maximum(segment - 1, 0), t)
    return np.where(a & 0x80, t, -t).astype(np.int16)


_ALAW_DECODE = _alaw_decode_table()


def alaw_decode(codes: np.ndarray) -> np.ndarray:
    """G.711 A-law codes (uint8) → int16 samples."""
    return _ALAW_DECODE[np.asarray(codes, dtype=np.uint8)]


def ulaw_encode(pcm: np.ndarray) -> np.ndarray:
    """int16 samples → G.711 μ-law codes (uint8) (``voxbench.audio.mulaw``)."""
    data = np.asarray(pcm, dtype="<i2").tobytes()
    return np.frombuffer(mulaw_encode(data), dtype=np.uint8).copy()


def ulaw_decode(codes: np.ndarray) -> np.ndarray:
    """G.711 μ-law codes (uint8) → int16 samples."""
    data = np.asarray(codes, dtype=np.uint8).tobytes()
    return np.frombuffer(mulaw_decode(data), dtype="<i2").astype(np.int16)


def _to_int16(x: np.ndarray) -> np.ndarray:
    return np.clip(np.round(x.astype(np.float64) * 32768.0), -32768, 32767).astype(np.int16)


def _fit(x: np.ndarray, frames: int) -> np.ndarray:
    """``x`` cut or zero-padded to ``frames`` samples (resampling may be a sample off)."""
    if x.shape[0] >= frames:
        return x[:frames]
    return np.concatenate([x, np.zeros(frames - x.shape[0], dtype=x.dtype)])


# -- the steps ---------------------------------------------------------------------------------


def _db(value: float) -> str:
    return f"{value:g}dB"


def active_power(x: np.ndarray, rate: int) -> float:
    """Mean power of the active-speech frames of ``x`` (see the module docstring)."""
    n = max(1, round(rate * FRAME_SECONDS))
    frames = x.shape[0] // n
    if frames == 0:
        return float(np.mean(np.square(x, dtype=np.float64))) if x.size else 0.0
    energy = np.mean(np.square(x[: frames * n].astype(np.float64).reshape(frames, n)), axis=1)
    top = float(energy.max())
    if top <= 0.0:
        return 0.0
    return float(energy[energy >= top * 10 ** (-ACTIVE_RANGE_DB / 10)].mean())


def colored_noise(color: str, frames: int, rng: np.random.Generator) -> np.ndarray:
    """Unit-power noise: white, pink (1/f power) or brown (1/f² power), float64."""
    if color == "white" or frames < 2:
        shaped = rng.standard_normal(frames)
    else:
        from scipy.fft import irfft, next_fast_len, rfft

        n = next_fast_len(frames, real=True)  # shaped on a fast length, then cut
        spectrum = rfft(rng.standard_normal(n))
        f = np.arange(spectrum.shape[0], dtype=np.float64)
        f[0] = 1.0
        spectrum /= np.sqrt(f) if color == "pink" else f
        spectrum[0] = 0.0
        shaped = irfft(spectrum, n=n)[:frames]
    power = float(np.mean(np.square(shaped)))
    return shaped / math.sqrt(power) if power > 0 else shaped


BABBLE_TALKERS = (
    ("en-us", 40, 165),
    ("en-gb", 65, 150),
    ("en-gb-scotland", 30, 175),
    ("en-029", 55, 160),
    ("en-gb-x-rp", 75, 145),
    ("en-us-nyc", 45, 180),
)
"""Babble's talkers: eSpeak NG voice, pitch (0-99) and rate (words per minute)."""
BABBLE_LINES = (
    "I told him we would meet at the station before the train left for the coast.",
    "The weather was lovely all week, so we spent most afternoons out in the garden.",
    "Did you see the score last night? Nobody expected them to win by that much.",
    "She wants to repaint the kitchen, but the landlord still has not answered her.",
    "We could order something in, or there is that new place round the corner.",
    "My sister is flying back on Tuesday, and I promised to pick her up early.",
    "Honestly the meeting went on for hours and we decided almost nothing at all.",
    "If the shop is still open, grab some milk and a loaf of bread on your way.",
)


@functools.cache
def babble_bed(rate: int) -> np.ndarray:
    """Several eSpeak NG talkers (``BABBLE_TALKERS``) speaking at once, unit power, float64 at
    ``rate``: made offline on first use in a process (a few seconds), the same every time."""
    from voxbench.audio.espeak import espeak_sample_rate, espeak_synthesize

    espeak_rate = espeak_sample_rate()
    talkers = []
    for i, (voice, pitch, wpm) in enumerate(BABBLE_TALKERS):
        lines = BABBLE_LINES[i:] + BABBLE_LINES[:i]
        speech = np.concatenate(
            [espeak_synthesize(line, voice, wpm, pitch).samples for line in lines]
        ).astype(np.float64)
        power = active_power(speech, espeak_rate)
        talkers.append(speech / math.sqrt(power) if power > 0 else speech)
    length = min(t.shape[0] for t in talkers)
    bed = np.sum([t[:length] for t in talkers], axis=0)
    bed = resample(bed.astype(np.float32), espeak_rate, rate).astype(np.float64)
    return bed / math.sqrt(float(np.mean(np.square(bed))))


def babble_noise(frames: int, rate: int, rng: np.random.Generator) -> np.ndarray:
    """``frames`` samples of babble from a random place in the bed (looped), unit power."""
    bed = babble_bed(rate)
    start = int(rng.integers(bed.shape[0]))
    piece = np.take(bed, (start + np.arange(frames)) % bed.shape[0])
    power = float(np.mean(np.square(piece))) if frames else 0.0
    return piece / math.sqrt(power) if power > 0 else piece


@dataclass(frozen=True)
class Noise:
    """Additive white, pink, brown or babble noise at ``snr_db`` against active speech or the
    whole signal."""

    color: str
    snr_db: float
    on: str = "speech"
    COLORS: ClassVar[tuple[str, ...]] = ("white", "pink", "brown", "babble")

    def apply(self, audio: Audio, rng: np.random.Generator) -> Audio:
        x = audio.samples.astype(np.float64)
        if self.on == "speech":
            signal = active_power(x, audio.sample_rate)
        else:
            signal = float(np.mean(np.square(x))) if x.size else 0.0
        if signal <= 0.0:
            return audio  # silence has no level to set noise against
        if self.color == "babble":
            noise = babble_noise(x.shape[0], audio.sample_rate, rng)
        else:
            noise = colored_noise(self.color, x.shape[0], rng)
        noise *= math.sqrt(signal / 10 ** (self.snr_db / 10))
        return Audio((x + noise).astype(np.float32), audio.sample_rate)

    def __str__(self) -> str:
        on = "" if self.on == "speech" else f",on={self.on}"
        return f"noise:{self.color}@{_db(self.snr_db)}{on}"


@dataclass(frozen=True)
class Gain:
    """A gain in dB (no clipping: what the int16 encoding clips is the transport's)."""

    db: float

    def apply(self, audio: Audio, rng: np.random.Generator) -> Audio:
        return Audio(audio.samples * np.float32(10 ** (self.db / 20)), audio.sample_rate)

    def __str__(self) -> str:
        return f"gain@{_db(self.db)}"


@dataclass(frozen=True)
class Clip:
    """Hard clipping at ``level_db`` dBFS (≤ 0)."""

    level_db: float

    def apply(self, audio: Audio, rng: np.random.Generator) -> Audio:
        level = np.float32(10 ** (self.level_db / 20))
        return Audio(np.clip(audio.samples, -level, level), audio.sample_rate)

    def __str__(self) -> str:
        return f"clip@{_db(self.level_db)}"


@dataclass(frozen=True)
class Band:
    """Band-limiting with an order-8 Butterworth band-pass run forward and back (zero phase)."""

    low_hz: float
    high_hz: float

    def apply(self, audio: Audio, rng: np.random.Generator) -> Audio:
        from scipy.signal import butter, sosfiltfilt

        rate = audio.sample_rate
        nyquist = rate / 2
        if audio.frames < 64:
            return audio
        if self.high_hz >= nyquist * 0.99:
            sos = butter(8, self.low_hz, btype="highpass", fs=rate, output="sos")
        else:
            sos = butter(8, [self.low_hz, self.high_hz], btype="bandpass", fs=rate, output="sos")
        out = sosfiltfilt(sos, audio.samples.astype(np.float64))
        return Audio(out.astype(np.float32), rate)

    def __str__(self) -> str:
        return f"band@{self.low_hz:g}-{self.high_hz:g}Hz"


@dataclass(frozen=True)
class G711:
    """G.711 μ-law or A-law: resampled to 8 kHz, encoded to 8-bit codes, decoded, resampled back."""

    law: str  # "mulaw" | "alaw"

    def apply(self, audio: Audio, rng: np.random.Generator) -> Audio:
        rate = audio.sample_rate
        narrow = resample(audio.samples, rate, G711_RATE)
        pcm = _to_int16(narrow)
        if self.law == "mulaw":
            decoded = ulaw_decode(ulaw_encode(pcm))
        else:
            decoded = alaw_decode(alaw_encode(pcm))
        back = resample(decoded.astype(np.float32) / 32768.0, G711_RATE, rate)
        return Audio(_fit(back, audio.frames), rate)

    def __str__(self) -> str:
        return f"codec:{self.law}"


def opus_available() -> bool:
    """Whether PyAV is installed with an Opus encoder (libopus)."""
    try:
        import av
    except ImportError:
        return False
    return "libopus" in av.codecs_available


@dataclass(frozen=True)
class Opus:
    """Opus at ``bitrate`` bit/s (libopus through PyAV), 20 ms frames, at 48 kHz and back; the
    encoder's look-ahead is removed so the output lines up with the input."""

    bitrate: int

    def apply(self, audio: Audio, rng: np.random.Generator) -> Audio:
        if not opus_available():
            raise ConfigError(
                "this PyAV build has no libopus encoder", field="codec:opus", expected=None
            )
        import av

        rate = audio.sample_rate
        wide = _to_int16(resample(audio.samples, rate, OPUS_RATE))
        enc = av.CodecContext.create("libopus", "w")
        enc.sample_rate = OPUS_RATE
        enc.layout = "mono"
        enc.format = "s16"
        enc.bit_rate = self.bitrate
        enc.options = {"application": "voip", "vbr": "off"}
        enc.open()
        dec = av.CodecContext.create("libopus", "r")
        dec.sample_rate = OPUS_RATE
        dec.layout = "mono"
        dec.format = "s16"
        dec.open()
        lookahead = OPUS_DELAY
        padded = np.concatenate([wide, np.zeros(lookahead + OPUS_FRAME, dtype=np.int16)])
        out: list[np.ndarray] = []
        packets = []
        for i in range(0, padded.shape[0] - OPUS_FRAME + 1, OPUS_FRAME):
            frame = av.AudioFrame.from_ndarray(
                padded[i : i + OPUS_FRAME].reshape(1, -1), format="s16", layout="mono"
            )
            frame.sample_rate = OPUS_RATE
            frame.pts = i
            packets.extend(enc.encode(frame))
        packets.extend(enc.encode(None))
        for packet in packets:
            for decoded in dec.decode(packet):
                out.append(_mono_float(decoded.to_ndarray()))
        samples = np.concatenate(out) if out else np.zeros(0, dtype=np.float32)
        samples = _fit(samples[lookahead:], wide.shape[0])
        return Audio(_fit(resample(samples, OPUS_RATE, rate), audio.frames), rate)

    def __str__(self) -> str:
        if self.bitrate % 1000 == 0:
            return f"codec:opus@{self.bitrate // 1000}k"
        return f"codec:opus@{self.bitrate}"


def _mono_float(array: np.ndarray) -> np.ndarray:
    a = np.asarray(array)
    if a.dtype == np.int16:
        a = a.astype(np.float32) / 32768.0
    return a.reshape(-1).astype(np.float32)


def loss_mask(
    frames: int, rate: float, burst: float | None, rng: np.random.Generator
) -> np.ndarray:
    """Which of ``frames`` frames are lost (True): independent draws at ``rate``, or a
    Gilbert–Elliott chain (a good state that loses nothing, a bad state that loses every frame)
    whose bursts last ``burst`` frames on average and whose stationary loss rate is ``rate``."""
    if rate <= 0.0 or frames == 0:
        return np.zeros(frames, dtype=bool)
    draws = rng.random(frames)
    if burst is None:
        return draws < rate
    if rate >= 1.0:
        return np.ones(frames, dtype=bool)
    leave_bad = 1.0 / burst
    enter_bad = rate * leave_bad / (1.0 - rate)
    lost = np.zeros(frames, dtype=bool)
    bad = rng.random() < rate  # the first frame from the stationary distribution
    for i in range(frames):
        lost[i] = bad
        bad = draws[i] >= leave_bad if bad else draws[i] < enter_bad
    return lost


@dataclass(frozen=True)
class Loss:
    """Packet loss on 20 ms frames: random, or bursty (Gilbert–Elliott, mean burst length
    ``burst`` frames); a lost frame becomes zeros or a repeat of the last frame received."""

    percent: float  # 0..100
    burst: float | None = None
    conceal: str = "zeros"  # "zeros" | "repeat"
    CONCEALMENTS: ClassVar[tuple[str, ...]] = ("zeros", "repeat")

    def mask(self, audio: Audio, rng: np.random.Generator) -> np.ndarray:
        """Which 20 ms frames of ``audio`` are lost (the last one may be shorter)."""
        n = max(1, round(audio.sample_rate * FRAME_SECONDS))
        return loss_mask(-(-audio.frames // n), self.percent / 100, self.burst, rng)

    def apply(self, audio: Audio, rng: np.random.Generator) -> Audio:
        n = max(1, round(audio.sample_rate * FRAME_SECONDS))
        lost = self.mask(audio, rng)
        out = audio.samples.copy()
        last: np.ndarray | None = None
        for i, gone in enumerate(lost):
            piece = slice(i * n, min((i + 1) * n, audio.frames))
            if not gone:
                last = audio.samples[piece]
            elif self.conceal == "repeat" and last is not None:
                out[piece] = last[: piece.stop - piece.start]
            else:
                out[piece] = 0.0
        return Audio(out, audio.sample_rate)

    def __str__(self) -> str:
        s = f"loss:{self.percent:g}%"
        if self.burst is not None:
            s += f",burst={self.burst:g}"
        if self.conceal != "zeros":
            s += f",conceal={self.conceal}"
        return s


@dataclass(frozen=True)
class Reverb:
    """Reverberation from a synthetic room response: a direct path plus exponentially decaying
    noise that falls 60 dB in ``rt60`` seconds (tail energy equal to the direct path's); the
    output keeps the input's length and active-speech level."""

    rt60: float

    def rir(self, rate: int, rng: np.random.Generator) -> np.ndarray:
        n = max(2, round(rate * self.rt60))
        t = np.arange(n) / rate
        tail = rng.standard_normal(n) * np.exp(-6.907755278982137 * t / self.rt60)  # ln(1000)
        tail[0] = 0.0
        tail /= math.sqrt(float(np.sum(np.square(tail)))) or 1.0
        tail[0] = 1.0
        return tail

    def apply(self, audio: Audio, rng: np.random.Generator) -> Audio:
        from scipy.signal import fftconvolve

        x = audio.samples.astype(np.float64)
        if x.size == 0:
            return audio
        wet = fftconvolve(x, self.rir(audio.sample_rate, rng))[: x.shape[0]]
        before, after = active_power(x, audio.sample_rate), active_power(wet, audio.sample_rate)
        if after > 0:
            wet *= math.sqrt(before / after)
        return Audio(wet.astype(np.float32), audio.sample_rate)

    def __str__(self) -> str:
        return f"reverb@{self.rt60:g}s"


Step = Noise | Gain | Clip | Band | G711 | Opus | Loss | Reverb


@dataclass(frozen=True)
class Perturbation:
    """A chain of steps applied in order; ``str()`` is the canonical spec (``none`` if empty)."""

    steps: tuple[Step, ...] = ()

    def __str__(self) -> str:
        return "+".join(str(s) for s in self.steps) or "none"

    def __bool__(self) -> bool:
        return bool(self.steps)

    def apply(self, audio: Audio, seed: int = 0, key: str = "") -> Audio:
        """``audio`` (mono) through every step; the same seed, key and input give the same
        bytes. The result has the input's length and rate."""
        mono = audio.mono()
        salt = zlib.crc32(key.encode("utf-8"))
        for index, step in enumerate(self.steps):
            rng = np.random.default_rng(np.random.SeedSequence([seed & 0xFFFFFFFF, salt, index]))
            mono = step.apply(mono, rng)
        return mono


# -- the one parser ----------------------------------------------------------------------------

KINDS: dict[str, str] = {
    "noise": "noise:white|pink|brown|babble@<SNR>dB[,on=speech|whole]",
    "gain": "gain@<dB>dB",
    "clip": "clip@<dBFS>dB",
    "band": "band@<low>-<high>Hz | band:telephone | band:wideband",
    "codec": "codec:mulaw | codec:alaw | codec:opus@<kbit/s>k",
    "loss": "loss:<percent>%[,burst=<frames>][,conceal=zeros|repeat]",
    "reverb": "reverb@<RT60>s",
}
_STEP = re.compile(
    r"^(?P<kind>[a-z0-9_]+)(?::(?P<variant>[^@,]+))?(?:@(?P<value>[^,]+))?(?P<opts>(?:,[^,]*)*)$"
)


def _error(part: str, problem: str, expected: str) -> ConfigError:
    return ConfigError(f"{problem} in {part!r}", field="perturb", expected=expected)


def _number(text: str, unit: str, part: str, expected: str) -> float:
    t = text.strip()
    for suffix in (unit, unit.lower()):
        if suffix and t.endswith(suffix):
            t = t[: -len(suffix)]
            break
    try:
        value = float(t)
    except ValueError:
        raise _error(part, f"bad number {text!r}", expected) from None
    if not math.isfinite(value):
        raise _error(part, f"bad number {text!r}", expected)
    return value


def _parse_step(part: str) -> Step:
    m = _STEP.match(part)
    kind = m.group("kind") if m else part.split(":")[0].split("@")[0]
    if kind not in KINDS:
        raise ConfigError(
            f"unknown perturbation {kind!r} in {part!r}",
            field="perturb",
            expected="; ".join(KINDS.values()),
        )
    usage = KINDS[kind]
    if m is None:
        raise _error(part, "malformed step", usage)
    variant, value = m.group("variant"), m.group("value")
    options: dict[str, str] = {}
    for opt in filter(None, m.group("opts").split(",")):
        key, eq, val = opt.partition("=")
        if not eq or not key or not val:
            raise _error(part, f"bad option {opt!r}", usage)
        options[key.strip()] = val.strip()

    def take(name: str) -> str | None:
        return options.pop(name, None)

    def need_value() -> str:
        if value is None:
            raise _error(part, "missing @value", usage)
        return value

    def no_variant() -> None:
        if variant is not None:
            raise _error(part, f"unexpected :{variant}", usage)

    step: Step
    if kind == "noise":
        if variant not in Noise.COLORS:
            raise _error(part, f"unknown noise {variant!r}", usage)
        on = take("on") or "speech"
        if on not in ("speech", "whole"):
            raise _error(part, f"bad on={on}", usage)
        step = Noise(variant, _number(need_value(), "dB", part, usage), on)
    elif kind == "gain":
        no_variant()
        step = Gain(_number(need_value(), "dB", part, usage))
    elif kind == "clip":
        no_variant()
        level = _number(need_value(), "dB", part, usage)
        if level > 0:
            raise _error(part, "clip level above 0 dBFS", usage)
        step = Clip(level)
    elif kind == "band":
        if variant is not None:
            named = {"telephone": TELEPHONE_BAND, "wideband": WIDEBAND_BAND}
            if variant not in named or value is not None:
                raise _error(part, f"unknown band {variant!r}", usage)
            low, high = named[variant]
        else:
            low_text, dash, high_text = need_value().partition("-")
            if not dash:
                raise _error(part, "band needs low-high", usage)
            low = _number(low_text, "Hz", part, usage)
            high = _number(high_text, "Hz", part, usage)
            if not 0 < low < high:
                raise _error(part, "band needs 0 < low < high", usage)
        step = Band(low, high)
    elif kind == "codec":
        if variant in ("mulaw", "ulaw", "alaw"):
            if value is not None:
                raise _error(part, "G.711 takes no @value", usage)
            step = G711("alaw" if variant == "alaw" else "mulaw")
        elif variant == "opus":
            text = need_value().strip().lower().removesuffix("bps").removesuffix("bit/s")
            scale = 1000 if text.endswith("k") else 1
            bitrate = _number(text.removesuffix("k"), "", part, usage) * scale
            if not 6000 <= bitrate <= 510_000 or bitrate != int(bitrate):
                raise _error(part, "Opus bitrate outside 6k-510k", usage)
            step = Opus(int(bitrate))
        else:
            raise _error(part, f"unknown codec {variant!r}", usage)
    elif kind == "loss":
        if variant is None or value is not None:
            raise _error(part, "loss needs :<percent>%", usage)
        percent = _number(variant, "%", part, usage)
        if not 0 <= percent <= 100:
            raise _error(part, "loss outside 0-100 %", usage)
        burst_text = take("burst")
        burst = None if burst_text is None else _number(burst_text, "", part, usage)
        if burst is not None and burst < 1:
            raise _error(part, "burst below 1 frame", usage)
        conceal = take("conceal") or "zeros"
        if conceal not in Loss.CONCEALMENTS:
            raise _error(part, f"bad conceal={conceal}", usage)
        step = Loss(percent, burst, conceal)
    else:  # reverb
        no_variant()
        text = need_value().strip()
        rt60 = _number(text[:-2], "", part, usage) / 1000 if text.endswith("ms") else None
        rt60 = rt60 if rt60 is not None else _number(text, "s", part, usage)
        if not 0.05 <= rt60 <= 10:
            raise _error(part, "RT60 outside 0.05-10 s", usage)
        step = Reverb(rt60)
    if options:
        raise _error(part, f"unknown option {', '.join(options)}", usage)
    return step


def parse_perturbations(spec: str | list[str] | tuple[str, ...] | None) -> Perturbation:
    """``"noise:pink@10dB+codec:mulaw+loss:5%"`` (or a list of steps) → a ``Perturbation``.

    ``None``, ``""``, ``"none"`` and ``"clean"`` are the empty chain. A bad step raises ``ConfigError``
    naming it and what was expected (every known kind for an unknown one)."""
    if spec is None:
        return Perturbation()
    parts: list[str] = []
    for item in [spec] if isinstance(spec, str) else list(spec):
        if not isinstance(item, str):
            raise ConfigError(f"not a step: {item!r}", field="perturb", expected="a string")
        parts.extend(p.strip() for p in item.split("+"))
    parts = [p.replace(" ", "") for p in parts]
    if parts in ([""], ["none"], ["clean"]) or not parts:
        return Perturbation()
    if "" in parts:
        raise ConfigError(
            f"empty step in {spec!r}", field="perturb", expected="steps joined by '+'"
        )
    return Perturbation(tuple(_parse_step(p) for p in parts))


def describe(spec: Any) -> str:
    """The canonical spelling of ``spec`` (a string, a list or a ``Perturbation``)."""
    return str(spec if isinstance(spec, Perturbation) else parse_perturbations(spec))
