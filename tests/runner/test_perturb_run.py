"""Perturbed conversation runs: the target hears the perturbed user audio, the recording keeps
the clean one, and the run records the spec."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.runner.scripted import ToneAgent
from voxbench.audio.wav import read_wav
from voxbench.core.errors import ConfigError
from voxbench.core.rundir import RunDirectory
from voxbench.runner.config import RunConfig, build_config
from voxbench.runner.launch import run_conversation

SPEC = "noise:white@10dB+codec:mulaw+loss:10%"


class ListeningAgent(ToneAgent):
    """Keeps every PCM byte it is sent, turn by turn."""

    def __init__(self) -> None:
        super().__init__(seconds=0.5)
        self.heard: list[bytearray] = [bytearray()]

    async def send_user_audio(self, pcm: bytes, sample_rate: int) -> None:
        await super().send_user_audio(pcm, sample_rate)
        self.heard[-1].extend(pcm)

    async def end_user_turn(self) -> None:
        self.heard.append(bytearray())
        await super().end_user_turn()


async def _run(tmp_path: Path, name: str, **kw) -> tuple[Path, ListeningAgent]:
    agent = ListeningAgent()
    config = RunConfig(
        benchmark="smoke",
        mode="audio",
        runs_dir=tmp_path / name,
        heard_asr="none",
        inter_turn_gap=0.3,
        only_turns="0-1",
        **kw,
    )
    path = await run_conversation(config, session_factory=lambda: agent)
    return path, agent


def _pcm(data: bytes) -> np.ndarray:
    return np.frombuffer(bytes(data), dtype="<i2").astype(np.float64) / 32768


async def test_the_target_hears_the_perturbed_audio_and_the_recording_keeps_the_clean(
    tmp_path: Path,
) -> None:
    clean_path, clean = await _run(tmp_path, "clean")
    path, noisy = await _run(tmp_path, "noisy", perturb=SPEC, seed=3)
    again_path, again = await _run(tmp_path, "again", perturb=SPEC, seed=3)
    turns = [t for t in clean.heard if t]
    heard = [t for t in noisy.heard if t]
    assert len(turns) == len(heard) == 2
    for clean_turn, heard_turn in zip(turns, heard, strict=True):
        assert len(heard_turn) == len(clean_turn)  # same length: same pacing and timeline
        x, y = _pcm(clean_turn), _pcm(heard_turn)
        assert not np.array_equal(x, y)
        snr = 10 * np.log10(np.sum(x**2) / np.sum((y - x) ** 2))
        assert 0 < snr < 12  # 10 dB of noise on active speech, a μ-law line, 10 % loss
    # The same seed hears the same bytes again.
    assert [bytes(t) for t in again.heard if t] == [bytes(t) for t in heard]

    # run.json records the spec (canonical) and the seed; the config keeps it for a resume.
    info = RunDirectory.open_existing(path).info()
    assert info.perturbations == SPEC and info.seed == 3
    assert info.config["perturb"] == SPEC
    assert RunDirectory.open_existing(clean_path).info().perturbations is None

    # The recording's user channel is the clean audio, identical to the clean run's.
    rec, clean_rec = read_wav(path / "conversation.wav"), read_wav(clean_path / "conversation.wav")
    assert np.array_equal(rec.samples[:, 0], clean_rec.samples[:, 0])
    # What the target heard is saved, one file a turn, at the rate it was sent.
    saved = sorted((path / "perturbed").glob("*.wav"))
    assert len(saved) == 2
    first = read_wav(saved[0])
    assert first.sample_rate == 16_000
    assert np.abs(first.samples - _pcm(heard[0])).max() <= 1 / 32768 + 1e-7
    assert not (clean_path / "perturbed").exists()
    assert again_path != path


def test_config_spells_it_once_and_refuses_text_mode(tmp_path: Path) -> None:
    config = build_config(
        {"benchmark": "smoke", "mode": "audio", "perturbations": ["noise:pink@10", "codec:ulaw"]}
    )
    assert config.perturb == "noise:pink@10dB+codec:mulaw"
    yaml_file = tmp_path / "run.yaml"
    yaml_file.write_text(
        "benchmark: smoke\nmode: audio\nperturbations:\n  - loss:5%\n  - reverb@300ms\n"
    )
    assert RunConfig.from_file(yaml_file).perturb == "loss:5%+reverb@0.3s"
    assert RunConfig.from_file(yaml_file, perturb="gain@-6dB").perturb == "gain@-6dB"
    assert build_config({"benchmark": "smoke", "mode": "audio", "perturb": "none"}).perturb is None
    with pytest.raises(ConfigError, match="need audio mode"):
        build_config({"benchmark": "smoke", "perturb": "codec:mulaw"})
    with pytest.raises(ConfigError, match="unknown perturbation 'nosie'") as info:
        build_config({"benchmark": "smoke", "mode": "audio", "perturb": "nosie:pink@10dB"})
    assert "codec:mulaw" in str(info.value)
    with pytest.raises(ConfigError, match="both"):
        build_config(
            {"benchmark": "smoke", "mode": "audio", "perturb": "gain@1dB", "perturbations": "x"}
        )


def test_old_run_json_reads_without_perturbations() -> None:
    from voxbench.core.records import RunInfo

    info = RunInfo.model_validate(
        {
            "run_id": "r",
            "benchmark": "smoke",
            "benchmark_version": "1",
            "benchmark_hash": "h",
            "target": {"name": "local/oracle"},
            "started_at": "2026-01-01T00:00:00+00:00",
        }
    )
    assert info.perturbations is None


def test_a_perturbed_run_is_its_own_condition_in_the_store(tmp_path: Path) -> None:
    # Clean and perturbed runs of one target never share a leaderboard cell.
    import json
    import shutil

    from voxbench.store.readers import read_runs

    fixture = Path(__file__).parent.parent / "fixtures" / "runs" / "schema1_smoke_oracle"
    run = Path(shutil.copytree(fixture, tmp_path / "run"))
    (clean,) = read_runs(run)
    info = json.loads((run / "run.json").read_text(encoding="utf-8"))
    info["perturbations"] = "noise:pink@10dB"
    (run / "run.json").write_text(json.dumps(info), encoding="utf-8")
    (perturbed,) = read_runs(run)
    assert clean.benchmark == "smoke"
    assert perturbed.benchmark == "smoke (noise:pink@10dB)"
