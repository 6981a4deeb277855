"""``fdb_report_<mode>.html``: a Full-Duplex-Bench scoring as one self-contained page.

Per category, the summary rows (mean ± std of every metric, timing percentiles); per sample,
its metrics, notes and errors with players for ``input.wav`` and ``output.wav``. It reads
what ``voxbench fdb score`` wrote (``fdb_summary_<mode>.json``, ``fdb_scores_<mode>.jsonl``)
and draws with the report room's page, players and plots.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from voxbench.core.errors import ConfigError
from voxbench.core.rundir import read_jsonl, write_text_atomic
from voxbench.fullduplex.corpus import CLEAN_INPUT_WAV, CLEAN_OUTPUT_WAV, INPUT_WAV, OUTPUT_WAV
from voxbench.fullduplex.scoring import scores_file, summary_file
from voxbench.fullduplex.summary import METRIC_ORDER, TIMING_METRICS, read_summary
from voxbench.report.audio_links import AudioLinks
from voxbench.report.page import render_page
from voxbench.report.svg import distribution_svg

PLAYERS = ((INPUT_WAV, "input"), (OUTPUT_WAV, "output"), (CLEAN_INPUT_WAV, "clean input"),
           (CLEAN_OUTPUT_WAV, "clean output"))  # fmt: skip


def report_file(root: Path, mode: str) -> Path:
    """Where the page of a scoring pass is written."""
    return root / f"fdb_report_{mode}.html"


def _metric_text(value: Any) -> str:
    if value is None:
        return "—"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _sample_folder(root: Path, sample: str) -> Path:
    folder = root / sample
    return folder if folder.is_dir() else root  # a single sample scored on its own


def render_fdb_html(
    out_dir: str | Path,
    *,
    mode: str = "fdb-v1",
    embed_audio: bool = False,
    links: AudioLinks | None = None,
    samples_dir: str | Path | None = None,
) -> str:
    """The page of the ``mode`` scoring written in ``out_dir`` (links relative to it), whose
    sample folders are in ``samples_dir`` (default: ``out_dir`` itself)."""
    root = Path(out_dir)
    samples_root = Path(samples_dir) if samples_dir is not None else root
    summary_path = summary_file(root, mode)
    if not summary_path.is_file():
        raise ConfigError(
            f"no {summary_path.name} here (score it first: voxbench fdb score {root} --mode {mode})",
            file=root,
        )
    summary = read_summary(summary_path)
    scores = read_jsonl(scores_file(root, mode))
    links = links or AudioLinks(base_dir=root, embed=embed_audio)
    categories: dict[str, dict[str, Any]] = {}
    for row in summary["rows"]:
        entry = categories.setdefault(row["category"], {"rows": [], "samples": [], "metrics": []})
        entry["rows"].append(row)
        for name in row["metrics"]:
            if name not in entry["metrics"]:
                entry["metrics"].append(name)
    for score in scores:
        entry = categories.setdefault(
            score["category"], {"rows": [], "samples": [], "metrics": list(score["metrics"])}
        )
        folder = _sample_folder(samples_root, score["sample"])
        players = [
            (label, src) for name, label in PLAYERS if (src := links.src(folder / name)) is not None
        ]
        entry["samples"].append(
            {
                **score,
                "players": players,
                "details_json": json.dumps(
                    score.get("details") or {}, indent=1, ensure_ascii=False
                ),
            }
        )
    for entry in categories.values():
        entry["metrics"].sort(
            key=lambda m: METRIC_ORDER.index(m) if m in METRIC_ORDER else len(METRIC_ORDER)
        )
        for sample in entry["samples"]:
            sample["cells"] = [_metric_text(sample["metrics"].get(m)) for m in entry["metrics"]]
        entry["plots"] = [
            distribution_svg({"samples": [s["metrics"].get(m) for s in entry["samples"]]}, title=m)
            for m in entry["metrics"]
            if m in TIMING_METRICS
        ]
    return render_page(
        "fdb.html.j2",
        root=root,
        mode=mode,
        summary=summary,
        categories=categories,
        timing=TIMING_METRICS,
        count=len(scores),
    )


def write_fdb_html(
    out_dir: str | Path,
    *,
    mode: str = "fdb-v1",
    embed_audio: bool = False,
    samples_dir: str | Path | None = None,
) -> Path:
    """Write the page of a scoring pass beside its summary; return its path."""
    root = Path(out_dir)
    page = render_fdb_html(root, mode=mode, embed_audio=embed_audio, samples_dir=samples_dir)
    path = report_file(root, mode)
    write_text_atomic(path, page)
    return path
