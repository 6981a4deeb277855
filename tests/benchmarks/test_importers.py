"""Importing ConversationBench and AIEWF checkouts (hand-written fixtures) without running them."""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from voxbench.benchmarks.backend import BackendSpec, HarnessOptions, ToolBackend
from voxbench.benchmarks.consistency import consistency_problems
from voxbench.benchmarks.loader import load_benchmark, validate_benchmark
from voxbench.cli.main import app
from voxbench.core.matching import args_match
from voxbench.evaluation import oracle_check
from voxbench.importers.aiewf import aiewf_variants, import_aiewf
from voxbench.importers.conversation_bench import import_conversation_bench
from voxbench.importers.package import git_commit
from voxbench.importers.prompt import find_current_date
from voxbench.importers.pyliteral import PyModule, UpstreamFormatError

FIXTURES = Path(__file__).parent / "fixtures"
CB_BENCH = Path("benchmarks") / "conversation_bench"
SHARED = Path("benchmarks") / "_shared"
RATE = 24_000


def streaming_wav(path: Path, seconds: float, freq: float = 440.0) -> bytes:
    """A 24 kHz PCM16 mono wav whose RIFF and data sizes are 0xFFFFFFFF, as streamed TTS writes."""
    t = np.arange(int(RATE * seconds)) / RATE
    pcm = (np.sin(2 * np.pi * freq * t) * 8000).astype("<i2").tobytes()
    fmt = struct.pack("<HHIIHH", 1, 1, RATE, RATE * 2, 2, 16)
    data = (
        b"RIFF"
        + struct.pack("<I", 0xFFFFFFFF)
        + b"WAVE"
        + b"fmt "
        + struct.pack("<I", len(fmt))
        + fmt
        + b"data"
        + struct.pack("<I", 0xFFFFFFFF)
        + pcm
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return data


@pytest.fixture
def cb_checkout(tmp_path: Path) -> Path:
    """The ConversationBench fixture with audio for every turn and a git HEAD."""
    src = tmp_path / "conversation-bench"
    shutil.copytree(FIXTURES / "conversation_bench_checkout", src)
    for i in range(6):
        streaming_wav(src / CB_BENCH / "audio" / f"turn_{i:03d}.wav", 0.25 + 0.05 * i)
    git = src / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "refs" / "heads" / "main").write_text("d1c336e" + "0" * 33 + "\n")
    return src


@pytest.fixture
def aiewf_checkout(tmp_path: Path) -> Path:
    """The AIEWF fixture; its turns name audio files that exist only under _shared/audio."""
    src = tmp_path / "aiewf-eval"
    shutil.copytree(FIXTURES / "aiewf_checkout", src)
    for i in range(5):
        streaming_wav(src / SHARED / "audio" / f"turn_{i:03d}.wav", 0.2)
    return src


AIEWF_SHA = "9526aac" + "1" * 33


def fake_git_head(src: Path, sha: str) -> None:
    git = src / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "refs" / "heads" / "main").write_text(sha + "\n")


# -- ConversationBench ----------------------------------------------------------------


def test_conversation_bench_imports_into_a_valid_benchmark(cb_checkout: Path, tmp_path: Path):
    out = tmp_path / "out" / "cb"
    result = import_conversation_bench(cb_checkout, out)

    assert validate_benchmark(out) == []
    bench = load_benchmark(out)
    assert (result.turns, result.tools, result.required_calls, result.canned_results) == (
        6,
        4,
        5,
        4,
    )
    assert bench.id == "conversation_bench"
    assert bench.version == "upstream-d1c336e00000"
    assert bench.current_date == "2025-03-03"  # "Today is March 3, 2025." in the preamble
    # ToolsSchema order; a positional FunctionSchema and required=None are read too.
    assert [t.name for t in bench.tools] == [
        "end_session",
        "register_for_session",
        "cancel_action",
        "submit_dietary_request",
    ]
    assert bench.tool("end_session").required == ()
    assert bench.tool("submit_dietary_request").required == ("name", "dietary_preference")
    # A module-level dict referenced by name is resolved.
    assert bench.tool("cancel_action").parameters["properties"]["name"]["type"] == "string"

    turns = bench.turns
    assert [t.id for t in turns] == ["0", "1", "2", "3", "4", "5"]
    assert turns[0].text.startswith("Hi there.") and not turns[0].expect.required_calls
    (register,) = turns[1].expect.required_calls
    assert (register.name, register.args) == (
        "register_for_session",
        {"name": "Lena Ortiz", "session_id": "731204"},
    )
    assert [c.args["session_id"] for c in turns[2].expect.required_calls] == ["731205", "731206"]
    assert turns[2].subcategory == "partial_success"
    assert turns[5].expect.required_calls[0].name == "end_session"


