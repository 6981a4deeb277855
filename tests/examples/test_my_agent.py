"""The plug-in path as a user takes it: their own package, outside voxbench, named by class path.

``examples/my_agent`` is run from another directory with only ``PYTHONPATH`` pointing at it,
in a separate process, like a user's ``voxbench run smoke --target my_agent.agent:Agent``;
then the class-path resolution is checked on agents a user might get wrong.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.cli_invoke import invoke
from voxbench.core.rundir import RunDirectory
from voxbench.targets.registry import canonical_name

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "my_agent"


def test_the_example_agent_runs_from_its_own_package_directory(tmp_path: Path) -> None:
    work = tmp_path / "elsewhere"  # neither the repository nor the example directory
    work.mkdir()
    paths = [str(EXAMPLE), str(REPO / "src"), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    done = subprocess.run(
        [sys.executable, "-m", "voxbench.cli.main", "run", "smoke"]
        + ["--target", "my_agent.agent:Agent", "--runs-dir", str(work / "runs")],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    (run,) = (work / "runs" / "smoke").iterdir()
    card = json.loads((run / "scorecard.json").read_text())
    assert card["target"] == "my_agent.agent:Agent" and card["turns"] == 10
    assert {d["dimension"] for d in card["dimensions"]} >= {"tool_use", "facts"}
    assert card["strict_pass"]["scored"] == 10
    records = RunDirectory(run).turns()
    # It answered from the knowledge base and called its one tool when told goodbye.
    assert any("8:30" in r.assistant_text for r in records)
    assert [c.name for r in records for c in r.tool_calls] == ["end_session"]


CONSOLE_SCRIPT = """import sys
from voxbench.cli.main import main
sys.exit(main())
"""


def test_the_voxbench_command_finds_an_agent_package_in_the_working_directory(
    tmp_path: Path,
) -> None:
    # The installed ``voxbench`` command is a script: Python puts its folder first on the
    # path, not the working directory (``python -m`` does). A user who copied their agent
    # package here and typed ``voxbench run smoke -t my_agent.agent:Agent`` got "no module".
    package_dir = tmp_path / "my_project"
    shutil.copytree(EXAMPLE / "my_agent", package_dir / "my_agent")
    bin_dir = tmp_path / "venv_bin"
    bin_dir.mkdir()
    (bin_dir / "voxbench").write_text(CONSOLE_SCRIPT)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}  # voxbench itself, installed
    done = subprocess.run(
        [sys.executable, str(bin_dir / "voxbench"), "run", "smoke"]
        + ["-t", "my_agent.agent:Agent", "--runs-dir", str(tmp_path / "runs")],
        cwd=package_dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (run,) = (tmp_path / "runs" / "smoke").iterdir()
    records = RunDirectory(run).turns()
    assert [c.name for r in records for c in r.tool_calls] == ["end_session"]


def test_an_installed_module_wins_over_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from voxbench.targets.registry import resolve_target

    installed, here = tmp_path / "site", tmp_path / "here"
    for folder, reply in ((installed, "installed"), (here, "working directory")):
        folder.mkdir()
        (folder / "twin_agent.py").write_text(
            "from voxbench.targets.inprocess import InProcessSession\n"
            "class Agent(InProcessSession):\n"
            f"    reply = {reply!r}\n"
            "    async def respond(self, user_text):\n"
            "        await self.say(self.reply)\n"
        )
    monkeypatch.chdir(here)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(here))])
    monkeypatch.syspath_prepend(str(installed))
    monkeypatch.delitem(sys.modules, "twin_agent", raising=False)
    assert resolve_target("twin_agent:Agent")().reply == "installed"  # type: ignore[attr-defined]
    monkeypatch.delitem(sys.modules, "twin_agent")
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != str(installed)])
    assert resolve_target("twin_agent:Agent")().reply == "working directory"  # type: ignore[attr-defined]


AGENTS = """
from voxbench.core.session import Session
from voxbench.targets.inprocess import InProcessSession


class Agent(InProcessSession):
    async def respond(self, user_text):
        await self.say("I don't know.")


class NeedsTwo(InProcessSession):
    def __init__(self, host, port):
        super().__init__("x/y")

    async def respond(self, user_text):
        await self.say("hi")


class Unfinished(Session):
    async def start(self, setup):
        pass


class Broken(InProcessSession):
    def __init__(self, context):
        raise RuntimeError("no endpoint configured")

    async def respond(self, user_text):
        pass


def helper():
    pass
"""


@pytest.fixture
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A top-level module (no package, no dot in its name) on the Python path."""
    folder = tmp_path / "user_code"
    folder.mkdir()
    (folder / "myagent.py").write_text(textwrap.dedent(AGENTS))
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, "myagent", raising=False)
    return "myagent"


def voxbench(monkeypatch, capsys, *args: str) -> tuple[int, str]:
    code, out, err = invoke(monkeypatch, capsys, *args)
    return code, " ".join((out + err).split())


def test_a_top_level_module_class_path_runs(monkeypatch, capsys, tmp_path, user_module):
    code, out = voxbench(
        monkeypatch, capsys, "run", "smoke", "-t", f"{user_module}:Agent", "--runs-dir", "runs"
    )
    assert code == 0, out
    assert "strict per-turn pass" in out
    (run,) = (tmp_path / "runs" / "smoke").iterdir()
    assert RunDirectory(run).info().target.name == "myagent:Agent"
    assert (run / "scorecard.json").is_file()


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("myagent:helper", "'myagent:helper' is function, not a voxbench Session"),
        ("myagent:NeedsTwo", "the constructor of 'myagent:NeedsTwo' takes (host, port)"),
        ("myagent:Unfinished", "'myagent:Unfinished' does not implement close, end_user_turn"),
        ("myagent:Missing", "module 'myagent' has no 'Missing'"),
        ("myagent:Broken", "building target 'myagent:Broken' failed: RuntimeError: no endpoint"),
        ("nomodule:Agent", "cannot import target class 'nomodule:Agent': no module named"),
    ],
)
def test_a_class_path_that_cannot_work_is_a_clear_error(
    monkeypatch, capsys, user_module, target, message
):
    code, out = voxbench(monkeypatch, capsys, "run", "smoke", "-t", target, "--runs-dir", "runs")
    assert code != 0
    assert message in out
    assert "Traceback" not in out and "ValidationError" not in out


def test_provider_colon_model_still_names_a_provider() -> None:
    assert canonical_name("openai:gpt-4o") == "openai/gpt-4o"
    assert canonical_name("local:oracle") == "local/oracle"
