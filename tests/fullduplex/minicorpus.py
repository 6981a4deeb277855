"""A tiny Full-Duplex-Bench corpus made here: eSpeak speech (tones without eSpeak) plus the
annotation files, one sample per subset of v1.0 and v1.5, and scripted model outputs."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from voxbench.audio.wav import Audio, write_wav

RATE = 16_000


@dataclass
class Track:
    """A mono buffer being laid out, with the spans and words placed on it."""

    duration: float
    rate: int = RATE
    samples: np.ndarray = field(init=False)
    words: list[tuple[str, float, float]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.samples = np.zeros(round(self.duration * self.rate), np.float32)

    def say(self, text: str, at: float, gain: float = 1.0) -> tuple[float, float]:
        """Speak ``text`` starting at ``at`` s; returns the span of its audible part."""
        audio = speak(text).resampled(self.rate)
        data = audio.samples * gain
        loud = np.nonzero(np.abs(data) > 0.01)[0]
        lead, tail = (loud[0], loud[-1] + 1) if len(loud) else (0, len(data))
        data = data[lead:tail]
        first = round(at * self.rate)
        take = min(len(data), len(self.samples) - first)
        self.samples[first : first + take] += data[:take]
        start, end = at, at + len(data) / self.rate
        tokens = text.split()
        step = (end - start) / len(tokens)
        for i, tok in enumerate(tokens):
            self.words.append((tok, round(start + i * step, 3), round(start + (i + 1) * step, 3)))
        return round(start, 3), round(end, 3)

    def audio(self) -> Audio:
        return Audio(np.clip(self.samples, -1, 1), self.rate)


_TTS = None


def speak(text: str) -> Audio:
    """eSpeak NG speech of ``text``; a word-paced tone pattern when eSpeak is missing."""
    global _TTS
    if _TTS is None:
        try:
            from voxbench.providers.speech import get_tts

            _TTS = get_tts("local/espeak")
            _TTS.synthesize("test")
        except Exception:  # no eSpeak: tones still exercise timing and file handling
            _TTS = False
    if _TTS:
        return _TTS.synthesize(text)
    n = len(text.split())
    t = np.arange(int(0.35 * RATE)) / RATE
    burst = 0.3 * np.sin(2 * np.pi * 180 * t)
    gap = np.zeros(int(0.05 * RATE))
    return Audio(np.concatenate([np.concatenate([burst, gap]) for _ in range(n)]), RATE)


def _json(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2), encoding="utf-8")


def _sample(root: Path, rel: str, track: Track, rate: int = RATE) -> Path:
    folder = root / rel
    folder.mkdir(parents=True, exist_ok=True)
    write_wav(folder / "input.wav", track.audio().resampled(rate))
    return folder


def _transcription(folder: Path, track: Track) -> None:
    items = [{"text": w, "timestamp": [s, e]} for w, s, e in track.words]
    _json(folder / "transcription.json", [{"speaker": 1, "item": items}])


def build_corpus(root: Path) -> dict[str, dict[str, float]]:
    """Write the corpus under ``root`` (``v1_0/`` and ``v1_5/``); returns key times per sample."""
    times: dict[str, dict[str, float]] = {}
    v1 = root / "v1_0"
    for subset, rate in (("synthetic_pause_handling", RATE), ("candor_pause_handling", 48_000)):
        t = Track(8.0)
        _, a_end = t.say("I think that I would like to", 0.3)
        b_start, _ = t.say("visit my grandmother", a_end + 1.6)
        folder = _sample(v1, f"{subset}/1", t, rate)
        _json(folder / "pause.json", [{"text": "[PAUSE]", "timestamp": [a_end, b_start]}])
        _transcription(folder, t)
        times[f"v1_0/{subset}/1"] = {"pause_start": a_end, "pause_end": b_start}

    t = Track(7.0)
    _, end = t.say("What is your favourite colour?", 0.3)
    folder = _sample(v1, "candor_turn_taking/1", t)
    _json(folder / "turn_taking.json", [{"text": "[TURN-TAKING]", "timestamp": [end, end + 0.4]}])
    _transcription(folder, t)
    times["v1_0/candor_turn_taking/1"] = {"turn_end": end}

    t = Track(12.0)
    context = "Tell me about famous books."
    interrupt = "Actually, what about movies?"
    _, c_end = t.say(context, 0.3)
    i_start, i_end = t.say(interrupt, c_end + 2.5)
    folder = _sample(v1, "synthetic_user_interruption/1", t)
    _json(
        folder / "interrupt.json",
        [{"context": context, "interrupt": interrupt, "timestamp": [i_start, i_end]}],
    )
    times["v1_0/synthetic_user_interruption/1"] = {
        "context_end": c_end,
        "interrupt_start": i_start,
        "interrupt_end": i_end,
    }

    t = Track(7.0)
    _, e1 = t.say("So yesterday I went to the market.", 0.2)
    _, e2 = t.say("It was very crowded.", e1 + 0.6)
    t.say("I bought some apples.", e2 + 0.6)
    folder = _sample(v1, "icc_backchannel/0", t)
    _transcription(folder, t)
    bins = int(7.0 / 0.2) + 1
    counts = np.full(bins, 1e-10)
    for end in (e1, e2):
        counts[int(end / 0.2) : int(end / 0.2) + 3] += 5
    _json(v1 / "icc_gt_distribution.json", {"0": list(counts / counts.sum())})
    times["v1_0/icc_backchannel/0"] = {"pause1": e1, "pause2": e2}

    overlaps = {
        "user_interruption": ("Wait, tell me about dragons instead.", 1.0),
        "user_backchannel": ("uh huh", 1.0),
        "talking_to_other": ("Honey, can you close the door?", 1.0),
        "background_speech": ("The bus is late again today.", 0.4),
    }
    for subset, (overlap, gain) in overlaps.items():
        t, clean = Track(11.0), Track(11.0)
        question = "Can you tell me a short story?"
        _, q_end = t.say(question, 0.3)
        clean.say(question, 0.3)
        ov_start, ov_end = t.say(overlap, q_end + 2.2, gain)
        folder = _sample(root / "v1_5", f"{subset}/1", t)
        write_wav(folder / "clean_input.wav", clean.audio())
        _json(
            folder / "metadata.json",
            {
                "context_text": "",
                "current_turn_text": question,
                "timestamps": [ov_start, ov_end],
            },
        )
        times[f"v1_5/{subset}/1"] = {"question_end": q_end, "ov_start": ov_start, "ov_end": ov_end}
    return times


def _output(folder: Path, track: Track, rate: int = RATE, *, name: str = "output") -> None:
    write_wav(folder / f"{name}.wav", track.audio().resampled(rate))
    chunks = [{"text": w, "timestamp": [s, e]} for w, s, e in track.words]
    _json(
        folder / f"{name}.json", {"text": " ".join(w for w, _, _ in track.words), "chunks": chunks}
    )


def write_outputs(root: Path, times: dict[str, dict[str, float]]) -> None:
    """A scripted model's outputs (wav + ASR json) for every sample of ``build_corpus``."""
    for subset in ("synthetic_pause_handling", "candor_pause_handling"):
        key = f"v1_0/{subset}/1"
        t = Track(8.0)
        t.say("Sure, go on, I am listening", times[key]["pause_start"] + 0.4)
        _output(root / key, t, 48_000 if subset.startswith("candor") else RATE)

    key = "v1_0/candor_turn_taking/1"
    t = Track(7.0)
    t.say("My favourite colour is blue like the sea", times[key]["turn_end"] + 0.6)
    _output(root / key, t)

    key = "v1_0/synthetic_user_interruption/1"
    k = times[key]
    t = Track(12.0)
    t.say("Pride and Prejudice is a famous novel about love", k["context_end"] + 0.5)
    t.say("Movies are great, I like comedies a lot", k["interrupt_end"] + 0.7)
    _output(root / key, t)
    # The public ASR step keeps only what follows the interrupt in output.json.
    data = json.loads((root / key / "output.json").read_text())
    data["chunks"] = [c for c in data["chunks"] if c["timestamp"][0] >= k["interrupt_end"]]
    (root / key / "output.json").write_text(json.dumps(data))

    key = "v1_0/icc_backchannel/0"
    t = Track(7.0)
    t.say("yeah", times[key]["pause1"] + 0.1)
    t.say("mm hmm", times[key]["pause2"] + 0.1)
    _output(root / key, t, 24_000)

    for subset in (
        "user_interruption",
        "user_backchannel",
        "talking_to_other",
        "background_speech",
    ):
        key = f"v1_5/{subset}/1"
        k = times[key]
        t, clean = Track(11.0), Track(11.0)
        story = "Once upon a time a little fox lived in a quiet forest near the river"
        t.say(story, k["question_end"] + 0.5)
        clean.say(story, k["question_end"] + 0.5)
        stop = k["ov_start"] + 0.4
        t.samples[round(stop * RATE) :] = 0.0
        t.words = [w for w in t.words if w[1] < stop]
        t.say("Dragons breathe fire", k["ov_end"] + 0.6)
        _output(root / key, t)
        _output(root / key, clean, name="clean_output")
