"""Audio mode: paced streaming, the recording, the watchdog, cascades and their timings."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from tests.runner.scripted import ToneAgent
from voxbench.analysis import analyse_run
from voxbench.audio.vad import detect_speech
from voxbench.audio.wav import read_wav
from voxbench.audio.wer import word_error_rate
from voxbench.benchmarks.audio import ensure_benchmark_audio
from voxbench.benchmarks.loader import load_benchmark
from voxbench.core.rundir import RunDirectory
from voxbench.core.timeline import AudioRecorded, TurnStarted, UserTurnEnded
from voxbench.evaluation.evaluate import evaluate_run
from voxbench.runner.config import RunConfig
from voxbench.runner.launch import run_conversation


def audio_config(tmp_path: Path, **kw) -> RunConfig:
    kw.setdefault("heard_asr", "none")
    kw.setdefault("inter_turn_gap", 0.3)
    kw.setdefault("target", "local/oracle")
    return RunConfig(benchmark="smoke", mode="audio", runs_dir=tmp_path / "runs", **kw)


async def test_oracle_audio_run_records_an_aligned_conversation(tmp_path: Path) -> None:
    path = await run_conversation(audio_config(tmp_path, only_turns="0-3"))
    run = RunDirectory.open_existing(path)
    records = run.turns()
    assert [r.status for r in records] == ["ok"] * 4
    wav = read_wav(path / "conversation.wav")
    assert wav.channels == 2 and wav.sample_rate == 24_000
    origin = next(e.origin for e in run.events() if e.type == "recording_started")
    analysis = analyse_run(path)
    assert analysis.turn_taking and [t.turn for t in analysis.turns] == [r.turn for r in records]
    for rec, t in zip(records, analysis.turns, strict=True):
        assert t.issues == []
        assert t.user_speech_start is not None and t.user_speech_end > t.user_speech_start
        assert t.agent_speech_start is not None and t.agent_speech_start > t.user_speech_end
        assert 0 <= t.voice_to_voice < 1.0  # in-process: real processing time only
        # The agent channel is silent while the user speaks, and vice versa.
        a, b = (round((x - origin) * 24_000) for x in (t.user_speech_start, t.user_speech_end))
        user, agent = wav.samples[a:b, 0], wav.samples[a:b, 1]
        assert np.abs(user).max() > 0.05 and np.abs(agent).max() < 1e-3
        # Virtual time stood still while the agent worked: its answer starts on the recording
        # where the user's turn ended, on the run clock the runner stamped.
        stamps = rec.timings
        assert stamps.first_audio == stamps.user_end
        # Timeline latencies are the runner's own wall stamps (the host's processing time),
        # measured once.
        walls = {e.type: e.wall for e in reversed(run.events()) if e.turn == rec.turn}
        assert t.first_audio_latency == pytest.approx(
            walls["assistant_audio"] - walls["user_turn_ended"], abs=2e-6
        )
        assert t.processing == t.first_audio_latency >= 0
    assert analysis.clock == "virtual"
    assert set(analysis.latency) >= {"ttfb", "first_audio_latency", "voice_to_voice"}


async def test_each_turn_starts_on_a_sample_of_the_recording(tmp_path: Path) -> None:
    """A turn's stamp names the sample its audio starts on, so a window cut from the recording
    by the timeline's (microsecond) times never loses or gains a sample."""
    path = await run_conversation(audio_config(tmp_path, only_turns="0-3"))
    run = RunDirectory.open_existing(path)
    wav = read_wav(path / "conversation.wav")
    origin = next(e.origin for e in run.events() if e.type == "recording_started")
    starts = [(e.t - origin) * wav.sample_rate for e in run.events() if isinstance(e, TurnStarted)]
    assert len(starts) == 4
    for frames in starts:
        assert abs(frames - round(frames)) < 0.05  # 1 µs is 0.024 samples at 24 kHz
        before = wav.samples[round(frames) - 200 : round(frames), 0]
        assert not before.any()  # nothing of the turn's audio lies before its start


