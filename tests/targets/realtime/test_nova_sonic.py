"""The Amazon Nova Sonic adapter against its fake: signed event stream, smoke, audio, tools."""

from __future__ import annotations

import asyncio
import base64
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from botocore.eventstream import EventStreamBuffer

from tests.targets.realtime.conftest import assert_perfect, collect_turn, run_smoke
from voxbench.benchmarks.loader import load_benchmark
from voxbench.core.benchmark import Benchmark
from voxbench.core.errors import ConfigError, PrerequisiteError
from voxbench.core.events import (
    AssistantAudio,
    AssistantTextDelta,
    TargetError,
    ToolCallRequested,
    TurnComplete,
    UserTranscript,
)
from voxbench.core.rundir import RunDirectory
from voxbench.core.session import HistoryMessage, HistoryToolCall, SessionSetup
from voxbench.evaluation import evaluate_run
from voxbench.providers.aws_eventstream import EventSigner, encode_message, event_frame
from voxbench.runner.config import RunConfig
from voxbench.runner.launch import run_conversation
from voxbench.targets.pipelines import route_target
from voxbench.targets.realtime.nova_sonic.session import NovaSonicSession
from voxbench.targets.registry import check_target_options, resolve_target
from voxbench.testing.nova_sonic import FakeNovaSonicServer
from voxbench.testing.scripts import GoldenScript, ListScript, Reply, ScriptCall

MODEL = "amazon.nova-2-sonic-v1:0"
TARGET = f"nova-sonic/{MODEL}"
ACCESS = "AKIDNOVATEST0001"
SECRET = "nova-secret-key-for-tests-only"


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    monkeypatch.setenv("AWS_REGION", "us-east-1")


def fake(script: object, **kwargs: object) -> FakeNovaSonicServer:
    """A fake that checks the access key id and verifies every event signature."""
    return FakeNovaSonicServer(script, api_key=ACCESS, secret_key=SECRET, **kwargs)  # type: ignore[arg-type]


def speech(seconds: float, rate: int) -> bytes:
    t = np.arange(int(seconds * rate)) / rate
    return (0.3 * np.sin(2 * np.pi * 200 * t) * 32767).astype("<i2").tobytes()


def names(server: FakeNovaSonicServer) -> list[str]:
    return [next(iter(m["event"])) for m in server.received]


def test_frames_decode_with_botocore_and_signatures_chain() -> None:
    inner = event_frame("chunk", b'{"bytes":"e30="}')
    buffer = EventStreamBuffer()
    buffer.add_data(inner)
    (message,) = list(buffer)
    assert message.headers == {
        ":event-type": "chunk",
        ":content-type": "application/json",
        ":message-type": "event",
    }
    assert message.payload == b'{"bytes":"e30="}'
    signer = EventSigner(SECRET, "us-east-1", "bedrock", "ab" * 32)
    first = signer.envelope(inner)
    after_first = signer.prior_signature
    buffer.add_data(first + signer.envelope(b""))
    envelope, end = list(buffer)
    assert envelope.payload == inner and end.payload == b""
    assert envelope.headers[":chunk-signature"].hex() == after_first
    assert isinstance(envelope.headers[":date"], int)  # a timestamp header, in ms
    # The chain: the same event signed after another prior signature signs differently.
    other = EventSigner(SECRET, "us-east-1", "bedrock", "cd" * 32)
    assert other.envelope(inner) != first
    buffer.add_data(encode_message({"n": 7, "yes": True}, b"x"))
    (typed,) = list(buffer)
    assert typed.headers == {"n": 7, "yes": True} and typed.payload == b"x"


async def test_smoke_scores_perfectly_with_tools(
    tmp_path: Path, smoke: Benchmark, aws: None
) -> None:
    async with fake(GoldenScript(smoke)) as server:
        run, card, judgments = await run_smoke(tmp_path, TARGET, server.url)
    assert_perfect(run, card, judgments)
    assert server.refusals == []
    assert [c.name for c in run.turns()[4].tool_calls] == ["register_for_session"] * 2
    (request,) = server.requests
    assert request["model"] == MODEL and request["region"] == "us-east-1"
    assert request["path"] == f"/model/{MODEL.replace(':', '%3A')}/invoke-with-bidirectional-stream"
    assert "x-amz-content-sha256" in request["signed_headers"]
    sent = names(server)
    assert sent[:2] == ["sessionStart", "promptStart"]
    prompt = server.received[1]["event"]["promptStart"]
    tools = {t["toolSpec"]["name"]: t["toolSpec"] for t in prompt["toolConfiguration"]["tools"]}
    schema = json.loads(tools["register_for_session"]["inputSchema"]["json"])
    assert set(schema["required"]) == {"name", "session_id"}
    assert prompt["audioOutputConfiguration"]["sampleRateHertz"] == 24000
    results = [m["event"]["toolResult"] for m in server.received if "toolResult" in m["event"]]
    assert '"success"' in results[0]["content"]
    # Secrets never reach the artifacts.
    for path in run.path.rglob("*"):
        if path.is_file() and path.suffix in (".json", ".jsonl", ".md", ".html"):
            assert SECRET not in path.read_text(errors="replace")


