"""End to end, offline: the local cascade (Whisper → baseline → eSpeak NG) over the
mini-corpus, then both scoring modes produce every metric."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from tests.fullduplex.fake_judge import JUDGE, score_with_fake_judge
from tests.fullduplex.test_scoring import EXPECTED
from voxbench.benchmarks.loader import load_benchmark
from voxbench.fullduplex.driver import drive_corpus
from voxbench.targets.registry import resolve_target

TARGET = "cascade/local/baseline"


@pytest.mark.slow
async def test_local_cascade_then_every_metric(mini_corpus: Path, tmp_path: Path) -> None:
    for subset in ("talking_to_other", "background_speech"):  # two v1.5 subsets are enough
        shutil.rmtree(mini_corpus / "v1_5" / subset)
    out = tmp_path / "out"
    factory = resolve_target(TARGET, benchmark=load_benchmark("smoke"))
    report = await drive_corpus(mini_corpus, factory, TARGET, out_dir=out, concurrency=2)
    assert len(report.completed) == 7 and report.failed == {}
    record = json.loads((out / "v1_0/candor_turn_taking/1/voxbench_fdb.json").read_text())
    stream = record["streams"][0]
    assert stream["clock"] == "virtual" and stream["responses"][0]["processing_s"] > 0
    assert "information" in stream["assistant_text"]
    assert {t["stage"] for t in stream["stage_timings"]} >= {"stt"}

    for mode in ("fdb-v1", "voxbench"):
        summary = (await _score(out, mode)).summary
        assert summary["judge"]["name"] == JUDGE
        for row in summary["rows"]:
            assert row["target"] == TARGET and row["errors"] == 0
            computed = {m for m, stats in row["metrics"].items() if stats["n"] > 0}
            missing = EXPECTED[mode][row["category"]] - computed
            if row["category"] == "backchannel" and mode == "voxbench":
                # Without a backchannel there is no JSD, and the rate says why.
                assert missing <= {"jsd"}
                if missing:
                    assert row["metrics"]["no_backchannel"]["mean"] == 1.0
            else:
                assert not missing, (mode, row["category"], missing)


async def _score(out: Path, mode: str):
    return await asyncio.to_thread(score_with_fake_judge, out, mode, None)
