"""Issue 32 item 8: ``judge-audio`` against a judge that never answers is bounded by
``--timeout`` for HTTP judges too (each attempt waits that long; the clip ends undecided and
the command exits 4), instead of 120 s × 3 attempts per clip and sample."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.cli_invoke import invoke
from tests.judging.audio.helpers import spoken
from voxbench.audio.wav import write_wav


@contextmanager
def silent_http_server() -> Iterator[tuple[str, list[float]]]:
    """Accepts connections, reads the requests, never answers; yields its URL and the time
    each connection was accepted."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.2)
    accepted: list[float] = []
    held: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            accepted.append(time.monotonic())
            held.append(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1", accepted
    finally:
        stop.set()
        thread.join(5)
        for conn in held:
            conn.close()
        listener.close()


def test_an_http_judge_that_never_answers_is_bounded_by_timeout(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    write_wav(tmp_path / "a.wav", spoken())
    with silent_http_server() as (url, accepted):
        code, out, err = invoke(
            monkeypatch, capsys, "judge-audio", str(tmp_path / "a.wav"),
            "--rubric", "accent", "-o", "target_accent=RP",
            "--judge", "openai/gpt-4o-audio-preview", "--judge-base-url", url,
            "--timeout", "1", "--no-cache",
        )  # fmt: skip
    assert code == 4, (out, err)
    assert "every judgment is undecided" in err and "Traceback" not in out + err
    # Each attempt was cut at the timeout: the attempts began about a second apart (not 120 s).
    assert 1 <= len(accepted) <= 6
    gaps = [b - a for a, b in zip(accepted, accepted[1:], strict=False)]
    assert all(gap < 30 for gap in gaps), gaps
