"""OpenAI-Realtime-compatible endpoints: the same adapter, another URL and auth header.

- Azure OpenAI (Microsoft Learn, "Use the GPT Realtime API via WebSockets", GA tab, 2025-10):
  ``wss://<resource>.openai.azure.com/openai/v1/realtime?model=<deployment>`` with an
  ``api-key`` header. The preview form (``/openai/realtime?api-version=...&deployment=``) is
  deprecated (retired 2026-04-30) and speaks the beta event names and session shape, which
  this adapter does not: an ``api_version`` option is refused with a pointer to the GA form.
- xAI Grok voice agent (docs.x.ai voice agent guide, 2026; "compatible with OpenAI's Realtime
  API"): ``wss://api.x.ai/v1/realtime?model=<model>`` with a bearer key. xAI greets with
  ``conversation.created`` (accepted as the hello) and may send ``ping`` events (unknown
  events are ignored) and report calls only in ``response.done`` (the tracker reads them
  there too). Its session takes ``voice`` and ``turn_detection`` as top-level fields (not
  under ``audio``), and it streams partial user transcripts as
  ``conversation.item.input_audio_transcription.completed`` with ``status: "in_progress"``
  (the tracker waits for the final one).
"""

from __future__ import annotations

import os
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


class XaiRealtimeSession(OpenAIRealtimeSession):
    """xAI's Grok voice agent over its OpenAI-Realtime-compatible websocket."""

    provider = "xai-realtime"
    default_base_url = "wss://api.x.ai/v1"
    base_url_vars = ()  # OPENAI_BASE_URL points at OpenAI, never at xAI
    key_env = ("XAI_API_KEY",)

    def session_config(self, setup: SessionSetup) -> ev.SessionConfig:
        """OpenAI's session with ``voice`` and ``turn_detection`` moved to the top level."""
        config = super().session_config(setup)
        assert config.audio is not None and config.audio.input is not None
        output = config.audio.output
        config.voice = output.voice if output is not None else None
        if output is not None:
            output.voice = None
        audio_input = config.audio.input
        config.turn_detection = audio_input.turn_detection  # None: sent as null (manual)
        audio_input.turn_detection = None
        audio_input.model_fields_set.discard("turn_detection")  # left out, not null
        return config