def test_argument_matchers_mirror_their_judge(cb_checkout: Path, tmp_path: Path):
    bench = load_benchmark(import_conversation_bench(cb_checkout, tmp_path / "cb").out_dir)
    (register,) = bench.turns[1].expect.required_calls
    assert register.matcher_for("session_id").rule == "exact"
    assert register.matcher_for("name").rule == "fuzzy"
    assert register.matcher_for("name").min_ratio == 82
    assert args_match(register, {"name": "ortiz, lena", "session_id": " 731204"})
    assert not args_match(register, {"name": "Marco Rossi", "session_id": "731204"})
    assert not args_match(register, {"name": "Lena Ortiz", "session_id": "731205"})
    (cancel,) = bench.turns[4].expect.required_calls
    # details="731204" has no letters: the number must appear whole, not approximately.
    assert cancel.matcher_for("details").rule == "regex"
    golden = dict(cancel.args)
    assert args_match(cancel, golden | {"details": "session 731204"})
    assert not args_match(cancel, golden | {"details": "731205"})
    assert not args_match(cancel, golden | {"details": "7312041"})


def test_system_prompt_keeps_the_preamble_and_places_the_knowledge_base(
    cb_checkout: Path, tmp_path: Path
):
    bench = load_benchmark(import_conversation_bench(cb_checkout, tmp_path / "cb").out_dir)
    kb = (cb_checkout / CB_BENCH / "data" / "knowledge_base.txt").read_text()
    assert "{knowledge_base}" in bench.system_prompt
    assert bench.knowledge_base == kb
    rendered = bench.render_system_prompt()
    # Exactly what their system_instruction concatenation produces.
    assert rendered.startswith("\nToday is March 3, 2025.")
    assert "### KNOWLEDGE BASE\n\n" + kb + "---\n### TOOLS" in rendered


def test_audio_is_copied_byte_for_byte_including_streaming_headers(
    cb_checkout: Path, tmp_path: Path
):
    result = import_conversation_bench(cb_checkout, tmp_path / "cb")
    bench = load_benchmark(result.out_dir)
    assert result.audio_files == 6
    assert result.audio_seconds == pytest.approx(sum(0.25 + 0.05 * i for i in range(6)), abs=1e-3)
    for i, turn in enumerate(bench.turns):
        assert turn.audio == f"audio/turn_{i:03d}.wav"
        source = cb_checkout / CB_BENCH / "audio" / f"turn_{i:03d}.wav"
        assert bench.audio_path(turn).read_bytes() == source.read_bytes()
        assert bench.audio_path(turn).read_bytes()[4:8] == b"\xff\xff\xff\xff"


def test_dimension_rule_follows_their_categories(cb_checkout: Path, tmp_path: Path):
    bench = load_benchmark(import_conversation_bench(cb_checkout, tmp_path / "cb").out_dir)
    dims = [bench.dimensions.for_turn(t) for t in bench.turns]
    core = ("tool_use", "instruction_following", "kb_grounding")
    assert dims[0] == core  # basic_qa
    assert dims[2] == (*core, "state_tracking")  # error_recovery + long_range_memory
    assert dims[3] == (*core, "ambiguity_handling")  # ambiguous_entity
    assert dims[4] == (*core, "state_tracking")  # cancellation_flow


