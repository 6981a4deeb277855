"""Google Gemini: ``generateContent`` as text- and audio-completion clients, and its registration.

``POST {base_url}/models/{model}:generateContent`` with the key in ``x-goog-api-key``,
``generationConfig.temperature: 0`` and, for a reply schema, ``responseMimeType:
application/json`` + ``responseSchema``. Gemini's schema dialect is an OpenAPI subset (no
``additionalProperties``; ``nullable: true`` instead of a ``null`` type), so a JSON schema
is translated first. Audio goes in as an ``inline_data`` part (``mime_type: audio/wav``,
base64 ``data``) beside the prompt's text part; a multi-turn conversation is one content per
turn (``user``, and ``model`` for an earlier reply).

Endpoint: ``GOOGLE_GEMINI_BASE_URL`` (the google-genai SDK's variable, which names the host
without the API version) or the older ``GEMINI_BASE_URL``; a URL that does not end in an
API version gets ``/v1beta``.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Callable
from typing import Any

import httpx

from voxbench.providers.completion import (
    AudioCompletionClient,
    AudioCompletionRequest,
    AudioConversationRequest,
    Completion,
    CompletionRequest,
    Endpoint,
    HTTPCompletionClient,
    TextCompletionClient,
    protocol_error,
    resolve_endpoint,
)
from voxbench.providers.registry import (
    Capability,
    EnvVars,
    Provider,
    Role,
    find_provider,
    register,
)

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com/v1beta"
BASE_URL_VARS = ("GOOGLE_GEMINI_BASE_URL", "GEMINI_BASE_URL")
KEY_VARS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
DEFAULT_MODEL = "gemini-2.5-flash"
_VERSIONED = re.compile(r"/v\d+(alpha|beta)?\d*$")
_KEEP = ("type", "properties", "required", "items", "enum", "description", "nullable")


def gemini_base_url(explicit: str | None = None) -> str:
    """The API base URL (ending in its version): explicit, else the env vars, else the default."""
    url = explicit or next((os.environ[v] for v in BASE_URL_VARS if os.environ.get(v)), None)
    url = (url or DEFAULT_BASE_URL).rstrip("/")
    return url if _VERSIONED.search(url) else url + "/v1beta"


def gemini_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Translate a JSON schema into Gemini's ``responseSchema`` dialect."""
    out: dict[str, Any] = {}
    kind = schema.get("type")
    if isinstance(kind, list):
        others = [k for k in kind if k != "null"]
        out["type"] = others[0] if others else "string"
        if "null" in kind:
            out["nullable"] = True
    elif kind is not None:
        out["type"] = kind
    for key in _KEEP:
        if key in ("type", "nullable") or key not in schema:
            continue
        value = schema[key]
        if key == "properties":
            out[key] = {name: gemini_schema(sub) for name, sub in value.items()}
        elif key == "items":
            out[key] = gemini_schema(value)
        elif key == "enum":
            out[key] = [v for v in value if v is not None]
        else:
            out[key] = value
    return out


class _GenerateContentClient(HTTPCompletionClient):
    """The request/response half of both Gemini completion clients."""

    async def _generate(self, body: dict[str, Any]) -> Completion:
        headers = {
            "x-goog-api-key": self.endpoint.api_key or "",
            "content-type": "application/json",
        }
        url = f"{self.base_url}/models/{self.model}:generateContent"
        data = await self.post_json(url, body, headers)
        try:
            candidate = data["candidates"][0]
        except (KeyError, IndexError, TypeError) as exc:
            reason = (data.get("promptFeedback") or {}) if isinstance(data, dict) else {}
            raise protocol_error(
                self.name, f"no candidates in the response {reason or ''}".strip()
            ) from exc
        parts = (candidate.get("content") or {}).get("parts") or []
        text = "".join(p.get("text", "") for p in parts if isinstance(p, dict))
        usage = data.get("usageMetadata") or {}
        return Completion(
            text=text,
            usage={
                "input_tokens": int(usage.get("promptTokenCount", 0) or 0),
                "output_tokens": int(usage.get("candidatesTokenCount", 0) or 0),
            },
        )


