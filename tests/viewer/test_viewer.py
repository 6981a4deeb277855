"""The viewer over real judged runs: pages, artifacts with Range, live status, and safety:
no path outside the served directory, secrets redacted, run text escaped."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from tests.store.fixture_runs import Runs
from voxbench.core.rundir import RunDirectory
from voxbench.store import open_store
from voxbench.viewer import LOOPBACK
from voxbench.viewer.app import create_app

from .conftest import BASE_URL


def test_leaderboard_shows_each_target_with_its_interval(client: TestClient, runs: Runs) -> None:
    page = client.get("/")
    assert page.status_code == 200
    html = page.text
    assert "local/oracle" in html and "local/baseline" in html and "smoke" in html
    card = RunDirectory(runs.paths["baseline"]).scorecard()
    assert card is not None and card.strict_pass.ci95 is not None
    low, high = (100 * x for x in card.strict_pass.ci95)
    assert f"[{low:.1f}, {high:.1f}]" in html
    assert f'href="/run/{runs.run_id("baseline")}/"' in html
    audio_only = client.get("/", params={"mode": "audio"}).text
    assert "local/oracle" in audio_only and "local/baseline" not in audio_only
    assert "local/oracle" not in client.get("/", params={"since": "2999-01-01"}).text


def test_runs_page_lists_every_run(client: TestClient, runs: Runs) -> None:
    html = client.get("/runs").text
    assert all(runs.run_id(name) in html for name in runs.paths)


def test_run_page_has_turns_and_players_and_audio_seeks(client: TestClient, runs: Runs) -> None:
    run_id = runs.run_id("oracle_audio")
    assert client.get(f"/run/{run_id}", follow_redirects=False).status_code == 308
    page = client.get(f"/run/{run_id}/")
    assert page.status_code == 200
    first = RunDirectory(runs.paths["oracle_audio"]).turns()[0]
    assert first.user_text.split()[0] in page.text
    assert "<audio" in page.text
    # Each turn's players play its clip, cut into the run's clips/ and served from there.
    clip = re.search(r'src="(clips/conversation_[0-9.]+-[0-9.]+\.flac)"', page.text)
    assert clip is not None, page.text[:2000]
    served = client.get(f"/run/{run_id}/{clip.group(1)}")
    assert served.status_code == 200 and served.content[:4] == b"fLaC"
    # The viewer's bar leads back to the leaderboard and the runs list.
    body = page.text[page.text.lower().index("<body") :]
    assert body.index('href="/"') < body.index("<audio") and 'href="/runs"' in body
    wav = (runs.paths["oracle_audio"] / "conversation.wav").stat().st_size
    whole = client.get(f"/run/{run_id}/conversation.wav")
    assert whole.status_code == 200 and len(whole.content) == wav
    part = client.get(f"/run/{run_id}/conversation.wav", headers={"Range": "bytes=100-199"})
    assert part.status_code == 206
    assert part.headers["content-range"] == f"bytes 100-199/{wav}"
    assert part.content == whole.content[100:200]


def test_compare_shows_deltas_of_two_runs(client: TestClient, runs: Runs) -> None:
    a, b = runs.run_id("baseline"), runs.run_id("oracle")
    page = client.get("/compare", params={"a": a, "b": b})
    assert page.status_code == 200
    assert a in page.text and b in page.text and "strict_pass" in page.text
    assert client.get("/compare", params={"a": a}).status_code == 404


@pytest.mark.parametrize(
    "path",
    [
        "../../../../../../etc/passwd",
        "%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
        "..%2f..%2f..%2f..%2fetc%2fpasswd",
        "%252e%252e/%252e%252e/etc/passwd",
        "..%5c..%5cetc%5cpasswd",
        "/etc/passwd",
        "%2fetc%2fpasswd",
        "../baseline-run.json",
        ".writer.lock",
    ],
)
def test_no_path_outside_the_run_can_be_read(client: TestClient, runs: Runs, path: str) -> None:
    run_id = runs.run_id("oracle")
    response = client.get(f"/run/{run_id}/{path}")
    assert response.status_code == 404
    assert "root:" not in response.text


def test_links_that_point_outside_are_not_followed(
    client: TestClient, runs: Runs, tmp_path: Path
) -> None:
    secret = tmp_path / "outside.txt"
    secret.write_text("private notes")
    run = runs.paths["oracle"]
    os.symlink(secret, run / "notes.txt")
    os.symlink(tmp_path, run / "up")
    run_id = runs.run_id("oracle")
    assert client.get(f"/run/{run_id}/notes.txt").status_code == 404
    assert client.get(f"/run/{run_id}/up/outside.txt").status_code == 404
    assert client.get(f"/run/{run_id}/{RunDirectory.RUN}").status_code == 200


def test_a_run_outside_the_served_directory_is_not_served(runs: Runs, tmp_path: Path) -> None:
    db = str(tmp_path / "shared.db")
    with open_store(db, runs.root) as store:
        store.index_tree(runs.root)  # a shared store knows runs of another directory
        served = tmp_path / "elsewhere"
        served.mkdir()
        with TestClient(create_app(served, store), base_url=BASE_URL) as http:
            run_id = runs.run_id("oracle")
            assert http.get(f"/run/{run_id}/").status_code == 404
            assert http.get(f"/run/{run_id}/{RunDirectory.RUN}").status_code == 404


def test_only_loopback_host_names_are_answered(client: TestClient) -> None:
    assert client.get("/", headers={"Host": "attacker.example"}).status_code == 400
    assert client.get("/", headers={"Host": "localhost:8765"}).status_code == 200
    assert LOOPBACK == "127.0.0.1"


EXTERNAL = re.compile(r"""(?:src|href|action)\s*=\s*["']?\s*(?:[a-z][a-z0-9+.-]*:)?//""", re.I)


