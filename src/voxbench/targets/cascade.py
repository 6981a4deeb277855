"""The cascade: any STT + any text target + any TTS composed into one speech Session.

The user's audio is buffered until ``end_user_turn``; then STT transcribes it, the text target
answers (tool calls pass through to the runner untouched), and each sentence of its answer is
spoken by TTS as soon as it is complete, so the first audio leaves before the whole answer
is written. Stages are marked as they start and end (``StageMark`` events, stamped by whoever
drives the session): ``stt`` (transcription), ``llm_first_token`` (the transcript sent to the
text target until its first text), ``tts_first_audio`` (the first sentence's synthesis).

Named ``cascade/<text target>`` (``cascade/local/baseline``, ``cascade/openai/gpt-4o-mini``)
with options ``stt`` (default ``local/whisper-tiny.en``, or ``none`` for a text target that
needs no transcript, like the oracle) and ``tts`` (default ``local/espeak``), ``voice``.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator
from typing import Any

import numpy as np

from voxbench.audio.asr import ASREngine, transcribe_text
from voxbench.audio.tts import TTSEngine
from voxbench.audio.wav import Audio
from voxbench.core.errors import ConfigError, ErrorCategory
from voxbench.core.events import (
    AssistantAudio,
    AssistantTextDelta,
    SessionEvent,
    StageMark,
    TargetError,
    TurnComplete,
    UserTranscript,
)
from voxbench.core.session import Session, SessionSetup, TargetInfo
from voxbench.providers.speech import get_asr, get_tts
from voxbench.targets.registry import (
    TargetContext,
    TargetProvider,
    register_provider,
    resolve_target,
)

DEFAULT_STT = "local/whisper-tiny.en"
DEFAULT_TTS = "local/espeak"
AUDIO_CHUNK_SECONDS = 0.1
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


class CascadeSession(Session):
    """STT → text Session → TTS."""

    def __init__(
        self,
        inner: Session,
        stt: ASREngine | None,
        tts: TTSEngine,
        voice: str | None = None,
        name: str | None = None,
    ) -> None:
        self.inner = inner
        self.stt = stt
        self.tts = tts
        self.voice = voice
        self.info = TargetInfo(
            name=name or f"cascade/{inner.info.name}",
            input_modality="audio",
            output_modality="audio",
            input_sample_rate=16_000,
            output_sample_rate=tts.sample_rate,
            in_process=inner.info.in_process and _is_local(stt) and tts.name.startswith("local/"),
        )
        self._queue: asyncio.Queue[SessionEvent] = asyncio.Queue()
        self._audio: list[np.ndarray] = []
        self._pump: asyncio.Task[None] | None = None
        self._turn: asyncio.Task[None] | None = None
        self._inner_events: asyncio.Queue[SessionEvent] = asyncio.Queue()
        self._speaking = False

    async def start(self, setup: SessionSetup) -> None:
        await self.inner.start(setup.model_copy(update={"modality": "text"}))
        self._pump = asyncio.create_task(self._pump_inner())

    async def _pump_inner(self) -> None:
        async for event in self.inner.events():
            await self._inner_events.put(event)

    async def send_user_text(self, text: str) -> None:
        # Text mode: the cascade is its text target, answering in text and speech.
        await self.inner.send_user_text(text)

    async def send_user_audio(self, pcm: bytes, sample_rate: int) -> None:
        audio = Audio.from_pcm16(pcm, sample_rate)
        self._audio.append(audio.resampled(16_000).samples)

    async def end_user_turn(self) -> None:
        samples = np.concatenate(self._audio) if self._audio else np.zeros(0, dtype=np.float32)
        self._audio = []
        self._turn = asyncio.create_task(self._respond(Audio(samples, 16_000)))

    async def _respond(self, audio: Audio) -> None:
        try:
            if self.stt is not None and audio.frames:
                await self._queue.put(StageMark(stage="stt", edge="start"))
                text = await asyncio.to_thread(transcribe_text, self.stt, audio)
                await self._queue.put(StageMark(stage="stt", edge="end"))
                await self._queue.put(UserTranscript(text=text))
                await self.inner.send_user_text(text)
            await self._queue.put(StageMark(stage="llm_first_token", edge="start"))
            await self.inner.end_user_turn()
            await self._relay()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a broken stage is a recorded error of this turn
            await self._queue.put(
                TargetError(category=ErrorCategory.CASCADE, message=f"{type(exc).__name__}: {exc}")
            )
            await self._queue.put(TurnComplete(status="failed"))

    async def _relay(self) -> None:
        """Forward the text target's events, speaking its text sentence by sentence."""
        pending = ""
        first_token_reported = False
        first_audio_reported = False
        while True:
            event = await self._inner_events.get()
            if isinstance(event, AssistantTextDelta):
                if not first_token_reported:
                    first_token_reported = True
                    await self._queue.put(StageMark(stage="llm_first_token", edge="end"))
                pending += event.text
                *complete, pending = _SENTENCE_END.split(pending)
                for sentence in complete:
                    first_audio_reported |= await self._speak(
                        sentence, report=not first_audio_reported
                    )
                continue
            if isinstance(event, TurnComplete):
                if pending.strip():
                    await self._speak(pending, report=not first_audio_reported)
                await self._queue.put(event)
                return
            await self._queue.put(event)

    async def _speak(self, sentence: str, report: bool) -> bool:
        sentence = sentence.strip()
        if not sentence:
            return False
        await self._queue.put(AssistantTextDelta(text=sentence + " "))
        if report:
            await self._queue.put(StageMark(stage="tts_first_audio", edge="start"))
        speech = await asyncio.to_thread(self.tts.synthesize, sentence, self.voice)
        if report:
            await self._queue.put(StageMark(stage="tts_first_audio", edge="end"))
        step = max(1, int(AUDIO_CHUNK_SECONDS * speech.sample_rate))
        pcm = speech.mono()
        for i in range(0, pcm.frames, step):
            chunk = Audio(pcm.samples[i : i + step], pcm.sample_rate)
            await self._queue.put(AssistantAudio(pcm=chunk.to_pcm16(), sample_rate=pcm.sample_rate))
        return True

    async def send_tool_result(self, call_id: str, result: Any) -> None:
        await self.inner.send_tool_result(call_id, result)

    async def events(self) -> AsyncIterator[SessionEvent]:
        while True:
            yield await self._queue.get()

    async def close(self) -> None:
        for task in (self._turn, self._pump):
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        await self.inner.close()


