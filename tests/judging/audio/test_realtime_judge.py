"""The realtime judge against the fake realtime server in judge mode: the events on the
wire, the whole buffer heard, corrective retries, undecided, timeouts and drops."""

from __future__ import annotations

import pytest

from voxbench.core.errors import AuthenticationError
from voxbench.judging.audio.engine import RubricJudge
from voxbench.judging.audio.realtime_judge import RealtimeAudioJudge, pcm24k
from voxbench.judging.audio.segments import Clip
from voxbench.testing.audio_judge import ScriptedAudioJudge, form_answer
from voxbench.testing.openai_realtime import FakeRealtimeJudgeServer

from .helpers import accent, spoken

KEY = "sk-test-judge"


def client(server: FakeRealtimeJudgeServer, **options) -> RealtimeAudioJudge:
    return RealtimeAudioJudge(
        "openai-realtime", "gpt-realtime", base_url=server.url, options=options
    )


async def test_wire_sequence_turn_detection_off_and_the_whole_buffer() -> None:
    audio = spoken()
    script = ScriptedAudioJudge([form_answer({"accent": 4}, "clear RP vowels")])
    async with FakeRealtimeJudgeServer(script, api_key=KEY) as server:
        judge = RubricJudge(client(server), accent())
        result = await judge.judge_clip(Clip("clip", audio))
    kinds = [e["type"] for e in server.received]
    appends = kinds.count("input_audio_buffer.append")
    assert kinds == [
        "session.update",
        "conversation.item.create",
        *["input_audio_buffer.append"] * appends,
        "input_audio_buffer.commit",
        "response.create",
    ]
    update = server.received[0]["session"]
    assert update["output_modalities"] == ["text"]
    assert update["audio"]["input"]["turn_detection"] is None  # sent as an explicit null
    assert "Evaluation Form" in update["instructions"]
    assert server.received[-1]["response"] == {"output_modalities": ["text"]}
    # Streamed faster than real time in 0.5 s events, and heard whole.
    assert appends == -(-len(pcm24k(audio)) // 24000)
    assert server.judgments == [
        {"turn_detection": None, "appends": appends, "committed_bytes": len(pcm24k(audio)),
         "output_modalities": ["text"]}
    ]  # fmt: skip
    assert script.heard[0].seconds == pytest.approx(audio.duration, abs=0.01)
    verdict = result.criteria["accent"]
    assert (verdict.mean, verdict.passed, verdict.explanation) == (4, True, "clear RP vowels")


async def test_a_malformed_form_gets_one_corrective_message() -> None:
    script = ScriptedAudioJudge(["Sounds British to me!", form_answer({"accent": 5})])
    async with FakeRealtimeJudgeServer(script, api_key=KEY) as server:
        result = await RubricJudge(client(server), accent()).judge_clip(Clip("c", spoken()))
    assert result.criteria["accent"].mean == 5 and result.calls == 2
    second = script.heard[1].text
    assert "Sounds British to me!" in second and "could not be read: accent: missing" in second
    texts = [e for e in server.received if e["type"] == "conversation.item.create"]
    assert [e["item"]["role"] for e in texts] == ["user", "user", "assistant", "user"]


async def test_two_malformed_forms_leave_the_clip_undecided() -> None:
    script = ScriptedAudioJudge(["- Accent (1-5): 4.5 - nearly", "- Accent (1-5): 6 - very"])
    async with FakeRealtimeJudgeServer(script, api_key=KEY) as server:
        result = await RubricJudge(client(server), accent()).judge_clip(Clip("c", spoken()))
    verdict = result.criteria["accent"]
    assert verdict.mean is None and verdict.passed is None and verdict.undecided == 1
    assert "malformed evaluation form twice" in result.as_dict()["undecided_reasons"][0]


@pytest.mark.parametrize("fault", ["hang@1", "drop@1", "server_error@1"])
async def test_a_failed_response_is_retried(fault: str) -> None:
    script = ScriptedAudioJudge([form_answer({"accent": 3})])
    async with FakeRealtimeJudgeServer(script, api_key=KEY, faults=[fault]) as server:
        judge = RubricJudge(client(server, response_timeout=0.5), accent())
        result = await judge.judge_clip(Clip("c", spoken()))
    assert result.criteria["accent"].mean == 3 and result.calls == 2


async def test_a_judge_that_keeps_failing_is_undecided() -> None:
    script = ScriptedAudioJudge([form_answer({"accent": 3})])
    faults = ["hang@1", "hang@2", "hang@3"]
    async with FakeRealtimeJudgeServer(script, api_key=KEY, faults=faults) as server:
        judge = RubricJudge(client(server, response_timeout=0.3), accent())
        result = await judge.judge_clip(Clip("c", spoken()))
    assert result.criteria["accent"].mean is None and result.calls == 3
    assert "the judge failed" in result.as_dict()["undecided_reasons"][0]


async def test_a_rejected_key_stops_the_judging() -> None:
    script = ScriptedAudioJudge([form_answer({"accent": 3})])
    async with FakeRealtimeJudgeServer(script, api_key="another-key") as server:
        with pytest.raises(AuthenticationError, match="audio judge's key was rejected") as caught:
            await RubricJudge(client(server), accent()).judge_clip(Clip("c", spoken()))
    assert caught.value.exit_code == 3


async def test_the_fake_refuses_a_judge_with_turn_detection_on() -> None:
    """The fake asserts what the judge must do: a session left on server VAD is refused."""
    from voxbench.judging.audio import realtime_judge

    script = ScriptedAudioJudge([form_answer({"accent": 3})])
    original = realtime_judge._judge_session

    def vad_on(instructions: str):
        config = original(instructions)
        config.audio.input.turn_detection = realtime_judge.ev.TurnDetection(type="server_vad")
        return config

    realtime_judge._judge_session = vad_on
    try:
        async with FakeRealtimeJudgeServer(script, api_key=KEY) as server:
            judge = client(server)
            with pytest.raises(Exception, match="turn detection"):
                await judge.hear("x", "y", spoken())
    finally:
        realtime_judge._judge_session = original


async def test_azure_realtime_judge_uses_the_deployment_url_and_api_key_header(monkeypatch) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", KEY)
    script = ScriptedAudioJudge([form_answer({"accent": 2})])
    async with FakeRealtimeJudgeServer(script, api_key=KEY) as server:
        judge = RealtimeAudioJudge("azure-openai-realtime", "my-realtime", base_url=server.origin)
        result = await RubricJudge(judge, accent()).judge_clip(Clip("c", spoken()))
    assert result.criteria["accent"].mean == 2
    assert server.handshakes[0] == {
        "path": "/openai/v1/realtime", "query": {"model": "my-realtime"}, "auth": "api-key"
    }  # fmt: skip


async def test_the_judge_opens_its_session_through_the_targets_handshake(monkeypatch) -> None:
    """One handshake for targets and judge: ``OpenAIRealtimeSession.open_session``."""
    from voxbench.targets.realtime.openai.session import OpenAIRealtimeSession

    opened: list[object] = []
    original = OpenAIRealtimeSession.open_session

    async def spy(self, config):
        opened.append(config)
        return await original(self, config)

    monkeypatch.setattr(OpenAIRealtimeSession, "open_session", spy)
    script = ScriptedAudioJudge([form_answer({"accent": 4})])
    async with FakeRealtimeJudgeServer(script, api_key=KEY) as server:
        await client(server).hear("the rubric", "judge this", spoken())
    (config,) = opened
    assert config.instructions == "the rubric" and config.output_modalities == ["text"]
