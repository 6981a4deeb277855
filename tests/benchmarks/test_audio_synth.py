"""Benchmark audio: synthesized once, cached, re-made only for what changed."""

from __future__ import annotations

import asyncio
import json
import shutil

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from voxbench.audio.wav import Audio, read_wav, write_wav
from voxbench.benchmarks.audio import (
    default_audio_dir,
    ensure_benchmark_audio,
    synthesize_benchmark_audio,
    turn_filename,
)
from voxbench.benchmarks.loader import BUILTIN_DIR, load_benchmark
from voxbench.cli.main import app
from voxbench.core.benchmark import Benchmark
from voxbench.providers.openai_speech import OpenAISpeech
from voxbench.testing import FakeOpenAIServer, ListScript


class CountingTTS:
    """A fast stand-in engine: a tone whose length follows the text; counts what it spoke."""

    sample_rate = 22050

    def __init__(self, name: str = "fake/tone", voice: str = "plain") -> None:
        self.name = name
        self.voice = voice
        self.spoken: list[tuple[str, str | None]] = []

    def synthesize(self, text: str, voice: str | None = None) -> Audio:
        self.spoken.append((text, voice))
        t = np.arange(int(0.02 * len(text) * self.sample_rate)) / self.sample_rate
        return Audio((0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32), self.sample_rate)


@pytest.fixture
def smoke() -> Benchmark:
    return load_benchmark("smoke")


@pytest.fixture(autouse=True)
def _cache_in_tmp(tmp_path, monkeypatch):
    monkeypatch.setenv("VOXBENCH_CACHE_DIR", str(tmp_path / "cache"))


def with_text(benchmark: Benchmark, turn_id: str, text: str) -> Benchmark:
    turns = tuple(
        t.model_copy(update={"text": text}) if t.id == turn_id else t for t in benchmark.turns
    )
    return benchmark.model_copy(update={"turns": turns})


def test_writes_24k_mono_wavs_and_a_manifest(smoke, tmp_path):
    tts = CountingTTS()
    report = synthesize_benchmark_audio(smoke, tts, out_dir=tmp_path / "out")
    assert report.synthesized == [t.id for t in smoke.turns]
    for turn in smoke.turns:
        path = tmp_path / "out" / f"turn_{turn.id}.wav"
        assert report.paths[turn.id] == path
        audio = read_wav(path)
        assert (audio.sample_rate, audio.channels) == (24000, 1)
        assert audio.duration == pytest.approx(0.02 * len(turn.text), abs=0.01)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["engine"] == "fake/tone"
    assert manifest["voice"] == "plain"
    entry = manifest["turns"]["0"]
    assert entry["file"] == "turn_0.wav"
    assert entry["engine"] == "fake/tone" and entry["voice"] == "plain"
    assert len(entry["text_sha256"]) == 64


def test_second_pass_reuses_and_only_changed_turns_are_redone(smoke, tmp_path):
    out = tmp_path / "out"
    synthesize_benchmark_audio(smoke, CountingTTS(), out_dir=out)
    before = {p.name: p.stat().st_mtime_ns for p in out.glob("turn_*.wav")}

    again = CountingTTS()
    report = synthesize_benchmark_audio(smoke, again, out_dir=out)
    assert again.spoken == [] and report.synthesized == []
    assert len(report.reused) == len(smoke.turns)

    edited = with_text(smoke, "3", "How much would three student tickets cost?")
    third = CountingTTS()
    report = synthesize_benchmark_audio(edited, third, out_dir=out)
    assert third.spoken == [("How much would three student tickets cost?", "plain")]
    assert report.synthesized == ["3"]
    after = {p.name: p.stat().st_mtime_ns for p in out.glob("turn_*.wav")}
    assert {n for n in after if after[n] != before[n]} == {"turn_3.wav"}


def test_voice_or_engine_change_and_missing_files_trigger_synthesis(smoke, tmp_path):
    out = tmp_path / "out"
    synthesize_benchmark_audio(smoke, CountingTTS(), out_dir=out)
    other_voice = CountingTTS(voice="bright")
    assert len(synthesize_benchmark_audio(smoke, other_voice, out_dir=out).synthesized) == 10
    other_engine = CountingTTS(name="fake/other", voice="bright")
    assert len(synthesize_benchmark_audio(smoke, other_engine, out_dir=out).synthesized) == 10
    (out / "turn_5.wav").unlink()
    assert synthesize_benchmark_audio(smoke, other_engine, out_dir=out).synthesized == ["5"]
    (out / "manifest.json").write_text("{ not json")
    assert len(synthesize_benchmark_audio(smoke, other_engine, out_dir=out).synthesized) == 10
    assert (
        len(synthesize_benchmark_audio(smoke, other_engine, out_dir=out, force=True).synthesized)
        == 10
    )


