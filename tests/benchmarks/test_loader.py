"""Benchmark packages: valid ones load, every kind of bad file gives one clear error."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from voxbench.benchmarks.consistency import consistency_problems
from voxbench.benchmarks.loader import (
    BUILTIN_DIR,
    builtin_benchmarks,
    load_benchmark,
    validate_benchmark,
)
from voxbench.benchmarks.stats import benchmark_stats
from voxbench.core.errors import BenchmarkError


@pytest.fixture
def smoke_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "bench"
    shutil.copytree(BUILTIN_DIR / "smoke", dest)
    return dest


def edit_yaml(path: Path, change) -> None:
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def only_problem(path: Path) -> BenchmarkError:
    problems = validate_benchmark(path)
    assert len(problems) == 1, [str(p) for p in problems]
    return problems[0]


def test_smoke_is_valid_and_consistent() -> None:
    assert "smoke" in builtin_benchmarks()
    bench = load_benchmark("smoke")
    assert len(bench.turns) == 10 and len(bench.tools) == 4
    assert consistency_problems(bench) == []
    stats = benchmark_stats(bench)
    assert stats.expected_calls == 5 and stats.tool_turns == 5
    assert "Lighthouse Lobby" in bench.render_system_prompt()
    assert "Friday, March 13, 2026" in bench.render_system_prompt()


def test_missing_field(smoke_copy: Path) -> None:
    edit_yaml(smoke_copy / "turns.yaml", lambda d: d["turns"][2].pop("golden_text"))
    err = only_problem(smoke_copy)
    assert err.file.endswith("turns.yaml")
    assert err.field == "turns[2] (id 2).golden_text"
    assert "required field is missing" in str(err)


def test_unknown_key(smoke_copy: Path) -> None:
    edit_yaml(
        smoke_copy / "turns.yaml", lambda d: d["turns"][1]["expect"].update(must_mentoin=["x"])
    )
    err = only_problem(smoke_copy)
    assert err.field == "turns[1] (id 1).expect.must_mentoin"
    assert "unknown key" in str(err)


def test_unknown_key_in_header(smoke_copy: Path) -> None:
    edit_yaml(smoke_copy / "benchmark.yaml", lambda d: d.update(lang="en"))
    err = only_problem(smoke_copy)
    assert err.field == "lang" and err.file.endswith("benchmark.yaml")


def test_wrong_type(smoke_copy: Path) -> None:
    edit_yaml(smoke_copy / "turns.yaml", lambda d: d["turns"][0].update(categories="basic_qa"))
    err = only_problem(smoke_copy)
    assert err.field.startswith("turns[0] (id 0).categories")


def test_duplicate_turn_id(smoke_copy: Path) -> None:
    edit_yaml(smoke_copy / "turns.yaml", lambda d: d["turns"][3].update(id="2"))
    err = only_problem(smoke_copy)
    assert "duplicate turn id '2'" in str(err)


def test_call_to_undefined_tool(smoke_copy: Path) -> None:
    edit_yaml(
        smoke_copy / "turns.yaml",
        lambda d: d["turns"][1]["expect"]["required_calls"][0].update(name="book_session"),
    )
    err = only_problem(smoke_copy)
    assert "undefined tool 'book_session'" in str(err)
    assert err.field == "turns[1] (id 1).expect.required_calls[0].name"


def test_missing_audio_file(smoke_copy: Path) -> None:
    edit_yaml(smoke_copy / "turns.yaml", lambda d: d["turns"][0].update(audio="audio/turn_000.wav"))
    err = only_problem(smoke_copy)
    assert "audio file not found" in str(err) and err.field == "turns[0] (id 0).audio"


def test_missing_file_and_bad_yaml(smoke_copy: Path) -> None:
    (smoke_copy / "tools.yaml").unlink()
    (smoke_copy / "backend.yaml").write_text("engine: [unclosed\n")
    messages = [str(p) for p in validate_benchmark(smoke_copy)]
    assert any("tools.yaml: file is missing" in m for m in messages)
    assert any("backend.yaml: not valid YAML" in m for m in messages)


def test_golden_call_must_satisfy_tool_schema(smoke_copy: Path) -> None:
    edit_yaml(
        smoke_copy / "turns.yaml",
        lambda d: d["turns"][1]["expect"]["required_calls"][0]["args"].pop("session_id"),
    )
    err = only_problem(smoke_copy)
    assert "lacks required argument 'session_id'" in str(err)


def test_load_raises_listing_every_problem(smoke_copy: Path) -> None:
    edit_yaml(smoke_copy / "turns.yaml", lambda d: d["turns"][0].pop("text"))
    edit_yaml(smoke_copy / "tools.yaml", lambda d: d["tools"][0].update(strict=True))
    with pytest.raises(BenchmarkError) as info:
        load_benchmark(smoke_copy)
    assert "2 problems" in str(info.value)


def test_unknown_benchmark_lists_the_builtin_ones() -> None:
    with pytest.raises(BenchmarkError, match="smoke"):
        load_benchmark("no-such-benchmark")


def test_consistency_catches_unsupported_facts(smoke_copy: Path) -> None:
    edit_yaml(
        smoke_copy / "turns.yaml",
        lambda d: d["turns"][0]["expect"]["must_mention"].append(["rooftop bar"]),
    )
    problems = consistency_problems(load_benchmark(smoke_copy))
    assert any("golden answer does not mention 'rooftop bar'" in p for p in problems)
    assert any("neither in the knowledge base" in p for p in problems)


def test_a_tool_whose_parameters_are_not_a_json_schema_is_named(smoke_copy: Path) -> None:
    def break_schema(data: dict) -> None:
        data["tools"][0]["parameters"]["minProperties"] = -1  # must be a non-negative integer

    edit_yaml(smoke_copy / "tools.yaml", break_schema)
    err = only_problem(smoke_copy)
    name = yaml.safe_load((smoke_copy / "tools.yaml").read_text())["tools"][0]["name"]
    assert err.file is not None and err.file.endswith("tools.yaml")
    assert err.field == f"tools.{name}.parameters"
    assert "not a valid JSON Schema" in str(err) and repr(name) in str(err)
