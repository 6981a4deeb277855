"""Issue 32 item 6: exit codes as the README's table says them, one case per row.

3: a missing or rejected credential, wherever it surfaces (a judge's rejected key included).
"""

from __future__ import annotations

import asyncio

from tests.judging.scripted import Act, JudgeScript, scripted_run
from tests.judging.test_cli_judge import judge_server, voxbench
from voxbench.core.errors import ErrorCategory, ProviderError


def test_a_provider_error_for_a_rejected_key_carries_exit_code_3() -> None:
    assert ProviderError("x", category=ErrorCategory.AUTHENTICATION, retryable=False).exit_code == 3
    assert ProviderError("x", category=ErrorCategory.SERVER, retryable=True).exit_code == 1


def test_judge_with_a_rejected_key_exits_3(monkeypatch, capsys, tmp_path) -> None:
    _, _, run = asyncio.run(scripted_run(tmp_path, {"6": Act(calls=[], say="Sure.")}))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-key-000000000000")
    with judge_server(JudgeScript(), api_key="sk-right-key-111111111111") as server:
        code, out = voxbench(
            monkeypatch, capsys, "judge", str(run), "--judge", "openai/gpt-4o-mini",
            "--judge-base-url", server.url,
        )  # fmt: skip
    assert code == 3, out
    assert "Traceback" not in out and "sk-wrong-key" not in out


def test_fail_under_on_an_unknown_dimension_exits_2_before_the_first_turn(
    monkeypatch, capsys, tmp_path
) -> None:
    runs = tmp_path / "runs"
    code, out = voxbench(
        monkeypatch, capsys, "run", "smoke", "-t", "local/oracle", "--runs-dir", str(runs),
        "--fail-under", "bogus=0.5",
    )  # fmt: skip
    assert code == 2, out
    assert "bogus" in out and "--fail-under" in out and "tool_use" in out
    assert not list(runs.rglob("run.json"))  # refused before any run directory
    code, out = voxbench(
        monkeypatch, capsys, "run", "smoke", "-t", "local/oracle", "--runs-dir", str(runs),
        "--fail-under", "tool_use=0.5",
    )  # fmt: skip
    assert code == 0, out


def test_the_matrix_leaderboard_never_cuts_a_target_name_in_a_pipe() -> None:
    """Issue 32 item 11: piped (80 columns) a long target name wraps, never ends in "…"."""
    import io

    from rich.console import Console

    from voxbench.cli.matrix import leaderboard_table
    from voxbench.scale.matrix import Leaderboard, LeaderboardRow

    name = "openai/gpt-4o-mini-realtime-preview-2024-12-17-with-a-long-label"
    row = LeaderboardRow(
        target=name, benchmark="conference", mode="audio", runs=3, finished=3,
        strict_mean=0.8, strict_ci95=(0.7, 0.9), strict_pass_hat=0.6,
        dimensions={"tool_use": 0.9, "instruction_following": 0.8, "kb_grounding": 0.7},
        unstable_turns=2, group="g",
    )  # fmt: skip
    board = Leaderboard(repeats=3, executor="local", finished_at="now", cells={}, rows=[row])
    out = io.StringIO()
    Console(file=out, width=80, emoji=False).print(leaderboard_table(board))
    text = out.getvalue()
    assert "…" not in text
    assert name in "".join(line.split("│")[3].strip() for line in text.splitlines() if "│" in line)


def _readme_exit_codes() -> dict[int, str]:
    import re
    from pathlib import Path

    text = Path(__file__).resolve().parents[2].joinpath("README.md").read_text(encoding="utf-8")
    section = text.split("### Exit codes", 1)[1].split("\n#", 1)[0]
    return {int(m[1]): m[2] for m in re.finditer(r"^\| (\d) \| (.+) \|$", section, re.M)}


def test_the_readme_exit_code_table_is_the_codes_the_errors_carry() -> None:
    """Issue 32 item 6: the README's table and the code agree, row for row."""
    from voxbench.core import errors

    readme = _readme_exit_codes()
    assert sorted(readme) == sorted(errors.EXIT_CODES)
    carried = {
        cls.__name__: cls.exit_code
        for cls in vars(errors).values()
        if isinstance(cls, type) and issubclass(cls, errors.VoxbenchError)
    }
    assert set(carried.values()) <= set(errors.EXIT_CODES)
    # Each row's meaning is the one its errors stand for.
    assert carried["ConfigError"] == carried["RunError"] == 2 and "user error" in readme[2]
    assert carried["PrerequisiteError"] == carried["AuthenticationError"] == 3
    assert "credential" in readme[3]
    assert carried["RunIncompleteError"] == 4 and "could not be completed" in readme[4]
    assert "gate" in readme[1] and "completed" in readme[0]
