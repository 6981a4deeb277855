"""Local text-to-speech with eSpeak NG, driven through ctypes.

The shared library and its voice data come from the ``espeakng-loader`` package, so nothing
is downloaded. eSpeak keeps global state (one voice, one callback, one output buffer per
process), so every synthesis holds one process-wide lock.

eSpeak also carries pitch and timing state from one utterance into the next in static
variables that no API resets (``espeak_Terminate`` + ``espeak_Initialize`` keep them): the
same text spoken after another one differs by a few hundred samples, so a recording, and what
Whisper hears in it, depended on what the process had spoken before (55,768 / 55,570 / 56,044
samples for one sentence in three demo runs). Each synthesis therefore runs on a freshly
loaded library (``dlopen`` → synthesize → ``dlclose``, which drops those statics with the
library): a text's audio is a function of the text, the voice and its settings alone, the
same in every process and in any order, for ~5 ms of loading per utterance. An LRU of the last
``SPOKEN_CACHE_SIZE`` renderings saves that work for texts spoken again.
"""

from __future__ import annotations

import _ctypes
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
    """One load of the library, initialised, and the buffer its callback fills.

    ``unload`` releases it; the next ``_Library()`` starts from the library's initial state."""

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
        lib.espeak_Terminate.restype = ctypes.c_int
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

    def unload(self) -> None:
        """Terminate eSpeak and unload the library, its static state with it."""
        self.lib.espeak_Terminate()
        handle = self.lib._handle
        del self.lib  # no function pointer into the old mapping outlives it
        _unload_library(handle)

    def list_voices(self) -> dict[str, str]:
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


def _unload_library(handle: int) -> None:
    """Drop this process's reference to a shared library (the last one unloads it)."""
    if hasattr(_ctypes, "dlclose"):
        _ctypes.dlclose(handle)
    else:  # Windows
        _ctypes.FreeLibrary(handle)  # type: ignore[attr-defined]


_lock = threading.Lock()
_facts: tuple[int, dict[str, str]] | None = None
"""The library's sample rate and voice table, read at its first load."""
SPOKEN_CACHE_SIZE = 256
_spoken: OrderedDict[tuple[str, str, int, int, int], np.ndarray] = OrderedDict()
"""(text, voice, rate, pitch, word gap) → its int16 samples."""


def _library_facts() -> tuple[int, dict[str, str]]:
    """Sample rate and voice table (the caller holds the lock)."""
    global _facts
    if _facts is None:
        lib = _Library()
        try:
            _facts = (lib.sample_rate, lib.list_voices())
        finally:
            lib.unload()
    return _facts


def espeak_sample_rate() -> int:
    """The rate eSpeak NG synthesises at (22050 Hz)."""
    with _lock:
        return _library_facts()[0]


def espeak_voices() -> list[str]:
    """Language codes, identifiers and names eSpeak NG accepts as a voice."""
    with _lock:
        return sorted(_library_facts()[1])


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
        rate, voices = _library_facts()
        pcm = _spoken.get(key)
        if pcm is None:
            lib = _Library()  # fresh: no state from an earlier utterance
            try:
                name = voices.get(voice.lower(), voice)
                pcm = _synthesize(lib, text, voice, name, rate_wpm, pitch, word_gap_ms)
            finally:
                lib.unload()
            _spoken[key] = pcm
            if len(_spoken) > SPOKEN_CACHE_SIZE:
                _spoken.popitem(last=False)
        else:
            _spoken.move_to_end(key)
    return Audio(pcm.astype(np.float32) / 32768.0, rate)


def _synthesize(
    lib: _Library, text: str, voice: str, name: str, rate_wpm: int, pitch: int, word_gap_ms: int
) -> np.ndarray:
    """One synthesis of ``text`` in voice ``name`` (``voice`` as the user gave it) by the
    library (the caller holds the lock); int16 samples."""
    encoded = text.encode("utf-8")
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
        """Speak ``text`` with this engine's voice, or ``voice`` when given: a voice name, or
        ``name@wpm`` for that voice at its own speaking rate (``en-gb-scotland@140``: another
        accent and pace for the simulated user)."""
        name, rate = voice_and_rate(voice or self.voice, self.rate_wpm)
        return espeak_synthesize(text, name, rate, self.pitch, self.word_gap_ms)


def voice_and_rate(voice: str, default_wpm: int) -> tuple[str, int]:
    """``en-us@150`` → (``en-us``, 150); a voice without ``@`` speaks at ``default_wpm``."""
    name, at, wpm = voice.partition("@")
    if not at:
        return voice, default_wpm
    try:
        rate = int(wpm.strip().lower().removesuffix("wpm"))
    except ValueError:
        rate = 0
    if not 80 <= rate <= 450:
        raise ConfigError(
            f"bad speaking rate {wpm!r} in voice {voice!r}",
            field="voice",
            expected="VOICE or VOICE@WPM with 80-450 words per minute, e.g. en-gb-scotland@140",
        )
    return name, rate