def test_the_checkouts_own_category_table_wins(cb_checkout: Path, tmp_path: Path):
    # Older upstream versions added nothing for some categories.
    turns = cb_checkout / CB_BENCH / "turns.py"
    turns.write_text(
        turns.read_text().replace(
            "'ambiguous_entity': ['ambiguity_handling']", "'ambiguous_entity': []"
        )
    )
    bench = load_benchmark(import_conversation_bench(cb_checkout, tmp_path / "cb").out_dir)
    assert "ambiguous_entity" not in bench.dimensions.by_category
    assert bench.dimensions.for_turn(bench.turns[3]) == (
        "tool_use",
        "instruction_following",
        "kb_grounding",
    )


def test_canned_results_follow_the_call_not_the_order(cb_checkout: Path, tmp_path: Path):
    bench = load_benchmark(import_conversation_bench(cb_checkout, tmp_path / "cb").out_dir)
    spec = BackendSpec.model_validate(bench.backend)
    # voxbench's own harness: calls in the reverse of the golden order get their own results.
    backend = ToolBackend(spec, {t.name for t in bench.tools}, harness=HarnessOptions())
    backend.begin_turn("2")
    later, _ = backend.call("register_for_session", {"name": "lena ortiz", "session_id": "731206"})
    full, _ = backend.call("register_for_session", {"name": "Lena Ortiz", "session_id": "731205"})
    assert later == {"status": "success"}
    assert full["error_code"] == "SESSION_FULL"
    # The package's own (upstream's) harness hands them out in call order.
    assert spec.harness.upstream == "conversation-bench"
    upstream = ToolBackend(spec, {t.name for t in bench.tools})
    upstream.begin_turn("2")
    first, _ = upstream.call("register_for_session", {"name": "Lena", "session_id": "731206"})
    assert first["error_code"] == "SESSION_FULL"
    backend.begin_turn("5")
    assert not backend.snapshot()["ended"]
    backend.call("end_session", {})
    assert backend.snapshot()["ended"]  # end_session still ends the conversation


def test_oracle_scores_full_marks_on_the_imported_conversation_bench(
    cb_checkout: Path, tmp_path: Path
):
    bench = load_benchmark(import_conversation_bench(cb_checkout, tmp_path / "cb").out_dir)
    assert consistency_problems(bench) == []
    assert oracle_check(bench) == []
    assert oracle_check(bench) == []  # deterministic: a second run agrees


# -- AIEWF ----------------------------------------------------------------------------


def test_aiewf_imports_the_default_variant(aiewf_checkout: Path, tmp_path: Path):
    assert aiewf_variants(aiewf_checkout) == ["aiwf_long_context", "aiwf_medium_context"]
    fake_git_head(aiewf_checkout, AIEWF_SHA)
    result = import_aiewf(aiewf_checkout, tmp_path / "ae", variant="aiwf_long_context")
    bench = load_benchmark(result.out_dir)
    assert validate_benchmark(result.out_dir) == []
    assert bench.id == "aiwf_long_context" and result.upstream_commit == AIEWF_SHA
    assert bench.current_date == "2025-04-13"  # from an f-string of module constants
    assert [t.name for t in bench.tools] == [
        "end_session",
        "submit_session_suggestion",
        "vote_for_session",
    ]
    assert len(bench.turns) == 5 and result.required_calls == 3
    (vote,) = bench.turns[2].expect.required_calls
    assert vote.args == {"name": "Tom Baker", "session_id": "480113"}
    canned = BackendSpec.model_validate(bench.backend).canned
    assert canned["2"][0].result["error_code"] == "INTERNAL_ERROR"
    # Their audio_file paths are wrong (turns_audio/..., bare names): found by name instead.
    assert result.audio_files == 5
    assert all(t.audio == f"audio/turn_{i:03d}.wav" for i, t in enumerate(bench.turns))
    # AIEWF turns carry no categories: only the core dimensions apply.
    assert all(len(bench.dimensions.for_turn(t)) == 3 for t in bench.turns)
    assert "Lakeside Voice Summit 2025 (long context)" in bench.render_system_prompt()
    assert oracle_check(bench) == []