async def test_virtual_clock_runs_faster_than_real_time(tmp_path: Path) -> None:
    loop = asyncio.get_running_loop()
    began = loop.time()
    path = await run_conversation(audio_config(tmp_path, only_turns="0-2"))
    wall = loop.time() - began
    audio_seconds = read_wav(path / "conversation.wav").duration
    assert audio_seconds > 2 * wall  # ratio, not an absolute time


async def test_real_clock_paces_audio_like_a_microphone(tmp_path: Path) -> None:
    agent = ToneAgent(in_process=False)
    await run_conversation(
        audio_config(tmp_path, only_turns="9", clock="real", inter_turn_gap=0.0),
        session_factory=lambda: agent,
    )
    times = [t for t, _ in agent.received]
    samples = sum(n for _, n in agent.received)
    ratio = (samples / 16_000) / (times[-1] - times[0])
    assert 0.85 < ratio < 1.15
    chunk_sizes = {n for _, n in agent.received[:-2]}
    assert chunk_sizes == {320}  # 20 ms at 16 kHz


async def test_the_target_hears_its_turn_as_consecutive_20_ms_chunks_of_the_clip(
    tmp_path: Path,
) -> None:
    class Keeper(ToneAgent):
        def __init__(self) -> None:
            super().__init__()
            self.pcm: list[bytes] = []

        async def send_user_audio(self, pcm: bytes, sample_rate: int) -> None:
            await super().send_user_audio(pcm, sample_rate)
            self.pcm.append(pcm)

    agent = Keeper()
    await run_conversation(audio_config(tmp_path, only_turns="0"), session_factory=lambda: agent)
    clip = read_wav(ensure_benchmark_audio(load_benchmark("smoke"))["0"]).mono().resampled(16_000)
    assert b"".join(agent.pcm) == clip.to_pcm16()
    assert {len(pcm) for pcm in agent.pcm[:-1]} == {640}  # 320 samples: 20 ms at 16 kHz


async def test_watchdog_records_a_no_response_and_the_run_goes_on(tmp_path: Path) -> None:
    """On a virtual clock an answer that never begins is a no-response after ``turn_timeout``
    wall seconds (``no_response_timeout`` is a real-time limit: nobody waits in virtual time)."""
    sessions: list[ToneAgent] = []

    def factory() -> ToneAgent:
        sessions.append(ToneAgent(silent_turns={1} if not sessions else set()))
        return sessions[-1]

    config = audio_config(tmp_path, only_turns="0-2", no_response_timeout=0.1, turn_timeout=0.5)
    path = await run_conversation(config, session_factory=factory)
    records = RunDirectory.open_existing(path).turns()
    assert [r.status for r in records] == ["ok", "no_response", "ok"]
    assert "no response within 0.5 s" in records[1].errors[0]
    assert (
        len(sessions) == 2
    )  # a fresh session after the silent one; its audio was not replayed into it
    assert sum(n for _, n in sessions[0].received) > 0


async def test_real_clock_watchdog_waits_no_response_timeout(tmp_path: Path) -> None:
    agent = ToneAgent(in_process=False, silent_turns={0})
    config = audio_config(tmp_path, only_turns="9", clock="real", no_response_timeout=0.3)
    path = await run_conversation(config, session_factory=lambda: agent)
    (record,) = RunDirectory.open_existing(path).turns()
    assert record.status == "no_response"
    assert "no response within 0.3 s" in record.errors[0]


class SlowToneAgent(ToneAgent):
    """Thinks for ``think`` seconds before each answer: first a thread that sleeps (a model on
    another core), then a CPU burn that holds the event loop (a model on this one)."""

    def __init__(self, think: float) -> None:
        super().__init__()
        self.think = think

    async def respond(self, user_text: str) -> None:
        import time

        await asyncio.to_thread(time.sleep, self.think / 2)
        until = time.monotonic() + self.think / 2
        while time.monotonic() < until:
            pass
        await super().respond(user_text)


