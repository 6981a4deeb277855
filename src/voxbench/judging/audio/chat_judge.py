"""Audio-in chat judges: the registry's ``audio_completion`` clients.

OpenAI-compatible chat (gpt-4o-audio style, vLLM serving an audio LLM) takes the clip as an
``input_audio`` part; Gemini ``generateContent`` as an ``inline_data`` part. Logprobs are
asked for where the provider returns them (OpenAI-compatible ``logprobs`` /
``top_logprobs``), for G-Eval's probability-weighted score.
"""

from __future__ import annotations

import io

import numpy as np
import soundfile

from voxbench.audio.wav import Audio
from voxbench.judging.audio.clients import HeardAnswer
from voxbench.providers.completion import (
    AudioCompletionClient,
    AudioCompletionRequest,
    CompletionRequest,
)
from voxbench.providers.registry import Role, make

TOP_LOGPROBS = 10
"""Alternatives per token asked for: enough to cover a 1–5 or 1–10 scale."""
LOGPROB_PROVIDERS = frozenset(
    {"openai", "azure-openai", "vllm", "openai-compatible", "openrouter", "together"}
)


def wav_bytes(audio: Audio) -> bytes:
    """The clip as a 16-bit PCM wav file."""
    buffer = io.BytesIO()
    soundfile.write(
        buffer, np.clip(audio.samples, -1, 1), audio.sample_rate, format="WAV", subtype="PCM_16"
    )
    return buffer.getvalue()


class ChatAudioJudge:
    """An audio-in chat model as a judge."""

    def __init__(self, audio: AudioCompletionClient, name: str, base_url: str | None) -> None:
        self.audio = audio
        self.name = name
        self._base_url = base_url

    @classmethod
    def create(
        cls, name: str, *, base_url: str | None = None, timeout: float | None = None
    ) -> ChatAudioJudge:
        """Build the registry's audio-completion client for ``name``; ``timeout`` (seconds)
        bounds each request's wait for the server (``--timeout``)."""
        extra = {} if timeout is None else {"timeout": timeout}
        client = make(
            Role.AUDIO_COMPLETION,
            name,
            base_url=base_url,
            base_url_field="--judge-base-url",
            **extra,
        )
        return cls(client, name, base_url)

    @property
    def endpoint(self) -> str:
        """The base URL the judge is reached at (explicit, from the environment, or the
        provider's default): part of every cached judgment's key."""
        return str(getattr(self.audio, "base_url", None) or self._base_url or "")

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
        ask = logprobs and self.audio.provider in LOGPROB_PROVIDERS
        completion = await self.audio.complete_audio(
            AudioCompletionRequest(
                audio_wav=wav_bytes(audio),
                prompt=request,
                system=instructions,
                followup=followup,
                top_logprobs=TOP_LOGPROBS if ask else None,
                temperature=temperature,
            )
        )
        return HeardAnswer(completion.text, completion.usage, completion.logprobs)

    async def write(self, system: str, user: str) -> str:
        text_client = make(
            Role.TEXT_COMPLETION,
            self.name,
            base_url=self._base_url,
            base_url_field="--judge-base-url",
        )
        try:
            return (await text_client.complete(CompletionRequest(system=system, user=user))).text
        finally:
            await text_client.aclose()

    async def aclose(self) -> None:
        await self.audio.aclose()