def _is_local(stt: ASREngine | None) -> bool:
    return stt is None or stt.name.startswith("local/")


CASCADE_OPTIONS = ("stt", "tts", "voice", "stt_base_url", "tts_base_url")
"""The cascade's own options; the rest go to the text target inside it."""


def build_cascade(inner: Session, options: dict[str, Any]) -> CascadeSession:
    """Wrap a text session with the STT and TTS named in ``options``. ``stt_base_url`` /
    ``tts_base_url`` point a hosted engine at another server (``--base-url`` is the text
    model's: an LLM on vLLM often sits beside a transcription model somewhere else)."""
    stt_name = options.get("stt", DEFAULT_STT)
    stt = (
        None
        if stt_name in (None, "none")
        else get_asr(str(stt_name), **_endpoint(options, "stt_base_url", str(stt_name)))
    )
    tts_name = str(options.get("tts", DEFAULT_TTS))
    tts = get_tts(tts_name, **_endpoint(options, "tts_base_url", tts_name))
    return CascadeSession(inner, stt, tts, voice=options.get("voice"))


def _endpoint(options: dict[str, Any], key: str, engine: str) -> dict[str, str]:
    url = options.get(key)
    if not url:
        return {}
    if engine.startswith("local/"):
        raise ConfigError(
            f"{engine} runs on this machine: it has no server for {key} to point at",
            field=f"target_options.{key}",
            expected=f"a hosted engine (e.g. {key[:3]}=openai/...) or no {key}",
        )
    return {"base_url": str(url)}


def _cascade(context: TargetContext) -> Session:
    if not context.model:
        raise ConfigError(
            "a cascade needs a text target",
            field="target",
            expected="cascade/<provider>/<model>, e.g. cascade/local/baseline",
        )
    inner_factory = resolve_target(
        context.model,
        benchmark=context.benchmark,
        base_url=context.base_url,
        options={k: v for k, v in context.options.items() if k not in CASCADE_OPTIONS},
    )
    return build_cascade(inner_factory(), context.options)


register_provider(
    TargetProvider(
        name="cascade",
        factory=_cascade,
        description="STT → any text target → TTS as one speech agent "
        "(options: stt, tts, voice, stt_base_url, tts_base_url)",
        kind="cascade",
        models=("local/baseline", "local/oracle", "<any text target>"),
    ),
    aliases={"local-cascade": "cascade/local/baseline"},
)
