"""Issue 12 item 11: ``voxbench list ...`` as JSON, piped, in a narrow terminal; aliases; pipelines."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from tests.cli_invoke import invoke
from voxbench.cli.tables import Column, Listing, cell_text, print_listings, table_width
from voxbench.core.errors import PrerequisiteError
from voxbench.providers.registry import Role, resolve_name
from voxbench.runner.credentials import check_credentials
from voxbench.targets.registry import canonical_name

LISTS = ["benchmarks", "targets", "pipelines", "judges", "asr", "tts", "aliases"]


def _words(rows: list[dict]) -> set[str]:
    return {word for row in rows for value in row.values() for word in cell_text(value).split()}


@pytest.mark.parametrize("what", LISTS)
def test_every_list_prints_json_on_stdout_alone(monkeypatch, capsys, what: str) -> None:
    code, out, err = invoke(monkeypatch, capsys, "list", what, "--json")
    assert code == 0, err
    rows = json.loads(out)  # stdout holds the JSON document and nothing else
    assert isinstance(rows, list) and rows and all(isinstance(r, dict) for r in rows)


def test_tasks_list_prints_its_three_listings_as_json(monkeypatch, capsys) -> None:
    code, out, _ = invoke(monkeypatch, capsys, "tasks", "list", "--json")
    assert code == 0
    data = json.loads(out)
    assert set(data) == {"tasks", "metrics", "models"}
    assert "builtin_en_asr" in {row["task"] for row in data["tasks"]}


@pytest.mark.parametrize("what", LISTS)
def test_piped_into_a_narrow_terminal_no_word_is_cut(monkeypatch, capsys, what: str) -> None:
    """Today's bug: ``openai-realtime`` printed as ``openai-r`` / ``ealtime`` when piped."""
    _, as_json, _ = invoke(monkeypatch, capsys, "list", what, "--json")
    code, out, _ = invoke(monkeypatch, capsys, "list", what, columns=40)  # stdout is not a tty
    assert code == 0
    lines = out.splitlines()
    missing = [w for w in _words(json.loads(as_json)) if not any(w in line for line in lines)]
    assert missing == []
    if what == "targets":
        (line,) = [x for x in lines if x.startswith("openai-realtime ")]
        assert "OPENAI_API_KEY" in line  # one row, one line: grep finds the whole row


def _listing() -> Listing:
    listing = Listing(
        "targets", "Targets", [Column("provider", name=True), Column("env"), Column("about")]
    )
    listing.add(provider="azure-openai-realtime", env="AZURE_OPENAI_API_KEY and X", about="a b")
    listing.add(provider="openai-realtime", env="OPENAI_API_KEY", about="speech to speech " * 9)
    return listing


@pytest.mark.parametrize("width", [20, 40, 60, 80, 100, 200])
def test_in_a_terminal_of_any_width_every_name_stays_whole(width: int) -> None:
    listing = _listing()
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=True, color_system=None)
    print_listings([listing], console=console)
    text = out.getvalue()
    for word in _words(listing.rows):
        assert word in text, (width, word)
    is_table = "┃" in text
    assert is_table == (width >= table_width(listing))
    if is_table:
        assert max(len(line) for line in text.splitlines()) <= width
    else:  # too narrow for the table: one block per row, the name first
        assert "openai-realtime\n  env: OPENAI_API_KEY\n" in text


# -- aliases -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("alias", "canonical"),
    [
        ("google/gemini-2.5-flash", "gemini/gemini-2.5-flash"),
        ("google:gemini-2.5-flash", "gemini/gemini-2.5-flash"),
        ("google/gemini-2.5-flash-native-audio-preview-12-2025", "gemini-live/"),
        ("ultravox-realtime/ultravox-v0.7", "ultravox/ultravox-v0.7"),
        ("ultravox-realtime", "ultravox/ultravox-v0.7"),
        ("grok-realtime/grok-voice-think-fast-1.0", "xai-realtime/grok-voice-think-fast-1.0"),
    ],
)
def test_provider_aliases_name_their_provider(alias: str, canonical: str) -> None:
    from voxbench.targets.pipelines import route_target

    assert canonical_name(route_target(alias)).startswith(canonical)


def test_an_alias_works_for_judges_and_asks_for_its_providers_key(monkeypatch) -> None:
    provider, parsed = resolve_name("google:gemini-2.5-flash", Role.TEXT_COMPLETION)
    assert (provider.name, str(parsed)) == ("gemini", "gemini/gemini-2.5-flash")
    for var in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "XAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(PrerequisiteError, match="GEMINI_API_KEY or GOOGLE_API_KEY"):
        check_credentials("google/gemini-2.5-flash")
    with pytest.raises(PrerequisiteError, match="XAI_API_KEY"):
        check_credentials("grok-realtime/grok-voice-think-fast-1.0")


def test_aliases_are_listed(monkeypatch, capsys) -> None:
    code, out, _ = invoke(monkeypatch, capsys, "list", "aliases", "--json")
    rows = {row["alias"]: row for row in json.loads(out)}
    assert rows["google/<model>"]["stands_for"] == "gemini/<model>"
    assert rows["ultravox-realtime/<model>"]["stands_for"] == "ultravox/<model>"
    assert rows["grok-realtime/<model>"]["stands_for"] == "xai-realtime/<model>"
    assert rows["grok-realtime/<model>"]["env"] == "XAI_API_KEY"
    assert rows["oracle"]["stands_for"] == "local/oracle"
    code, out, _ = invoke(monkeypatch, capsys, "list", "targets", "--json")
    targets = {row["provider"]: row for row in json.loads(out)}
    assert targets["gemini"]["aliases"] == ["google"]
    assert targets["xai-realtime"]["aliases"] == ["grok-realtime"]


# -- pipelines ---------------------------------------------------------------------------


def test_list_pipelines_says_how_each_target_runs_and_what_it_needs(monkeypatch, capsys) -> None:
    code, out, _ = invoke(monkeypatch, capsys, "list", "pipelines", "--json")
    assert code == 0
    rows = json.loads(out)
    by = {(r["pipeline"], r["stage"], r["provider"]): r for r in rows}
    realtime = by[("realtime", "speech-to-speech", "openai-realtime")]
    assert realtime["env"] == "OPENAI_API_KEY" and "openai/<model>" in realtime["used_when"]
    assert by[("realtime", "speech-to-speech", "gemini-live")]["env"] == (
        "GEMINI_API_KEY or GOOGLE_API_KEY"
    )
    assert "google/<model>" in by[("realtime", "speech-to-speech", "gemini-live")]["used_when"]
    assert "default local/whisper-tiny.en" in by[("cascade", "stt", "local")]["used_when"]
    assert by[("cascade", "stt", "openai")]["env"] == "OPENAI_API_KEY"
    assert "default local/espeak" in by[("cascade", "tts", "local")]["used_when"]
    assert ("cascade", "llm", "<any text target>") in by
    assert "anthropic" in by[("text", "llm", "<a text provider>")]["used_when"]


def test_a_mistyped_command_is_answered_with_a_suggestion(monkeypatch, capsys) -> None:
    code, out, err = invoke(monkeypatch, capsys, "list", "pipeline")
    assert code == 2 and "Did you mean 'pipelines'" in out + err
    code, out, err = invoke(monkeypatch, capsys, "rn", "smoke")
    assert code == 2 and "Did you mean 'run'" in out + err
