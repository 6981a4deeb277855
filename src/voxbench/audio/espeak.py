"""Local text-to-speech with eSpeak NG, driven through ctypes.

The shared library and its voice data come from the ``espeakng-loader`` package, so nothing
is downloaded. eSpeak keeps global state (one voice, one callback, one output buffer per
process), so every synthesis holds one process-wide lock. eSpeak also carries its pitch
and timing state from one utterance into the next (no API resets it), so speaking one text
twice gives audio that differs by a few hundred samples: a recording would then depend on
what happened to be spoken before. Each text's first rendering is therefore kept (an LRU of
the last ``SPOKEN_CACHE_SIZE`` texts per voice and setting) and returned again, so within a
process a text always sounds the same.
"""

from __future__ import annotations

import ctypes
import threading
from collections import OrderedDict
from typing import Any

import numpy as np

from voxbench.audio.wav import Audio
from voxbench.core.errors import AudioError, ConfigError, PrerequisiteError

AUDIO_OUTPUT_SYNCHRONOUS = 2
INITIALIZE_DONT_EXIT = 0x8000  # report errors instead of calling exit() inside the library
CHARS_UTF8 = 1
POS_CHARACTER = 1
PARAM_RATE, PARAM_VOLUME, PARAM_PITCH = 1, 2, 3
PARAM_WORDGAP = 7  # pause between words, in units of 10 ms
DEFAULT_VOICE = "en-us"
DEFAULT_RATE_WPM = 150  # eSpeak speaks 175 wpm by default; at 150 Whisper tiny.en halves its WER
DEFAULT_WORD_GAP_MS = 0
CLEAR_WORD_GAP_MS = 30
"""A 30 ms pause between words takes Whisper tiny.en's WER on the conference turns from 19% to
13% (bench/conference_asr_wer.py) and still sounds continuous: the simulated user speaks so."""

_SynthCallback = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.c_void_p
)


class _Voice(ctypes.Structure):
    # espeak_VOICE from speak_lib.h; ``languages`` is (priority byte, name, NUL) repeated.
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("languages", ctypes.c_char_p),
        ("identifier", ctypes.c_char_p),
        ("gender", ctypes.c_ubyte),
        ("age", ctypes.c_ubyte),
        ("variant", ctypes.c_ubyte),
        ("xx1", ctypes.c_ubyte),
        ("score", ctypes.c_int),
        ("spare", ctypes.c_void_p),
    ]


class _Library:
    """The loaded, initialised library and the buffer its callback fills."""

    def __init__(self) -> None:
        try:
            import espeakng_loader
        except ImportError as exc:
            raise PrerequisiteError(
                "local/espeak needs the espeakng-loader package: pip install espeakng-loader"
            ) from exc
        lib = ctypes.CDLL(espeakng_loader.get_library_path())
        lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        lib.espeak_Initialize.restype = ctypes.c_int
        lib.espeak_SetSynthCallback.argtypes = [_SynthCallback]
        lib.espeak_SetSynthCallback.restype = None
        lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        lib.espeak_SetVoiceByName.restype = ctypes.c_int
        lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        lib.espeak_SetParameter.restype = ctypes.c_int
        lib.espeak_Synth.argtypes = [
            ctypes.c_void_p,
            ctypes.c_size_t,
            ctypes.c_uint,
            ctypes.c_int,
            ctypes.c_uint,
            ctypes.c_uint,
            ctypes.c_void_p,
            ctypes.c_void_p,
        ]
        lib.espeak_Synth.restype = ctypes.c_int
        lib.espeak_Synchronize.restype = ctypes.c_int
        lib.espeak_ListVoices.argtypes = [ctypes.c_void_p]
        lib.espeak_ListVoices.restype = ctypes.POINTER(ctypes.POINTER(_Voice))
        data_path = espeakng_loader.get_data_path().encode()
        rate = lib.espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, data_path, INITIALIZE_DONT_EXIT)
        if rate <= 0:
            raise PrerequisiteError(f"eSpeak NG failed to initialise (code {rate})")
        self.lib = lib
        self.sample_rate = int(rate)
        self.chunks: list[np.ndarray] = []
        # Keep a reference: the library calls it long after this line.
        self._callback = _SynthCallback(self._on_audio)
        lib.espeak_SetSynthCallback(self._callback)
        self.voices = self._list_voices()

    def _list_voices(self) -> dict[str, str]:
        """Lower-cased language code, identifier and name of every voice → its name."""
        table: dict[str, str] = {}
        entries = self.lib.espeak_ListVoices(None)
        i = 0
        while entries[i]:
            voice = entries[i].contents
            name = (voice.name or b"").decode()
            language = (voice.languages or b"")[1:].decode()  # skip the priority byte
            for key in (language, (voice.identifier or b"").decode(), name):
                if key:
                    table.setdefault(key.lower(), name)
            i += 1
        return table

    def _on_audio(self, wav: Any, count: int, _events: Any) -> int:
        if wav and count > 0:
            self.chunks.append(np.ctypeslib.as_array(wav, shape=(count,)).copy())
        return 0  # 0 = go on synthesising


