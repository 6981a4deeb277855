"""``voxbench view`` binds its port itself: a port in use is a user error, not exit 3."""

from __future__ import annotations

import socket
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from tests.cli_invoke import invoke
from voxbench.core.errors import ConfigError
from voxbench.viewer.app import bind_listening_socket


def occupied_port() -> tuple[socket.socket, int]:
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    return holder, holder.getsockname()[1]


def test_port_in_use_exits_2_naming_the_option(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "runs").mkdir()
    monkeypatch.chdir(tmp_path)
    holder, port = occupied_port()
    with holder:
        code, out, err = invoke(monkeypatch, capsys, "view", "runs", "--port", str(port))
    assert code == 2, (out, err)
    assert "--port" in err and f"port {port}" in err and "in use" in err
    assert "Traceback" not in out + err


def test_bind_listening_socket_refuses_a_taken_port_and_serves_a_free_one() -> None:
    holder, port = occupied_port()
    with holder, pytest.raises(ConfigError, match="in use"):
        bind_listening_socket("127.0.0.1", port)
    sock = bind_listening_socket("127.0.0.1", 0)
    with sock:
        assert sock.getsockname()[0] == "127.0.0.1"


def test_serve_answers_on_the_socket_it_bound(tmp_path: Path) -> None:
    import uvicorn

    from voxbench.store import open_store
    from voxbench.viewer.app import create_app

    with open_store(None, tmp_path) as db:
        sock = bind_listening_socket("127.0.0.1", 0)
        port = sock.getsockname()[1]
        server = uvicorn.Server(
            uvicorn.Config(
                create_app(tmp_path, db, allowed_hosts=["127.0.0.1"]), log_level="warning"
            )
        )
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        try:
            for _ in range(200):
                if server.started:
                    break
                time.sleep(0.05)
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as response:
                assert response.status == 200
        finally:
            server.should_exit = True
            thread.join(10)
            sock.close()
