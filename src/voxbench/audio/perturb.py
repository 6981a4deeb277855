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
    noise:dir@10dB,path=/data/musan/noise   noise from a folder of WAVs (MUSAN, DEMAND…) at 10 dB
    reverb:file,path=/data/rir.wav          a measured room impulse response (a WAV)
    codec:amrnb@12.2k        AMR-NB (4.75k-12.2k) at 8 kHz through PyAV's libopencore-amrnb
    jitter@30ms              20 ms frames delayed by random jitter (mean 30 ms); a frame later
                             than the jitter buffer (``buffer=``, 3× the mean) is lost
    speed@1.1                played 10 % faster (tempo and pitch, like tape), fitted to the length
    pitch@2st                pitch up 2 semitones, same duration (phase vocoder)

``parse_perturbations`` is the one parser; ``str()`` of what it returns is the canonical spelling
and parses back to an equal chain. Every step keeps the audio's length and sample rate (codecs
resample to their own rate and back), so a perturbed turn lasts exactly as long as the clean one.

Determinism: ``Perturbation.apply(audio, seed, key)`` draws each step's randomness from
``SeedSequence([seed, crc32(key), step])``: the same seed, key and input give byte-identical
output in any process (``key`` is e.g. the turn id, so turns differ and a resumed run hears the
same audio). The SNR of ``noise`` is measured on active speech by default: the 20 ms frames within
``ACTIVE_RANGE_DB`` of the loudest frame (silence between words does not dilute the speech
level); ``on=whole`` measures it over the whole signal.

A path (``path=``) may not hold spaces, commas or ``+``. GSM full rate is not offered: the
ffmpeg bundled with PyAV decodes it but has no GSM encoder (no libgsm); AMR-NB it can encode.
"""

from __future__ import annotations

import functools
import math
import re
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np

from voxbench.audio.mulaw import mulaw_decode, mulaw_encode
from voxbench.audio.resample import resample
from voxbench.audio.wav import Audio, read_wav
from voxbench.core.errors import ConfigError

if TYPE_CHECKING:
    from av.audio.codeccontext import AudioCodecContext

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


@functools.cache
def _noise_files(folder: str) -> tuple[str, ...]:
    files = sorted(str(p) for p in Path(folder).rglob("*") if p.suffix.lower() in (".wav", ".flac"))
    if not files:
        raise ConfigError(
            f"no .wav or .flac file under {folder}", field="perturb", expected="a noise folder"
        )
    return tuple(files)


@functools.lru_cache(maxsize=64)
def _noise_file(path: str, rate: int) -> np.ndarray:
    audio = read_wav(path).mono()
    return resample(audio.samples, audio.sample_rate, rate).astype(np.float64)


def folder_noise(folder: str, frames: int, rate: int, rng: np.random.Generator) -> np.ndarray:
    """``frames`` samples of a noise file picked from ``folder`` (sorted, so the seed picks
    the same one on any machine), from a random place, looped, unit power."""
    files = _noise_files(folder)
    noise = _noise_file(files[int(rng.integers(len(files)))], rate)
    if noise.size == 0 or frames == 0:
        return np.zeros(frames)
    start = int(rng.integers(noise.shape[0]))
    piece = np.take(noise, (start + np.arange(frames)) % noise.shape[0])
    power = float(np.mean(np.square(piece)))
    return piece / math.sqrt(power) if power > 0 else piece


@dataclass(frozen=True)
class Noise:
    """Additive white, pink, brown or babble noise at ``snr_db`` against active speech or the
    whole signal."""

    color: str
    snr_db: float
    on: str = "speech"
    path: str | None = None
    """``dir``: the folder of noise WAVs."""
    COLORS: ClassVar[tuple[str, ...]] = ("white", "pink", "brown", "babble", "dir")

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
        elif self.color == "dir":
            assert self.path is not None
            noise = folder_noise(self.path, x.shape[0], audio.sample_rate, rng)
        else:
            noise = colored_noise(self.color, x.shape[0], rng)
        noise *= math.sqrt(signal / 10 ** (self.snr_db / 10))
        return Audio((x + noise).astype(np.float32), audio.sample_rate)

    def __str__(self) -> str:
        on = "" if self.on == "speech" else f",on={self.on}"
        path = f",path={self.path}" if self.path else ""
        return f"noise:{self.color}@{_db(self.snr_db)}{on}{path}"


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


OPUS_ENCODER = "libopus"
AMR_ENCODER = "libopencore_amrnb"


def codec_available(encoder: str) -> bool:
    """Whether PyAV is installed with the encoder ``encoder`` (``OPUS_ENCODER``,
    ``AMR_ENCODER``)."""
    try:
        import av
    except ImportError:
        return False
    return encoder in av.codecs_available


@dataclass(frozen=True)
class Opus:
    """Opus at ``bitrate`` bit/s (libopus through PyAV), 20 ms frames, at 48 kHz and back; the
    encoder's look-ahead is removed so the output lines up with the input."""

    bitrate: int

    def apply(self, audio: Audio, rng: np.random.Generator) -> Audio:
        if not codec_available(OPUS_ENCODER):
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