def test_aiewf_variant_option_picks_its_prompt_and_knowledge_base(
    aiewf_checkout: Path, tmp_path: Path
):
    result = import_aiewf(aiewf_checkout, tmp_path / "am", upstream_commit=AIEWF_SHA)
    bench = load_benchmark(result.out_dir)
    assert bench.id == "aiwf_medium_context"  # the default: upstream's published table
    assert bench.current_date == "2025-04-13"  # ISO date in the prompt
    assert "(medium context)" in bench.knowledge_base
    # `+ load_kb()`: a loader recognised by the path its body reads, never called.
    assert bench.system_prompt.endswith("assistant.\n\n{knowledge_base}\n")
    with pytest.raises(UpstreamFormatError, match="aiwf_long_context, aiwf_medium_context"):
        import_aiewf(aiewf_checkout, tmp_path / "x", variant="aiwf_tiny_context")


# -- CLI --------------------------------------------------------------------------------


def test_cli_imports_both_and_the_result_validates(
    cb_checkout: Path, aiewf_checkout: Path, tmp_path: Path
):
    runner = CliRunner()
    out = tmp_path / "cli-cb"
    result = runner.invoke(
        app, ["import", "conversation-bench", str(cb_checkout), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "6 turns, 4 tools" in " ".join(result.output.split())
    assert runner.invoke(app, ["bench", "validate", str(out)]).exit_code == 0

    again = runner.invoke(
        app, ["import", "conversation-bench", str(cb_checkout), "--out", str(out)]
    )
    assert isinstance(again.exception, UpstreamFormatError)
    assert "--force" in str(again.exception)
    forced = runner.invoke(
        app, ["import", "conversation-bench", str(cb_checkout), "--out", str(out), "--force"]
    )
    assert forced.exit_code == 0, forced.output

    # An exported tree (no .git) must say which upstream commit it is.
    refused = runner.invoke(app, ["import", "aiewf", str(aiewf_checkout)])
    assert isinstance(refused.exception, UpstreamFormatError)
    assert "--upstream-commit" in str(refused.exception)
    assert not Path("imported/aiwf_medium_context").exists()
    bad = runner.invoke(app, ["import", "aiewf", str(aiewf_checkout), "--upstream-commit", "main"])
    assert "not a commit id" in str(bad.exception)

    result = runner.invoke(
        app, ["import", "aiewf", str(aiewf_checkout), "--upstream-commit", AIEWF_SHA]
    )
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "variant: aiwf_medium_context (default: the variant of upstream's published" in said
    assert f"upstream commit {AIEWF_SHA[:12]}" in said
    assert "harness: aiewf (duplicate_calls=skip, canned_results=success, nudge=True," in said
    # The default destination is ./imported/<variant> (tests run in tmp_path).
    assert runner.invoke(app, ["bench", "validate", "imported/aiwf_medium_context"]).exit_code == 0
    bench = load_benchmark(Path("imported/aiwf_medium_context"))
    assert bench.version == f"upstream-{AIEWF_SHA[:12]}" and AIEWF_SHA in bench.description
    assert BackendSpec.model_validate(bench.backend).harness.nudge is True


def test_upstream_commit_must_agree_with_the_checkout(cb_checkout: Path, tmp_path: Path):
    sha = "d1c336e" + "0" * 33
    short = import_conversation_bench(cb_checkout, tmp_path / "a", upstream_commit="D1C336E")
    assert short.upstream_commit == sha  # the checkout's full id is kept
    with pytest.raises(UpstreamFormatError, match="differs from the checkout's own commit"):
        import_conversation_bench(cb_checkout, tmp_path / "b", upstream_commit="abcdef0")


def test_cli_current_date_option_overrides_and_supplies_the_date(cb_checkout: Path, tmp_path: Path):
    system = cb_checkout / CB_BENCH / "system.py"
    system.write_text(system.read_text().replace("Today is March 3, 2025.", "Welcome."))
    runner = CliRunner()
    out = tmp_path / "dated"
    failed = runner.invoke(
        app, ["import", "conversation-bench", str(cb_checkout), "--out", str(out)]
    )
    assert isinstance(failed.exception, UpstreamFormatError)
    assert "--current-date" in str(failed.exception)
    assert not out.exists()  # nothing half-written
    ok = runner.invoke(
        app,
        ["import", "conversation-bench", str(cb_checkout), "--out", str(out)]
        + ["--current-date", "2025-06-02"],
    )
    assert ok.exit_code == 0, ok.output
    assert load_benchmark(out).current_date == "2025-06-02"


# -- refusing what cannot be read without running it ------------------------------------


def _write(checkout: Path, name: str, text: str) -> None:
    (checkout / CB_BENCH / name).write_text(text)


def test_malicious_turns_file_is_refused_and_never_executed(cb_checkout: Path, tmp_path: Path):
    marker = tmp_path / "pwned"
    _write(
        cb_checkout,
        "turns.py",
        "import os\n"
        f"os.system('touch {marker}')\n"
        f"turns = [{{'input': os.system('touch {marker}'), 'golden_text': 'x'}}]\n",
    )
    with pytest.raises(UpstreamFormatError) as exc:
        import_conversation_bench(cb_checkout, tmp_path / "out")
    text = str(exc.value)
    assert "turns.py" in text and "line 3" in text and "function call `os.system(...)`" in text
    _write(cb_checkout, "turns.py", "turns = __import__('os').listdir('.')\n")
    with pytest.raises(UpstreamFormatError, match=r"function call `__import__\(...\).listdir"):
        import_conversation_bench(cb_checkout, tmp_path / "out")
    _write(cb_checkout, "turns.py", "turns = [t for t in range(3)]\n")
    with pytest.raises(UpstreamFormatError, match="comprehension"):
        import_conversation_bench(cb_checkout, tmp_path / "out")
    assert not marker.exists()
    assert not (tmp_path / "out").exists()


def test_turns_changed_after_assignment_are_refused(cb_checkout: Path, tmp_path: Path):
    original = (cb_checkout / CB_BENCH / "turns.py").read_text()
    _write(
        cb_checkout, "turns.py", original + "\nturns.append({'input': 'x', 'golden_text': 'y'})\n"
    )
    with pytest.raises(UpstreamFormatError, match="modified after its assignment"):
        import_conversation_bench(cb_checkout, tmp_path / "out")


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("turns.py", "TURNS = []\n", "turns.py: no top-level assignment to `turns`"),
        ("turns.py", "turns = [\n", "turns.py: line 1: not valid Python"),
        ("turns.py", "turns = [{'golden_text': 'x'}]\n", "turns[0].input is missing"),
        (
            "turns.py",
            "turns = [{'input': 'a', 'golden_text': 'b', "
            "'required_function_call': {'name': 'fly_away', 'args': {}}}]\n",
            "calls 'fly_away', which tools.py does not define",
        ),
        (
            "turns.py",
            "turns = [{'input': 'a', 'golden_text': 'b', "
            "'required_function_call': {'name': 'register_for_session', 'args': {'name': 'A'}}}]\n",
            "lacks the required argument(s) 'session_id'",
        ),
        ("tools.py", "x = 1\n", "tools.py: no FunctionSchema(...) call found"),
        (
            "tools.py",
            "FunctionSchema(name=make_name(), description='d', properties={}, required=[])\n",
            "tools.py: line 1: cannot read a function call `make_name(...)`",
        ),
        (
            "system.py",
            "system_instruction = 'Today is March 3, 2025. ' + fetch_remote_prompt()\n",
            "cannot read a function call `fetch_remote_prompt(...)` in `system_instruction`",
        ),
        (
            "system.py",
            "prompt = 'hi'\n",
            "system.py: no top-level assignment to `system_instruction`",
        ),
    ],
)
def test_unreadable_sources_name_the_file_and_what_was_expected(
    cb_checkout: Path, tmp_path: Path, name: str, text: str, message: str
):
    _write(cb_checkout, name, text)
    with pytest.raises(UpstreamFormatError) as exc:
        import_conversation_bench(cb_checkout, tmp_path / "out")
    assert message in str(exc.value)
    assert not (tmp_path / "out").exists()


