"""``voxbench rubric validate FILE`` / ``voxbench rubric show NAME``: audio rubrics."""

from __future__ import annotations

import json

import typer

from voxbench.cli.console import escape, make_console
from voxbench.judging.audio.prompt import instructions
from voxbench.judging.audio.rubric import (
    builtin_rubric_names,
    describe,
    load_rubric,
    parse_options,
)
from voxbench.judging.audio.steps import stored_steps

app = typer.Typer(help="Validate and show audio rubrics.", no_args_is_help=True)


@app.command("validate")
def validate(
    file: str = typer.Argument(..., help="A rubric file (.yaml) or a built-in rubric name."),
) -> None:
    """Check a rubric file; a problem is printed with its file and field (exit 2)."""
    console = make_console()
    rubric = load_rubric(file)
    missing = [k for k, p in rubric.parameters.items() if p.default is None]
    note = f" (needs -o {'=… -o '.join(missing)}=…)" if missing else ""
    console.print(
        f"[green]valid[/green]: {escape(rubric.name)} — {len(rubric.criteria)} criteria: "
        + escape(", ".join(c.name for c in rubric.criteria))
        + escape(note)
    )


@app.command("show")
def show(
    name: str = typer.Argument(
        None, help="A built-in rubric name or a rubric file; none lists them."
    ),
    option: list[str] = typer.Option(None, "--option", "-o", help="A rubric parameter, KEY=VALUE."),
    prompt: bool = typer.Option(False, "--prompt", help="Print the judge's instructions too."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Show a rubric: criteria, scales, steps, parameters and its hash."""
    console = make_console()
    if name is None:
        for builtin in builtin_rubric_names():
            rubric = load_rubric(builtin)
            console.print(f"[b]{escape(builtin)}[/b]: {escape(rubric.description.strip())}")
        return
    rubric = load_rubric(name)
    values = parse_options(option)
    for key, spec in rubric.parameters.items():
        if key not in values and spec.default is None:
            values[key] = "{" + key + "}"  # shown unfilled
    bound = rubric.bind(values)
    data = describe(bound)
    if as_json:
        print(json.dumps(data, indent=1, ensure_ascii=False))
        return
    console.print(f"[b]{escape(bound.name)}[/b] (hash {bound.digest()})")
    console.print(escape(bound.rubric.description.strip()))
    for c in data["criteria"]:
        console.print(
            f"- [b]{escape(c['name'])}[/b] {c['scale'][0]}-{c['scale'][1]}, passes at "
            f"{c['pass_at']}: {escape(c['description'])}"
        )
    steps = bound.rubric.steps or stored_steps(bound)
    if steps:
        console.print("steps:")
        for i, step in enumerate(steps, 1):
            console.print(f"  {i}. {escape(step)}")
    else:
        console.print("steps: written by the judge model on first use (generate_steps: true)")
    console.print(
        f"scope {rubric.scope}, segments {rubric.segments}, combine {rubric.combine}, "
        f"form {rubric.form}" + (", needs a transcript" if rubric.needs_transcript else "")
    )
    for key, p in data["parameters"].items():
        console.print(
            f"parameter {escape(key)}: {escape(p['description'])} (default {escape(str(p['default']))})"
        )
    if prompt:
        console.print()
        console.print(escape(instructions(bound, steps or ["(steps written on first use)"])))
