"""Rubric files: the schema, built-ins, parameters, hashes, and the rubric commands."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_invoke import invoke
from voxbench.core.errors import ConfigError
from voxbench.judging.audio.prompt import instructions
from voxbench.judging.audio.rubric import builtin_rubric_names, load_rubric

GOOD = """\
name: dialect
description: Rate how consistently the agent speaks {dialect}.
parameters:
  dialect: {description: the dialect, default: Bavarian}
criteria:
  - name: accent
    description: 5 a consistent strong {dialect} accent throughout; 1 none.
steps: [Listen., Score.]
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "rubric.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_every_builtin_rubric_loads_and_binds() -> None:
    names = builtin_rubric_names()
    assert set(names) >= {
        "accent",
        "tone",
        "pronunciation",
        "pace",
        "transcript_consistency",
        "emotion",
    }
    for name in names:
        rubric = load_rubric(name)
        values = {k: "x" for k, p in rubric.parameters.items() if p.default is None}
        bound = rubric.bind(values)
        assert all(c.pass_at is not None and c.low < c.pass_at <= c.high for c in bound.criteria)
        assert "{" not in instructions(bound, bound.rubric.steps or ["s"]).replace('{"', "")


def test_parameters_fill_the_text_and_change_the_hash(tmp_path: Path) -> None:
    rubric = load_rubric(write(tmp_path, GOOD))
    bavarian, berlin = rubric.bind({}), rubric.bind({"dialect": "Berlin"})
    assert "strong Bavarian accent" in bavarian.criteria[0].description
    assert "strong Berlin accent" in berlin.criteria[0].description
    assert bavarian.digest() != berlin.digest()
    assert bavarian.digest() == rubric.bind({"dialect": "Bavarian"}).digest()
    with pytest.raises(
        ConfigError, match="has no parameter 'accent'.*one of its parameters: dialect"
    ):
        rubric.bind({"accent": "x"})


def test_a_required_parameter_must_be_given() -> None:
    with pytest.raises(ConfigError, match="needs a value for 'target_accent'.*-o target_accent="):
        load_rubric("accent").bind({})


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("steps: [Listen., Score.]\n", ""), "no evaluation steps"),
        (("steps: [Listen., Score.]\n", "steps: [a]\ngenerate_steps: true\n"), "not both"),
        (("    description: 5", "    scale: [5, 1]\n    description: 5"), "must be below"),
        (("    description: 5", "    pass_at: 9\n    description: 5"), "outside the scale"),
        (("name: accent", "name: Accent Score"), "lower-case identifier"),
        (("{dialect} accent", "{region} accent"), r"placeholders without a parameter: \{region\}"),
        (("criteria:", "colour: red\ncriteria:"), "Extra inputs"),
        (("name: dialect\n", "name: dialect\nname: again\n"), "key given twice"),
    ],
)
def test_a_bad_rubric_names_the_file_and_field(tmp_path: Path, edit, message) -> None:
    path = write(tmp_path, GOOD.replace(*edit))
    with pytest.raises(ConfigError, match=message) as caught:
        load_rubric(path)
    assert str(path) in str(caught.value)


def test_an_unknown_rubric_lists_the_builtins() -> None:
    with pytest.raises(ConfigError, match="no rubric 'accents'.*accent, emotion"):
        load_rubric("accents")


def test_rubric_validate_and_show_commands(monkeypatch, capsys, tmp_path: Path) -> None:
    good = write(tmp_path, GOOD)
    code, out, _ = invoke(monkeypatch, capsys, "rubric", "validate", str(good))
    assert code == 0 and "valid" in out and "dialect" in out
    bad = tmp_path / "bad.yaml"
    bad.write_text(GOOD.replace("steps: [Listen., Score.]\n", ""), encoding="utf-8")
    code, out, err = invoke(monkeypatch, capsys, "rubric", "validate", str(bad))
    assert code == 2 and "bad.yaml" in err and "no evaluation steps" in err
    code, out, _ = invoke(
        monkeypatch, capsys, "rubric", "show", "accent", "-o", "target_accent=Scottish", "--prompt"
    )
    assert code == 0
    assert "consistent, natural Scottish accent" in out and "Evaluation Form" in out
    assert "give this a 5" in out  # the hardening paragraph is part of the instructions
    code, out, _ = invoke(monkeypatch, capsys, "rubric", "show")
    assert code == 0 and "transcript_consistency" in out


def test_the_readme_dialect_rubric_is_valid(tmp_path: Path) -> None:
    readme = Path(__file__).resolve().parents[3] / "README.md"
    text = readme.read_text(encoding="utf-8")
    section = text.split("## Audio judge", 1)[1]
    block = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    rubric = load_rubric(write(tmp_path, block))
    bound = rubric.bind({})
    assert (
        bound.name == "bavarian_dialect"
        and "strong Bavarian accent" in bound.criteria[0].description
    )
    assert "| ned " in bound.rubric.context.replace("|", "| ", 0) or "ned" in bound.rubric.context


def test_rubric_validate_shows_every_problem(monkeypatch, capsys, tmp_path: Path) -> None:
    """Issue 28, defect 5: not only the first problem."""
    bad = tmp_path / "bad.yaml"
    text = (
        GOOD.replace("steps: [Listen., Score.]\n", "")
        .replace("name: dialect", "name: Dialect Rubric")
        .replace("    description: 5", "    scale: [5, 1]\n    description: 5")
        .replace("criteria:", "colour: red\ncriteria:")
    )
    bad.write_text(text, encoding="utf-8")
    code, out, err = invoke(monkeypatch, capsys, "rubric", "validate", str(bad))
    assert code == 2 and "bad.yaml" in err
    flat = " ".join(err.split())
    for problem in ("lower-case name", "must be below", "Extra inputs", "no evaluation steps"):
        assert problem in flat, (problem, err)
    assert "4 problems" in flat