def _conceal(samples: np.ndarray, lost: np.ndarray, n: int, conceal: str) -> np.ndarray:
    """``samples`` with each lost ``n``-sample frame replaced by zeros or by the last frame
    received (``conceal``)."""
    out = samples.copy()
    last: np.ndarray | None = None
    for i, gone in enumerate(lost):
        piece = slice(i * n, min((i + 1) * n, samples.shape[0]))
        if not gone:
            last = samples[piece]
        elif conceal == "repeat" and last is not None:
            out[piece] = last[: piece.stop - piece.start]
        else:
            out[piece] = 0.0
    return out


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
        return Audio(_conceal(audio.samples, lost, n, self.conceal), audio.sample_rate)

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


def _keep_level(x: np.ndarray, wet: np.ndarray, rate: int) -> np.ndarray:
    before, after = active_power(x, rate), active_power(wet, rate)
    return wet * math.sqrt(before / after) if after > 0 else wet


@dataclass(frozen=True)
class RirFile:
    """Reverberation by a measured room impulse response (a WAV, resampled, started at its
    peak): the output keeps the input's length and active-speech level."""

    path: str

    def apply(self, audio: Audio, rng: np.random.Generator) -> Audio:
        from scipy.signal import fftconvolve

        x = audio.samples.astype(np.float64)
        if x.size == 0:
            return audio
        rir = _noise_file(self.path, audio.sample_rate)
        if rir.size == 0 or not np.any(rir):
            raise ConfigError(f"{self.path} is silent", field="perturb", expected="an RIR WAV")
        rir = rir[int(np.argmax(np.abs(rir))) :]
        wet = fftconvolve(x, rir)[: x.shape[0]]
        return Audio(_keep_level(x, wet, audio.sample_rate).astype(np.float32), audio.sample_rate)

    def __str__(self) -> str:
        return f"reverb:file,path={self.path}"


AMR_RATE = 8_000
AMR_FRAME = 160
AMR_DELAY = 40
"""Samples at 8 kHz by which an AMR-NB round trip through PyAV lags its input: measured on
eSpeak speech (best normalised cross-correlation at every mode), checked by the tests."""
AMR_MODES = (4750, 5150, 5900, 6700, 7400, 7950, 10200, 12200)


def _av_round_trip(
    pcm: np.ndarray, codec: str, rate: int, frame: int, bitrate: int, delay: int
) -> np.ndarray:
    """int16 ``pcm`` encoded and decoded by PyAV's ``codec`` in ``frame``-sample frames, the
    codec's ``delay`` removed: float32 of ``pcm``'s length."""
    import av

    # An audio codec's context (the callers name audio codecs): typed as the base class for a str.
    enc = cast("AudioCodecContext", av.CodecContext.create(codec, "w"))
    enc.sample_rate, enc.layout, enc.format, enc.bit_rate = rate, "mono", "s16", bitrate
    enc.open()
    dec = cast("AudioCodecContext", av.CodecContext.create(codec, "r"))
    dec.sample_rate, dec.layout, dec.format = rate, "mono", "s16"
    dec.open()
    padded = np.concatenate([pcm, np.zeros(delay + 2 * frame, dtype=np.int16)])
    packets = []
    for i in range(0, padded.shape[0] - frame + 1, frame):
        f = av.AudioFrame.from_ndarray(
            padded[i : i + frame].reshape(1, -1), format="s16", layout="mono"
        )
        f.sample_rate, f.pts = rate, i
        packets.extend(enc.encode(f))
    packets.extend(enc.encode(None))
    out = [_mono_float(d.to_ndarray()) for p in packets for d in dec.decode(p)]
    samples = np.concatenate(out) if out else np.zeros(0, dtype=np.float32)
    return _fit(samples[delay:], pcm.shape[0])


