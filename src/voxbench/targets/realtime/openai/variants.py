"""OpenAI-Realtime-compatible endpoints: the same adapter, another URL and auth header.

- Azure OpenAI (Microsoft Learn, "Use the GPT Realtime API via WebSockets", GA tab, 2025-10):
  ``wss://<resource>.openai.azure.com/openai/v1/realtime?model=<deployment>`` with an
  ``api-key`` header. The preview form (``/openai/realtime?api-version=...&deployment=``) is
  deprecated (retired 2026-04-30) and speaks the beta event names and session shape, which
  this adapter does not: an ``api_version`` option is refused with a pointer to the GA form.
- xAI Grok voice agent (https://docs.x.ai/docs/guides/voice/agent, "Session Parameters";
  2026; "compatible with OpenAI's Realtime API"): ``wss://api.x.ai/v1/realtime?model=<model>``
  with a bearer key. xAI greets with ``conversation.created`` (accepted as the hello) and may
  send ``ping`` events (unknown events are ignored) and report calls only in
  ``response.done`` (the tracker reads them there too). Its session takes only the
  parameters that guide documents (``XAI_SESSION_PARAMETERS``): ``instructions``,
  ``voice`` and ``turn_detection`` at the top level (``{"type": null}`` for manual turns),
  ``tools``, ``audio.input/output.format`` and ``reasoning.effort``; OpenAI's
  ``session.type``, ``output_modalities``, ``tool_choice`` and
  ``audio.input.transcription`` (a transcription model) are left out: xAI transcribes the
  user's committed audio by itself. A text answer (``output: text``) is asked for per
  response (``response.create`` with ``response.modalities: ["text"]``). xAI streams
  partial user transcripts as ``conversation.item.input_audio_transcription.completed``
  with ``status: "in_progress"`` (the tracker waits for the final one).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from voxbench.core.errors import ConfigError, PrerequisiteError
from voxbench.core.session import SessionSetup
from voxbench.targets.realtime.openai import events as ev
from voxbench.targets.realtime.openai.session import OpenAIRealtimeSession, realtime_url

AZURE_ENDPOINT_ENV = "AZURE_OPENAI_ENDPOINT"


class AzureOpenAIRealtimeSession(OpenAIRealtimeSession):
    """An Azure OpenAI realtime deployment (``model`` is the deployment name)."""

    provider = "azure-openai-realtime"
    key_env = ("AZURE_OPENAI_API_KEY",)

    def __init__(
        self, model: str, *, base_url: str | None = None, options: dict[str, Any] | None = None
    ) -> None:
        super().__init__(model, base_url=base_url, options=options)
        if self.options.get("api_version"):
            raise ConfigError(
                f"{self.provider}/{model}: the api_version option selects Azure's preview "
                "realtime API (/openai/realtime?api-version=...), deprecated and speaking "
                "other events than the GA protocol this adapter speaks; leave api_version out: "
                "the GA endpoint is wss://<resource>.openai.azure.com/openai/v1/realtime"
                "?model=<deployment>"
            )

    def endpoint(self) -> str:
        """The resource endpoint: ``base_url`` or ``AZURE_OPENAI_ENDPOINT``."""
        endpoint = self.base_url or os.environ.get(AZURE_ENDPOINT_ENV)
        if not endpoint:
            raise PrerequisiteError(
                f"missing Azure OpenAI endpoint for {self.provider}: set {AZURE_ENDPOINT_ENV} "
                "(e.g. https://my-resource.openai.azure.com) or pass base_url"
            )
        return endpoint.rstrip("/")

    def url(self) -> str:
        parts = urlsplit(self.endpoint())
        scheme = {"http": "ws", "https": "wss"}.get(parts.scheme, parts.scheme)
        root = parts.path.rstrip("/")
        root = root[: -len("/openai")] if root.endswith("/openai") else root
        base = urlunsplit((scheme, parts.netloc, f"{root}/openai/v1", "", ""))
        return realtime_url(base, self.model)

    def auth_headers(self, key: str) -> dict[str, str]:
        return {"api-key": key}


XAI_SESSION_PARAMETERS: dict[str, Any] = {
    "instructions": True,
    "voice": True,
    "tools": True,
    "turn_detection": {"type": True, "threshold": True}
    | {"prefix_padding_ms": True, "silence_duration_ms": True},
    "audio": {
        "input": {"format": {"type": True, "rate": True}},
        "output": {"format": {"type": True, "rate": True}},
    },
    "reasoning": {"effort": True},
}
"""The ``session.update`` parameters xAI documents (its voice agent guide's "Session
Parameters" table; ``reasoning`` from its client-secrets reference): a nested mapping whose
leaves (True) take any value; ``turn_detection`` may also be null."""


def xai_undocumented(session: Mapping[str, Any]) -> list[str]:
    """Paths (``session.audio.input.transcription``) of fields in a ``session.update``
    session that xAI does not document."""
    return _undocumented(session, XAI_SESSION_PARAMETERS, "session")


def _undocumented(value: Mapping[str, Any], schema: Mapping[str, Any], path: str) -> list[str]:
    out: list[str] = []
    for key, item in value.items():
        where = f"{path}.{key}"
        known = schema.get(key)
        if known is None:
            out.append(where)
        elif isinstance(known, Mapping) and isinstance(item, Mapping):
            out += _undocumented(item, known, where)
    return out


class XaiRealtimeSession(OpenAIRealtimeSession):
    """xAI's Grok voice agent over its OpenAI-Realtime-compatible websocket."""

    provider = "xai-realtime"
    default_base_url = "wss://api.x.ai/v1"
    base_url_vars = ()  # OPENAI_BASE_URL points at OpenAI, never at xAI
    key_env = ("XAI_API_KEY",)

    def __init__(
        self, model: str, *, base_url: str | None = None, options: dict[str, Any] | None = None
    ) -> None:
        super().__init__(model, base_url=base_url, options=options)
        detection = self.turn_detection
        if detection is not None:
            sent = {"turn_detection": detection.model_dump(exclude_none=True)}
            extra = _undocumented(sent, XAI_SESSION_PARAMETERS, "session")
            if detection.type != "server_vad" or extra:
                raise ConfigError(
                    f"{self.provider}/{model}: turn_detection {sent['turn_detection']}: xAI "
                    "documents only server_vad with threshold, prefix_padding_ms and "
                    "silence_duration_ms (or manual turns, the default)"
                )
        if self.options.get("input_transcription"):
            raise ConfigError(
                f"{self.provider}/{model}: the input_transcription option names an OpenAI "
                "transcription model; xAI documents no such session parameter (it "
                "transcribes the user's audio by itself): leave it out"
            )

    def session_config(self, setup: SessionSetup) -> ev.SessionConfig:
        """The session xAI documents: no ``type``, modalities, tool choice or transcription
        model; ``voice`` and ``turn_detection`` at the top level."""
        audio_format = ev.AudioFormat(type="audio/pcm", rate=ev.INPUT_SAMPLE_RATE)
        output_format = ev.AudioFormat(type="audio/pcm", rate=ev.OUTPUT_SAMPLE_RATE)
        # xAI transcribes committed user audio unasked (documented server event).
        self.tracker.transcribes = setup.modality == "audio" or self.server_vad
        return ev.SessionConfig(
            type=None,
            instructions=setup.system_prompt,
            voice=self.voice,
            turn_detection=self.turn_detection or ev.TurnDetection(type=None),
            audio=ev.AudioConfig(
                input=ev.AudioInput(format=audio_format),
                output=ev.AudioOutput(format=output_format),
            ),
            tools=[
                ev.FunctionTool(name=t.name, description=t.description, parameters=t.parameters)
                for t in setup.tools
            ]
            or None,
        )

    async def request_response(self) -> None:
        """``response.create``; a text answer is asked for here (xAI has no session-wide
        output modality)."""
        response = {"modalities": ["text"]} if self.output_modalities == ["text"] else None
        event_id = await self.send_event(ev.ResponseCreate(response=response))
        self.tracker.response_requested(event_id)
