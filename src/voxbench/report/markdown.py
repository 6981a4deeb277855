"""``report.md``: a run's scorecard and its failures turn by turn, with reasoning and evidence."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from voxbench.core.records import CheckTotals, DimensionScore, Judgment, Scorecard, TurnRecord
from voxbench.core.secrets import redact_text

_JUDGE_LABELS = {"llm": "LLM judge"}


def _pct(rate: float | None) -> str:
    return "—" if rate is None else f"{rate:.1%}"


def _ci(score: DimensionScore) -> str:
    return "—" if score.ci95 is None else f"{score.ci95[0]:.1%} – {score.ci95[1]:.1%}"


def _turns(turns: list[str], limit: int = 12) -> str:
    if not turns:
        return ""
    shown = ", ".join(turns[:limit])
    return shown + (f" … (+{len(turns) - limit})" if len(turns) > limit else "")


def _undecided(score: DimensionScore) -> str:
    if not score.undecided:
        return ""
    return f"{score.undecided} undecided: {_turns(score.undecided_turns)}"


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _quote(text: str) -> str:
    lines = str(text).strip().splitlines() or [""]
    return "\n".join(f"> {line}" if line else ">" for line in lines)


def _absorbed(score: DimensionScore) -> str:
    note = score.absorbed_note
    return "" if note is None else f"{note}: {_turns(score.absorbed_turns)}"


def judged_lines(card: Scorecard) -> list[str]:
    """Which dimensions were judged and by what, and what the strict pass covers."""
    out = []
    if card.strict_pass_note:
        out.append(f"**Strict per-turn pass: {card.strict_pass_note}.**")
    judged = card.judged
    if judged is not None:
        kinds = [
            ("by code", judged.deterministic),
            ("by an LLM judge", judged.llm),
            ("from the audio analysis", judged.analysis),
        ]
        parts = [f"{label}: {', '.join(dims)}" for label, dims in kinds if dims]
        out.append("- Judged " + "; ".join(parts) if parts else "- Nothing was judged")
        if judged.not_judged:
            out.append(f"- Not judged (no LLM judge given): {', '.join(judged.not_judged)}")
    if card.scoring_rules != "voxbench":
        out.append(f"- Scoring rules: {card.scoring_rules}")
    return out + [""] if out else []


def scorecard_section(card: Scorecard) -> list[str]:
    """The scorecard as markdown tables and lines."""
    out = [
        *judged_lines(card),
        "| dimension | passed / decided | rate | 95% CI | failed turns | undecided | "
        "failed because of an earlier miss |",
        "|---|---:|---:|---|---|---|---|",
    ]
    for score in [card.strict_pass, *card.dimensions]:
        name = "**strict per-turn pass**" if score is card.strict_pass else score.dimension
        if score is card.strict_pass and card.strict_pass_note:
            name += f" ({card.strict_pass_note})"
        out.append(
            f"| {name} | {score.passed}/{score.scored} | {_pct(score.rate)} | {_ci(score)} | "
            f"{_turns(score.failed_turns)} | {_undecided(score)} | {_absorbed(score)} |"
        )
    out.append("")
    summary = card.undecided_summary()
    if summary is not None:
        mark = "**Too many undecided turns**: " if card.too_many_undecided else "- Undecided: "
        out += [mark + summary + f" (turns {_turns(card.undecided_turns)}).", ""]
    c = card.checks
    if c is not None:
        out += checks_lines(c)
    for judge, status in card.judge_status.items():
        out.append(f"- {_JUDGE_LABELS.get(judge, judge.replace('-', ' ').capitalize())}: {status}")
    counts = {k: v for k, v in card.counts.model_dump().items() if k not in ("turns", "ok") and v}
    if counts:
        out.append(
            "- Counts: " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in counts.items())
        )
    llm = card.llm_judge
    if llm is not None:
        out.append(
            f"- LLM judge: {llm.turns_asked} turns asked, {llm.from_cache} from cache, "
            f"{llm.calls} calls, {llm.retried_turns} retried, "
            f"{len(llm.failed_turns)} failed; tokens in/out "
            f"{llm.usage.get('input_tokens', 0)}/{llm.usage.get('output_tokens', 0)}"
        )
    if card.latency:
        out += [
            "",
            "| latency (ms) | p50 | p90 | p95 | p99 | mean | n |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for metric, v in card.latency.items():
            cells = " | ".join(_ms(x) for x in (v.p50, v.p90, v.p95, v.p99, v.mean))
            out.append(f"| {metric} | {cells} | {v.count} |")
    return out


def _ms(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds * 1000:.0f}"


def checks_lines(c: CheckTotals) -> list[str]:
    """The deterministic checks' totals, one ``- `` line each (the HTML report shows them too)."""
    out = []
    for rate, label in (
        (c.tool_use_over_tool_turns, "turns involving tools"),
        (c.tool_use_over_all_turns, "all turns"),
    ):
        if rate is not None:
            out.append(f"- Tool use over {label}: {rate.passed}/{rate.scored} ({_pct(rate.rate)})")
    out += [
        f"- Required calls made on time: {c.required_calls_on_time}/{c.required_calls}",
        f"- Facts mentioned: {c.facts_covered}/{c.facts}",
        f"- State checks as expected: {c.state_checks_passed}/{c.state_checks}",
    ]
    extras = [
        (label, value)
        for value, label in (
            (c.calls_early, "calls made one turn early"),
            (c.calls_late, "calls made one turn late"),
            (c.missing_calls, "missing calls"),
            (c.wrong_argument_calls, "calls with wrong arguments"),
            (c.spurious_calls, "spurious calls"),
            (c.forbidden_calls_made, "forbidden calls"),
            (c.malformed_calls, "malformed calls"),
            (c.duplicate_calls, "duplicate calls"),
            (c.false_claims, "false claims"),
            (c.state_failures_absorbed, "state failures absorbed into their root cause"),
        )
        if value
    ]
    if extras:
        out.append("- " + "; ".join(f"{label}: {value}" for label, value in extras))
    end = c.end_state
    if end is not None:
        if end.passed:
            out.append("- End state: as expected")
        else:
            why = f" (explained by {', '.join(end.explained_by)})" if end.explained_by else ""
            out.append(f"- End state: differs{why}: " + "; ".join(end.diff))
    if c.cascade_note:
        out.append(f"- Note: {c.cascade_note}")
    return out


