"""``fdb run`` through ``websocket/<url>``: the fake agent, with voxbench's or its own VAD."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from voxbench.fullduplex.driver import drive_corpus
from voxbench.fullduplex.stream import StreamOptions
from voxbench.targets.registry import resolve_target
from voxbench.testing.agent_ws import FakeAgentServer
from voxbench.testing.scripts import Reply, Script, ScriptMessage


class _Answer(Script):
    def reply(self, conversation: Sequence[ScriptMessage]) -> Reply:
        return Reply(text="Blue is my favourite colour.")


@pytest.mark.slow
@pytest.mark.parametrize("turn_detection", ["client", "agent"])
async def test_fdb_sample_through_the_agent_protocol(
    mini_corpus: Path, corpus_times: dict, tmp_path: Path, turn_detection: str
) -> None:
    subset = mini_corpus / "v1_0" / "candor_turn_taking"
    fake = FakeAgentServer(_Answer(), ttfb_ms=200, turn_detection=turn_detection)  # type: ignore[arg-type]
    async with fake as server:
        name = f"websocket/{server.url}"
        report = await drive_corpus(
            subset, resolve_target(name), name, out_dir=tmp_path, opts=StreamOptions()
        )
    assert report.failed == {}, report.failed
    stream = json.loads((tmp_path / "1" / "voxbench_fdb.json").read_text())["streams"][0]
    assert stream["clock"] == "realtime"
    assert server.starts[0].modality == "audio" and server.audio_bytes > 0
    first = stream["responses"][0]
    assert first["first_audio"] is not None
    if turn_detection == "client":
        assert stream["turn_detection"] == "client" and len(stream["end_of_turn_sent"]) == 1
        assert first["latency"] >= 0.2 - 0.005
    else:  # the agent's VAD decided; voxbench sent no end of turn
        assert stream["turn_detection"] == "server" and stream["end_of_turn_sent"] == []
        assert stream["server_speech_stopped"]
        assert first["first_audio"] > corpus_times["v1_0/candor_turn_taking/1"]["turn_end"]
    assert (tmp_path / "1" / "output.wav").is_file()


@pytest.mark.slow
async def test_fdb_sample_through_a_twilio_stream(
    mini_corpus: Path, corpus_times: dict, tmp_path: Path
) -> None:
    from voxbench.testing.twilio_bot import FakeTwilioBot

    subset = mini_corpus / "v1_0" / "candor_turn_taking"
    async with FakeTwilioBot(_Answer(), ttfb_ms=200, vad_silence_ms=600) as bot:
        name = f"twilio-stream/{bot.url}"
        report = await drive_corpus(
            subset, resolve_target(name), name, out_dir=tmp_path, opts=StreamOptions()
        )
    assert report.failed == {}, report.failed
    stream = json.loads((tmp_path / "1" / "voxbench_fdb.json").read_text())["streams"][0]
    # The bot's own VAD decides; the call's 8 kHz answer lands after the user's turn.
    assert stream["turn_detection"] == "server" and stream["end_of_turn_sent"] == []
    first = stream["responses"][0]
    assert first["first_audio"] > corpus_times["v1_0/candor_turn_taking/1"]["turn_end"]
    assert bot.starts and bot.media_in > 0 and bot.stops == 1
