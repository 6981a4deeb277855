"""Issue 30 item 5: Ultravox against its own fake timed out on smoke turn 3 in audio mode.

The fake's VAD ended the user's turn at the pause between two sentences of one utterance;
the second sentence barged in on the answer to the first, and the fake (a) took it for the
next benchmark turn, so its script fell a turn behind, and (b) never finalised the
interrupted answer's transcript, so the adapter (rightly) waited for it until the turn timed
out. The fake was wrong on both: the continuation is the same utterance, and every agent
utterance gets its final transcript."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tests.targets.realtime.conftest import collect_turn
from voxbench.core.events import AssistantTextDelta, Interrupted, TurnComplete, UserTranscript
from voxbench.core.session import SessionSetup
from voxbench.targets.realtime.ultravox.session import UltravoxSession
from voxbench.testing.scripts import Reply, Script, ScriptMessage
from voxbench.testing.ultravox import FakeUltravoxServer

RATE = 16_000


class ByTurn(Script):
    """Answers ``answer to <what the user said>``; the n-th spoken turn says ``turn n``."""

    def reply(self, conversation: Sequence[ScriptMessage]) -> Reply:
        heard = next(m.text for m in reversed(conversation) if m.role == "user")
        return Reply(text=f"answer to {heard}, in several words for a while")

    def transcribe(self, number: int) -> str:
        return f"turn {number}"


def _speech(seconds: float) -> bytes:
    t = np.arange(int(seconds * RATE)) / RATE
    return (0.3 * np.sin(2 * np.pi * 200 * t) * 32767).astype("<i2").tobytes()


def _silence(seconds: float) -> bytes:
    return b"\x00\x00" * int(seconds * RATE)


async def _say(session: UltravoxSession, pcm: bytes) -> None:
    for i in range(0, len(pcm), 640):  # 20 ms chunks
        await session.send_user_audio(pcm[i : i + 640], RATE)


async def test_a_pause_inside_an_utterance_does_not_put_the_fake_a_turn_behind(keys) -> None:
    async with FakeUltravoxServer(ByTurn(), chunk_ms=20) as server:
        session = UltravoxSession("ultravox-v0.7", base_url=server.url)
        await session.start(SessionSetup(system_prompt="x", modality="audio"))
        # One utterance with a 0.56 s pause inside: the fake's VAD ends the turn there.
        await _say(session, _speech(0.8) + _silence(0.56))
        await _say(session, _speech(0.8) + _silence(0.7))
        await session.end_user_turn()
        first = await collect_turn(session)
        await _say(session, _speech(0.8) + _silence(0.7))
        await session.end_user_turn()
        second = await collect_turn(session)
        await session.close()
    assert server.responses == 3  # the first part's answer, cut; the whole; turn 2
    assert any(isinstance(e, Interrupted) for e in first)
    said = "".join(e.text for e in first if isinstance(e, AssistantTextDelta))
    assert said.endswith("answer to turn 1, in several words for a while"), said
    assert [e.text for e in first if isinstance(e, UserTranscript)] == ["turn 1"]
    assert isinstance(first[-1], TurnComplete)
    said = "".join(e.text for e in second if isinstance(e, AssistantTextDelta))
    assert said == "answer to turn 2, in several words for a while"  # not a turn behind
    assert [e.text for e in second if isinstance(e, UserTranscript)] == ["turn 2"]