async def test_a_slow_in_process_agent_is_answered_at_the_users_end(tmp_path: Path) -> None:
    """Virtual time stands still while an in-process agent computes: thinking far past
    ``no_response_timeout`` is no no-response, its answer starts on the recording where the
    user's turn ended, and the time it took is its latency (measured on wall time)."""
    think = 0.6
    config = audio_config(tmp_path, only_turns="0-1", no_response_timeout=0.2)
    path = await run_conversation(config, session_factory=lambda: SlowToneAgent(think))
    run = RunDirectory.open_existing(path)
    records = run.turns()
    assert [r.status for r in records] == ["ok", "ok"]
    analysis = analyse_run(path)
    assert analysis.clock == "virtual"
    for record, measured in zip(records, analysis.turns, strict=True):
        user_end = next(
            e for e in run.events() if e.turn == record.turn and e.type == "user_turn_ended"
        )
        first = next(
            e for e in run.events() if e.turn == record.turn and isinstance(e, AudioRecorded)
        )
        assert first.t == user_end.t  # on the run clock no time passed: it plays from there
        assert abs(first.plays_at - user_end.t) <= 0.5 / 24_000 + 1e-6  # (to the nearest sample)
        assert first.wall - user_end.wall >= think  # on the wall clock: the thinking
        assert measured.ttfb >= think and measured.first_audio_latency >= think
        assert measured.processing == measured.first_audio_latency
        assert measured.issues == []
        # In real time the answer would have started ``processing`` later.
        assert measured.pipeline_ttfa == pytest.approx(
            measured.first_agent_audio - measured.user_speech_end + measured.processing, abs=1e-3
        )


async def test_agent_talking_over_the_user_is_negative_latency(tmp_path: Path) -> None:
    class Interrupter(ToneAgent):
        async def send_user_audio(self, pcm: bytes, sample_rate: int) -> None:
            await super().send_user_audio(pcm, sample_rate)
            if len(self.received) == 10:  # 200 ms into the user's turn
                await self.end_user_turn()

    path = await run_conversation(
        audio_config(tmp_path, only_turns="1"), session_factory=lambda: Interrupter()
    )
    report = analyse_run(path)
    assert report.turns[0].voice_to_voice < 0
    assert any(i.startswith("negative_latency") for i in report.turns[0].issues)
    assert any(i.startswith("overlap") for i in report.turns[0].issues)


async def test_local_cascade_reports_stage_timings_and_heard_text(tmp_path: Path) -> None:
    config = audio_config(tmp_path, only_turns="0-1", heard_asr="local/whisper-tiny.en")
    config = config.model_copy(update={"target": "cascade/local/baseline"})
    path = await run_conversation(config)
    records = RunDirectory.open_existing(path).turns()
    analysis = analyse_run(path)
    for rec in records:
        stages = analysis.turn(rec.turn).stages
        assert set(stages) == {"stt", "llm_first_token", "tts_first_audio"}
        assert all(v >= 0 for v in stages.values())
        assert rec.user_transcript and word_error_rate(rec.user_text, rec.user_transcript) < 0.3
        assert rec.heard_text
    # Whisper tiny mishears some eSpeak phrases badly ("Tickets: Student ticket: $45" is heard
    # as "Take it, student take it, not a 45"; which ones varies between machines), so one
    # turn can reach WER 1. What must hold: each turn's heard text is its own turn's speech,
    # not silence or another turn's audio, and the run as a whole is mostly heard.
    first, second = records
    for rec, other in ((first, second), (second, first)):
        own = word_error_rate(rec.assistant_text, rec.heard_text)
        assert own < word_error_rate(other.assistant_text, rec.heard_text)
    spoken = " ".join(rec.assistant_text for rec in records)
    heard = " ".join(rec.heard_text or "" for rec in records)
    assert word_error_rate(spoken, heard) < 0.8
    assert read_wav(path / "conversation.wav").duration > 3


