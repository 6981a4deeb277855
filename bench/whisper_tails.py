"""Local Whisper on clips that end in silence: words invented in the tail, WER and speed.

faster-whisper re-decodes the tail of a clip after the last word when word timestamps are
on, and tiny.en invents words there ("thank you", "and"); its temperature fallback then
retries doubtful windows by random sampling, several decodes per clip. This speaks the
user turns and the golden agent answers of ``conference`` with eSpeak NG, adds trailing
silence (1 s, 8 s, 20 s: an FDB output.wav is mostly silence), and transcribes each clip
two ways:

- before: faster-whisper's defaults as voxbench used them (temperature fallback
  0.0…1.0, every word kept);
- after: temperature 0 only (a repetition loop decoded again, still at temperature 0,
  forbidding repeated 4-grams) and words that start after the last VAD speech dropped.

It prints, per setting: normalised WER, words that start after the speech ended, the
slowest clip and the total decoding time (clips alternate between the settings so load
slows both alike; figures depend on the machine, nothing is asserted).

Usage: python bench/whisper_tails.py [--turns N]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field

import numpy as np

from voxbench.audio.espeak import espeak_synthesize
from voxbench.audio.vad import detect_speech
from voxbench.audio.wav import Audio
from voxbench.audio.wer import word_error_rate
from voxbench.audio.whisper_local import WHISPER_RATE, LocalWhisperASR
from voxbench.benchmarks.loader import load_benchmark

TAILS = (1.0, 8.0, 20.0)
LEAD = 0.3
FALLBACK = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)


def clips(turns: int) -> list[tuple[str, Audio, float]]:
    """(reference, clip, where its speech ends) for the first ``turns`` turns: what the user
    said and what the agent should answer."""
    out = []
    texts = []
    for turn in load_benchmark("conference").turns[:turns]:
        texts += [turn.text] + ([turn.golden_text] if turn.golden_text else [])
    for text in texts:
        speech = espeak_synthesize(text)
        rate = speech.sample_rate
        voiced = detect_speech(speech.resampled(WHISPER_RATE))
        spoken_until = LEAD + (voiced[-1].end if voiced else speech.duration)
        for tail in TAILS:
            samples = np.concatenate(
                [np.zeros(round(LEAD * rate), np.float32), speech.samples]
                + [np.zeros(round(tail * rate), np.float32)]
            )
            out.append((text, Audio(samples, rate), spoken_until))
    return out


@dataclass
class Tally:
    """What one setting heard over all clips."""

    hypotheses: list[str] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    invented: int = 0

    def line(self, name: str, references: list[str]) -> str:
        median = float(np.median(self.seconds))
        slowest = max(self.seconds)
        return (
            f"{name:7s} WER {word_error_rate(references, self.hypotheses):6.2%}  "
            f"words in the tail {self.invented:3d}  decode total {sum(self.seconds):6.1f} s  "
            f"median {median * 1000:5.0f} ms  slowest {slowest * 1000:5.0f} ms "
            f"({slowest / median:.1f}x median)"
        )


def transcribe(asr: LocalWhisperASR, audio: Audio, spoken_until: float, tally: Tally) -> None:
    began = time.perf_counter()
    result = asr.transcribe(audio)
    tally.seconds.append(time.perf_counter() - began)
    tally.invented += sum(w.start > spoken_until + 0.1 for w in result.words)
    tally.hypotheses.append(result.text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=15, help="conference turns to speak")
    args = parser.parse_args()
    data = clips(args.turns)
    print(f"{len(data)} clips: {args.turns} turns (user + agent) x trailing silence {TAILS} s")
    before = LocalWhisperASR(temperature=FALLBACK, drop_after_speech=False)
    after = LocalWhisperASR()
    after.transcribe(data[0][1])  # load the model outside the timings
    tallies = {"before": Tally(), "after": Tally()}
    for _, audio, spoken_until in data:  # alternate, so a busy host slows both alike
        transcribe(before, audio, spoken_until, tallies["before"])
        transcribe(after, audio, spoken_until, tallies["after"])
    references = [ref for ref, _, _ in data]
    for name, tally in tallies.items():
        print(tally.line(name, references))


if __name__ == "__main__":
    main()