class GeminiTextCompletion(_GenerateContentClient, TextCompletionClient):
    """Text completion behind the Gemini API."""

    async def complete(self, request: CompletionRequest) -> Completion:
        config: dict[str, Any] = {}
        if request.temperature is not None:
            config["temperature"] = request.temperature
        if request.seed is not None:
            config["seed"] = request.seed
        if request.schema is not None:
            config["responseMimeType"] = "application/json"
            config["responseSchema"] = gemini_schema(request.schema)
        body: dict[str, Any] = {
            "systemInstruction": {"parts": [{"text": request.system}]},
            "contents": [{"role": "user", "parts": [{"text": request.user}]}],
        }
        if config:
            body["generationConfig"] = config
        return await self._generate(body)


class GeminiAudioCompletion(_GenerateContentClient, AudioCompletionClient):
    """Audio-in completion: each clip an ``inline_data`` part beside its text."""

    async def complete_audio(self, request: AudioCompletionRequest) -> Completion:
        contents: list[dict[str, Any]] = [
            {"role": "user", "parts": [{"text": request.prompt}, _audio_part(request.audio_wav)]}
        ]
        for answer, text in request.followup:
            contents.append({"role": "model", "parts": [{"text": answer}]})
            contents.append({"role": "user", "parts": [{"text": text}]})
        body = _audio_body(contents, request.system, request.temperature, request.max_tokens)
        return await self._generate(body)

    async def complete_conversation(self, request: AudioConversationRequest) -> Completion:
        """Each turn one content in order: a user turn's text part before its clip, an
        assistant turn as a ``model`` content holding its text."""
        contents: list[dict[str, Any]] = []
        for turn in request.turns:
            if turn.role != "user":
                contents.append({"role": "model", "parts": [{"text": turn.text}]})
                continue
            parts: list[dict[str, Any]] = [{"text": turn.text}] if turn.text else []
            if turn.audio_wav is not None:
                parts.append(_audio_part(turn.audio_wav))
            contents.append({"role": "user", "parts": parts})
        body = _audio_body(contents, request.system, request.temperature, request.max_tokens)
        return await self._generate(body)


def _audio_part(wav: bytes) -> dict[str, Any]:
    return {"inline_data": {"mime_type": "audio/wav", "data": base64.b64encode(wav).decode()}}


def _audio_body(
    contents: list[dict[str, Any]], system: str, temperature: float | None, max_tokens: int | None
) -> dict[str, Any]:
    """A ``generateContent`` body: the contents, the system instruction, generation settings."""
    body: dict[str, Any] = {"contents": contents}
    if system:
        body["systemInstruction"] = {"parts": [{"text": system}]}
    config: dict[str, Any] = {}
    if temperature is not None:
        config["temperature"] = temperature
    if max_tokens is not None:
        config["maxOutputTokens"] = max_tokens
    if config:
        body["generationConfig"] = config
    return body


def _factory(cls: type[_GenerateContentClient]) -> Callable[..., _GenerateContentClient]:
    def factory(
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        base_url_field: str = "--base-url",
        **options: Any,
    ) -> _GenerateContentClient:
        provider = find_provider("gemini")
        assert provider is not None
        endpoint: Endpoint = resolve_endpoint(
            provider,
            model,
            base_url=gemini_base_url(base_url),
            api_key=api_key,
            base_url_field=base_url_field,
        )
        return cls(endpoint, transport=transport, **options)

    return factory


register(
    Provider(
        name="gemini",
        description="Google Gemini API (generateContent)",
        env=EnvVars(any_of=KEY_VARS),
        default_base_url=DEFAULT_BASE_URL,
        base_url_vars=BASE_URL_VARS,
        roles={
            Role.TEXT_COMPLETION: Capability(
                _factory(GeminiTextCompletion), default_model=DEFAULT_MODEL
            ),
            Role.AUDIO_COMPLETION: Capability(
                _factory(GeminiAudioCompletion), default_model=DEFAULT_MODEL
            ),
        },
        key_vars=KEY_VARS,
    )
)