async def test_history_goes_before_audio_and_the_audio_content_stays_open(aws: None) -> None:
    script = ListScript([Reply(text="Sure thing."), Reply(text="Done.")], transcripts=["a", "b"])
    history = [
        HistoryMessage(role="user", text="Book me in."),
        HistoryMessage(
            role="assistant",
            text="Booked.",
            tool_calls=[
                HistoryToolCall(call_id="c1", name="book", arguments={"s": "A"}, result="ok")
            ],
        ),
    ]
    async with fake(script) as server:
        session = NovaSonicSession(MODEL, base_url=server.url)
        await session.start(
            SessionSetup(system_prompt="Be brief.", history=history, modality="audio")
        )
        turns = []
        for _ in range(2):
            pcm = speech(0.6, 24000)
            for i in range(0, len(pcm), 4800):
                await session.send_user_audio(pcm[i : i + 4800], 24000)
            await session.send_user_audio(b"\x00\x00" * 28800, 24000)  # 1.2 s: MEDIUM ends the turn
            await session.end_user_turn()
            turns.append(await collect_turn(session))
        await session.close()
    assert server.refusals == []
    starts = [m["event"]["contentStart"] for m in server.received if "contentStart" in m["event"]]
    assert [(s["type"], s["role"], s["interactive"]) for s in starts] == [
        ("TEXT", "SYSTEM", False),
        ("TEXT", "USER", False),
        ("TEXT", "ASSISTANT", False),
        ("AUDIO", "USER", True),
    ]
    texts = [
        m["event"]["textInput"]["content"] for m in server.received if "textInput" in m["event"]
    ]
    assert texts[2].startswith("[tool call book(") and texts[2].endswith("Booked.")
    audio = b"".join(
        base64.b64decode(m["event"]["audioInput"]["content"])
        for m in server.received
        if "audioInput" in m["event"]
    )
    assert abs(len(audio) / 2 - 2 * 1.8 * 16000) <= 64  # resampled to 16 kHz, one content
    assert names(server)[-3:] == ["contentEnd", "promptEnd", "sessionEnd"]
    for events, heard, said in zip(turns, ["b", "a"], ["Sure thing.", "Done."], strict=True):
        assert [e.text for e in events if isinstance(e, UserTranscript)] == [heard]
        assert "".join(e.text for e in events if isinstance(e, AssistantTextDelta)) == said
        assert any(isinstance(e, AssistantAudio) and e.sample_rate == 24000 for e in events)
        assert isinstance(events[-1], TurnComplete) and events[-1].stop_reason == "END_TURN"


async def test_tool_use_waits_for_the_result(aws: None) -> None:
    script = ListScript([Reply(calls=(ScriptCall("lookup", {"q": "x"}),)), Reply(text="It is x.")])
    async with fake(script, faults=["duplicate"]) as server:
        session = NovaSonicSession(MODEL, base_url=server.url)
        await session.start(SessionSetup(system_prompt="x"))
        await session.send_user_text("look it up")
        await session.end_user_turn()
        events = []
        async for event in session.events():
            events.append(event)
            if isinstance(event, ToolCallRequested):
                await session.send_tool_result(event.call_id, {"answer": "x"})
            if isinstance(event, TurnComplete):
                break
        await session.close()
    calls = [e for e in events if isinstance(e, ToolCallRequested)]
    assert [(c.name, c.arguments) for c in calls] == [("lookup", {"q": "x"})]  # duplicate dropped
    assert "".join(e.text for e in events if isinstance(e, AssistantTextDelta)) == "It is x."
    assert server.refusals == []


async def test_connection_renewed_between_turns_before_the_limit(
    tmp_path: Path, smoke: Benchmark, aws: None
) -> None:
    async with fake(GoldenScript(smoke), session_limit_s=3600) as server:
        run, card, judgments = await run_smoke(
            tmp_path, TARGET, server.url, only_turns="0-2", target_options={"renew_after": 0}
        )
    assert_perfect(run, card, judgments)
    # renew_after=0: every turn starts on a new connection (the first one's included).
    assert len(server.requests) == 4
    assert not any(r.reconnected for r in run.turns())  # unseen by the run
    # Each new connection replays the conversation so far as history before its audio.
    last = [i for i, m in enumerate(server.received) if "sessionStart" in m["event"]][3]
    starts = [
        m["event"]["contentStart"] for m in server.received[last:] if "contentStart" in m["event"]
    ]
    audio = next(i for i, start in enumerate(starts) if start["type"] == "AUDIO")
    assert [s["role"] for s in starts[:audio]] == [
        "SYSTEM",
        "USER",
        "ASSISTANT",
        "USER",
        "ASSISTANT",
    ]


