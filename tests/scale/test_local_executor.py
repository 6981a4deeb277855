"""The local executor: CPU-bound cells in a process pool, the same artifacts, limits held."""

from __future__ import annotations

import pytest

from voxbench.core.errors import ConfigError
from voxbench.core.rundir import RunDirectory
from voxbench.runner.config import build_config
from voxbench.scale.cells import Cell
from voxbench.scale.executors import LocalExecutor, make_executor
from voxbench.scale.limits import Limits


def test_audio_cells_run_in_the_process_pool(tmp_path):
    config = build_config(
        {"benchmark": "smoke", "target": "local/oracle", "mode": "audio", "heard_asr": "none"}
    )
    cells = [
        Cell(config=config.model_copy(update={"seed": s}), path=tmp_path / f"seed-{s}")
        for s in (0, 1)
    ]
    assert all(c.cpu_bound for c in cells)
    results = LocalExecutor(processes=2).run(cells, Limits(max_concurrency=2))
    assert [r.status for r in results] == ["success", "success"]
    for cell in cells:
        rd = RunDirectory(cell.path)
        assert rd.has_recording and rd.info().seed == cell.config.seed
        card = rd.scorecard()
        assert card is not None and card.strict_pass.rate == 1.0


def test_text_cells_of_remote_targets_are_not_cpu_bound():
    config = build_config({"benchmark": "smoke", "target": "openai/gpt-4o-mini"})
    assert not Cell(config=config, path="x").cpu_bound
    assert Cell(config=config, path="x").provider == "openai"


def test_limits_and_executor_names_are_checked():
    assert Limits(max_concurrency=8, per_provider={"openai": 2}).slots("openai") == 2
    assert Limits(max_concurrency=3, per_provider={"openai": 5}).slots("openai") == 3
    with pytest.raises(ConfigError, match="unknown executor"):
        make_executor("dask")
    with pytest.raises(ConfigError, match="--ray-address needs the Ray executor"):
        make_executor("local", ray_address="auto")


@pytest.mark.slow
def test_cells_that_transcribe_finish_after_the_parent_transcribed(tmp_path):
    """The process pool is spawned, not forked: a child forked after the parent ran local
    Whisper hangs on its first transcription (CTranslate2's OpenMP threads stay behind), as a
    robustness run did in CI once an earlier test had transcribed in the test process."""
    from voxbench.audio.espeak import espeak_synthesize
    from voxbench.providers.speech import get_asr

    assert get_asr("local/whisper-tiny.en").transcribe(espeak_synthesize("one two three")).text
    config = build_config(
        {"benchmark": "smoke", "target": "local/oracle", "mode": "audio", "only_turns": "0"}
    )
    cell = Cell(config=config, path=tmp_path / "heard")
    assert cell.cpu_bound and config.heard_asr != "none"  # the child transcribes the agent
    (result,) = LocalExecutor(processes=1).run([cell], Limits(max_concurrency=1))
    assert result.status == "success"
    (turn,) = RunDirectory(cell.path).turns()
    assert turn.heard_text
