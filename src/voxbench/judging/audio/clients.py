"""What every audio judge client does, and how one is chosen from ``provider/model``.

A client hears one clip with the judge's instructions and a request text, optionally after
an earlier exchange (the answer that broke the form, and the corrective message), and
returns the text it answered (with token logprobs where the provider gives them). It can
also answer a text-only request (writing a rubric's evaluation steps).

Judges come from the provider registry: a provider playing the ``realtime`` role that
speaks the OpenAI Realtime protocol (``openai-realtime``, ``azure-openai-realtime``) gives a
``RealtimeAudioJudge``; one playing ``audio_completion`` (``openai``, ``azure-openai``,
``vllm``, ``openai-compatible``, ``gemini``) gives a ``ChatAudioJudge``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from voxbench.audio.wav import Audio
from voxbench.core.errors import ConfigError
from voxbench.providers.completion import TokenLogprob
from voxbench.providers.registry import Role, resolve_name

REALTIME_JUDGES = ("openai-realtime", "azure-openai-realtime")
"""Realtime providers the judge speaks to (the OpenAI Realtime protocol)."""


@dataclass
class HeardAnswer:
    """What the judge answered about one clip."""

    text: str
    usage: dict[str, int] = field(default_factory=dict)
    logprobs: list[TokenLogprob] | None = None


class AudioJudgeClient(Protocol):
    """A model that hears a clip and answers in text."""

    name: str
    """``provider/model``."""

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
        """Judge ``audio``; raise ``ProviderError`` on a failure."""
        ...

    async def write(self, system: str, user: str) -> str:
        """Answer a text-only request (no audio)."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...


def make_audio_judge(
    name: str, *, base_url: str | None = None, options: dict[str, Any] | None = None
) -> AudioJudgeClient:
    """The audio judge called ``name`` (``provider/model``)."""
    from voxbench.targets.registry import providers as target_providers

    target_providers()  # registers the realtime providers in the one registry
    provider, parsed = resolve_name(
        name, Role.REALTIME, Role.AUDIO_COMPLETION, field="--judge", allow_bare=True
    )
    if not parsed.model:
        raise ConfigError(f"{name!r} names no model", field="--judge", expected="provider/model")
    if Role.AUDIO_COMPLETION in provider.roles:
        from voxbench.judging.audio.chat_judge import ChatAudioJudge

        return ChatAudioJudge.create(f"{provider.name}/{parsed.model}", base_url=base_url)
    if provider.name in REALTIME_JUDGES:
        from voxbench.judging.audio.realtime_judge import RealtimeAudioJudge

        return RealtimeAudioJudge(
            provider.name, parsed.model, base_url=base_url, options=options or {}
        )
    raise ConfigError(
        f"{provider.name} cannot judge audio yet",
        field="--judge",
        expected="a judge among: "
        + ", ".join([f"{p}/MODEL" for p in REALTIME_JUDGES])
        + ", or an audio-in chat model (openai/gpt-4o-audio-preview, gemini/gemini-2.5-flash, "
        "vllm/MODEL, openai-compatible/MODEL)",
    )
