"""Every socket voxbench listens on, held to one bar (issue 32): loopback unless the user says
otherwise, a Host check against DNS rebinding, and what each guards beyond that.

| listener | bind | Host / Origin | token | traversal | proven in |
|---|---|---|---|---|---|
| ``tools serve --http`` | loopback (``--host`` warns) | 421 / 403 | Bearer, 401 | no files | ``tests/toolserver/test_security.py`` |
| ``tools serve --mcp`` | loopback only | 421 / 403 | — | no files | ``tests/toolserver/test_security.py`` |
| ``view`` | loopback (``--host`` warns) | 400 | — (read-only) | 16 spellings refused | here and ``tests/viewer/test_viewer.py`` |
| fakes (``voxbench.testing``, ``fake-server``) | loopback, no option | — | ``--api-key`` | no files | here |
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import pkgutil
import socket
from pathlib import Path

import pytest
from starlette.testclient import TestClient

import voxbench.testing
from voxbench.benchmarks.loader import load_benchmark
from voxbench.cli.fake_server import fake_server_command
from voxbench.cli.view import view_command
from voxbench.store import open_store
from voxbench.testing import FakeOpenAIServer, GoldenScript
from voxbench.viewer import LOOPBACK
from voxbench.viewer.app import bind_listening_socket, create_app

REPO = Path(__file__).resolve().parents[2]


def _listener_classes() -> list[type]:
    """The classes under ``voxbench.testing`` that take a ``host`` to listen on."""
    found: dict[str, type] = {}
    for info in pkgutil.iter_modules(voxbench.testing.__path__):
        try:
            module = importlib.import_module(f"voxbench.testing.{info.name}")
        except ImportError:  # an optional extra's fake (Pipecat, Nova Sonic) not installed
            continue
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if not cls.__module__.startswith("voxbench.testing"):
                continue
            try:
                params = inspect.signature(cls.__init__).parameters
            except (TypeError, ValueError):
                continue
            if "host" in params:
                found[f"{cls.__module__}.{name}"] = cls
    return [found[k] for k in sorted(found)]


LISTENERS = _listener_classes()


def test_the_fakes_are_found() -> None:
    names = {cls.__name__ for cls in LISTENERS}
    assert len(LISTENERS) >= 5, names


@pytest.mark.parametrize("cls", LISTENERS, ids=lambda c: c.__name__)
def test_every_fake_listens_on_loopback_by_default(cls: type) -> None:
    host = inspect.signature(cls.__init__).parameters["host"].default
    assert host == "127.0.0.1", f"{cls.__name__} listens on {host!r} by default"


def test_a_started_fake_is_bound_to_loopback_only() -> None:
    async def bound() -> tuple[str, int]:
        server = FakeOpenAIServer(GoldenScript(load_benchmark("smoke")))
        await server.start()
        try:
            assert server._server is not None
            return server._server.sockets[0].getsockname()[:2]
        finally:
            await server.stop()

    address, port = asyncio.run(bound())
    assert address == "127.0.0.1" and port > 0


def test_fake_server_has_no_host_option_and_the_viewer_defaults_to_loopback() -> None:
    assert "host" not in inspect.signature(fake_server_command).parameters
    assert inspect.signature(view_command).parameters["host"].default.default == LOOPBACK


def test_the_viewer_answers_only_its_own_host_names(tmp_path: Path) -> None:
    with open_store(None, tmp_path) as db:
        client = TestClient(create_app(tmp_path, db, allowed_hosts=[LOOPBACK, "localhost"]))
        assert client.get("/", headers={"Host": "127.0.0.1:8765"}).status_code == 200
        assert client.get("/", headers={"Host": "evil.example"}).status_code == 400
        # A rebinding page on the attacker's name gets nothing, not even the runs list.
        assert client.get("/runs", headers={"Host": "evil.example:8765"}).status_code == 400


def test_the_viewer_serves_no_file_outside_its_runs(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("do not serve")
    runs = tmp_path / "runs"
    runs.mkdir()
    with open_store(None, runs) as db:
        client = TestClient(create_app(runs, db, allowed_hosts=[LOOPBACK]))
        for path in ("/files/../secret.txt", "/files/%2e%2e/secret.txt", "/files/..%2fsecret.txt"):
            response = client.get(path, headers={"Host": LOOPBACK})
            assert response.status_code in (400, 403, 404), path
            assert "do not serve" not in response.text


def test_the_viewer_socket_is_bound_where_asked_and_nowhere_else() -> None:
    sock = bind_listening_socket(LOOPBACK, 0)
    with sock:
        assert sock.getsockname()[0] == "127.0.0.1"
        other = socket.socket()
        with other:
            other.settimeout(2)
            other.connect(("127.0.0.1", sock.getsockname()[1]))  # reachable on loopback


def test_the_tool_server_tests_cover_each_guard() -> None:
    source = (REPO / "tests" / "toolserver" / "test_security.py").read_text(encoding="utf-8")
    for words in ("cross_origin", "421", "403", "401", "loopback"):
        assert words in source, words