async def test_an_exception_frame_is_a_fatal_error_and_the_run_reconnects(
    tmp_path: Path, smoke: Benchmark, aws: None
) -> None:
    async with fake(GoldenScript(smoke), faults=["server_error@1", "drop@4"]) as server:
        run, card, judgments = await run_smoke(tmp_path, TARGET, server.url, only_turns="0-2")
    assert_perfect(run, card, judgments)
    records = run.turns()
    assert records[0].reconnected and records[1].reconnected  # response 4: after the call
    assert server.refusals == ["InternalServerException: injected fault on response 1"]


async def test_wrong_access_key_is_an_authentication_error(
    aws: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDWRONG")
    async with fake(ListScript([])) as server:
        session = NovaSonicSession(MODEL, base_url=server.url)
        with pytest.raises(Exception) as info:
            await session.start(SessionSetup(system_prompt="x"))
    assert getattr(info.value, "category", None) == "authentication"
    assert SECRET not in str(info.value)


async def test_a_bad_signature_is_refused(aws: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
    async with fake(ListScript([Reply(text="never")])) as server:
        session = NovaSonicSession(MODEL, base_url=server.url)
        await session.start(SessionSetup(system_prompt="x"))
        error = (await collect_turn_or_error(session))[-1]
        await session.close()
    assert isinstance(error, TargetError) and error.fatal
    assert server.refusals[0].startswith("InvalidSignatureException")


async def collect_turn_or_error(session: NovaSonicSession) -> list[object]:
    out: list[object] = []
    async for event in session.events():
        out.append(event)
        if isinstance(event, TurnComplete | TargetError):
            return out
    return out


def test_bedrock_nova_sonic_routes_to_the_adapter(aws: None) -> None:
    assert route_target(f"bedrock/{MODEL}") == TARGET
    session = resolve_target(f"bedrock/{MODEL}", base_url="http://127.0.0.1:1")()
    assert isinstance(session, NovaSonicSession)
    assert session.info.name == TARGET and session.info.input_modality == "audio"


def test_options_and_the_text_pipeline_are_checked(aws: None) -> None:
    check_target_options(TARGET, {"renew_after": 60, "voice": "tiffany"})
    with pytest.raises(ConfigError, match="turn_detection"):
        check_target_options(TARGET, {"turn_detection": "server_vad"})
    with pytest.raises(ConfigError, match="no text pipeline"):
        route_target(f"bedrock/{MODEL}", {"pipeline": "text"})


async def test_without_h2_the_error_names_the_extra(
    aws: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("h2", "h2.config", "h2.connection", "h2.events"):
        monkeypatch.setitem(sys.modules, name, None)  # import h2 now fails
    session = resolve_target(TARGET, base_url="http://127.0.0.1:1")()
    with pytest.raises(PrerequisiteError, match=r'pip install "voxbench\[nova-sonic\]"'):
        await session.start(SessionSetup(system_prompt="x"))


@pytest.mark.slow
async def test_conference_runs_to_the_end_across_a_forced_reconnect(
    tmp_path: Path, aws: None
) -> None:
    conference = load_benchmark("conference")
    async with fake(GoldenScript(conference), faults=["drop@40"]) as server:
        path = await run_conversation(
            RunConfig(
                benchmark="conference",
                target=TARGET,
                base_url=server.url,
                runs_dir=tmp_path,
                turn_timeout=30.0,
                # Renewal is by connection age in wall seconds: short enough that a quiet
                # machine's run (~40 s) still renews several times after the drop.
                target_options={"renew_after": 2},
            )
        )
        result = await asyncio.to_thread(evaluate_run, path)
    records = RunDirectory.open_existing(path).turns()
    assert len(records) == len(conference.turns)
    assert [r.status for r in records] == ["ok"] * len(records)
    assert sum(r.reconnected for r in records) == 1  # the drop; renewals stay unseen
    assert len(server.requests) > 2  # the drop's reconnect and the renewals
    assert result.card.strict_pass.rate == 1.0
    assert server.refusals == []


@pytest.mark.slow
async def test_audio_mode_run_through_the_runner(
    tmp_path: Path, smoke: Benchmark, aws: None
) -> None:
    # A real clock: the microphone streams silence after each turn, so the server's
    # turn-taking hears the user stop (a virtual clock sends none).
    async with fake(GoldenScript(smoke)) as server:
        run, card, judgments = await run_smoke(
            tmp_path, TARGET, server.url, mode="audio", heard_asr="none", only_turns="0,1"
        )
    assert_perfect(run, card, judgments)
    assert run.turns()[1].user_transcript == smoke.turns[1].text
    assert [c.name for c in run.turns()[1].tool_calls] == ["register_for_session"]
    assert server.refusals == []


async def test_the_fake_refuses_history_after_the_audio_content(aws: None) -> None:
    async with fake(ListScript([Reply(text="never")])) as server:
        session = NovaSonicSession(MODEL, base_url=server.url)
        await session.start(SessionSetup(system_prompt="x"))
        conn = session._conn
        assert conn is not None
        await session._text_content(conn, "USER", "late history", interactive=False)
        error = (await collect_turn_or_error(session))[-1]
        await session.close()
    assert isinstance(error, TargetError) and error.fatal and error.category == "bad_request"
    assert server.refusals == [
        "ValidationException: conversation history must come before audio input"
    ]
