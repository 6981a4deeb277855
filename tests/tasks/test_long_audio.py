"""Long audio: chunks end in VAD silences, hard cuts overlap, joined replies neither fuse nor
repeat boundary words, and the joined WER is the per-chunk WERs' weighted sum."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from voxbench.audio.espeak import espeak_synthesize
from voxbench.audio.vad import SpeechSegment
from voxbench.audio.wav import Audio, concatenate
from voxbench.metrics.registry import METRICS, ScoringContext
from voxbench.tasks.config import parse_config
from voxbench.tasks.datasets.suite import DATA_DIR
from voxbench.tasks.engine import work_queue as engine_module
from voxbench.tasks.engine.chunking import (
    MIN_SILENCE_SECONDS,
    chunk_pieces,
    plan_pieces,
    silence_cut,
    silences,
)
from voxbench.tasks.engine.pool import _handle
from voxbench.tasks.engine.prepare import Cut, audio_of_wav, prepare_clip, wav_bytes
from voxbench.tasks.engine.work_queue import join_chunks
from voxbench.tasks.run import run_tasks
from voxbench.testing import FakeOpenAIServer
from voxbench.testing.scripts import Reply, Script, ScriptMessage

from .conftest import run_yaml
from .test_http import serving

RATE = 16_000


# -- the silence finder on constructed segments ----------------------------------------------


def test_silences_are_the_gaps_around_and_between_speech() -> None:
    speech = [SpeechSegment(0.5, 2.0), SpeechSegment(2.1, 4.0), SpeechSegment(4.5, 9.0)]
    # 2.0–2.1 is shorter than MIN_SILENCE_SECONDS: a pause inside speech, never cut.
    assert MIN_SILENCE_SECONDS > 0.1
    assert silences(speech, 10.0) == [(0.0, 0.5), (4.0, 4.5), (9.0, 10.0)]
    assert silences([], 3.0) == [(0.0, 3.0)]  # no speech: all silence


def test_the_cut_is_in_the_roomiest_silence_of_the_window() -> None:
    gaps = [(20.0, 21.5), (24.0, 24.6), (27.0, 27.2), (29.9, 31.0)]
    # Window 21–30: 24.0–24.6 has the most room (0.6 s; 29.9–31 has 0.1 s before the limit).
    assert silence_cut(gaps, 21.0, 30.0) == pytest.approx(24.3)
    # A silence running past the limit, with room: cut at the limit, not beyond.
    assert silence_cut([(28.0, 40.0)], 21.0, 30.0) == 30.0
    # A silence that began before the window: cut where the window starts, nearest its middle.
    assert silence_cut([(15.0, 22.0)], 21.0, 30.0) == 21.0
    assert silence_cut([(10.0, 20.0), (31.0, 33.0)], 21.0, 30.0) is None


def test_pieces_end_in_silences_and_overlap_only_at_hard_cuts() -> None:
    gaps = [(9.0, 9.5), (25.0, 25.4)]  # speech elsewhere: nothing in the window 16.25–19.25
    pieces = plan_pieces(31.0, gaps, max_seconds=10, overlap_seconds=2, search_fraction=0.3)
    assert [(p.start, p.end, p.cut) for p in pieces] == [
        (0.0, 9.25, "silence"),
        (9.25, 19.25, "hard"),
        (17.25, 25.2, "silence"),  # starts 2 s before the hard cut
        (25.2, 31.0, "end"),
    ]
    assert all(p.end - p.start <= 10 for p in pieces)
    hard = plan_pieces(25, None, max_seconds=10, overlap_seconds=2, search_fraction=0.3)
    assert [(p.start, p.end) for p in hard] == [(0, 10), (8, 18), (16, 25)]


def test_joining_deduplicates_only_after_hard_cuts() -> None:
    texts = ["the quick brown fox", "Brown fox jumps over", "over the dog."]
    assert join_chunks(texts, [True, True]) == "the quick brown fox jumps over the dog."
    # After a silence cut a repeated word is really said twice: it is kept.
    assert join_chunks(["go home", "home is far"], [False]) == "go home home is far"
    assert join_chunks(["hello", "world"], [False]) == "hello world"  # never fused


# -- constructed speech --------------------------------------------------------------------


def _trimmed(audio: Audio) -> Audio:
    loud = np.nonzero(np.abs(audio.samples) > 0.01)[0]
    return Audio(audio.samples[loud[0] : loud[-1] + 1], audio.sample_rate)


@dataclass(frozen=True)
class Spoken:
    """A clip made of spoken units (sentences or words) and where each one is."""

    audio: Audio
    units: list[tuple[str, float, float]]

    def said_in(self, start: float, end: float) -> str:
        """The units whose middle lies in ``[start, end)``: what a perfect listener hears."""
        return " ".join(t for t, a, b in self.units if start <= (a + b) / 2 < end)

    @property
    def text(self) -> str:
        return " ".join(t for t, _, _ in self.units)


def _speak(units: list[tuple[str, str]], pauses: list[float]) -> Spoken:
    parts, spans, t = [], [], 0.0
    for (text, voice), pause in zip(units, pauses, strict=True):
        clip = _trimmed(espeak_synthesize(text, voice).resampled(RATE))
        parts += [clip, Audio(np.zeros(round(pause * RATE), np.float32), RATE)]
        spans.append((text, t, t + clip.duration))
        t += clip.duration + pause
    # As a 16-bit WAV holds it: what the engine reads back and cuts.
    return Spoken(audio_of_wav(wav_bytes(concatenate(parts)), RATE), spans)


@pytest.fixture(scope="module")
def sentences() -> Spoken:
    """~75 s of eSpeak sentences (four voices) with 0.5–1 s pauses between them."""
    items = [
        json.loads(line) for line in (DATA_DIR / "en_asr" / "items.jsonl").read_text().splitlines()
    ]
    chosen = [items[i % len(items)] for i in range(22)]
    return _speak(
        [(i["text"], i["voice"]) for i in chosen], [0.5 + 0.25 * (i % 3) for i in range(22)]
    )


@pytest.fixture(scope="module")
def words() -> Spoken:
    """~30 s of single words 40 ms apart: speech without a pause to cut in."""
    text = [
        "the",
        "quick",
        "brown",
        "fox",
        "jumps",
        "over",
        "the",
        "lazy",
        "dog",
        "while",
        "seven",
        "happy",
        "children",
        "sing",
        "loudly",
        "near",
        "a",
        "quiet",
        "river",
        "and",
        "an",
        "old",
        "man",
        "reads",
        "his",
        "morning",
        "paper",
        "slowly",
    ] * 2
    return _speak([(w, "en-us") for w in text], [0.04] * len(text))


def test_cuts_fall_in_the_pauses_between_sentences(sentences: Spoken) -> None:
    assert 70 < sentences.audio.duration < 85
    pieces = chunk_pieces(sentences.audio, max_seconds=30, overlap_seconds=2, search_fraction=0.3)
    assert len(pieces) >= 3 and [p.cut for p in pieces[:-1]] == ["silence"] * (len(pieces) - 1)
    for before, after in zip(pieces, pieces[1:], strict=False):
        assert after.start == before.end  # no overlap after a silence cut
        assert before.end - before.start <= 30
        cut = before.end
        assert not any(a - 0.05 < cut < b + 0.05 for _, a, b in sentences.units), cut
    # The same cuts every time (one VAD pass over the whole clip, no timing involved), and
    # in a worker process exactly as in a thread.
    again = chunk_pieces(sentences.audio, max_seconds=30, overlap_seconds=2, search_fraction=0.3)
    assert again == pieces
    cut = Cut(RATE, "chunk", 30, 2, 0.3)
    here, _ = prepare_clip(sentences.audio, cut)
    assert here.pieces == tuple(pieces)
    wav = wav_bytes(sentences.audio)
    assert _handle("prepare", (wav, None, "long", cut, None))[3] == here.pieces


def test_speech_without_pauses_is_cut_hard_with_overlap(words: Spoken) -> None:
    pieces = chunk_pieces(words.audio, max_seconds=10, overlap_seconds=2, search_fraction=0.3)
    assert [p.cut for p in pieces] == ["hard"] * (len(pieces) - 1) + ["end"]
    for before, after in zip(pieces, pieces[1:], strict=False):
        assert after.start == pytest.approx(before.end - 2)


# -- end to end ----------------------------------------------------------------------------


class Listener:
    """A fake endpoint that hears perfectly: it finds the piece in the clip and says the
    units (sentences or words) whose middle lies in it."""

    def __init__(self, spoken: Spoken) -> None:
        self.spoken = spoken
        self.pcm = np.round(spoken.audio.samples * 32768).astype(np.int32)
        self.calls: list[dict[str, Any]] = []

    def factory(self, model: Any, endpoint: Any, api: str) -> Listener:
        return self

    def where(self, piece: Audio) -> float:
        samples = np.round(piece.samples * 32768).astype(np.int32)
        first = int(np.argmax(np.abs(samples) > 300))
        probe = samples[first : first + 400]
        for at in np.nonzero(self.pcm == probe[0])[0]:
            if np.array_equal(self.pcm[at : at + len(probe)], probe):
                return (at - first) / RATE
        raise AssertionError("the piece is not part of the clip")

    async def answer(self, audio: Audio, wav: bytes, request: Any) -> str:
        start = self.where(audio)
        self.calls.append({"start": start, "seconds": audio.duration, "prompt": request.prompt})
        return self.spoken.said_in(start, start + audio.duration)

    async def aclose(self) -> None:
        return None


def _long_task(tmp_path: Path, spoken: Spoken, long_audio: str) -> str:
    folder = tmp_path / "mytasks" / "long"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "long.wav").write_bytes(wav_bytes(spoken.audio))
    row = {"id": "long", "audio": "long.wav", "reference": spoken.text}
    (folder / "data" / "manifest.jsonl").write_text(json.dumps(row) + "\n")
    (folder / "long.yaml").write_text(
        "dataset: {path: data}\nprompt: {user: Transcribe.}\nmetrics: [wer]\n"
        f"long_audio: {{policy: chunk, {long_audio}}}\n"
    )
    return "tasks: [long]\ntasks_dirs: [mytasks]\n"


def test_silence_chunks_join_to_the_exact_transcript(tmp_path: Path, sentences: Spoken) -> None:
    text = "models: [{name: m, model: vllm/q}]\n" + _long_task(
        tmp_path,
        sentences,
        "max_seconds: 30, overlap_seconds: 2, chunk_prompt: '{prompt} Part {index} of {count}.'",
    )
    listener = Listener(sentences)
    result = run_yaml(text, tmp_path, listener)  # type: ignore[arg-type]
    (row,) = result.run.rows()
    assert row["prediction"] == sentences.text  # nothing fused, nothing said twice
    assert result.scores["tasks"]["long"]["m"]["metrics"]["wer"]["value"] == 0.0
    count = len(row["pieces"])
    assert [c["prompt"] for c in listener.calls] == [
        f"Transcribe. Part {i} of {count}." for i in range(1, count + 1)
    ]
    # Each piece's boundaries (seconds) and reply are kept; the boundaries are where it was cut.
    assert [p["cut"] for p in row["pieces"]] == ["silence"] * (count - 1) + ["end"]
    assert [c["start"] for c in listener.calls] == pytest.approx(
        [p["start"] for p in row["pieces"]], abs=1e-3
    )
    assert " ".join(p["reply"] for p in row["pieces"]) == row["prediction"]


def test_hard_cuts_overlap_and_the_overlap_is_said_once(tmp_path: Path, words: Spoken) -> None:
    text = "models: [{name: m, model: vllm/q}]\n" + _long_task(
        tmp_path, words, "max_seconds: 10, overlap_seconds: 2"
    )
    listener = Listener(words)
    result = run_yaml(text, tmp_path, listener)  # type: ignore[arg-type]
    (row,) = result.run.rows()
    assert [p["cut"] for p in row["pieces"]][:-1] == ["hard"] * (len(row["pieces"]) - 1)
    replies = [p["reply"].split() for p in row["pieces"]]
    for a, b in zip(replies, replies[1:], strict=False):  # the 2 s overlap: said in both
        assert any(a[-k:] == b[:k] for k in range(2, min(len(a), len(b)))), (a, b)
    assert row["prediction"] == words.text


def _wer_stats(prediction: str, reference: str) -> dict[str, Any]:
    return METRICS["wer"].score(prediction, ScoringContext(reference, "en", "en", "text"))


@pytest.mark.slow
def test_joined_wer_is_the_weighted_sum_of_chunk_wers(tmp_path: Path, sentences: Spoken) -> None:
    text = "models: [{name: w, model: local/whisper-tiny.en}]\n" + _long_task(
        tmp_path, sentences, "max_seconds: 30, overlap_seconds: 2"
    )
    path = tmp_path / "eval.yaml"
    path.write_text(text)
    result = run_tasks(parse_config(text, file=path), text, config_file=path)
    (row,) = result.run.rows()
    pieces = row["pieces"]
    assert len(pieces) >= 3 and all(p["cut"] in ("silence", "end") for p in pieces)
    chunks = [_wer_stats(p["reply"], sentences.said_in(p["start"], p["end"])) for p in pieces]
    weighted = 100 * sum(c["errors"] for c in chunks) / sum(c["units"] for c in chunks)
    joined = result.scores["tasks"]["long"]["w"]["metrics"]["wer"]["value"]
    assert 0 < joined < 60
    assert joined == pytest.approx(weighted, abs=0.5)
    # Silence cuts: the replies are joined whole, with a space (none fused, none trimmed).
    assert row["prediction"].split() == [w for p in pieces for w in p["reply"].split()]


class EchoPrompt(Script):
    """Replies with the text part of the last user message (the chunk's prompt)."""

    def reply(self, conversation: Sequence[ScriptMessage]) -> Reply:
        return Reply(text=conversation[-1].text.split("[audio", 1)[0].strip())


@pytest.mark.parametrize("pool", [False, True])
def test_chunk_prompts_over_http_in_workers_too(
    tmp_path: Path, sentences: Spoken, pool: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The worker processes encode request bodies ahead, except for chunks with their own
    # prompts: the client encodes those, each with its chunk's prompt.
    monkeypatch.setattr(engine_module, "POOL_MIN_RECORDS", 0 if pool else 10**9)
    monkeypatch.setattr(engine_module, "POOL_FIRST", True)
    tasks = _long_task(
        tmp_path,
        sentences,
        "max_seconds: 30, overlap_seconds: 2, chunk_prompt: 'Part {index}/{count}.'",
    )
    with serving(FakeOpenAIServer(EchoPrompt())) as server:
        text = f"models: [{{name: q, model: vllm/q, base_url: '{server.url}'}}]\n" + tasks
        result = run_tasks(parse_config(text, file=None), text, base_dir=tmp_path)
        prompts = [r.json()["messages"][0]["content"][0]["text"] for r in server.requests]
    (row,) = result.run.rows()
    count = len(row["pieces"])
    assert count >= 3 and prompts == [f"Part {i}/{count}." for i in range(1, count + 1)]
    assert row["prediction"] == " ".join(prompts)
