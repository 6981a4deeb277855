"""Spoken audio for benchmark turns: synthesized once, cached, re-made only when stale.

Each turn becomes ``turn_<id>.wav`` (24 kHz mono PCM16) in an output directory, by default
``<cache>/audio/<benchmark id>/<engine>-<voice>/`` where ``<cache>`` is ``VOXBENCH_CACHE_DIR``
or ``~/.cache/voxbench``. ``manifest.json`` beside the files records, per turn, the hash of
the text spoken, the engine and the voice: a turn is synthesized again only when one of those
changed or its file is gone. Turns that ship their own recording (``audio:`` in turns.yaml)
use it as they are.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from voxbench.audio.tts import TTSEngine
from voxbench.audio.wav import write_wav
from voxbench.core.benchmark import Benchmark, Turn
from voxbench.core.errors import AudioError
from voxbench.providers.speech import default_voice, get_tts

SYNTH_SAMPLE_RATE = 24_000
MANIFEST = "manifest.json"
MANIFEST_VERSION = 1


@dataclass
class SynthesisReport:
    """What one synthesis pass did."""

    out_dir: Path
    paths: dict[str, Path] = field(default_factory=dict)
    synthesized: list[str] = field(default_factory=list)
    reused: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


def cache_root() -> Path:
    """voxbench's cache directory: ``VOXBENCH_CACHE_DIR`` or ``~/.cache/voxbench``."""
    configured = os.environ.get("VOXBENCH_CACHE_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "voxbench"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("._") or "_"


def default_audio_dir(benchmark: Benchmark, tts: str, voice: str | None = None) -> Path:
    """``<cache>/audio/<benchmark id>/<engine>-<voice>/`` for a TTS engine name."""
    voice = voice or default_voice(tts)
    return cache_root() / "audio" / _slug(benchmark.id) / f"{_slug(tts)}-{_slug(voice)}"


def turn_filename(turn_id: str) -> str:
    """``turn_<id>.wav``; ids that are not filename-safe get a short hash to stay distinct."""
    safe = _slug(turn_id)
    if safe != turn_id:
        safe += "-" + hashlib.sha256(turn_id.encode()).hexdigest()[:8]
    return f"turn_{safe}.wav"


def text_hash(text: str) -> str:
    """SHA-256 of the text a turn speaks."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _read_manifest(out_dir: Path) -> dict[str, Any]:
    path = out_dir / MANIFEST
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # a damaged manifest only costs a re-synthesis
    return data if isinstance(data, dict) and isinstance(data.get("turns"), dict) else {}


def _write_manifest(out_dir: Path, data: dict[str, Any]) -> None:
    fd, tmp = tempfile.mkstemp(prefix=".manifest.", suffix=".tmp", dir=out_dir)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2, sort_keys=True)
        f.write("\n")
    os.replace(tmp, out_dir / MANIFEST)


def synthesize_benchmark_audio(
    benchmark: Benchmark,
    tts: str | TTSEngine = "local/espeak",
    voice: str | None = None,
    out_dir: str | Path | None = None,
    turns: list[Turn] | None = None,
    force: bool = False,
    progress: Callable[[Turn, bool], None] | None = None,
) -> SynthesisReport:
    """Write each turn's audio and the manifest; reuse every turn whose entry is still current.

    ``tts`` is an engine name or an engine; a named engine is only built when some turn needs
    synthesis (so a complete cache needs no API key). ``progress(turn, synthesized)`` is
    called after each turn.
    """
    engine_name = tts if isinstance(tts, str) else tts.name
    voice_name = voice or (
        default_voice(tts) if isinstance(tts, str) else getattr(tts, "voice", None) or "default"
    )
    target = Path(out_dir) if out_dir else default_audio_dir(benchmark, engine_name, voice_name)
    target.mkdir(parents=True, exist_ok=True)
    old = _read_manifest(target).get("turns", {})
    manifest: dict[str, Any] = {
        "schema_version": MANIFEST_VERSION,
        "benchmark": benchmark.id,
        "benchmark_version": benchmark.version,
        "sample_rate": SYNTH_SAMPLE_RATE,
        "engine": engine_name,
        "voice": voice_name,
        "turns": {},
    }
    report = SynthesisReport(out_dir=target)
    engine: TTSEngine | None = None if isinstance(tts, str) else tts
    selected = list(benchmark.turns if turns is None else turns)
    for turn in selected:
        file = turn_filename(turn.id)
        entry = {
            "file": file,
            "text_sha256": text_hash(turn.text),
            "engine": engine_name,
            "voice": voice_name,
            "settings": _engine_settings(engine_name),
        }
        path = target / file
        previous = old.get(turn.id)
        current = (
            not force
            and isinstance(previous, dict)
            and all(previous.get(k) == v for k, v in entry.items())
            and path.is_file()
        )
        if current:
            entry["duration"] = previous.get("duration")
            report.reused.append(turn.id)
        else:
            if engine is None:
                engine = get_tts(engine_name, voice=voice_name, **_engine_settings(engine_name))
            audio = engine.synthesize(turn.text, voice_name).mono().resampled(SYNTH_SAMPLE_RATE)
            if audio.frames == 0:
                raise AudioError(f"{engine_name} produced no audio for turn {turn.id}")
            write_wav(path, audio)
            entry["duration"] = round(audio.duration, 3)
            report.synthesized.append(turn.id)
        manifest["turns"][turn.id] = entry
        report.paths[turn.id] = path
        if not current:
            # Record progress as we go: a killed pass keeps every turn already written.
            _write_manifest(target, {**manifest, "turns": {**old, **manifest["turns"]}})
        if progress is not None:
            progress(turn, not current)
    if turns is None:
        for turn_id, previous in old.items():
            if turn_id in manifest["turns"] or not isinstance(previous, dict):
                continue
            stale = target / str(previous.get("file", ""))
            if stale.name.startswith("turn_") and stale.is_file():
                stale.unlink()
            report.removed.append(turn_id)
    else:
        manifest["turns"] = {**old, **manifest["turns"]}
    _write_manifest(target, manifest)
    return report


def _engine_settings(engine_name: str) -> dict[str, Any]:
    """Settings that shape a local engine's output: passed to it, and part of the cache key."""
    if engine_name == "local/espeak":
        from voxbench.audio.espeak import CLEAR_WORD_GAP_MS, DEFAULT_RATE_WPM

        # The simulated user speaks clearly: short pauses between words.
        return {"rate_wpm": DEFAULT_RATE_WPM, "word_gap_ms": CLEAR_WORD_GAP_MS}
    return {}


def ensure_benchmark_audio(
    benchmark: Benchmark,
    tts: str | TTSEngine = "local/espeak",
    voice: str | None = None,
    out_dir: str | Path | None = None,
) -> dict[str, Path]:
    """Turn id → WAV path for every turn: its own recording if it ships one, else the cache."""
    paths: dict[str, Path] = {}
    missing: list[Turn] = []
    for turn in benchmark.turns:
        shipped = benchmark.audio_path(turn)
        if shipped is not None and shipped.is_file():
            paths[turn.id] = shipped
        else:
            missing.append(turn)
    if missing:
        report = synthesize_benchmark_audio(benchmark, tts, voice, out_dir, turns=missing)
        paths.update(report.paths)
    return {turn.id: paths[turn.id] for turn in benchmark.turns}