_lock = threading.Lock()
_library: _Library | None = None
SPOKEN_CACHE_SIZE = 256
_spoken: OrderedDict[tuple[str, str, int, int, int], np.ndarray] = OrderedDict()
"""(text, voice, rate, pitch, word gap) → the int16 samples eSpeak first gave for it."""


def _loaded() -> _Library:
    global _library
    if _library is None:
        _library = _Library()
    return _library


def espeak_sample_rate() -> int:
    """The rate eSpeak NG synthesises at (22050 Hz)."""
    with _lock:
        return _loaded().sample_rate


def espeak_voices() -> list[str]:
    """Language codes, identifiers and names eSpeak NG accepts as a voice."""
    with _lock:
        return sorted(_loaded().voices)


def espeak_synthesize(
    text: str,
    voice: str = DEFAULT_VOICE,
    rate_wpm: int = DEFAULT_RATE_WPM,
    pitch: int = 50,
    word_gap_ms: int = DEFAULT_WORD_GAP_MS,
) -> Audio:
    """Speak ``text`` with eSpeak NG; mono float32 audio at the library's rate."""
    if not text.strip():
        raise AudioError("cannot synthesize empty text")
    key = (text, voice.lower(), int(rate_wpm), int(pitch), int(word_gap_ms))
    with _lock:
        lib = _loaded()
        pcm = _spoken.get(key)
        if pcm is None:
            pcm = _synthesize(lib, text, voice, rate_wpm, pitch, word_gap_ms)
            _spoken[key] = pcm
            if len(_spoken) > SPOKEN_CACHE_SIZE:
                _spoken.popitem(last=False)
        else:
            _spoken.move_to_end(key)
        rate = lib.sample_rate
    return Audio(pcm.astype(np.float32) / 32768.0, rate)


def _synthesize(
    lib: _Library, text: str, voice: str, rate_wpm: int, pitch: int, word_gap_ms: int
) -> np.ndarray:
    """One synthesis by the library (the caller holds the lock); int16 samples."""
    encoded = text.encode("utf-8")
    name = lib.voices.get(voice.lower(), voice)
    if lib.lib.espeak_SetVoiceByName(name.encode()) != 0:
        raise ConfigError(
            f"unknown eSpeak NG voice {voice!r}",
            field="voice",
            expected="a language code or voice name such as en-us, en-gb, en-gb-scotland, fr",
        )
    lib.lib.espeak_SetParameter(PARAM_RATE, int(rate_wpm), 0)
    lib.lib.espeak_SetParameter(PARAM_PITCH, int(pitch), 0)
    lib.lib.espeak_SetParameter(PARAM_WORDGAP, max(0, round(word_gap_ms / 10)), 0)
    lib.chunks = []
    buf = ctypes.create_string_buffer(encoded)
    status = lib.lib.espeak_Synth(
        buf, len(encoded) + 1, 0, POS_CHARACTER, 0, CHARS_UTF8, None, None
    )
    lib.lib.espeak_Synchronize()
    chunks, lib.chunks = lib.chunks, []
    if status != 0:
        raise AudioError(f"eSpeak NG failed to synthesize (code {status})")
    return np.concatenate(chunks) if chunks else np.zeros(0, np.int16)


class EspeakTTS:
    """``local/espeak``: eSpeak NG, offline, instant, robotic but intelligible."""

    def __init__(
        self,
        voice: str = DEFAULT_VOICE,
        rate_wpm: int = DEFAULT_RATE_WPM,
        pitch: int = 50,
        word_gap_ms: int = DEFAULT_WORD_GAP_MS,
    ) -> None:
        self.name = "local/espeak"
        self.voice = voice
        self.rate_wpm = rate_wpm
        self.pitch = pitch
        self.word_gap_ms = word_gap_ms
        self.sample_rate = espeak_sample_rate()

    def synthesize(self, text: str, voice: str | None = None) -> Audio:
        """Speak ``text`` with this engine's voice, or ``voice`` when given."""
        return espeak_synthesize(
            text, voice or self.voice, self.rate_wpm, self.pitch, self.word_gap_ms
        )
