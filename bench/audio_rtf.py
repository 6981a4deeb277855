"""Real-time factor of the local speech stack: Whisper tiny.en ASR (and eSpeak TTS).

Speaks every smoke-benchmark turn with eSpeak NG, transcribes it with
``local/whisper-tiny.en`` (faster-whisper, int8, CPU) and prints the model load time, the
real-time factor (processing seconds / audio seconds; below 1 is faster than real time)
and the normalised WER, beside the anchor measured in the same run on the same clips and
the same model files: raw faster-whisper (``WhisperModel.transcribe``, beam 1, its other
defaults), in a process of its own as a user runs it: ``local/whisper-tiny.en`` sets glibc's
malloc thresholds and OpenBLAS's threads for its process (``audio.native``), which would speed
raw faster-whisper too if it ran in ours (``raw, this process`` shows that as well; the
times are each engine's own, without the pipe). ``local/whisper-tiny.en`` is Whisper's reference decoding (the 30 s window, beam 5,
word times); ``-fast`` is ``local/whisper-tiny.en-fast`` (a short encoder window), timed with
word times (``transcribe``) and as the cascade's STT and the heard-text pass call it
(``transcribe_text``: no word alignment). The engines alternate clip by clip, so load slows
them alike; the ratio of their real-time factors is the figure to compare across machines. ``--benchmark smoke,conference``
adds the 75 conference turns. The first transcription is a warm-up and is not timed.

    python bench/audio_rtf.py [--repeat 2] [--threads N] [--benchmark smoke,conference]
"""

from __future__ import annotations

import argparse
import os
import time

from voxbench.audio.asr import transcribe_text
from voxbench.audio.wav import Audio
from voxbench.audio.wer import word_error_rate
from voxbench.audio.whisper_local import WHISPER_RATE
from voxbench.benchmarks.loader import load_benchmark
from voxbench.providers.speech import get_asr, get_tts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2, help="passes over the turns")
    parser.add_argument(
        "--threads",
        type=int,
        default=4,
        help="CTranslate2 CPU threads of ours (default 4, raw faster-whisper's own, so one clip "
        "at a time is compared at equal threads; 0: the engine's default, the cores shared "
        "among its concurrent transcriptions)",
    )
    parser.add_argument(
        "--benchmark", default="smoke", help="whose user turns are spoken (comma-separated)"
    )
    args = parser.parse_args()

    asr = get_asr("local/whisper-tiny.en", cpu_threads=args.threads)
    fast = get_asr("local/whisper-tiny.en-fast", cpu_threads=args.threads)
    raw = _raw_whisper(asr)
    apart = _RawProcess(asr.model_dir)
    try:
        for benchmark in args.benchmark.split(","):
            _compare(benchmark, asr, fast, raw, apart, args.repeat)
    finally:
        apart.close()


def _compare(benchmark: str, asr, fast, raw, apart, repeat: int) -> None:
    """Speak ``benchmark``'s user turns and time both engines on them, clip by clip."""
    turns = load_benchmark(benchmark).turns
    tts = get_tts("local/espeak")
    started = time.perf_counter()
    clips = [tts.synthesize(t.text) for t in turns]
    tts_seconds = time.perf_counter() - started
    audio_seconds = sum(c.duration for c in clips)

    started = time.perf_counter()
    asr.transcribe(clips[0])  # loads the models (first benchmark) and warms them up
    fast.transcribe(clips[0])
    raw(clips[0])
    apart(clips[0])
    load_seconds = time.perf_counter() - started

    engines = {
        "whisper-tiny.en": lambda c: asr.transcribe(c).text,
        "-fast, word times": lambda c: fast.transcribe(c).text,
        "-fast, text only": lambda c: transcribe_text(fast, c),
        "raw faster-whisper": apart,
        "raw, this process": raw,
    }
    timings = {name: [0.0] * repeat for name in engines}
    hypotheses: dict[str, list[str]] = {name: [] for name in timings}
    for rep in range(repeat):
        for name in timings:
            hypotheses[name] = []
        for clip in clips:  # alternate, so a busy host slows both alike
            for name, transcribe in engines.items():
                started = time.perf_counter()
                text = transcribe(clip)
                elapsed = time.perf_counter() - started
                if transcribe is apart:
                    elapsed = apart.seconds  # its own time, without the pipe
                hypotheses[name].append(text)
                timings[name][rep] += elapsed
    print(f"== {benchmark}: {len(clips)} turns, {audio_seconds:.1f} s of eSpeak speech")
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    print(f"eSpeak TTS: {tts_seconds * 1000:.0f} ms, RTF {tts_seconds / audio_seconds:.4f}")
    print(f"Whisper tiny.en (both) load or warm-up: {load_seconds:.2f} s")
    references = [t.text for t in turns]
    anchor = min(timings["raw faster-whisper"])
    for name, seconds in timings.items():
        best = min(seconds)
        wer = word_error_rate(references, hypotheses[name])
        print(
            f"{name:20s}: best {best:.2f} s of {repeat} passes, RTF {best / audio_seconds:.3f} "
            f"({best / anchor:.2f}x raw's), WER (normalised) {wer:.1%}"
        )


def _raw_whisper(asr: object):
    """Raw faster-whisper on the engine's own model files: beam 1, everything else its
    defaults (16 kHz mono in, as it needs)."""
    from faster_whisper import WhisperModel

    model = WhisperModel(
        str(asr.model_dir), device="cpu", compute_type="int8", local_files_only=True
    )

    def transcribe(clip: Audio) -> str:
        samples = clip.mono().resampled(WHISPER_RATE).samples
        segments, _ = model.transcribe(samples, language="en", beam_size=1)
        return " ".join(s.text.strip() for s in segments if s.text.strip())

    return transcribe


class _RawProcess:
    """Raw faster-whisper (``_raw_whisper``'s) in a child process of its own, spawned: no
    voxbench process settings; each call's ``seconds`` are the child's own."""

    def __init__(self, model_dir: object) -> None:
        import multiprocessing

        context = multiprocessing.get_context("spawn")
        self._conn, child = context.Pipe()
        self._process = context.Process(target=_serve_raw, args=(child, str(model_dir)))
        self._process.start()
        self.seconds = 0.0

    def __call__(self, clip: Audio) -> str:
        self._conn.send(clip.mono().resampled(WHISPER_RATE).samples)
        text, self.seconds = self._conn.recv()
        return text

    def close(self) -> None:
        self._conn.send(None)
        self._process.join(10)


def _serve_raw(conn, model_dir: str) -> None:
    from faster_whisper import WhisperModel

    model = WhisperModel(model_dir, device="cpu", compute_type="int8", local_files_only=True)
    while (samples := conn.recv()) is not None:
        started = time.perf_counter()
        segments, _ = model.transcribe(samples, language="en", beam_size=1)
        text = " ".join(s.text.strip() for s in segments if s.text.strip())
        conn.send((text, time.perf_counter() - started))


if __name__ == "__main__":
    main()