def _judgment_line(j: Judgment) -> str:
    if j.judge_failed:
        mark = "? (undecided)"
    elif j.absorbed_by:
        mark = f"↪ (absorbed into {j.absorbed_by})"
    else:
        mark = "✗"
    line = f"- {mark} **{j.dimension}** [{j.judge}]: {_cell(j.reasoning)}"
    if j.evidence:
        line += "\n" + "\n".join(f"  - {_cell(e)}" for e in j.evidence)
    return line


def failures_section(records: list[TurnRecord], judgments: list[Judgment]) -> list[str]:
    """Every turn with a failed, undecided or absorbed judgment, with what happened."""
    by_turn: dict[str, list[Judgment]] = defaultdict(list)
    for j in judgments:
        by_turn[j.turn].append(j)
    out: list[str] = []
    for record in records:
        notable = [
            j
            for j in by_turn.get(record.turn, [])
            if j.passed is False or j.judge_failed or j.absorbed_by
        ]
        if not notable and record.status == "ok":
            continue
        out += [
            "",
            f"### Turn {record.turn} ({record.status})",
            "",
            "User:",
            _quote(record.user_text),
        ]
        out += ["", "Agent said:", _quote(record.spoken_text or "(nothing)")]
        if record.heard_text is not None and record.heard_text != record.assistant_text:
            out += ["", "Provider transcript:", _quote(record.assistant_text)]
        if record.tool_calls:
            out += ["", "Tool calls:"]
            for call in record.tool_calls:
                args = ", ".join(f"{k}={v!r}" for k, v in call.arguments.items())
                result = (
                    (call.result.get("error") or call.result.get("status"))
                    if isinstance(call.result, dict)
                    else call.result
                )
                dup = " (duplicate)" if call.is_duplicate else ""
                out.append(f"- `{call.name}({_cell(args)})` → {_cell(str(result))}{dup}")
        if record.errors:
            out += ["", "Errors: " + "; ".join(_cell(e) for e in record.errors)]
        out += [""] + [_judgment_line(j) for j in notable]
    return out or ["", "No failures."]


def compat_section(summary: dict[str, Any]) -> list[str]:
    """The compat summary (ConversationBench, AIEWF, ...)."""
    title = summary.get("title", "ConversationBench")
    out = [
        "",
        f"## {title}-compatible summary",
        "",
        "| dimension | passes | of | rate |",
        "|---|---:|---:|---:|",
    ]
    totals = summary["category_totals"]
    for dim, value in summary["passes"].items():
        den = totals.get(dim, summary["turns_scored"])
        rate = summary["rates"].get(dim)
        out.append(f"| {dim} | {'—' if value is None else value} | {den} | {_pct(rate)} |")
    tp = summary["turn_pass"]
    over = " ∧ ".join(tp.get("dimensions", ["tool", "instruction", "kb"]))
    count = tp["count"] if tp["count"] is not None else "—"
    out.append(f"| turn_pass ({over}) | {count} | {tp['total']} | {_pct(tp['rate'])} |")
    if summary.get("reproduces"):
        out += ["", "Reproduced from the public benchmark:"]
        out += [f"- {line}" for line in summary["reproduces"]]
    out += ["", "Differences from the public benchmark's counting:"]
    out += [f"- {note}" for note in summary["notes"]]
    return out


def render_report(
    card: Scorecard,
    records: list[TurnRecord],
    judgments: list[Judgment],
    compat: dict[str, Any] | None = None,
    *,
    perturbations: str | None = None,
    seed: int = 0,
) -> str:
    """The whole ``report.md``; ``perturbations``: the spec the target heard through (run.json)."""
    out = [
        f"# {card.benchmark} · {card.target}",
        "",
        f"Run `{card.run_id}`, {card.turns} turns judged by "
        + ", ".join(f"`{j}`" for j in card.judges)
        + ".",
        "",
    ]
    if perturbations:
        out += [
            f"**Perturbed:** the target heard the user's audio through `{perturbations}` "
            f"(seed {seed}); the recording keeps the clean user audio, `perturbed/` what the "
            "target heard.",
            "",
        ]
    out += [
        "## Scorecard",
        "",
        *scorecard_section(card),
        "",
        "## Failures turn by turn",
        *failures_section(records, judgments),
    ]
    if compat is not None:
        out += compat_section(compat)
    return redact_text("\n".join(out).rstrip() + "\n")