def test_pages_load_nothing_from_elsewhere(client: TestClient, runs: Runs) -> None:
    page = client.get(f"/run/{runs.run_id('oracle')}/")
    policy = page.headers["content-security-policy"]
    assert "default-src 'self'" in policy and "http" not in policy
    a, b = runs.run_id("oracle"), runs.run_id("baseline")
    for url in (
        "/",
        "/runs",
        f"/run/{a}/",
        f"/run/{runs.run_id('oracle_audio')}/",
        f"/compare?a={a}&b={b}",
    ):
        html = client.get(url).text
        assert not EXTERNAL.search(html), f"{url} links outside: {EXTERNAL.search(html)}"


def test_a_page_in_a_run_runs_sandboxed(client: TestClient, runs: Runs) -> None:
    (runs.paths["oracle"] / "evil.html").write_text("<script>fetch('/runs')</script>")
    page = client.get(f"/run/{runs.run_id('oracle')}/evil.html")
    assert page.status_code == 200
    assert "sandbox allow-scripts" in page.headers["content-security-policy"]


@pytest.mark.secrets_on_purpose
def test_artifacts_are_served_redacted(client: TestClient, runs: Runs) -> None:
    key = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"
    (runs.paths["oracle"] / "notes.txt").write_text(f"the key was {key}\n")
    body = client.get(f"/run/{runs.run_id('oracle')}/notes.txt").text
    assert key not in body and "the key was" in body


def test_run_text_is_escaped_everywhere(client: TestClient, runs: Runs) -> None:
    run = runs.paths["baseline"]
    rows = [json.loads(line) for line in (run / RunDirectory.TRANSCRIPT).read_text().splitlines()]
    rows[0]["user_text"] = "<script>alert('user')</script>"
    rows[0]["assistant_text"] = '<img src=x onerror="alert(1)">'
    (run / RunDirectory.TRANSCRIPT).write_text("".join(json.dumps(r) + "\n" for r in rows))
    for url in (f"/run/{runs.run_id('baseline')}/", "/compare"):
        params = (
            {"a": runs.run_id("baseline"), "b": runs.run_id("oracle")}
            if url == "/compare"
            else None
        )
        html = client.get(url, params=params).text
        assert "<script>alert(" not in html and "<img src=x" not in html
        assert "&lt;script&gt;alert(" in html


def test_live_status_follows_a_run_in_progress(client: TestClient, runs: Runs) -> None:
    run = runs.paths["baseline"]
    info = json.loads((run / RunDirectory.RUN).read_text())
    info.update(status="started", ended_at=None)
    (run / RunDirectory.RUN).write_text(json.dumps(info))
    url = f"/api/run/{runs.run_id('baseline')}/status"
    first = client.get(url).json()
    assert first["live"] is True and first["status"] == "started"
    with (run / RunDirectory.TRANSCRIPT).open("a") as f:
        f.write("")  # touch: a new turn would change size and time
    (run / RunDirectory.TRANSCRIPT).write_text((run / RunDirectory.TRANSCRIPT).read_text() + "\n")
    second = client.get(url).json()
    assert second["signature"] != first["signature"]
    page = client.get(f"/run/{runs.run_id('baseline')}/").text
    assert f'data-live="{url}"' in page and 'data-status="started"' in page
    assert client.get("/api/run/no-such-run/status").status_code == 404
