"""The versions that compute numbers: pinned, recorded in every run, compared between runs."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_invoke import invoke
from voxbench.core.rundir import RunDirectory
from voxbench.core.versions import (
    NUMERIC_PACKAGES,
    canonical_package,
    constraints_path,
    differing_versions,
    numeric_versions,
    run_versions,
)
from voxbench.core.versions import tested_versions as pinned_versions

REPO = Path(__file__).resolve().parents[2]


def test_every_numeric_package_is_pinned_in_the_constraints_file() -> None:
    # The README's commands install with constraints.txt: a package that changes a number
    # and is not pinned there would move with whatever pip resolves that day.
    assert constraints_path() == REPO / "constraints.txt"
    tested = pinned_versions()
    missing = [name for name, _ in NUMERIC_PACKAGES if canonical_package(name) not in tested]
    assert missing == []


def test_the_constraints_file_pins_exact_versions_only() -> None:
    lines = (REPO / "constraints.txt").read_text(encoding="utf-8").splitlines()
    pins = [line for line in lines if line.strip() and not line.startswith("#")]
    assert pins and all("==" in line and " " not in line.strip() for line in pins)
    assert len(pinned_versions()) == len(pins)


def test_names_are_compared_as_pip_compares_them() -> None:
    assert canonical_package("RapidFuzz") == canonical_package("rapidfuzz")
    assert canonical_package("whisper_normalizer") == "whisper-normalizer"
    assert canonical_package("Foo.Bar__baz") == "foo-bar-baz"


def test_a_run_records_python_voxbench_and_every_numeric_package() -> None:
    recorded = run_versions()
    assert {"python", "voxbench"} <= set(recorded)
    assert all(name in recorded for name, _ in NUMERIC_PACKAGES)
    installed = {p.package: p.installed for p in numeric_versions()}
    assert recorded["numpy"] == installed["numpy"]


def test_installed_versions_are_those_importlib_metadata_gives() -> None:
    from importlib.metadata import PackageNotFoundError, version

    from voxbench.core.versions import installed_version

    for name in ["voxbench", "pip", "no-such-package-xyz", *(n for n, _ in NUMERIC_PACKAGES)]:
        try:
            expected: str | None = version(name)
        except PackageNotFoundError:
            expected = None
        assert installed_version(name) == expected, name


def test_differences_name_the_package_and_both_versions() -> None:
    a = {"python": "3.11.7", "numpy": "2.4.6", "ctranslate2": "4.8.5", "voxbench": "0.1.0"}
    b = {"python": "3.11.7", "numpy": "2.4.6", "ctranslate2": "4.6.0", "voxbench": "0.2.0"}
    assert differing_versions(a, b) == [("ctranslate2", "4.8.5", "4.6.0")]
    # A run written before a package was recorded is no difference.
    assert differing_versions(a, {"python": "3.11.7"}) == []


def test_doctor_reports_the_tested_versions_as_json(monkeypatch, capsys) -> None:
    code, out, _err = invoke(monkeypatch, capsys, "doctor", "--json")
    report = json.loads(out)
    assert {p["package"] for p in report["packages"]} == {n for n, _ in NUMERIC_PACKAGES}
    assert {m["model"] for m in report["models"]} == {
        "Whisper tiny.en weights",
        "Silero VAD v6 model",
        "DNSMOS P.835 model",
    }
    assert all(m["status"] == "pinned SHA-256" for m in report["models"])
    untested = [p for p in report["packages"] if not p["is_tested"]]
    assert report["all_tested"] is (not untested)
    assert code == (1 if untested else 0)


def test_doctor_exits_1_naming_a_package_not_at_its_tested_version(monkeypatch, capsys) -> None:
    import voxbench.core.versions as versions

    real = versions.installed_version
    monkeypatch.setattr(
        versions,
        "installed_version",
        lambda name: "0.0.1" if name == "ctranslate2" else real(name),
    )
    code, out, err = invoke(monkeypatch, capsys, "doctor")
    assert code == 1
    row = next(line for line in out.splitlines() if line.startswith("ctranslate2"))
    assert "0.0.1" in row and pinned_versions()["ctranslate2"] in row
    assert "not at the tested version" in err


def test_compare_warns_when_the_runs_were_computed_by_other_versions(
    monkeypatch, capsys, tmp_path: Path
) -> None:
    runs = []
    for _ in range(2):
        code, _out, _err = invoke(
            monkeypatch, capsys, "run", "smoke", "-t", "oracle", "--runs-dir", str(tmp_path)
        )
        assert code == 0
    runs = sorted(p.parent for p in tmp_path.glob("*/*/run.json"))
    assert RunDirectory.open_existing(runs[0]).info().versions == run_versions()
    code, _out, err = invoke(monkeypatch, capsys, "compare", str(runs[0]), str(runs[1]))
    assert code == 0 and "different versions" not in err

    older = RunDirectory.open_existing(runs[1])
    info = older.info()
    older.write_info(info.model_copy(update={"versions": info.versions | {"numpy": "1.26.4"}}))
    code, out, err = invoke(monkeypatch, capsys, "compare", str(runs[0]), str(runs[1]), "--json")
    assert code == 0
    assert json.loads(out)["version_differences"] == [
        {"package": "numpy", "a": run_versions()["numpy"], "b": "1.26.4"}
    ]
    assert "different versions" in err and "numpy" in err and "1.26.4" in err