def test_turns_that_left_the_benchmark_are_pruned(smoke, tmp_path):
    out = tmp_path / "out"
    synthesize_benchmark_audio(smoke, CountingTTS(), out_dir=out)
    shorter = smoke.model_copy(update={"turns": smoke.turns[:8]})
    report = synthesize_benchmark_audio(shorter, CountingTTS(), out_dir=out)
    assert report.removed == ["8", "9"]
    assert not (out / "turn_9.wav").exists()
    assert set(json.loads((out / "manifest.json").read_text())["turns"]) == {
        str(i) for i in range(8)
    }


def test_default_directory_is_the_cache(smoke, tmp_path):
    path = default_audio_dir(smoke, "local/espeak")
    assert path == tmp_path / "cache" / "audio" / "smoke" / "local_espeak-en-us"
    assert default_audio_dir(smoke, "openai/tts-1", "nova").name == "openai_tts-1-nova"
    assert turn_filename("12") == "turn_12.wav"
    assert turn_filename("a/b") != turn_filename("a_b")


def test_ensure_prefers_shipped_audio_and_caches_the_rest(tmp_path):
    root = tmp_path / "bench"
    shutil.copytree(BUILTIN_DIR / "smoke", root)
    write_wav(root / "audio" / "hello.wav", Audio.silence(0.5, 16000))
    turns_file = root / "turns.yaml"
    data = yaml.safe_load(turns_file.read_text())
    data["turns"][0]["audio"] = "audio/hello.wav"
    turns_file.write_text(yaml.safe_dump(data, sort_keys=False))
    benchmark = load_benchmark(root)

    paths = ensure_benchmark_audio(benchmark)
    assert list(paths) == [t.id for t in benchmark.turns]
    assert paths["0"] == root / "audio" / "hello.wav"
    cache = default_audio_dir(benchmark, "local/espeak")
    assert paths["1"] == cache / "turn_1.wav"
    assert read_wav(paths["1"]).sample_rate == 24000
    assert not (cache / "turn_0.wav").exists()
    stamp = paths["1"].stat().st_mtime_ns
    assert ensure_benchmark_audio(benchmark) == paths
    assert paths["1"].stat().st_mtime_ns == stamp  # cached, not redone


def test_openai_tts_pass_then_a_complete_cache_needs_no_key(smoke, tmp_path, monkeypatch):
    out = tmp_path / "out"
    two_turns = smoke.model_copy(update={"turns": smoke.turns[:2]})

    async def first_pass() -> list[str]:
        async with FakeOpenAIServer(
            ListScript([]), api_key="sk-fake-abcdefghij0123456789"
        ) as server:
            tts = OpenAISpeech(base_url=server.url, api_key="sk-fake-abcdefghij0123456789")
            report = await asyncio.to_thread(synthesize_benchmark_audio, two_turns, tts, None, out)
            return report.synthesized

    assert asyncio.run(first_pass()) == ["0", "1"]
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    report = synthesize_benchmark_audio(two_turns, "openai/tts-1", out_dir=out)
    assert report.reused == ["0", "1"]
    assert read_wav(out / "turn_0.wav").sample_rate == 24000


def test_cli_synthesizes_with_espeak_then_reuses(tmp_path):
    runner = CliRunner()
    out = tmp_path / "espeak"
    first = runner.invoke(app, ["synth", "smoke", "--tts", "local/espeak", "--out", str(out)])
    assert first.exit_code == 0, first.output
    assert "10 synthesized, 0 reused" in first.output
    second = runner.invoke(app, ["synth", "smoke", "--out", str(out), "--voice", "en-us"])
    assert "0 synthesized, 10 reused" in second.output
    assert read_wav(out / "turn_9.wav").duration > 1.0
    bad = runner.invoke(
        app, ["synth", "smoke", "--tts", "acme/voice", "--out", str(tmp_path / "x")]
    )
    assert bad.exit_code != 0
    assert "unknown TTS provider" in str(bad.exception)


def test_a_failed_pass_keeps_the_turns_already_written(smoke, tmp_path):
    class Failing(CountingTTS):
        def synthesize(self, text: str, voice: str | None = None) -> Audio:
            if len(self.spoken) == 3:
                raise RuntimeError("engine died")
            return super().synthesize(text, voice)

    out = tmp_path / "out"
    with pytest.raises(RuntimeError):
        synthesize_benchmark_audio(smoke, Failing(), out_dir=out)
    # The three turns written before the failure are recorded and reused next time.
    retry = CountingTTS()
    report = synthesize_benchmark_audio(smoke, retry, out_dir=out)
    assert report.reused == ["0", "1", "2"]
    assert [text for text, _ in retry.spoken] == [t.text for t in smoke.turns[3:]]
