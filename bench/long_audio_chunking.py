"""Cost of cutting long clips in silences: ``prepare_clip`` with ``policy: chunk``.

Builds N minutes of eSpeak speech with 0.3–2 s pauses (``vad_throughput.ten_minutes``) at
24 kHz and times preparing it as a task sends it (resample to 16 kHz, cut, WAV, hash) with
silence cuts (``silence_window: 0.3``: one Silero VAD pass over the clip) and with hard cuts
only (``silence_window: 0``). Prints seconds, × real time, and the chunks' cuts and lengths.

    python bench/long_audio_chunking.py [--minutes 10] [--max-seconds 30] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

from vad_throughput import ten_minutes

from voxbench.audio.vad import detect_speech
from voxbench.audio.wav import Audio
from voxbench.tasks.engine.prepare import Cut, prepare_clip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--max-seconds", type=float, default=30.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    audio = ten_minutes(args.minutes)
    detect_speech(Audio.silence(1.0, 16_000))  # load the model
    for window in (0.3, 0.0):
        cut = Cut(16_000, "chunk", args.max_seconds, 2.0, window)
        times = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            prepared, _ = prepare_clip(audio, cut)
            times.append(time.perf_counter() - started)
        best = min(times)
        kinds = Counter(p.cut for p in prepared.pieces)
        lengths = [p.end - p.start for p in prepared.pieces[:-1]]
        print(
            f"silence_window {window}: {best:.2f} s for {audio.duration / 60:.1f} min "
            f"({audio.duration / best:.0f}x real time); {len(prepared.pieces)} chunks, "
            f"cuts {dict(kinds)}, mean length {sum(lengths) / max(1, len(lengths)):.1f} s"
        )


if __name__ == "__main__":
    main()
