"""``voxbench judge RUN_DIR``: (re)judge a recorded run without calling the target."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from voxbench.cli.console import make_console
from voxbench.cli.gates import FAIL_UNDER_HELP, enforce_gates
from voxbench.core.rundir import RunDirectory
from voxbench.evaluation import EvaluationOptions, evaluate_run
from voxbench.evaluation.gates import parse_fail_under, refuse_incomplete
from voxbench.judging.audio.rubric import parse_options
from voxbench.report.terminal import scorecards_table

JUDGE_HELP = (
    "LLM judge as provider:model or provider/model: anthropic:MODEL, openai:MODEL, "
    "gemini:MODEL, openai-compatible:MODEL (with --judge-base-url). Without it, only the "
    "deterministic judge runs."
)


def judge_command(
    run_dir: Path = typer.Argument(..., help="A run directory."),
    judge: str = typer.Option(None, "--judge", "-j", help=JUDGE_HELP),
    judge_base_url: str = typer.Option(
        None, "--judge-base-url", help="Endpoint of the judge (self-hosted, proxy, fake server)."
    ),
    only_turns: str = typer.Option(
        None, "--only-turns", help="Turn positions to judge, e.g. 0,3-5."
    ),
    skip_turn_taking: bool = typer.Option(
        False, "--skip-turn-taking", help="Leave the turn_taking dimension out of the judgment."
    ),
    deterministic_only: bool = typer.Option(
        False, "--deterministic-only", help="Judge with code only, even if --judge is given."
    ),
    compat: str = typer.Option(
        None,
        "--compat",
        help="Judge by a public benchmark's rules and write its summary: conversation-bench, "
        "aiewf. Needs --judge (refused without one: the numbers would not be comparable).",
    ),
    no_cache: bool = typer.Option(
        False, "--no-cache", help="Ask the LLM judge again even for turns judged before."
    ),
    fail_under: list[str] = typer.Option(None, "--fail-under", help=FAIL_UNDER_HELP),
    audio_rubric: str = typer.Option(
        None,
        "--audio-rubric",
        help="Judge the agent's audio (conversation.wav) with this rubric, built-in name or "
        "file: one dimension audio_<criterion> per criterion (see voxbench rubric show).",
    ),
    audio_judge: str = typer.Option(
        None, "--audio-judge", help="The judge that hears the audio (provider/model)."
    ),
    audio_judge_base_url: str = typer.Option(
        None, "--audio-judge-base-url", help="Endpoint of the audio judge."
    ),
    audio_option: list[str] = typer.Option(
        None, "--audio-option", help="A parameter of the audio rubric, KEY=VALUE."
    ),
    audio_samples: int = typer.Option(
        1, "--audio-samples", min=1, help="Judge each turn's audio N times (the mean decides)."
    ),
    audio_quality: bool = typer.Option(
        False,
        "--audio-quality",
        help="Score the agent's audio per turn offline with DNSMOS P.835 (dimension "
        "audio_quality: passes at OVRL 3); noise and distortion, not accent or naturalness.",
    ),
) -> None:
    """Judge a run: writes judged.jsonl, scorecard.json and report.md, prints the scorecard."""
    console = make_console()
    gates = parse_fail_under(fail_under)
    result = evaluate_run(
        run_dir,
        EvaluationOptions(
            judge=judge,
            judge_base_url=judge_base_url,
            only_turns=only_turns,
            skip_turn_taking=skip_turn_taking,
            deterministic_only=deterministic_only,
            compat=compat,
            use_cache=not no_cache,
            audio_rubric=audio_rubric,
            audio_judge=audio_judge,
            audio_judge_base_url=audio_judge_base_url,
            audio_rubric_options=parse_options(audio_option, field="--audio-option"),
            audio_samples=audio_samples,
            audio_quality=audio_quality,
        ),
    )
    card = result.card
    console.print(scorecards_table([card], title=escape(f"{card.benchmark} · {card.target}")))
    llm = card.llm_judge
    if llm is not None:
        console.print(
            f"LLM judge: {llm.turns_asked} turns, {llm.from_cache} from cache, "
            f"{llm.calls} calls, {len(llm.failed_turns)} failed"
        )
    if result.compat is not None:
        passes = result.compat["passes"]
        totals = result.compat["category_totals"]
        n = result.compat["turns_scored"]
        console.print(
            f"{result.compat['compat']} compat: "
            + ", ".join(
                f"{dim} {value}/{totals.get(dim, n)}"
                for dim, value in passes.items()
                if value is not None
            )
        )
    console.print(f"report: [b]{escape(str(RunDirectory(run_dir).report_file))}[/b]")
    refuse_incomplete(card, result.records, result.judgments, run_dir)
    enforce_gates(card, gates, console)
