"""Word error rate of local Whisper tiny.en on the eSpeak NG turns of ``conference``.

The user's side of an offline audio run is eSpeak speech; the cascade hears it through local
Whisper. This prints the normalized WER over all 75 turns (target ≤ 15%), the worst turns,
and the real-time factor.

Usage: python bench/conference_asr_wer.py
"""

from __future__ import annotations

import time

from voxbench.audio.wav import read_wav
from voxbench.audio.wer import word_error_rate
from voxbench.benchmarks.audio import ensure_benchmark_audio
from voxbench.benchmarks.loader import load_benchmark
from voxbench.providers.speech import get_asr


def main() -> None:
    bench = load_benchmark("conference")
    files = ensure_benchmark_audio(bench, tts="local/espeak")
    asr = get_asr("local/whisper-tiny.en")
    refs, hyps, per_turn = [], [], []
    audio_seconds = 0.0
    began = time.perf_counter()
    for turn in bench.turns:
        audio = read_wav(files[turn.id])
        audio_seconds += audio.duration
        text = asr.transcribe(audio).text
        refs.append(turn.text)
        hyps.append(text)
        per_turn.append((word_error_rate(turn.text, text), turn.id, turn.text, text))
    elapsed = time.perf_counter() - began
    print(
        f"turns: {len(refs)}, audio: {audio_seconds:.1f} s, ASR time: {elapsed:.1f} s "
        f"(real-time factor {elapsed / audio_seconds:.3f})"
    )
    print(f"normalized WER over all turns: {word_error_rate(refs, hyps):.2%} (target ≤ 15%)")
    for wer, turn_id, ref, hyp in sorted(per_turn, reverse=True)[:5]:
        print(f"  turn {turn_id}: {wer:.0%}\n    said:  {ref}\n    heard: {hyp}")


if __name__ == "__main__":
    main()