@dataclass(frozen=True)
class Amr:
    """AMR-NB at ``bitrate`` (one of its eight modes), 20 ms frames at 8 kHz and back."""

    bitrate: int

    def apply(self, audio: Audio, rng: np.random.Generator) -> Audio:
        if not codec_available(AMR_ENCODER):
            raise ConfigError(
                "this PyAV build has no AMR-NB encoder", field="codec:amrnb", expected=None
            )
        rate = audio.sample_rate
        narrow = _to_int16(resample(audio.samples, rate, AMR_RATE))
        back = _av_round_trip(
            narrow, "libopencore_amrnb", AMR_RATE, AMR_FRAME, self.bitrate, AMR_DELAY
        )
        return Audio(_fit(resample(back, AMR_RATE, rate), audio.frames), rate)

    def __str__(self) -> str:
        return f"codec:amrnb@{self.bitrate / 1000:g}k"


@dataclass(frozen=True)
class Jitter:
    """Network jitter on 20 ms frames: each frame arrives late by an exponential delay of
    mean ``mean_ms``; the jitter buffer plays it ``buffer_ms`` after it was sent, so a frame
    later than that is lost (zeros, or the last frame played)."""

    mean_ms: float
    buffer_ms: float
    conceal: str = "zeros"

    def late(self, frames: int, rng: np.random.Generator) -> np.ndarray:
        """Which frames arrive after the buffer's playout time."""
        if self.mean_ms <= 0:
            return np.zeros(frames, dtype=bool)
        return rng.exponential(self.mean_ms, frames) > self.buffer_ms

    def apply(self, audio: Audio, rng: np.random.Generator) -> Audio:
        n = max(1, round(audio.sample_rate * FRAME_SECONDS))
        lost = self.late(-(-audio.frames // n), rng)
        return Audio(_conceal(audio.samples, lost, n, self.conceal), audio.sample_rate)

    def __str__(self) -> str:
        s = f"jitter@{self.mean_ms:g}ms"
        if self.buffer_ms != 3 * self.mean_ms:
            s += f",buffer={self.buffer_ms:g}ms"
        if self.conceal != "zeros":
            s += f",conceal={self.conceal}"
        return s


@dataclass(frozen=True)
class Speed:
    """Played ``factor`` times as fast (tempo and pitch together, as a tape), then fitted to
    the clip's length: a faster clip ends in silence, a slower one is cut at the clip's end."""

    factor: float

    def apply(self, audio: Audio, rng: np.random.Generator) -> Audio:
        rate = audio.sample_rate
        played = resample(audio.samples, rate, max(1, round(rate / self.factor)))
        return Audio(_fit(played, audio.frames), rate)

    def __str__(self) -> str:
        return f"speed@{self.factor:g}"


def time_stretch(x: np.ndarray, ratio: float, n_fft: int = 1024) -> np.ndarray:
    """``x`` made ``ratio`` times as long with its pitch kept (a phase vocoder)."""
    from scipy.signal import istft, stft

    hop = n_fft // 4
    _, _, spec = stft(x, nperseg=n_fft, noverlap=n_fft - hop, boundary="zeros", padded=True)
    steps = np.arange(0, spec.shape[1] - 1, 1 / ratio)
    advance = np.linspace(0, np.pi * hop, spec.shape[0])
    spec = np.concatenate([spec, np.zeros((spec.shape[0], 1))], axis=1)
    index = steps.astype(int)
    frac = steps - index
    left, right = spec[:, index], spec[:, index + 1]
    magnitude = (1 - frac) * np.abs(left) + frac * np.abs(right)
    delta = np.angle(right) - np.angle(left) - advance[:, None]
    step_phase = advance[:, None] + delta - 2 * np.pi * np.round(delta / (2 * np.pi))
    # Each output frame's phase: the first frame's, plus every advance before it.
    phase = np.angle(spec[:, :1]) + np.cumsum(step_phase, axis=1) - step_phase
    out = magnitude * np.exp(1j * phase)
    _, y = istft(out, nperseg=n_fft, noverlap=n_fft - hop, boundary=True)
    return y


@dataclass(frozen=True)
class Pitch:
    """Pitch moved by ``semitones`` with the duration kept (phase-vocoder stretch, then
    resampling back to the clip's length)."""

    semitones: float

    def apply(self, audio: Audio, rng: np.random.Generator) -> Audio:
        x = audio.samples.astype(np.float64)
        if x.shape[0] < 2048 or self.semitones == 0:
            return audio
        factor = 2 ** (self.semitones / 12)
        stretched = time_stretch(x, factor)
        rate = audio.sample_rate
        back = resample(stretched.astype(np.float32), max(1, round(rate * factor)), rate)
        out = _fit(back, audio.frames).astype(np.float64)
        return Audio(_keep_level(x, out, rate).astype(np.float32), rate)

    def __str__(self) -> str:
        return f"pitch@{self.semitones:g}st"  # "+" joins steps: never written


Step = (
    Noise
    | Gain
    | Clip
    | Band
    | G711
    | Opus
    | Amr
    | Loss
    | Jitter
    | Reverb
    | RirFile
    | Speed
    | Pitch
)


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
    "noise": "noise:white|pink|brown|babble@<SNR>dB[,on=speech|whole] | "
    "noise:dir@<SNR>dB,path=<folder of WAVs>",
    "gain": "gain@<dB>dB",
    "clip": "clip@<dBFS>dB",
    "band": "band@<low>-<high>Hz | band:telephone | band:wideband",
    "codec": "codec:mulaw | codec:alaw | codec:opus@<kbit/s>k | codec:amrnb@<4.75-12.2>k",
    "loss": "loss:<percent>%[,burst=<frames>][,conceal=zeros|repeat]",
    "jitter": "jitter@<mean>ms[,buffer=<ms>ms][,conceal=zeros|repeat]",
    "reverb": "reverb@<RT60>s | reverb:file,path=<RIR WAV>",
    "speed": "speed@<factor 0.5-2>",
    "pitch": "pitch@<semitones -12..12>st",
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
        folder = take("path")
        if (variant == "dir") != (folder is not None):
            raise _error(part, "path= goes with noise:dir (and only there)", usage)
        if folder is not None:
            folder = str(Path(folder).expanduser().resolve())
            if not Path(folder).is_dir():
                raise _error(part, f"no folder {folder}", usage)
        step = Noise(variant, _number(need_value(), "dB", part, usage), on, folder)
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
        elif variant == "amrnb":
            text = need_value().strip().lower()
            scale = 1000 if text.endswith("k") else 1
            bitrate = round(_number(text.removesuffix("k"), "", part, usage) * scale)
            if bitrate not in AMR_MODES:
                raise _error(part, "AMR-NB bitrate not one of its modes", usage)
            step = Amr(bitrate)
        elif variant in ("gsm", "gsm_ms"):
            raise _error(
                part, "PyAV's bundled ffmpeg decodes GSM but has no GSM encoder (no libgsm)",
                "codec:amrnb@12.2k for a narrowband mobile codec",
            )  # fmt: skip
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
    elif kind == "jitter":
        no_variant()
        mean = _number(need_value(), "ms", part, usage)
        buffer_text = take("buffer")
        buffer = 3 * mean if buffer_text is None else _number(buffer_text, "ms", part, usage)
        if not 0 <= mean <= 1000 or buffer < 0:
            raise _error(part, "jitter outside 0-1000 ms", usage)
        conceal = take("conceal") or "zeros"
        if conceal not in Loss.CONCEALMENTS:
            raise _error(part, f"bad conceal={conceal}", usage)
        step = Jitter(mean, buffer, conceal)
    elif kind == "speed":
        no_variant()
        factor = _number(need_value(), "x", part, usage)
        if not 0.5 <= factor <= 2:
            raise _error(part, "speed outside 0.5-2", usage)
        step = Speed(factor)
    elif kind == "pitch":
        no_variant()
        semitones = _number(need_value(), "st", part, usage)
        if not -12 <= semitones <= 12:
            raise _error(part, "pitch outside -12..12 semitones", usage)
        step = Pitch(semitones)
    elif variant == "file":  # reverb from a file
        rir = take("path")
        if rir is None or value is not None:
            raise _error(part, "reverb:file needs path=<RIR WAV> and no @value", usage)
        rir = str(Path(rir).expanduser().resolve())
        if not Path(rir).is_file():
            raise _error(part, f"no file {rir}", usage)
        step = RirFile(rir)
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
