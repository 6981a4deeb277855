"""The completion roles: text in → text out (LLM judges) and audio + prompt → text out.

A ``TextCompletionClient`` makes one call from a ``CompletionRequest`` (system text, user
text, optionally a JSON schema the reply must follow) at temperature 0 where the model takes
a temperature (clients leave it out for models that refuse sampling parameters, e.g. Claude
Opus 4.7 and later: ``providers.claude_models``) and returns the raw text with token usage.
An ``AudioCompletionClient`` does the same with a wav clip beside the prompt. Clients are
thin: retries, validation and caching belong to their callers. Failures raise
``ProviderError`` classified by ``providers.http``.
"""

from __future__ import annotations

import abc
import json
import os
from dataclasses import dataclass, field
from typing import Any

import httpx

from voxbench.core.errors import ConfigError, ProviderError
from voxbench.core.secrets import get_secret, remember_secret
from voxbench.providers.http import classify_exception, make_http_client, raise_for_status
from voxbench.providers.registry import Provider

DEFAULT_TIMEOUT = 120.0
"""Seconds one completion may take (long knowledge bases make slow first tokens)."""


@dataclass(frozen=True)
class CompletionRequest:
    """One call: instructions, the material, and (optionally) the reply's JSON schema."""

    system: str
    user: str
    schema: dict[str, Any] | None = None
    schema_name: str = "reply"
    temperature: float | None = 0.0
    """None leaves the provider's default. A client drops it for a model that refuses the
    parameter (reasoning models, Claude Opus 4.7 and later) rather than fail the call."""
    seed: int | None = None


Body = bytes | tuple[bytes, ...]
"""A request body, or its parts in order (a clip's base64 between the JSON around it): parts
are joined only as they are sent, one copy of a large clip's fewer."""


@dataclass(frozen=True)
class AudioCompletionRequest:
    """An audio-in call: a wav clip, the prompt about it, and optional instructions."""

    audio_wav: bytes
    prompt: str
    system: str = ""
    temperature: float | None = 0.0
    max_tokens: int | None = None
    """The longest reply, in tokens (None leaves the provider's default)."""
    followup: tuple[tuple[str, str], ...] = ()
    """Later exchanges of the same conversation: (the model's earlier answer, the next user
    text), e.g. an answer that broke the requested form and the corrective message."""
    top_logprobs: int | None = None
    """Ask for the log probabilities of this many alternatives per output token, where the
    provider returns them (``Completion.logprobs``)."""
    output_voice: str | None = None
    """Ask for a spoken answer too, in this voice (``Completion.audio_wav``), where the
    provider can speak (OpenAI-compatible ``modalities: ["text", "audio"]``)."""
    prepared_body: Body | None = None
    """The request body the client's ``body_builder`` made of this very request (in a worker
    process, off the event loop, or spliced around a clip's base64 encoded before): sent as
    is instead of being encoded again."""


@dataclass(frozen=True)
class ConversationTurn:
    """One message of a multi-turn audio conversation: the user's (text, a wav clip, or
    both) or the assistant's (text)."""

    role: str
    """``user`` or ``assistant``."""
    text: str = ""
    audio_wav: bytes | None = None


@dataclass(frozen=True)
class AudioConversationRequest:
    """A multi-turn call: the conversation so far, ending with the user turn to answer."""

    turns: tuple[ConversationTurn, ...]
    system: str = ""
    temperature: float | None = 0.0
    max_tokens: int | None = None


@dataclass
class Completion:
    """The text a model returned, with token usage when the provider reports it."""

    text: str
    usage: dict[str, int] = field(default_factory=dict)
    logprobs: list[TokenLogprob] | None = None
    """Per output token, when asked for and returned (``AudioCompletionRequest.top_logprobs``)."""
    audio_wav: bytes | None = None
    """The spoken answer (a WAV file), when asked for (``AudioCompletionRequest.output_voice``)
    and returned; ``text`` is then its transcript unless the model also wrote text."""