def test_user_clips_keep_short_answers() -> None:
    # A 0.45 s "Yes." must count as speech, or its turn would have no user speech end.
    from voxbench.providers.speech import get_tts

    yes = get_tts("local/espeak").synthesize("Yes.")
    assert detect_speech(yes, min_speech_ms=100, min_silence_ms=300)


@pytest.mark.slow
async def test_a_dropped_realtime_session_reconnects_mid_audio_run(
    tmp_path: Path, monkeypatch
) -> None:
    from voxbench.benchmarks.loader import load_benchmark
    from voxbench.testing.openai_realtime import FakeOpenAIRealtimeServer
    from voxbench.testing.scripts import GoldenScript

    monkeypatch.setenv("OPENAI_API_KEY", "fake-key-123456")
    script = GoldenScript(load_benchmark("smoke"))
    async with FakeOpenAIRealtimeServer(script, faults=["drop@2"]) as server:
        config = audio_config(
            tmp_path,
            only_turns="0-1",
            clock="real",
            inter_turn_gap=0.1,
            target="openai-realtime/gpt-realtime",
            base_url=server.url,
        )
        path = await run_conversation(config)  # response 2 is turn 1's tool call: dropped
    records = RunDirectory.open_existing(path).turns()
    assert [r.status for r in records] == ["ok", "ok"]
    assert [r.reconnected for r in records] == [False, True]
    assert [c.name for c in records[1].tool_calls] == ["register_for_session"]
    assert records[1].state_after["registrations"] == ["H-101"]  # acted once, not twice
    assert len(server.handshakes) == 2  # one reconnect, rehydrated with turn 0
    # The recording goes on across the reconnect: one continuous, aligned timeline.
    report = analyse_run(path)
    assert [t.issues for t in report.turns] == [[], []]


@pytest.mark.parametrize("mode", ["track", "mix"])
async def test_tag_tones_mark_where_answers_start(tmp_path: Path, mode: str) -> None:
    path = await run_conversation(audio_config(tmp_path, only_turns="0-2", tags=mode))
    assert (path / "tags.wav").is_file() is (mode == "track")
    wav = read_wav(path / "conversation.wav")
    report = analyse_run(path)
    # Each answer's tag is found where the runner logged its first audio, to the sample.
    assert [t.issues for t in report.turns] == [[], [], []]
    assert all(t.tag_alignment is not None and abs(t.tag_alignment) < 0.002 for t in report.turns)
    if mode == "track":  # the agent's recorded audio stays clean: no 2 kHz tone in it
        from voxbench.audio.tags import find_tags

        assert find_tags(wav.channel(1)) == []


async def test_an_audio_run_resumes_on_the_same_recording(tmp_path: Path) -> None:
    from voxbench.runner.launch import resume_run

    path = await run_conversation(audio_config(tmp_path, only_turns="0-3"))
    # As if killed after turn 1: the last two turns never completed.
    lines = (path / "transcript.jsonl").read_text().splitlines(keepends=True)
    (path / "transcript.jsonl").write_text("".join(lines[:2]))
    before = read_wav(path / "conversation.wav").duration
    await resume_run(path)
    run = RunDirectory.open_existing(path)
    assert [r.turn for r in run.turns()] == ["0", "1", "2", "3"]
    assert read_wav(path / "conversation.wav").duration > before  # appended, never rewritten
    events = run.events()
    assert [e.type for e in events].count("recording_started") == 1
    # The timeline goes on where the recording ended, on the virtual clock, wall-stamped.
    resumed = next(i for i, e in enumerate(events) if e.type == "run_resumed")
    origin = next(e.origin for e in events if e.type == "recording_started")
    after = [e for e in events[resumed:] if isinstance(e, TurnStarted)]
    assert [e.turn for e in after] == ["2", "3"]
    assert after[0].t >= origin + before
    assert all(a.t <= b.t for a, b in zip(events, events[1:], strict=False))
    assert all(e.wall is not None for e in after)
    report = analyse_run(path)
    assert [t.issues for t in report.turns] == [[], [], [], []]
    assert all(t.processing is not None for t in report.turns)


