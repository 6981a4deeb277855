"""fdb-v1 mode runs Silero's own post-processing on a chosen Silero model and records which."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from voxbench.audio.vad import silero_model_path
from voxbench.audio.wav import read_wav
from voxbench.core.errors import ConfigError
from voxbench.fullduplex.sample_context import ScoringContext
from voxbench.fullduplex.scoring import score_directory
from voxbench.fullduplex.transcripts import TranscriptStore


def _no_asr() -> TranscriptStore:
    return TranscriptStore("local/none-such", write=False)


def test_public_segments_are_rounded_to_a_tenth_of_a_second(mini_outputs: Path) -> None:
    out = read_wav(mini_outputs / "v1_0/icc_backchannel/0/output.wav")
    segments = ScoringContext.segments_public(out)
    assert segments
    for start, end in segments:
        assert round(start, 1) == start
        assert round(end, 1) == end or end == pytest.approx(out.frames / 16_000)


def test_the_summary_names_the_vad_model_and_its_hash(mini_outputs: Path, tmp_path: Path) -> None:
    copy = tmp_path / "silero_copy.onnx"
    shutil.copyfile(silero_model_path(), copy)
    root = mini_outputs / "v1_0" / "icc_backchannel"
    shipped = score_directory(root, mode="fdb-v1", transcripts=_no_asr(), write=False)
    chosen = score_directory(
        root, mode="fdb-v1", transcripts=_no_asr(), write=False, vad_model=copy
    )
    digest = hashlib.sha256(copy.read_bytes()).hexdigest()
    assert chosen.summary["vad_model"] == {"path": str(copy), "sha256": digest}
    assert shipped.summary["vad_model"]["sha256"] == digest  # the same bytes
    assert [s.metrics for s in chosen.scores] == [s.metrics for s in shipped.scores]


def test_a_missing_vad_model_is_named(mini_outputs: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--vad-model"):
        score_directory(
            mini_outputs, mode="fdb-v1", transcripts=_no_asr(), vad_model=tmp_path / "nope.onnx"
        )
