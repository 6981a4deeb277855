"""``voxbench judge-audio FILE|DIR --rubric R --judge P/M`` and
``voxbench judge-audio calibrate RUBRIC DIR``: the audio rubric judge, standalone."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import typer
from rich.table import Table
from typer.core import TyperGroup

from voxbench.audio.wav import read_wav
from voxbench.cli.console import escape, make_console
from voxbench.cli.fake_server import FakeServerKind, register_fake_server
from voxbench.core.errors import ConfigError, RunIncompleteError
from voxbench.judging.audio.calibrate import calibrate_judges
from voxbench.judging.audio.calibration_text import render_calibration
from voxbench.judging.audio.clients import AudioJudgeClient
from voxbench.judging.audio.engine import (
    CONCURRENCY,
    DEFAULT_MAX_SECONDS,
    ClipResult,
    RubricJudge,
)
from voxbench.judging.audio.factory import make_audio_judge
from voxbench.judging.audio.labelled_set import SETS, ensure_labelled_set
from voxbench.judging.audio.labels import load_labelled_set, parse_classes
from voxbench.judging.audio.realtime_judge import RESPONSE_TIMEOUT
from voxbench.judging.audio.rubric import load_rubric, parse_options
from voxbench.judging.audio.segments import Clip, scoped_audio
from voxbench.judging.cache import JudgmentCache
from voxbench.providers.completion import DEFAULT_TIMEOUT as HTTP_TIMEOUT

AUDIO_SUFFIXES = (".wav", ".flac", ".ogg")
JUDGE_HELP = (
    "The judge that hears the audio, provider/model: openai-realtime/gpt-realtime, "
    "azure-openai-realtime/DEPLOYMENT, openai/gpt-4o-audio-preview, gemini/gemini-2.5-flash, "
    "vllm/MODEL, openai-compatible/MODEL."
)

register_fake_server(
    FakeServerKind(
        "openai-realtime-judge",
        "OpenAI Realtime acting as an audio judge (turn detection must be off): answers "
        "each commit + response.create with the script's replies, in order",
        "voxbench.testing.openai_realtime:FakeRealtimeJudgeServer",
        "OPENAI_API_KEY=dummy voxbench judge-audio clip.wav --rubric pace "
        "--judge openai-realtime/gpt-realtime --judge-base-url {url}",
    )
)


class _FilesByDefault(TyperGroup):
    """``judge-audio FILE …`` runs the default command; ``judge-audio calibrate …`` the other."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["files", *args]
        return super().parse_args(ctx, args)


app = typer.Typer(
    cls=_FilesByDefault,
    help="Judge audio with a rubric (G-Eval over audio). judge-audio FILE|DIR --rubric R "
    "[-o KEY=VALUE] --judge P/M [--samples N] [--json] prints a table per file and criterion; "
    "judge-audio calibrate RUBRIC DIR measures a judge against a labelled set. "
    "judge-audio files --help lists the options.",
    no_args_is_help=True,
)


TIMEOUT_HELP = (
    "Seconds the judge may take: a realtime judge to answer one clip (default "
    f"{RESPONSE_TIMEOUT:g}), an HTTP judge between two bytes of its answer (default "
    f"{HTTP_TIMEOUT:g}); each attempt, up to 3 per clip."
)
CONCURRENCY_HELP = "Judge calls at the same time (clips and samples are judged concurrently)."


def _client(judge: str, base_url: str | None, timeout: float | None) -> AudioJudgeClient:
    options = {} if timeout is None else {"response_timeout": timeout}
    return make_audio_judge(judge, base_url=base_url, options=options)


def _cost(results: list[ClipResult]) -> str:
    """``N calls made, M from cache``: what a judging cost, in every output."""
    calls = sum(r.calls for r in results)
    cached = sum(r.from_cache for r in results)
    return f"{calls} calls made, {cached} from cache"


