"""Gemini Live session management: resumption handles, ``goAway``, and the history fallback.

The fake server keeps each conversation server-side behind its handles, so "no history
replayed" is checked on what it received and "no turn lost" on what its model was shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.targets.realtime.conftest import assert_perfect, collect_turn, run_smoke
from voxbench.core.benchmark import Benchmark
from voxbench.core.events import AssistantTextDelta
from voxbench.core.session import HistoryMessage, SessionSetup
from voxbench.targets.realtime.gemini.session import GeminiLiveSession
from voxbench.testing.gemini_live import FakeGeminiLiveServer
from voxbench.testing.scripts import GoldenScript, Reply, Script, ScriptMessage

TARGET = "gemini-live/gemini-3.1-flash-live-preview"
MODEL = "gemini-3.1-flash-live-preview"


def setups(server: FakeGeminiLiveServer) -> list[dict[str, Any]]:
    return [m["setup"] for m in server.received if "setup" in m]


def history_sent(server: FakeGeminiLiveServer) -> bool:
    # Typed turns go as clientContent too: history is what follows a historyConfig setup.
    return any(s.get("historyConfig") for s in setups(server))


class CountingScript(Script):
    """Answers with how many user turns the server-side conversation holds, and the last."""

    def reply(self, conversation: Sequence[ScriptMessage]) -> Reply:
        users = [m.text for m in conversation if m.role == "user"]
        return Reply(text=f"{len(users)} {users[-1]}")


async def test_go_away_reconnects_with_the_handle_and_replays_nothing(
    tmp_path: Path, smoke: Benchmark, keys: None
) -> None:
    # The socket drops 5 s after each goAway: ample time to reconnect first, even when busy.
    async with FakeGeminiLiveServer(
        GoldenScript(smoke), go_away_every=2, go_away_time_left=5.0
    ) as server:
        run, card, judgments = await run_smoke(tmp_path, TARGET, server.url)
    assert_perfect(run, card, judgments)
    assert server.go_aways >= 2
    # Every goAway was answered by a new connection that resumed the newest handle (but
    # one that came with the last turn: the run ended first).
    later = setups(server)[1:]
    assert server.go_aways - 1 <= len(later) <= server.go_aways
    assert [s["sessionResumption"]["handle"] for s in later] == server.resumed
    assert all(h in server.handles for h in server.resumed)
    assert not history_sent(server)
    # The runner never saw a failure: the session rotated between turns by itself.
    assert all(r.retries == 0 and not r.reconnected for r in run.turns())
    assert not [e for e in run.events() if e.type == "target_error"]


async def test_a_drop_mid_turn_resumes_from_the_last_turn_without_history(
    tmp_path: Path, smoke: Benchmark, keys: None
) -> None:
    async with FakeGeminiLiveServer(GoldenScript(smoke), faults=["drop@3"]) as server:
        run, card, judgments = await run_smoke(tmp_path, TARGET, server.url)
    assert_perfect(run, card, judgments)
    records = run.turns()
    assert records[1].reconnected and records[1].retries == 1
    second = setups(server)[1]
    assert second["sessionResumption"]["handle"] == server.resumed[0]
    assert "historyConfig" not in second
    assert not history_sent(server)


async def test_an_unknown_handle_falls_back_to_history_replay(
    tmp_path: Path, smoke: Benchmark, keys: None
) -> None:
    # Handles expire at once: the resuming setup is refused, and history is replayed.
    async with FakeGeminiLiveServer(
        GoldenScript(smoke), faults=["drop@3"], handle_ttl=0.0
    ) as server:
        run, card, judgments = await run_smoke(tmp_path, TARGET, server.url)
    assert_perfect(run, card, judgments)
    first, refused, fresh = setups(server)[:3]
    assert first["sessionResumption"] == {} and "handle" in refused["sessionResumption"]
    assert fresh["sessionResumption"] == {} and not server.resumed
    # A 3.1 model takes history only as announced in setup, closed by turnComplete: true.
    assert fresh["historyConfig"] == {"initialHistoryInClientContent": True}
    assert "historyConfig" not in first  # nothing to seed
    seeded = next(i for i, m in enumerate(server.received) if "historyConfig" in m.get("setup", {}))
    history = next(m["clientContent"] for m in server.received[seeded:] if "clientContent" in m)
    assert history["turnComplete"] is True
    assert [t["role"] for t in history["turns"]] == ["user", "model"]
    assert history["turns"][0]["parts"][0]["text"] == smoke.turns[0].text


async def test_a_refused_handle_replays_the_history(keys: None) -> None:
    history = [HistoryMessage(role="user", text="hi"), HistoryMessage(role="assistant", text="yo")]
    async with FakeGeminiLiveServer(CountingScript()) as server:
        session = GeminiLiveSession(MODEL, base_url=server.url)
        setup = SessionSetup(system_prompt="x", history=history, resume_handle="resume-handle-gone")
        await session.start(setup)
        await session.send_user_text("again")
        await session.end_user_turn()
        events = await collect_turn(session)
        await session.close()
    assert not session.resumed and session.connections == 2
    assert [s["sessionResumption"] for s in setups(server)] == [
        {"handle": "resume-handle-gone"},
        {},
    ]
    said = "".join(e.text for e in events if isinstance(e, AssistantTextDelta))
    assert said == "2 again"  # the history's user turn, then this one


async def test_a_75_turn_session_outlives_its_connections_without_losing_a_turn(
    keys: None,
) -> None:
    turns = 75
    # Each connection announces its end as its 10th response starts (mid-turn); the
    # socket drops 5 s later, long after the session has moved on.
    async with FakeGeminiLiveServer(
        CountingScript(), go_away_every=10, go_away_time_left=5.0
    ) as server:
        session = GeminiLiveSession(MODEL, base_url=server.url)
        await session.start(SessionSetup(system_prompt="x"))
        answers = []
        for n in range(1, turns + 1):
            await session.send_user_text(f"line{n}")
            await session.end_user_turn()
            events = await collect_turn(session)
            answers.append("".join(e.text for e in events if isinstance(e, AssistantTextDelta)))
        await session.close()
    assert answers == [f"{n} line{n}" for n in range(1, turns + 1)]
    # goAway at responses 10, 20 … 70: seven rotations, each resuming the newest handle.
    assert server.go_aways >= 7 and session.connections == server.go_aways + 1
    assert len(server.resumed) == server.go_aways and not history_sent(server)


async def test_go_away_in_an_audio_run_rotates_between_spoken_turns(
    tmp_path: Path, smoke: Benchmark, keys: None
) -> None:
    async with FakeGeminiLiveServer(
        GoldenScript(smoke), go_away_every=1, go_away_time_left=5.0
    ) as server:
        run, card, judgments = await run_smoke(
            tmp_path,
            TARGET,
            server.url,
            mode="audio",
            clock="virtual",
            heard_asr="none",
            only_turns="0,1,2",
        )
    assert_perfect(run, card, judgments)
    assert len(setups(server)) >= 3 and len(server.resumed) == len(setups(server)) - 1
    assert not history_sent(server)
    assert all(r.retries == 0 for r in run.turns())


async def test_a_go_away_whose_handle_is_refused_ends_in_a_history_replay(
    tmp_path: Path, smoke: Benchmark, keys: None
) -> None:
    # The rotation's resuming setup is refused: the session reports its connection lost
    # (between turns, or to the turn that began meanwhile and waited for the new connection),
    # and the runner opens a fresh session with the history.
    async with FakeGeminiLiveServer(GoldenScript(smoke), go_away_every=2, handle_ttl=0.0) as server:
        run, card, judgments = await run_smoke(tmp_path, TARGET, server.url, only_turns="0-3")
    assert_perfect(run, card, judgments)
    assert not server.resumed and history_sent(server)
    fresh = [s for s in setups(server) if s["sessionResumption"] == {}]
    assert len(fresh) >= 2 and fresh[1]["historyConfig"] == {"initialHistoryInClientContent": True}
    lost = [e for e in run.events() if e.type == "target_error"]
    assert lost and "reconnecting after goAway failed" in lost[0].message


async def test_the_resumption_option_never_overrides_a_reconnects_history(keys: None) -> None:
    history = [HistoryMessage(role="user", text="hi"), HistoryMessage(role="assistant", text="yo")]
    async with FakeGeminiLiveServer(CountingScript()) as server:
        session = GeminiLiveSession(
            MODEL, base_url=server.url, options={"resumption_handle": "resume-handle-old"}
        )
        # A reconnect without a current handle: the history, not the option's old handle.
        await session.start(SessionSetup(system_prompt="x", history=history))
        await session.close()
    assert [s["sessionResumption"] for s in setups(server)] == [{}]
    assert history_sent(server)