def _delayed_oracle(seconds: float):  # noqa: ANN202 - a session factory
    """The oracle on smoke, thinking ``seconds`` in a worker thread before every answer (a
    host that is slow, or busy with other work)."""
    import time

    from voxbench.benchmarks.loader import load_benchmark
    from voxbench.targets.oracle import make_oracle

    def factory():  # noqa: ANN202
        session = make_oracle(load_benchmark("smoke"))
        respond = session.respond

        async def slowly(user_text: str) -> None:
            await asyncio.to_thread(time.sleep, seconds)
            await respond(user_text)

        session.respond = slowly  # type: ignore[method-assign]
        return session

    return factory


async def test_a_slow_host_gives_the_same_recording_heard_texts_and_verdicts(
    tmp_path: Path,
) -> None:
    """An in-process run's recording, heard texts and verdicts do not depend on how long the
    host takes to answer: only its timing figures do."""
    config = audio_config(
        tmp_path / "quick",
        heard_asr="local/whisper-tiny.en",
        only_turns="0-1",  # an answer, and one with a tool call (Whisper is slow here)
        inter_turn_gap=0.8,
        no_response_timeout=0.1,  # shorter than every answer of the slow host
    )
    quick = await run_conversation(config)
    slow_config = config.model_copy(update={"runs_dir": tmp_path / "slow" / "runs"})
    slow = await run_conversation(slow_config, session_factory=_delayed_oracle(0.25))
    assert (slow / "conversation.wav").read_bytes() == (quick / "conversation.wav").read_bytes()

    def seen(path: Path) -> tuple[list[tuple], list[tuple], list[dict]]:
        run = RunDirectory.open_existing(path)
        verdicts = sorted((j.turn, j.dimension, j.passed) for j in evaluate_run(path).judgments)
        turns = [(r.turn, r.status, r.assistant_text, r.heard_text) for r in run.turns()]
        timeline = [e.model_dump(exclude={"seq", "wall"}) for e in run.events()]
        return turns, verdicts, timeline

    (quick_turns, quick_verdicts, quick_timeline), (slow_turns, slow_verdicts, slow_timeline) = [
        await asyncio.to_thread(seen, path) for path in (quick, slow)
    ]
    assert slow_turns == quick_turns
    assert all(status == "ok" and heard for _, status, _, heard in quick_turns)
    assert slow_verdicts == quick_verdicts
    assert all(passed for _, _, passed in quick_verdicts)
    # Every virtual time on the timeline is the same too; only the wall stamps differ.
    assert slow_timeline == quick_timeline
    slow_ttfb = analyse_run(slow).latency["ttfb"]
    assert slow_ttfb.min > 0.249  # the thinking is the measured latency (to the µs stamps)


@contextmanager
def cpu_load(processes: int) -> Iterator[None]:
    """Busy-loop processes competing for every core while the block runs."""
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(processes)]
    try:
        yield
    finally:
        for proc in busy:
            proc.kill()
            proc.wait()