def _all_undecided(results: list[ClipResult]) -> bool:
    return bool(results) and all(c.mean is None for r in results for c in r.criteria.values())


def _audio_files(path: Path) -> list[Path]:
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix.lower() in AUDIO_SUFFIXES)
        if not files:
            raise ConfigError("no audio files (.wav, .flac, .ogg) in the directory", file=path)
        return files
    if not path.exists():
        raise ConfigError("file not found", file=path)
    return [path]


def _transcript(path: Path) -> str | None:
    beside = path.with_suffix(".txt")
    return beside.read_text(encoding="utf-8").strip() if beside.is_file() else None


@app.command("files", hidden=True)
def judge_files(
    path: Path = typer.Argument(..., help="A wav file or a directory of them."),
    rubric: str = typer.Option(
        ..., "--rubric", "-r", help="A built-in rubric name or a rubric file."
    ),
    option: list[str] = typer.Option(None, "--option", "-o", help="A rubric parameter, KEY=VALUE."),
    judge: str = typer.Option(..., "--judge", "-j", help=JUDGE_HELP),
    judge_base_url: str = typer.Option(None, "--judge-base-url", help="Endpoint of the judge."),
    samples: int = typer.Option(1, "--samples", "-n", min=1, help="Judge each file N times."),
    max_seconds: float = typer.Option(
        DEFAULT_MAX_SECONDS, "--max-seconds", help="Longer files are split on silences."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Ask again even if judged before."),
    timeout: float = typer.Option(None, "--timeout", min=1, help=TIMEOUT_HELP),
    concurrency: int = typer.Option(CONCURRENCY, "--concurrency", min=1, help=CONCURRENCY_HELP),
) -> None:
    """Judge audio files with a rubric: a table per file and criterion. A two-channel file
    (a run's conversation.wav: caller left, agent right) is judged on the agent channel alone
    under the rubric's scope: agent. Exits 4 when every judgment is undecided."""
    bound = load_rubric(rubric).bind(parse_options(option))
    files = _audio_files(path)
    scope = bound.rubric.scope
    clips = [Clip(f.name, scoped_audio(read_wav(f), scope), _transcript(f)) for f in files]
    client = _client(judge, judge_base_url, timeout)

    async def run() -> list[ClipResult]:
        engine = RubricJudge(
            client,
            bound,
            samples=samples,
            cache=None if no_cache else JudgmentCache(),
            max_seconds=max_seconds,
            concurrency=concurrency,
        )
        try:
            return await engine.judge_clips(clips)
        finally:
            await client.aclose()

    results = asyncio.run(run())
    if as_json:
        print(json.dumps({"rubric": bound.name, "rubric_hash": bound.digest(), "judge": client.name,
                          "calls": sum(r.calls for r in results),
                          "from_cache": sum(r.from_cache for r in results),
                          "files": [r.as_dict() for r in results]}, indent=1, ensure_ascii=False))  # fmt: skip
    else:
        table = Table(
            title=escape(f"{bound.name} · {client.name} · {samples} sample(s)"),
            caption=escape(_cost(results)),
        )
        for column in ("file", "criterion", "score", "spread", "weighted", "explanation"):
            table.add_column(column, overflow="fold")
        for r in results:
            for name, c in r.criteria.items():
                score = "undecided" if c.mean is None else f"{c.mean:g} / {c.scale[1]}"
                spread = "" if c.std is None else f"± {c.std:g} {c.distribution}"
                weighted = "" if c.weighted_mean is None else f"{c.weighted_mean:g}"
                table.add_row(
                    escape(r.label), name, score, escape(spread), weighted, escape(c.explanation)
                )
        make_console().print(table)
    if _all_undecided(results):
        reasons = sorted({why for r in results for why in r.as_dict()["undecided_reasons"]})
        raise RunIncompleteError(
            "every judgment is undecided" + (f": {'; '.join(reasons)}" if reasons else "")
        )


@app.command("calibrate")
def calibrate_command(
    rubric: str = typer.Argument(..., help="A built-in rubric name or a rubric file."),
    labelled: str = typer.Argument(
        ..., help=f"A labelled set directory (manifest.yaml), or a built-in set: {', '.join(SETS)}."
    ),
    option: list[str] = typer.Option(None, "--option", "-o", help="A rubric parameter, KEY=VALUE."),
    judge: list[str] = typer.Option(
        ..., "--judge", "-j", help=JUDGE_HELP + " Twice: both judges, and their agreement."
    ),
    judge_base_url: list[str] = typer.Option(
        None, "--judge-base-url", help="Endpoint of the judge (one per --judge, in order)."
    ),
    labels: Path = typer.Option(
        None, "--labels", help="Human ratings, a CSV with columns clip,criterion,label,rater."
    ),
    classes: list[str] = typer.Option(
        None, "--class", help="A class label and the scores it covers, NAME=LOW-HIGH (repeat)."
    ),
    samples: int = typer.Option(
        2, "--samples", "-n", min=1, help="Samples per file (2+: test-retest)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    html: Path = typer.Option(None, "--html", help="Also write the report as an HTML page."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Ask again even if judged before."),
    timeout: float = typer.Option(None, "--timeout", min=1, help=TIMEOUT_HELP),
    concurrency: int = typer.Option(CONCURRENCY, "--concurrency", min=1, help=CONCURRENCY_HELP),
    controls: bool = typer.Option(
        True,
        "--controls/--no-controls",
        help="Judge the controls that must fail: silence, each clip with another clip's audio, "
        "and the transcript alone (about three times the calls).",
    ),
) -> None:
    """A meta-evaluation of a judge against a labelled set: accuracy and within-one (Wilson
    CIs), Spearman, Cohen's and quadratic κ, Krippendorff's α (bootstrap CIs) against a
    constant-answer and a shuffled-label baseline (p-values), confusion matrix, test-retest,
    the controls that must fail, the human raters' agreement as the ceiling (--labels), and
    two judges' agreement (--judge twice); the verdict says whether the judge listens."""
    directory = Path(labelled)
    if not directory.is_dir():
        if labelled not in SETS:
            raise ConfigError(
                "not a directory nor a built-in labelled set",
                file=labelled,
                expected="a directory with manifest.yaml, or one of: " + ", ".join(SETS),
            )
        directory = ensure_labelled_set(labelled)
    urls = list(judge_base_url or [])
    if len(urls) > 1 and len(urls) != len(judge):
        raise ConfigError(
            f"{len(urls)} endpoints for {len(judge)} judges",
            field="--judge-base-url",
            expected="one endpoint, or one per --judge",
        )
    given = parse_classes(classes)
    rubric_spec = load_rubric(rubric)
    peek = load_labelled_set(directory, labels_csv=labels, classes=given)
    values = {**peek.options, **parse_options(option)}
    bound = rubric_spec.bind({k: v for k, v in values.items() if k in rubric_spec.parameters})
    labelled_set = load_labelled_set(directory, bound, labels_csv=labels, classes=given)
    clients = [
        _client(j, urls[i] if len(urls) > 1 else (urls[0] if urls else None), timeout)
        for i, j in enumerate(judge)
    ]

    async def run() -> dict[str, Any]:
        cache = None if no_cache else JudgmentCache()
        engines = [
            RubricJudge(c, bound, samples=samples, cache=cache, concurrency=concurrency)
            for c in clients
        ]
        try:
            return await calibrate_judges(engines, labelled_set, controls=controls)
        finally:
            for c in clients:
                await c.aclose()

    report = asyncio.run(run())
    if html is not None:
        from voxbench.report.calibration import write_calibration_html  # jinja2: only here

        write_calibration_html(report, html)
    if as_json:
        print(json.dumps(report, indent=1, ensure_ascii=False))
    else:
        print(render_calibration(report))
        if html is not None:
            print(f"HTML report: {html}")
