"""``voxbench doctor``: are the packages and model files that compute numbers the tested ones?"""

from __future__ import annotations

import json
import platform
from pathlib import Path

import typer

from voxbench.cli.console import escape, make_console
from voxbench.cli.tables import Column, Listing, print_listings
from voxbench.core.errors import PrerequisiteError
from voxbench.core.versions import constraints_path, numeric_versions

GATE_EXIT = 1
"""Exit code when something differs from what the project tested (as a failed gate)."""


def _weights() -> list[dict[str, str]]:
    """Each pinned model's files checked against their SHA-256 (as loading them would)."""
    from voxbench.audio.dnsmos import model_path as dnsmos_model_path
    from voxbench.audio.vad import silero_model_path
    from voxbench.audio.weights import DNSMOS_P835, SILERO_VAD_V6, WHISPER_TINY_EN, verify_model
    from voxbench.audio.whisper_local import tiny_en_model_dir

    rows = []
    for label, pinned, where in (
        ("Whisper tiny.en weights", WHISPER_TINY_EN, tiny_en_model_dir),
        ("Silero VAD v6 model", SILERO_VAD_V6, lambda: silero_model_path().parent),
        ("DNSMOS P.835 model", DNSMOS_P835, lambda: dnsmos_model_path().parent),
    ):
        try:
            verify_model(Path(where()), pinned)
            status = "pinned SHA-256"
        except PrerequisiteError as exc:
            status = f"refused: {exc}"
        rows.append(
            {"model": label, "from": f"{pinned.package} {pinned.version}", "status": status}
        )
    return rows


def doctor_command(
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON on stdout."),
) -> None:
    """Versions of the packages and model files that change numbers, against the tested ones.

    Exits 1 when an installed version is not the tested one or a model file is refused:
    reinstall with the project's constraints (see the README's set-up) to get them back.
    """
    packages = numeric_versions()
    weights = _weights()
    constraints = constraints_path()
    untested = [p for p in packages if not p.is_tested]
    refused = [w for w in weights if not w["status"].startswith("pinned")]
    if as_json:
        document = {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "constraints": str(constraints) if constraints else None,
            "packages": [
                {
                    "package": p.package,
                    "role": p.role,
                    "installed": p.installed,
                    "tested": p.tested,
                    "is_tested": p.is_tested,
                }
                for p in packages
            ],
            "models": weights,
            "all_tested": not untested and not refused,
        }
        print(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        listing = Listing(
            key="packages",
            title="packages that compute numbers",
            columns=(
                Column("package", name=True),
                Column("installed", name=True),
                Column("tested", name=True),
                Column("ok"),
                Column("role"),
            ),
        )
        for p in packages:
            listing.add(
                package=p.package,
                installed=p.installed or "not installed",
                tested=p.tested,
                ok=p.is_tested,
                role=p.role,
            )
        models = Listing(
            key="models",
            title="model files",
            columns=(Column("model"), Column("from", name=True), Column("status")),
            rows=weights,
        )
        print_listings([listing, models])
        console = make_console(stderr=True)
        where = escape(str(constraints)) if constraints else "no constraints.txt found"
        console.print(f"Python {platform.python_version()}; tested versions from {where}")
        if untested or refused:
            console.print(
                f"[yellow]{len(untested)} package(s) not at the tested version, "
                f"{len(refused)} model file(s) refused[/yellow]: numbers may differ from the "
                "project's; reinstall with: pip install -c constraints.txt -e ."
            )
        else:
            console.print("[green]every package and model file is the tested one[/green]")
    if untested or refused:
        raise typer.Exit(GATE_EXIT)
