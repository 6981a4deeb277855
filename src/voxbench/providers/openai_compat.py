"""The OpenAI-compatible stack: OpenAI, Azure OpenAI, OpenRouter, Groq, vLLM, Ollama, ….

One table of endpoints (``COMPATIBLE_PROVIDERS``) and the request conventions they share
(``chat_completions_url``, ``auth_headers``), used by the chat target
(``targets.openai_chat``) and by the completion clients here.

Text completion: ``POST {base}/chat/completions`` with ``temperature: 0`` and, when a schema
is given, ``response_format: {type: json_schema, json_schema: {name, schema, strict: true}}``.
Servers that reject structured output (many self-hosted ones) are retried once with
``{type: json_object}``; models that reject ``temperature`` (reasoning models) once without
it. Each adaptation is remembered for the client's life, so it costs one failed call.

Audio completion: the user message carries the prompt as a ``text`` part and the clip as an
``input_audio`` part (``{"data": <base64 wav>, "format": "wav"}``), as the Chat Completions
reference documents for audio-capable models.
"""

from __future__ import annotations

import base64
import binascii
import copy
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from voxbench.core.errors import ProviderError
from voxbench.providers.claude_models import accepts_sampling
from voxbench.providers.completion import (
    DEFAULT_TIMEOUT,
    AudioCompletionClient,
    AudioCompletionRequest,
    AudioConversationRequest,
    Body,
    Completion,
    CompletionRequest,
    Endpoint,
    HTTPCompletionClient,
    TextCompletionClient,
    TokenLogprob,
    json_body,
    protocol_error,
    resolve_endpoint,
)
from voxbench.providers.lean_http import LeanHTTP, lean_http_applies
from voxbench.providers.registry import (
    Capability,
    EnvVars,
    Provider,
    Role,
    find_provider,
    register,
)

AZURE_API_VERSION = "2024-10-21"
"""Azure OpenAI data-plane GA version used unless ``AZURE_OPENAI_API_VERSION`` says otherwise."""


@dataclass(frozen=True)
class CompatibleProvider:
    """An OpenAI-compatible endpoint: its name, default URL and key."""

    name: str
    description: str
    base_url: str | None
    key_vars: tuple[str, ...]
    key_required: bool = True
    default_model: str | None = None

    @property
    def base_url_var(self) -> str:
        """Env var that overrides the default base URL (``GROQ_BASE_URL``, ``OPENAI_BASE_URL``)."""
        return self.name.upper().replace("-", "_") + "_BASE_URL"


COMPATIBLE_PROVIDERS: tuple[CompatibleProvider, ...] = (
    CompatibleProvider(
        "openai", "OpenAI", "https://api.openai.com/v1", ("OPENAI_API_KEY",),
        default_model="gpt-4o-mini",
    ),
    CompatibleProvider(
        "openrouter", "OpenRouter (OpenAI-compatible)", "https://openrouter.ai/api/v1",
        ("OPENROUTER_API_KEY",),
    ),
    CompatibleProvider(
        "groq", "Groq (OpenAI-compatible)", "https://api.groq.com/openai/v1", ("GROQ_API_KEY",)
    ),
    CompatibleProvider(
        "cerebras", "Cerebras (OpenAI-compatible)", "https://api.cerebras.ai/v1",
        ("CEREBRAS_API_KEY",),
    ),
    CompatibleProvider("xai", "xAI Grok (OpenAI-compatible)", "https://api.x.ai/v1", ("XAI_API_KEY",)),
    CompatibleProvider(
        "together", "Together AI (OpenAI-compatible)", "https://api.together.xyz/v1",
        ("TOGETHER_API_KEY",),
    ),
    CompatibleProvider(
        "vllm", "A vLLM server (OpenAI-compatible; key optional)", "http://localhost:8000/v1",
        ("VLLM_API_KEY",), key_required=False,
    ),
    CompatibleProvider(
        "ollama", "A local Ollama server (OpenAI-compatible; no key)", "http://localhost:11434/v1",
        (), key_required=False,
    ),
    CompatibleProvider(
        "openai-compatible", "Any OpenAI-compatible endpoint: needs a base URL; key optional",
        None, ("OPENAI_COMPATIBLE_API_KEY",), key_required=False,
    ),
)  # fmt: skip

AZURE = "azure-openai"


def chat_completions_url(
    provider: str, base_url: str, model: str, options: dict[str, Any] | None = None
) -> str:
    """Where a chat completion goes: ``{base}/chat/completions``, or Azure's deployment URL.

    Azure OpenAI REST reference (data plane inference): ``POST {endpoint}/openai/deployments/
    {deployment}/chat/completions?api-version=…``.
    """
    base_url = base_url.rstrip("/")
    if provider != AZURE:
        return f"{base_url}/chat/completions"
    version = (
        (options or {}).get("api_version")
        or os.environ.get("AZURE_OPENAI_API_VERSION")
        or AZURE_API_VERSION
    )
    return f"{base_url}/openai/deployments/{model}/chat/completions?api-version={version}"


