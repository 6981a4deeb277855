"""``tasks run --perturb``: the models hear every clip perturbed; the run says so (issue 31)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from voxbench.audio.perturb import parse_perturbations
from voxbench.audio.wav import read_wav
from voxbench.core.errors import ConfigError, RunError

from .conftest import FakeEndpoints, run_yaml

TINY = "models: [{name: m, model: vllm/q}]\ntasks: [tiny]\ntasks_dirs: [mytasks]\nseed: 3\n"
SPEC = "noise:white@10dB + loss:10%"


class Heard(FakeEndpoints):
    """Fake endpoints that keep the samples each record's request carried."""

    def __init__(self) -> None:
        super().__init__()
        self.audio: dict[str, np.ndarray] = {}

    def factory(self, model: Any, endpoint: Any, api: str) -> Any:
        inner = super().factory(model, endpoint, api)
        owner = self

        class Endpoint:
            async def answer(self, audio: Any, wav: bytes, request: Any) -> str:
                owner.audio[request.reference] = audio.samples.copy()
                return await inner.answer(audio, wav, request)

            async def aclose(self) -> None:
                await inner.aclose()

        return Endpoint()


def test_the_models_hear_the_perturbed_clip_and_the_run_records_it(
    tmp_path: Path, tasks_dir: Path
) -> None:
    heard = Heard()
    result = run_yaml(TINY, tmp_path, heard, perturb=SPEC)
    info = json.loads((result.run.path / "run.json").read_text())
    assert info["perturbations"] == "noise:white@10dB+loss:10%"  # canonical
    assert result.run.run_info().perturbations == info["perturbations"]
    clean = read_wav(tasks_dir / "mine" / "data" / "a.wav")
    expected = parse_perturbations(SPEC).apply(clean, 3, "tiny/a")
    got = heard.audio["one two three"]
    assert got.shape == clean.samples.shape  # same length and rate
    # What was sent is the perturbed clip (to the 16-bit WAV's precision), not the clean one.
    assert np.max(np.abs(got - expected.samples)) < 1e-4
    assert np.max(np.abs(got - clean.samples)) > 0.01
    assert (
        "**Perturbed:** every model heard each clip through `noise:white@10dB+loss:10%`"
        in (result.run.path / "report.md").read_text()
    )


def test_a_perturbed_run_never_reads_the_clean_runs_answers(
    tmp_path: Path, tasks_dir: Path
) -> None:
    clean = run_yaml(TINY, tmp_path, FakeEndpoints())
    assert clean.requests == 6
    first = run_yaml(TINY, tmp_path, Heard(), perturb=SPEC)
    assert first.requests == 6 and first.cached == 0  # other audio: other cache keys
    again = run_yaml(TINY, tmp_path, Heard(), perturb=SPEC)
    assert again.requests == 0 and again.cached == 6  # the same seed hears the same bytes


def test_a_bad_spec_names_its_step_before_anything_is_written(
    tmp_path: Path, tasks_dir: Path
) -> None:
    with pytest.raises(ConfigError, match="noise:purple@10dB"):
        run_yaml(TINY, tmp_path, FakeEndpoints(), perturb="noise:purple@10dB")
    assert not (tmp_path / "runs").exists()


def test_a_resumed_run_keeps_what_it_heard(tmp_path: Path, tasks_dir: Path) -> None:
    from voxbench.tasks.run import run_tasks

    run = run_yaml(TINY, tmp_path, FakeEndpoints(), perturb=SPEC).run.path
    with pytest.raises(RunError, match="--perturb"):
        run_tasks(None, "", resume=run, perturb="gain@3dB")


def test_a_perturbed_task_run_is_its_own_condition_in_the_store(
    tmp_path: Path, tasks_dir: Path
) -> None:
    from voxbench.store.readers import read_runs

    run = run_yaml(TINY, tmp_path, FakeEndpoints(), perturb="codec:mulaw").run.path
    (row,) = read_runs(run)
    assert row.benchmark == "tiny (codec:mulaw)"
    assert {r.benchmark for r in row.results} == {"tiny (codec:mulaw)"}


def test_the_task_page_says_what_every_score_was_heard_through(
    tmp_path: Path, tasks_dir: Path
) -> None:
    from voxbench.report.tasks_html import write_tasks_html

    run = run_yaml(TINY, tmp_path, FakeEndpoints(), perturb="codec:alaw").run.path
    page = write_tasks_html(run).read_text()
    assert "every model heard each clip through <code>codec:alaw</code>" in page


def test_the_task_page_plays_what_the_models_heard(tmp_path: Path, tasks_dir: Path) -> None:
    """Each record shown gets a second player: the clip as the models heard it, the very
    samples the engine sent (issue 31: what the target heard is saved so a reader can listen)."""
    import re

    from voxbench.report.tasks_html import write_tasks_html

    heard = Heard()
    heard.reply = lambda r: "wrong"  # every record wrong: every record is on the page
    run = run_yaml(TINY, tmp_path, heard, perturb=SPEC).run.path
    page = write_tasks_html(run).read_text()
    srcs = re.findall(r'heard \(noise:white@10dB\+loss:10%\)<audio[^>]* src="([^"]+)"', page)
    assert srcs, page[:3000]
    files = {Path(s).name: run / s for s in srcs}
    assert all(f.is_file() and f.parent == run / "clips" for f in files.values())
    a = next(f for name, f in files.items() if name.endswith("-a.wav"))
    sent = heard.audio["one two three"]
    assert np.max(np.abs(read_wav(a).samples - sent)) < 1e-4
