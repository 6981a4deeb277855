"""The driver against network targets: the fake OpenAI Realtime server (real time)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from voxbench.fullduplex.driver import drive_corpus
from voxbench.fullduplex.stream import StreamOptions
from voxbench.targets.registry import resolve_target
from voxbench.testing.openai_realtime import FakeOpenAIRealtimeServer
from voxbench.testing.scripts import Reply, Script, ScriptMessage


class _Answer(Script):
    def reply(self, conversation: Sequence[ScriptMessage]) -> Reply:
        return Reply(text="Blue is my favourite colour.")


def _stream(folder: Path) -> dict:
    return json.loads((folder / "voxbench_fdb.json").read_text())["streams"][0]


@pytest.mark.slow
async def test_injected_server_latency_shows_in_measured_latency(
    mini_corpus: Path, corpus_times: dict, tmp_path: Path
) -> None:
    subset = mini_corpus / "v1_0" / "candor_turn_taking"
    injected = {"fast": 0.1, "slow": 0.7}

    async def run(label: str, options: dict) -> dict:
        async with FakeOpenAIRealtimeServer(
            _Answer(), ttfb_ms=injected.get(label, 0.1) * 1000
        ) as server:
            factory = resolve_target(
                "openai-realtime/gpt-realtime",
                base_url=server.url,
                options={"api_key": "sk-test-key-000000000000", **options},
            )
            report = await drive_corpus(
                subset, factory, "openai-realtime/gpt-realtime", out_dir=tmp_path / label,
                opts=StreamOptions(),
            )  # fmt: skip
            assert report.failed == {}, report.failed
            return _stream(tmp_path / label / "1")

    fast, slow, server_vad = await asyncio.gather(
        run("fast", {}), run("slow", {}), run("server", {"turn_detection": "server_vad"})
    )
    for stream in (fast, slow):
        assert stream["clock"] == "realtime" and stream["turn_detection"] == "client"
        assert len(stream["end_of_turn_sent"]) == 1
    lat_fast = fast["responses"][0]["latency"]
    lat_slow = slow["responses"][0]["latency"]
    # The end of turn is stamped as it is sent, a hair after the server may already hold it.
    slack = 0.005
    assert lat_fast >= injected["fast"] - slack and lat_slow >= injected["slow"] - slack
    # The measured difference is the injected one (network and pacing jitter aside).
    assert lat_slow - lat_fast == pytest.approx(injected["slow"] - injected["fast"], abs=0.25)
    # With server VAD the driver sends no end of turn; the server's own VAD answers. The turn
    # ends where that VAD put the end of speech in the input (``audio_end_ms``), not when its
    # event was received, so a late-handled event cannot shorten the latency: the chunk that
    # ends the speech goes out at its start (one chunk before the stamp), and the server
    # answers the injected latency after it has it; any delay only adds to that.
    assert server_vad["turn_detection"] == "server"
    assert server_vad["end_of_turn_sent"] == []
    assert server_vad["server_speech_stopped"]
    stamps = server_vad["server_speech_stopped_audio"]
    assert len(stamps) == len(server_vad["server_speech_stopped"]) and None not in stamps
    first_response = server_vad["responses"][0]
    assert first_response["end_of_turn"] in stamps
    chunk_s = StreamOptions().chunk_ms / 1000
    assert first_response["latency"] >= injected["fast"] - chunk_s - 0.001
    assert (
        server_vad["responses"][0]["first_audio"]
        > corpus_times["v1_0/candor_turn_taking/1"]["turn_end"]
    )
    secrets = (tmp_path / "fast" / "1" / "voxbench_fdb.json").read_text()
    assert "sk-test-key" not in secrets