def _outcome(path: Path) -> dict[str, object]:
    """What a user sees of an audio run, without its times: per turn its status, text, heard
    text, the audio on both channels of the recording, turn-taking issues and verdicts."""
    run = RunDirectory.open_existing(path)
    wav = read_wav(path / "conversation.wav")
    origin = next(e.origin for e in run.events() if e.type == "recording_started")
    audio: dict[str, list[np.ndarray]] = {}
    starts: dict[str, float] = {}
    for e in run.events():
        frame = round((e.t - origin) * wav.sample_rate)
        if isinstance(e, TurnStarted):
            starts[e.turn] = frame
        elif isinstance(e, UserTurnEnded):
            audio[e.turn] = [wav.samples[starts[e.turn] : frame, 0]]
        elif isinstance(e, AudioRecorded) and e.plays_at is not None:
            first = round((e.plays_at - origin) * wav.sample_rate)
            count = round(e.samples * wav.sample_rate / e.sample_rate)
            audio[e.turn].append(wav.samples[first : first + count, 1])
    analysis = analyse_run(path)
    evaluation = evaluate_run(path)
    return {
        "recording": (path / "conversation.wav").read_bytes(),
        "turns": [(r.turn, r.status, r.assistant_text, r.heard_text) for r in run.turns()],
        # Where a turn starts and ends is a time: compare its audio, not the silence around it.
        "user_audio": {t: np.trim_zeros(parts[0]).tobytes() for t, parts in audio.items()},
        "agent_audio": {t: np.concatenate(parts[1:]).tobytes() for t, parts in audio.items()},
        "issues": {t.turn: t.issues for t in analysis.turns},
        "verdicts": sorted((j.turn, j.dimension, j.passed) for j in evaluation.judgments),
    }


@pytest.mark.slow
def test_oracle_audio_run_is_the_same_under_cpu_load(tmp_path: Path) -> None:
    """A virtual-clock run's recording, heard text and verdicts do not depend on CPU speed."""
    config = audio_config(tmp_path, heard_asr="local/whisper-tiny.en", tags="track")
    quiet = _outcome(asyncio.run(run_conversation(config)))
    with cpu_load(2 * (os.cpu_count() or 1)):
        loaded = _outcome(asyncio.run(run_conversation(config)))
    assert loaded["recording"] == quiet["recording"]  # byte for byte
    assert loaded["turns"] == quiet["turns"]
    assert all(status == "ok" and heard for _, status, _, heard in quiet["turns"])
    assert loaded["user_audio"] == quiet["user_audio"]
    assert loaded["agent_audio"] == quiet["agent_audio"]
    assert loaded["issues"] == quiet["issues"]
    assert loaded["verdicts"] == quiet["verdicts"]
    failed = [v for v in quiet["verdicts"] if v[2] is False]
    assert not failed, failed


def _opening_fails(times: int) -> tuple[list[int], object]:
    """A session factory for the oracle whose first ``times`` sessions fail to start with a
    retryable 503 (the count of starts is kept in the returned list)."""
    from voxbench.benchmarks.loader import load_benchmark
    from voxbench.core.errors import ProviderError
    from voxbench.targets.oracle import make_oracle

    starts: list[int] = []

    def factory():  # noqa: ANN202 - a session factory
        session = make_oracle(load_benchmark("smoke"))
        starts.append(1)
        if len(starts) <= times:

            async def refuse(setup) -> None:  # noqa: ANN001
                raise ProviderError("HTTP 503: busy", category="server", retryable=True, status=503)

            session.start = refuse  # type: ignore[method-assign]
        return session

    return starts, factory


async def test_an_audio_run_retries_its_first_session_and_stops_when_it_never_opens(
    tmp_path: Path,
) -> None:
    """The recording needs the session first, so an audio run retries the opening itself (as
    a turn would); a target that never opens stops the run with nothing tried."""
    from voxbench.core.errors import RunIncompleteError

    starts, factory = _opening_fails(1)
    path = await run_conversation(audio_config(tmp_path, only_turns="0-1"), session_factory=factory)
    assert len(starts) == 2
    assert [r.status for r in RunDirectory.open_existing(path).turns()] == ["ok", "ok"]

    starts, factory = _opening_fails(10)
    config = audio_config(tmp_path / "never", only_turns="0-1", max_retries=2)
    with pytest.raises(RunIncompleteError, match="session did not open after 2 retries"):
        await run_conversation(config, session_factory=factory)
    assert len(starts) == 3
    (run,) = (tmp_path / "never" / "runs" / "smoke").iterdir()
    assert RunDirectory.open_existing(run).turns() == []
    assert RunDirectory.open_existing(run).info().status == "error"


