"""How an audio judge is chosen from ``provider/model``, through the provider registry.

A provider playing the ``realtime`` role that speaks the OpenAI Realtime protocol
(``openai-realtime``, ``azure-openai-realtime``) gives a ``RealtimeAudioJudge``; one playing
``audio_completion`` (``openai``, ``azure-openai``, ``vllm``, ``openai-compatible``,
``gemini``) gives a ``ChatAudioJudge``.
"""

from __future__ import annotations

from typing import Any

from voxbench.core.errors import ConfigError
from voxbench.judging.audio.chat_judge import ChatAudioJudge
from voxbench.judging.audio.clients import AudioJudgeClient
from voxbench.judging.audio.realtime_judge import RealtimeAudioJudge
from voxbench.providers.registry import Role, resolve_name

REALTIME_JUDGES = ("openai-realtime", "azure-openai-realtime")
"""Realtime providers the judge speaks to (the OpenAI Realtime protocol)."""


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
        timeout = (options or {}).get("response_timeout")
        return ChatAudioJudge.create(
            f"{provider.name}/{parsed.model}", base_url=base_url, timeout=timeout
        )
    if provider.name in REALTIME_JUDGES:
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