@dataclass(frozen=True)
class TokenLogprob:
    """One output token with its log probability and the top alternatives at its place."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class Endpoint:
    """Where and how to reach a provider: its name, model, base URL and key."""

    provider: str
    model: str
    base_url: str
    api_key: str | None
    key_vars: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """``provider/model``."""
        return f"{self.provider}/{self.model}"


def resolve_endpoint(
    provider: Provider,
    model: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    base_url_field: str = "--base-url",
) -> Endpoint:
    """The endpoint of ``provider/model``: an explicit base URL, else its env var, else the default.

    Raises ``ConfigError`` naming ``base_url_field`` and the env var when there is no URL,
    and ``PrerequisiteError`` naming the key's env vars when a required key is missing.
    """
    url = base_url or next(
        (os.environ[v] for v in provider.base_url_vars if os.environ.get(v)), None
    )
    url = url or provider.default_base_url
    if not url:
        hint = f" (or set {provider.base_url_vars[0]})" if provider.base_url_vars else ""
        raise ConfigError(
            f"{provider.name}/{model} needs an endpoint (a base URL)",
            field=base_url_field,
            expected=f"the server's URL, e.g. http://127.0.0.1:8000/v1{hint}",
        )
    key_vars = provider.key_vars
    if api_key:
        remember_secret(api_key)
        key: str | None = api_key
    elif key_vars:
        key = get_secret(
            *key_vars, required=provider.key_required, purpose=f"{provider.name}/{model}"
        )
    else:
        key = None
    return Endpoint(provider.name, model, url.rstrip("/"), key, key_vars)


class HTTPCompletionClient:
    """What the HTTP completion clients share: an endpoint, one client, classified errors."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.AsyncBaseTransport | None = None,
        max_connections: int | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.provider = endpoint.provider
        self.model = endpoint.model
        self.base_url = endpoint.base_url
        self.name: str = endpoint.name
        """``provider/model`` (the endpoint is frozen: a plain attribute, as the client
        interfaces below declare it)."""
        self._http_options: dict[str, Any] = {
            "timeout": timeout,
            "transport": transport,
            "max_connections": max_connections,
        }
        self._http: httpx.AsyncClient | None = None

    @property
    def _client(self) -> httpx.AsyncClient:
        """The httpx client, made at its first use (a client that sends every request
        another way, ``providers.lean_http``, never pays its TLS setup)."""
        if self._http is None:
            self._http = make_http_client(**self._http_options)
        return self._http

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        if self._http is not None:
            await self._http.aclose()

    async def post_json(self, url: str, body: dict[str, Any], headers: dict[str, str]) -> Any:
        """POST ``body``; return the JSON answer or raise a classified ``ProviderError``."""
        return await self._post(url, headers, json=body)

    async def post_body(self, url: str, body: bytes, headers: dict[str, str]) -> Any:
        """POST an encoded JSON ``body`` (``headers`` name its content type) as ``post_json``."""
        return await self._post(url, headers, content=body)

    async def _post(self, url: str, headers: dict[str, str], **body: Any) -> Any:
        try:
            response = await self._client.post(url, headers=headers, **body)
        except httpx.HTTPError as exc:
            raise classify_exception(exc, provider=self.name) from exc
        raise_for_status(response, provider=self.name, key_vars=self.endpoint.key_vars)
        try:
            return response.json()
        except ValueError as exc:
            raise ProviderError(
                f"{self.name}: response is not JSON: {response.text[:200]!r}",
                category="protocol",
                retryable=True,
            ) from exc


def json_body(body: dict[str, Any]) -> bytes:
    """A request body as JSON bytes, encoded as httpx's ``json=`` encodes it."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


class TextCompletionClient(abc.ABC):
    """A model that answers a ``CompletionRequest`` with text (the ``text_completion`` role)."""

    name: str
    """``provider/model``."""
    provider: str
    model: str
    base_url: str

    @abc.abstractmethod
    async def complete(self, request: CompletionRequest) -> Completion:
        """Make one call; raise ``ProviderError`` on failure."""

    @abc.abstractmethod
    async def aclose(self) -> None:
        """Release connections."""


class AudioCompletionClient(abc.ABC):
    """A model that answers a prompt about an audio clip with text (``audio_completion``)."""

    name: str
    provider: str
    model: str
    base_url: str

    body_builder: Any = None
    """A picklable callable making the encoded body of an ``AudioCompletionRequest`` (set
    ``prepared_body`` to what it returns), or None for a client that cannot take one."""

    @abc.abstractmethod
    async def complete_audio(self, request: AudioCompletionRequest) -> Completion:
        """Make one call; raise ``ProviderError`` on failure."""

    async def complete_conversation(self, request: AudioConversationRequest) -> Completion:
        """Answer the last user turn of a multi-turn conversation (where the provider can)."""
        raise ConfigError(
            f"{self.name} cannot take a multi-turn audio conversation",
            expected="an OpenAI-compatible chat model for a task with turns",
        )

    @abc.abstractmethod
    async def aclose(self) -> None:
        """Release connections."""


def protocol_error(who: str, message: str) -> ProviderError:
    """A response that breaks the provider's documented format (retryable: a glitch)."""
    return ProviderError(f"{who}: {message}", category="protocol", retryable=True)
