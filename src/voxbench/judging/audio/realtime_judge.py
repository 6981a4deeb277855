"""The realtime judge: the OpenAI Realtime protocol (OpenAI, Azure OpenAI) with turn
detection off, speaking the adapter's own wire models and transport.

One connection per judgment, opened by the realtime target's own handshake
(``OpenAIRealtimeSession.open_session``: URL, auth header, hello, ``session.update``) with
the judge's session::

    → session.update {instructions: <G-Eval prompt>, output_modalities: ["text"],
                      audio.input: {format: audio/pcm 24 kHz, turn_detection: null,
                                    transcription: null}}
    ← session.updated                       (turn detection must read null)
    → conversation.item.create              (the request text, with any transcript block)
    → input_audio_buffer.append × N         (the whole clip, 24 kHz PCM16, 0.5 s per event,
                                             as fast as the socket takes it unless paced)
    → input_audio_buffer.commit             ← input_audio_buffer.committed
    [→ conversation.item.create × 2         (an earlier answer and the corrective message)]
    → response.create {output_modalities: ["text"]}
    ← response.done                         (the text of its output items; an audio
                                             answer's transcript when the model spoke)

A silent server (``response_timeout``), a dropped connection, an ``error`` event, or a
response that ends ``failed``/``incomplete`` raise a classified ``ProviderError``.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

import numpy as np

from voxbench.audio.resample import resample
from voxbench.audio.wav import Audio
from voxbench.core.errors import ConfigError, ProtocolError, ProviderError
from voxbench.judging.audio.clients import HeardAnswer
from voxbench.targets.realtime.audio import b64encode
from voxbench.targets.realtime.openai import events as ev
from voxbench.targets.realtime.openai.session import OpenAIRealtimeSession
from voxbench.targets.realtime.openai.variants import AzureOpenAIRealtimeSession

CHUNK_SECONDS = 0.5
RESPONSE_TIMEOUT = 120.0
"""Seconds to wait for ``response.done`` after ``response.create``."""
_SESSIONS: dict[str, type[OpenAIRealtimeSession]] = {
    "openai-realtime": OpenAIRealtimeSession,
    "azure-openai-realtime": AzureOpenAIRealtimeSession,
}


def pcm24k(audio: Audio) -> bytes:
    """Mono 24 kHz PCM16 of ``audio`` (the protocol's only PCM rate)."""
    samples = audio.samples if audio.channels == 1 else audio.samples.mean(axis=1)
    if audio.sample_rate != ev.INPUT_SAMPLE_RATE:
        samples = resample(samples, audio.sample_rate, ev.INPUT_SAMPLE_RATE)
    return (np.clip(samples, -1.0, 1.0) * 32767).astype("<i2").tobytes()


class RealtimeAudioJudge:
    """``openai-realtime/MODEL`` or ``azure-openai-realtime/DEPLOYMENT`` as a judge.

    Options: ``pace`` (stream at this multiple of real time; 0, the default, sends as fast
    as the connection allows), ``response_timeout`` (seconds), ``api_key``,
    ``connect_timeout``. The GA session has no temperature: ``temperature`` is not sent.
    """

    def __init__(
        self,
        provider: str,
        model: str,
        *,
        base_url: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> None:
        self.provider = provider
        self.model = model
        self.name = f"{provider}/{model}"
        self.base_url = base_url
        self.options = dict(options or {})
        self.pace = float(self.options.pop("pace", 0) or 0)
        self.response_timeout = float(self.options.pop("response_timeout", RESPONSE_TIMEOUT))

    @property
    def endpoint(self) -> str:
        """The URL the judge's sessions open (explicit, from the environment, or the
        default): part of every cached judgment's key."""
        try:
            return self._session().url()
        except ConfigError:
            return self.base_url or ""

    def _session(self) -> OpenAIRealtimeSession:
        return _SESSIONS[self.provider](self.model, base_url=self.base_url, options=self.options)

    async def hear(
        self,
        instructions: str,
        request: str,
        audio: Audio,
        *,
        followup: tuple[tuple[str, str], ...] = (),
        logprobs: bool = False,
        temperature: float | None = 0.0,
    ) -> HeardAnswer:
        return await self._ask(instructions, request, pcm24k(audio), followup)

    async def write(self, system: str, user: str) -> str:
        return (await self._ask(system, user, b"", ())).text

    async def aclose(self) -> None:
        return None  # one connection per judgment, closed when it is done

    async def _ask(
        self, instructions: str, request: str, pcm: bytes, followup: tuple[tuple[str, str], ...]
    ) -> HeardAnswer:
        session = self._session()
        try:
            updated = await session.open_session(_judge_session(instructions))
            _check_turn_detection_off(self.name, updated)
            await session.send_event(ev.ConversationItemCreate(item=_text("user", request)))
            if pcm:
                await self._stream(session, pcm)
                await session.send_event(ev.InputAudioBufferCommit())
            for answer, text in followup:
                await session.send_event(ev.ConversationItemCreate(item=_text("assistant", answer)))
                await session.send_event(ev.ConversationItemCreate(item=_text("user", text)))
            await session.send_event(ev.ResponseCreate(response={"output_modalities": ["text"]}))
            session.connect_timeout = self.response_timeout  # recv_json's wait, from here on
            # Deltas and item events come before it: as many as the answer needs.
            done = await session.await_server(
                ("response.done",), refused="the judgment failed", limit=None
            )
            return _answer(self.name, ev.ResponseDone.model_validate(done))
        finally:
            await session.close()

    async def _stream(self, session: OpenAIRealtimeSession, pcm: bytes) -> None:
        step = int(ev.INPUT_SAMPLE_RATE * CHUNK_SECONDS) * 2
        for start in range(0, len(pcm), step):
            chunk = pcm[start : start + step]
            if not await session.send_text(
                ev.InputAudioBufferAppend(audio=b64encode(chunk)).to_json()
            ):
                raise ProviderError(
                    f"{self.name}: the connection dropped while streaming the audio",
                    category="connectivity",
                    retryable=True,
                )
            if self.pace > 0:
                await asyncio.sleep(len(chunk) / 2 / ev.INPUT_SAMPLE_RATE / self.pace)


def _judge_session(instructions: str) -> ev.SessionConfig:
    return ev.SessionConfig(
        instructions=instructions,
        output_modalities=["text"],
        audio=ev.AudioConfig(
            input=ev.AudioInput(
                format=ev.AudioFormat(type="audio/pcm", rate=ev.INPUT_SAMPLE_RATE),
                turn_detection=None,
                transcription=None,
            )
        ),
    )


def _text(role: Any, text: str) -> ev.ConversationItem:
    part: Literal["input_text", "output_text"] = "input_text" if role == "user" else "output_text"
    return ev.ConversationItem(
        type="message", role=role, content=[ev.ContentPart(type=part, text=text)]
    )


def _check_turn_detection_off(name: str, updated: dict[str, Any]) -> None:
    audio_input = ((updated.get("session") or {}).get("audio") or {}).get("input") or {}
    if audio_input.get("turn_detection") is not None:
        raise ProtocolError(
            f"{name}: the server kept turn detection on ({audio_input['turn_detection']}); the "
            "judge needs it off so that the model answers only after the whole recording"
        )


def _answer(name: str, done: ev.ResponseDone) -> HeardAnswer:
    response = done.response
    if response.status != "completed":
        reason = (response.status_details or {}).get("reason") or response.status
        raise ProviderError(
            f"{name}: the response ended {response.status} ({reason})",
            category="server",
            retryable=True,
        )
    texts = [
        part.text or part.transcript or ""
        for item in response.output
        if item.type == "message"
        for part in item.content or []
    ]
    usage = response.usage
    counts = (
        {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}
        if usage is not None
        else {}
    )
    return HeardAnswer("".join(texts), counts)
