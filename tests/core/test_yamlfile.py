"""Every YAML file voxbench reads goes through ``core.yamlfile``: no key given twice."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import voxbench
from voxbench.core.errors import ConfigError
from voxbench.core.yamlfile import parse_yaml, read_yaml

SRC = Path(voxbench.__file__).parent


def test_no_module_parses_yaml_on_its_own() -> None:
    # ``yaml.safe_load`` keeps the last of two equal keys silently; only the one loader may
    # call PyYAML (the fake servers' wire formats are not YAML).
    calls = re.compile(r"\byaml\.(safe_load|load|full_load|unsafe_load)\b")
    offenders = [
        f"{file.relative_to(SRC)}:{n}"
        for file in SRC.rglob("*.py")
        if file.name != "yamlfile.py"
        for n, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1)
        if calls.search(line)
    ]
    assert offenders == []


@pytest.mark.parametrize(
    "text, key, line",
    [
        ("a: 1\nb: 2\na: 3\n", "a", 3),
        ("outer:\n  x: 1\n  x: 2\n", "x", 3),
        ("- {name: m, name: n}\n", "name", 1),
    ],
)
def test_a_repeated_key_names_its_line_and_key(text: str, key: str, line: int) -> None:
    with pytest.raises(ConfigError) as info:
        parse_yaml(text, source="f.yaml")
    assert info.value.field == key
    assert f"line {line} repeats" in str(info.value)
    assert str(info.value).startswith("f.yaml")


def test_read_yaml_names_a_file_that_is_not_utf8(tmp_path: Path) -> None:
    file = tmp_path / "x.yaml"
    file.write_bytes(b"a: \xff\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        read_yaml(file)