def test_system_prompt_file_replaces_an_unreadable_system_py(cb_checkout: Path, tmp_path: Path):
    _write(cb_checkout, "system.py", "system_instruction = build_prompt()\n")
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Today is March 3, 2025. Be brief.\n\nKNOWLEDGE:\n{knowledge_base}\n")
    result = import_conversation_bench(cb_checkout, tmp_path / "out", system_prompt_file=prompt)
    bench = load_benchmark(result.out_dir)
    assert bench.system_prompt == prompt.read_text()
    assert "Riverside Convention Center" in bench.render_system_prompt()


def test_missing_knowledge_base_and_bad_audio_are_reported(cb_checkout: Path, tmp_path: Path):
    (cb_checkout / CB_BENCH / "audio" / "turn_003.wav").write_bytes(b"ID3 not a wave file at all")
    with pytest.raises(UpstreamFormatError, match=r"turn_003\.wav.*turns\[3\] audio"):
        import_conversation_bench(cb_checkout, tmp_path / "out")
    (cb_checkout / CB_BENCH / "data" / "knowledge_base.txt").unlink()
    with pytest.raises(UpstreamFormatError, match="not a ConversationBench checkout"):
        import_conversation_bench(cb_checkout, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_an_unrelated_directory_is_never_replaced(cb_checkout: Path, tmp_path: Path):
    out = tmp_path / "precious"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    with pytest.raises(UpstreamFormatError, match="refusing to replace it"):
        import_conversation_bench(cb_checkout, out, force=True)
    assert (out / "notes.txt").read_text() == "keep me"


# -- the pieces -----------------------------------------------------------------------


def test_pyliteral_reads_data_and_refuses_code(tmp_path: Path):
    source = tmp_path / "m.py"
    source.write_text(
        "A = 'x'\nB = A + 'y'\nC = f'{B}-{1 + 2}-{N!r}'\nN = -3\n"
        "D = {'k': [A, (1, 2)], **{'z': None}}\nE = obj.attr\nF = lambda: 1\nG = 2 * 3\n"
    )
    module = PyModule(source, "m.py")
    assert module.value_of("B") == "xy"
    assert module.value_of("N") == -3
    assert module.value_of("D") == {"k": ["x", (1, 2)], "z": None}
    with pytest.raises(UpstreamFormatError, match="attribute access `obj.attr`"):
        module.value_of("E")
    with pytest.raises(UpstreamFormatError, match="m.py: line 7: cannot read a lambda"):
        module.value_of("F")
    assert module.value_of("C") == "xy-3--3"
    with pytest.raises(UpstreamFormatError, match="line 8: cannot read a `BinOp` expression"):
        module.value_of("G")
    source.write_text("A = B\nB = A\n")
    with pytest.raises(UpstreamFormatError, match="refers to itself"):
        PyModule(source, "m.py").value_of("A")


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("\nToday is June 2, 2025.\n", "2025-06-02"),
        ("Today is Monday, June 2nd, 2025. Be brief.", "2025-06-02"),
        ("today's date is 3 March 2025", "2025-03-03"),
        ("Current date: 2025-04-13.", "2025-04-13"),
        ("The conference runs June 3-5, 2025.", None),
        ("Today is February 30, 2025.", None),
    ],
)
def test_find_current_date(prompt: str, expected: str | None):
    found = find_current_date(prompt)
    assert (found.isoformat() if found else None) == expected


def test_git_commit_is_read_from_packed_refs_without_git(tmp_path: Path):
    git = tmp_path / ".git"
    git.mkdir()
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    sha = "9526aac" + "1" * 33
    (git / "packed-refs").write_text(f"# pack-refs with: peeled\n{sha} refs/heads/main\n")
    assert git_commit(tmp_path) == sha
    assert git_commit(tmp_path / "nowhere") is None