class _SlowEar:
    """A heard-text ASR engine that takes ``seconds`` per answer and says which call it was;
    it tells the test's event loop when each call starts."""

    name = "test/slow-ear"

    def __init__(self, seconds: float, loop: asyncio.AbstractEventLoop) -> None:
        self.seconds = seconds
        self.loop = loop
        self.started: list[asyncio.Event] = [asyncio.Event() for _ in range(8)]
        self.finished_at: list[float] = []
        self.calls = 0

    def transcribe(self, audio):  # noqa: ANN001, ANN202 - the ASREngine protocol
        import time

        from voxbench.audio.transcript import Transcript

        call = self.calls
        self.calls += 1
        self.loop.call_soon_threadsafe(self.started[call].set)
        time.sleep(self.seconds)
        self.finished_at.append(time.monotonic())
        return Transcript(text=f"heard {call}")


def _with_ear(monkeypatch: pytest.MonkeyPatch, ear: _SlowEar) -> None:
    from voxbench.runner.speech import SpeechTurns

    monkeypatch.setattr(SpeechTurns, "heard_asr", property(lambda self: ear))


async def test_heard_text_is_transcribed_beside_the_next_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A turn's heard-text ASR runs while the next turn plays; each turn is still kept in
    order, with its own heard text, its checkpoint and its event."""
    import time

    ear = _SlowEar(0.4, asyncio.get_running_loop())
    _with_ear(monkeypatch, ear)
    started_turns: dict[str, float] = {}
    original = RunDirectory.append_event

    def stamp(self, event, **kw):  # noqa: ANN001, ANN003, ANN202
        if isinstance(event, TurnStarted):
            started_turns[kw["turn"]] = time.monotonic()
        return original(self, event, **kw)

    monkeypatch.setattr(RunDirectory, "append_event", stamp)
    path = await run_conversation(audio_config(tmp_path, only_turns="0-3"))
    run = RunDirectory.open_existing(path)
    records = run.turns()
    assert [r.turn for r in records] == ["0", "1", "2", "3"]
    assert [r.heard_text for r in records] == ["heard 0", "heard 1", "heard 2", "heard 3"]
    assert [run.checkpoint(r.turn) is not None for r in records] == [True] * 4
    heard = [e for e in run.events() if e.type == "agent_speech"]
    assert [(e.turn, e.heard_text) for e in heard] == [(r.turn, r.heard_text) for r in records]
    # Turn n+1 started before turn n's 0.4 s of hearing was over.
    for n in range(3):
        assert started_turns[str(n + 1)] < ear.finished_at[n]


async def test_a_stopped_audio_run_keeps_the_turn_whose_heard_text_was_pending(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopped while the next turn runs (Ctrl-C), the run still keeps the turn before it with
    its heard text; a resume runs only what is missing."""
    from voxbench.runner.launch import resume_run

    ear = _SlowEar(0.3, asyncio.get_running_loop())
    _with_ear(monkeypatch, ear)
    run_task = asyncio.create_task(run_conversation(audio_config(tmp_path, only_turns="0-3")))
    await ear.started[2].wait()  # turn 2 has ended: turn 1 waits for its heard text
    run_task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run_task
    (path,) = (tmp_path / "runs").glob("*/*")
    run = RunDirectory.open_existing(path)
    kept = run.turns()
    assert [r.turn for r in kept][:2] == ["0", "1"]
    assert [r.heard_text for r in kept] == [f"heard {i}" for i in range(len(kept))]
    assert [run.checkpoint(r.turn) is not None for r in kept] == [True] * len(kept)
    await resume_run(path)
    assert [r.turn for r in RunDirectory.open_existing(path).turns()] == ["0", "1", "2", "3"]