def auth_headers(provider: str, api_key: str | None) -> dict[str, str]:
    """JSON content type plus the key: Azure's ``api-key`` header, a bearer token elsewhere."""
    headers = {"content-type": "application/json"}
    if api_key:
        headers["api-key" if provider == AZURE else "authorization"] = (
            api_key if provider == AZURE else f"Bearer {api_key}"
        )
    return headers


def usage_counts(usage: dict[str, Any] | None) -> dict[str, int]:
    """Chat Completions ``usage`` as ``input_tokens`` / ``output_tokens``."""
    usage = usage or {}
    return {
        "input_tokens": int(usage.get("prompt_tokens", 0) or 0),
        "output_tokens": int(usage.get("completion_tokens", 0) or 0),
    }


def _base_body(provider: str, model: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    body: dict[str, Any] = {"messages": messages}
    if provider != AZURE:  # the deployment in Azure's URL names the model
        body = {"model": model, **body}
    return body


class _ChatCompletionsClient(HTTPCompletionClient):
    """The request/response half both OpenAI-compatible completion clients share."""

    def __init__(self, endpoint: Endpoint, **kwargs: Any) -> None:
        super().__init__(endpoint, **kwargs)
        # The same for every request: made once, not per call.
        self._url = chat_completions_url(endpoint.provider, endpoint.base_url, endpoint.model)
        self._headers = auth_headers(endpoint.provider, endpoint.api_key)
        self._lean: LeanHTTP | None = None
        """Sends the requests instead of httpx, when set (``OpenAIAudioCompletion``)."""

    def _base_body(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        return _base_body(self.endpoint.provider, self.endpoint.model, messages)

    async def _call(self, body: Body) -> Completion:
        if self._lean is not None:
            data = await self._lean.post(body)
        else:
            joined = body if isinstance(body, bytes) else b"".join(body)
            data = await self.post_body(self._url, joined, self._headers)
        try:
            message = data["choices"][0]["message"]
        except (KeyError, IndexError, TypeError) as exc:
            raise protocol_error(self.name, "response has no choices[0].message") from exc
        if message.get("refusal"):
            raise ProviderError(
                f"{self.name}: the model refused: {message['refusal']}",
                category="refused",
                retryable=True,
            )
        content = message.get("content")
        if isinstance(content, list):  # some servers return content parts
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        spoken, transcript = self._spoken(message.get("audio"))
        return Completion(
            text=content or transcript,
            usage=usage_counts(data.get("usage")),
            logprobs=_token_logprobs(data["choices"][0].get("logprobs")),
            audio_wav=spoken,
        )

    def _spoken(self, audio: Any) -> tuple[bytes | None, str]:
        """``message.audio`` (asked for with ``modalities: ["text", "audio"]``): the base64
        ``data`` decoded, and the ``transcript``; ``(None, "")`` when absent."""
        if audio is None:
            return None, ""
        if not isinstance(audio, dict) or not isinstance(audio.get("data"), str):
            raise protocol_error(self.name, "message.audio has no base64 data")
        try:
            wav = base64.b64decode(audio["data"], validate=True)
        except binascii.Error as exc:
            raise protocol_error(self.name, f"message.audio.data is not base64 ({exc})") from exc
        return wav, str(audio.get("transcript") or "")


def _token_logprobs(raw: Any) -> list[TokenLogprob] | None:
    """``choices[0].logprobs.content`` (token, logprob, top_logprobs) when returned."""
    content = raw.get("content") if isinstance(raw, dict) else None
    if not isinstance(content, list):
        return None
    out = []
    for entry in content:
        if not isinstance(entry, dict) or "token" not in entry:
            continue
        top = tuple(
            (str(t.get("token", "")), float(t.get("logprob", 0.0)))
            for t in entry.get("top_logprobs") or []
            if isinstance(t, dict)
        )
        out.append(TokenLogprob(str(entry["token"]), float(entry.get("logprob", 0.0)), top))
    return out


class OpenAITextCompletion(_ChatCompletionsClient, TextCompletionClient):
    """Text completion over an OpenAI-style ``/chat/completions`` endpoint."""

    def __init__(self, endpoint: Endpoint, **kwargs: Any) -> None:
        super().__init__(endpoint, **kwargs)
        self.json_mode = "json_schema"
        # A Claude model behind an OpenAI-style gateway (OpenRouter's anthropic/claude-opus-4.7)
        # refuses temperature as the Anthropic API does: left out from the first request.
        self.send_temperature = accepts_sampling(endpoint.model)

    def _body(self, request: CompletionRequest) -> dict[str, Any]:
        body = self._base_body(
            [
                {"role": "system", "content": request.system},
                {"role": "user", "content": request.user},
            ]
        )
        if request.temperature is not None and self.send_temperature:
            body["temperature"] = request.temperature
        if request.seed is not None:
            body["seed"] = request.seed
        if request.schema is not None:
            if self.json_mode == "json_schema":
                body["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {
                        "name": request.schema_name,
                        "schema": copy.deepcopy(request.schema),
                        "strict": True,
                    },
                }
            else:
                body["response_format"] = {"type": "json_object"}
        return body

    def _adapt(self, error: ProviderError, request: CompletionRequest) -> bool:
        """Drop what a server rejected; True when there is something left to try."""
        if error.category != "bad_request":
            return False
        text = str(error).lower()
        if (
            request.schema is not None
            and self.json_mode == "json_schema"
            and ("response_format" in text or "schema" in text)
        ):
            self.json_mode = "json_object"
            return True
        if self.send_temperature and request.temperature is not None and "temperature" in text:
            self.send_temperature = False
            return True
        return False

    async def complete(self, request: CompletionRequest) -> Completion:
        for _ in range(3):
            try:
                return await self._call(json_body(self._body(request)))
            except ProviderError as exc:
                if self._adapt(exc, request):
                    continue
                raise
        raise ProviderError(
            f"{self.name}: the server rejected every request shape",
            category="bad_request",
            retryable=False,
        )


@dataclass(frozen=True)
class ChatAudioBody:
    """Encodes an ``AudioCompletionRequest`` as a ``/chat/completions`` body: the one encoder,
    called by the client or, ahead of the request, by a task run's worker processes (it
    pickles: plain values)."""

    provider: str
    model: str

    def __call__(self, request: AudioCompletionRequest) -> bytes:
        head, tail = self.around(request)
        return b"".join((head, base64.b64encode(request.audio_wav), tail))

    def around(self, request: AudioCompletionRequest) -> tuple[bytes, bytes]:
        """The body's bytes before and after the clip's base64 (``request.audio_wav`` aside):
        a body is ``head + base64 + tail``, so a clip encoded once is spliced into many.

        The JSON around the prompt and system text is encoded once per request shape
        (``_audio_template``); each request's texts are JSON strings put into it, as the
        encoder would write them (``encode_basestring``: the same bytes, ~1 µs not ~12)."""
        shape = (
            self.provider,
            self.model,
            bool(request.system),
            request.followup,
            # By repr: 0 and 0.0 (or 0.0 and -0.0) are equal keys but not the same JSON.
            repr(request.temperature),
            repr(request.max_tokens),
            repr(request.top_logprobs),
            request.output_voice,
        )
        template = _TEMPLATES.get(shape)
        if template is None:
            if len(_TEMPLATES) >= TEMPLATES_KEPT:
                _TEMPLATES.clear()
            template = _TEMPLATES[shape] = _audio_template(self, request)
        before, between, after, tail = template
        system = _json_string(request.system) if request.system else ""
        head = "".join((before, system, between, _json_string(request.prompt), after))
        return head.encode(), tail


_AUDIO_SLOT = f"<audio {os.urandom(8).hex()}>"
"""Where ``ChatAudioBody`` puts the clip's base64 (no prompt holds it: random per process)."""
_TEXT_SLOT = f"<text {os.urandom(8).hex()}>"
"""Where ``_audio_template`` leaves the system text and the prompt (random per process)."""
_json_string = json.encoder.encode_basestring
"""A str as a JSON string, as ``json_body`` (``ensure_ascii=False``) writes one."""


TEMPLATES_KEPT = 64
"""Request shapes whose body template ``ChatAudioBody.around`` keeps (all dropped past it)."""
_TEMPLATES: dict[tuple[Any, ...], tuple[str, str, str, bytes]] = {}


def _audio_template(
    builder: ChatAudioBody, request: AudioCompletionRequest
) -> tuple[str, str, str, bytes]:
    """``request``'s body as its fixed parts (its texts and clip aside): before the system
    text (empty without one), before the prompt, after the prompt up to the clip's base64,
    and after it."""
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": _TEXT_SLOT})
    messages.append(
        {
            "role": "user",
            "content": [
                {"type": "text", "text": _TEXT_SLOT},
                {"type": "input_audio", "input_audio": {"data": _AUDIO_SLOT, "format": "wav"}},
            ],
        }
    )
    for answer, text in request.followup:
        messages.append({"role": "assistant", "content": answer})
        messages.append({"role": "user", "content": text})
    body = _base_body(builder.provider, builder.model, messages)
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.max_tokens is not None:
        body["max_tokens"] = request.max_tokens
    if request.top_logprobs is not None:
        body["logprobs"] = True
        body["top_logprobs"] = request.top_logprobs
    if request.output_voice is not None:
        body["modalities"] = ["text", "audio"]
        body["audio"] = {"voice": request.output_voice, "format": "wav"}
    # The base64 (ASCII that JSON never escapes) goes in after the encoding: the same
    # bytes as encoding it with the rest, without the encoder scanning ~64 kB a clip.
    text = json_body(body).decode()
    head, tail = text.split(_AUDIO_SLOT, 1)
    texts = head.split(f'"{_TEXT_SLOT}"')
    before, between = (texts[0], texts[1]) if request.system else ("", texts[0])
    return before, between, texts[-1], tail.encode()


def conversation_body(provider: str, model: str, request: AudioConversationRequest) -> bytes:
    """A multi-turn ``/chat/completions`` body: the system message, then each turn in order,
    a user turn's text part before its ``input_audio`` part, an assistant turn as text."""
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    for turn in request.turns:
        if turn.role != "user":
            messages.append({"role": turn.role, "content": turn.text})
            continue
        parts: list[dict[str, Any]] = []
        if turn.text:
            parts.append({"type": "text", "text": turn.text})
        if turn.audio_wav is not None:
            data = base64.b64encode(turn.audio_wav).decode("ascii")
            parts.append({"type": "input_audio", "input_audio": {"data": data, "format": "wav"}})
        messages.append({"role": "user", "content": parts})
    body = _base_body(provider, model, messages)
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.max_tokens is not None:
        body["max_tokens"] = request.max_tokens
    return json_body(body)


class OpenAIAudioCompletion(_ChatCompletionsClient, AudioCompletionClient):
    """Audio-in completion over ``/chat/completions`` with an ``input_audio`` content part.

    A caller keeping many requests in flight (``max_connections``: a task run's endpoint)
    sends them through ``providers.lean_http`` (~0.1 ms of event-loop CPU a request instead
    of httpx's ~0.7 ms); the answers are parsed by the same code. httpx stays in use where
    the lean client does not apply: a test's ``transport``, a proxy from the environment
    for a remote endpoint (``lean_http_applies``), and for every other provider.
    """

    def __init__(self, endpoint: Endpoint, **kwargs: Any) -> None:
        super().__init__(endpoint, **kwargs)
        self.body_builder = ChatAudioBody(endpoint.provider, endpoint.model)
        connections = kwargs.get("max_connections")
        if connections and kwargs.get("transport") is None and lean_http_applies(self._url):
            self._lean = LeanHTTP(
                self._url,
                self._headers,
                connections=connections,
                timeout=kwargs.get("timeout") or DEFAULT_TIMEOUT,
                provider=self.name,
                key_vars=endpoint.key_vars,
            )

    async def complete_audio(self, request: AudioCompletionRequest) -> Completion:
        return await self._call(request.prepared_body or self.body_builder(request))

    async def complete_conversation(self, request: AudioConversationRequest) -> Completion:
        body = conversation_body(self.endpoint.provider, self.endpoint.model, request)
        return await self._call(body)

    async def aclose(self) -> None:
        if self._lean is not None:
            await self._lean.aclose()
        await super().aclose()


def _client_factory(cls: type[_ChatCompletionsClient], name: str) -> Callable[..., Any]:
    def factory(
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float | None = None,
        base_url_field: str = "--base-url",
        max_connections: int | None = None,
    ) -> Any:
        provider = find_provider(name)
        assert provider is not None
        endpoint = resolve_endpoint(
            provider, model, base_url=base_url, api_key=api_key, base_url_field=base_url_field
        )
        extra = {"timeout": timeout} if timeout is not None else {}
        return cls(endpoint, transport=transport, max_connections=max_connections, **extra)

    return factory


def _roles(name: str, default_model: str | None = None) -> dict[Role, Capability]:
    return {
        Role.TEXT_COMPLETION: Capability(
            _client_factory(OpenAITextCompletion, name), default_model=default_model
        ),
        Role.AUDIO_COMPLETION: Capability(_client_factory(OpenAIAudioCompletion, name)),
    }


for _spec in COMPATIBLE_PROVIDERS:
    register(
        Provider(
            name=_spec.name,
            description=_spec.description,
            env=EnvVars(all_of=_spec.key_vars),
            default_base_url=_spec.base_url,
            base_url_vars=(_spec.base_url_var,),
            roles=_roles(_spec.name, _spec.default_model),
            key_vars=_spec.key_vars,
            key_required=_spec.key_required,
        )
    )
register(
    Provider(
        name=AZURE,
        description="Azure OpenAI deployments (azure-openai/<deployment>)",
        env=EnvVars(all_of=("AZURE_OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT")),
        base_url_vars=("AZURE_OPENAI_ENDPOINT",),
        roles=_roles(AZURE),
        key_vars=("AZURE_OPENAI_API_KEY",),
    )
)
