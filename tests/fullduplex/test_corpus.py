"""Reading FDB annotation files and walking corpus layouts."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from voxbench.core.errors import ConfigError
from voxbench.fullduplex.annotations import (
    load_asr,
    load_interrupt,
    load_metadata,
    load_pause,
    load_turn_taking,
)
from voxbench.fullduplex.corpus import scan_corpus


def _write(path: Path, value: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value) if not isinstance(value, str) else value)
    return path


def _touch_wav(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "input.wav").write_bytes(b"RIFF")


def test_annotation_files_load_typed(tmp_path: Path) -> None:
    pause = load_pause(
        _write(tmp_path / "pause.json", [{"text": "[PAUSE]", "timestamp": [3.3, 4.0]}])
    )
    assert (pause.start, pause.end) == (3.3, 4.0)
    turn = load_turn_taking(
        _write(tmp_path / "turn_taking.json", [{"text": "[TURN-TAKING]", "timestamp": [2.01, 2.4]}])
    )
    assert turn.start == 2.01
    interrupt = load_interrupt(
        _write(
            tmp_path / "interrupt.json",
            [{"context": "c", "interrupt": "i", "timestamp": [10.5, 13.1], "extra": 1}],
        )
    )
    assert (interrupt.context, interrupt.end) == ("c", 13.1)
    meta = load_metadata(
        _write(
            tmp_path / "metadata.json",
            {"context_text": "a", "current_turn_text": "b", "timestamps": [1, 2]},
        )
    )
    assert (meta.start, meta.end) == (1.0, 2.0)
    asr = load_asr(
        _write(
            tmp_path / "output.json",
            {"text": "hi", "chunks": [{"text": "hi", "timestamp": [0.1, None]}]},
        )
    )
    assert asr.chunks[0].end is None


@pytest.mark.parametrize(
    ("name", "content", "field"),
    [
        ("pause.json", [{"text": "[PAUSE]", "timestamp": [3.0]}], "0.timestamp.1"),
        ("pause.json", [{"text": "[PAUSE]", "timestamp": ["a", 2]}], "0.timestamp.0"),
        ("pause.json", [], "0"),
        ("turn_taking.json", {"timestamp": [1, 2]}, "(top level)"),
        ("interrupt.json", [{"context": "c", "interrupt": "i"}], "0.timestamp"),
        ("metadata.json", {"context_text": "a", "timestamps": [5, 1]}, "(top level)"),
        ("output.json", {"text": "x", "chunks": [{"timestamp": [0, 1]}]}, "chunks.0.text"),
    ],
)
def test_malformed_files_name_file_and_field(
    tmp_path: Path, name: str, content: object, field: str
) -> None:
    path = _write(tmp_path / name, content)
    loader = {
        "pause.json": load_pause,
        "turn_taking.json": load_turn_taking,
        "interrupt.json": load_interrupt,
        "metadata.json": load_metadata,
        "output.json": load_asr,
    }[name]
    with pytest.raises(ConfigError) as info:
        loader(path)
    assert info.value.file == str(path)
    assert info.value.field == field
    assert str(path) in str(info.value)


def test_not_json_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not readable JSON"):
        load_pause(_write(tmp_path / "pause.json", "{not json"))


def test_scan_finds_every_category_and_subset(mini_corpus: Path) -> None:
    scan = scan_corpus(mini_corpus)
    found = {(s.relative, s.category, s.subset) for s in scan.samples}
    assert (
        "v1_0/synthetic_pause_handling/1",
        "pause_handling",
        "synthetic_pause_handling",
    ) in found
    assert ("v1_0/candor_turn_taking/1", "smooth_turn_taking", "candor_turn_taking") in found
    assert (
        "v1_0/synthetic_user_interruption/1",
        "user_interruption",
        "synthetic_user_interruption",
    ) in found
    assert ("v1_0/icc_backchannel/0", "backchannel", "icc_backchannel") in found
    assert {s.subset for s in scan.samples if s.category == "behavior"} == {
        "user_interruption", "user_backchannel", "talking_to_other", "background_speech",
    }  # fmt: skip
    assert all(s.version == "1.5" for s in scan.samples if s.category == "behavior")
    assert scan.skipped == []


def test_scan_of_one_subset_and_one_sample(mini_corpus: Path) -> None:
    subset = scan_corpus(mini_corpus / "v1_0" / "icc_backchannel")
    assert [(s.category, s.subset, s.sample_id) for s in subset.samples] == [
        ("backchannel", "icc_backchannel", "0")
    ]
    one = scan_corpus(mini_corpus / "v1_0" / "candor_turn_taking" / "1")
    assert [(s.category, s.subset, s.relative) for s in one.samples] == [
        ("smooth_turn_taking", "candor_turn_taking", "1")
    ]


def test_scan_sorts_ids_naturally_and_walks_nested_subsets(tmp_path: Path) -> None:
    for ident in ("10", "2", "1"):
        folder = tmp_path / "release" / "v1_0" / "synthetic_pause_handling" / ident
        _touch_wav(folder)
        _write(folder / "pause.json", [{"text": "[PAUSE]", "timestamp": [1, 2]}])
    scan = scan_corpus(tmp_path / "release")
    assert [s.sample_id for s in scan.samples] == ["1", "2", "10"]


def test_incomplete_samples_are_skipped_with_a_warning_naming_them(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    good = tmp_path / "candor_turn_taking" / "1"
    _touch_wav(good)
    _write(good / "turn_taking.json", [{"text": "[TURN-TAKING]", "timestamp": [1, 2]}])
    no_annotation = tmp_path / "mystery" / "3"
    _touch_wav(no_annotation)
    no_input = tmp_path / "candor_turn_taking" / "2"
    _write(no_input / "turn_taking.json", [{"text": "[TURN-TAKING]", "timestamp": [1, 2]}])
    with caplog.at_level(logging.WARNING):
        scan = scan_corpus(tmp_path)
    assert [s.path for s in scan.samples] == [good]
    reasons = {item.path: item.reason for item in scan.skipped}
    assert "no pause.json" in reasons[no_annotation]
    assert "without input.wav" in reasons[no_input]
    assert str(no_annotation) in caplog.text and str(no_input) in caplog.text


def test_example_layout_of_the_public_repository(shared_dir: Path) -> None:
    root = shared_dir / "data" / "fdb"
    if not root.is_dir():
        pytest.skip("shared FDB example samples are absent")
    scan = scan_corpus(root)
    assert {(s.subset, s.category) for s in scan.samples} == {
        ("pause_handling_example", "pause_handling"),
        ("smooth_turn_taking_example", "smooth_turn_taking"),
        ("user_interruption_example", "user_interruption"),
    }
