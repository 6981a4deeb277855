"""What every LLM judge client shares: the request, the reply, and HTTP error handling.

A client is thin: it turns one ``JudgeRequest`` (system text, user text, the JSON schema
the reply must follow) into one provider call and returns the raw JSON text. Retries,
validation, caching and verdict logic live in ``judging.llm_judge``, once for every
provider.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any

import httpx

from voxbench.core.errors import ProviderError
from voxbench.core.secrets import redact_text

DEFAULT_TIMEOUT = 120.0
"""Seconds one judge call may take (long knowledge bases make slow first tokens)."""


@dataclass(frozen=True)
class JudgeRequest:
    """One judge call: instructions, the material to judge, and the reply's JSON schema."""

    system: str
    user: str
    schema: dict[str, Any]
    schema_name: str = "turn_judgment"


@dataclass
class JudgeReply:
    """The raw JSON text the judge returned, with token usage when the provider reports it."""

    text: str
    usage: dict[str, int] = field(default_factory=dict)


class JudgeClient(abc.ABC):
    """One provider's chat endpoint, called with temperature 0 and structured output."""

    provider: str = ""

    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        api_key: str | None,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self._client = httpx.AsyncClient(timeout=timeout, transport=transport)

    @property
    def name(self) -> str:
        """``provider/model``."""
        return f"{self.provider}/{self.model}"

    @abc.abstractmethod
    async def complete(self, request: JudgeRequest) -> JudgeReply:
        """Make one call; raise ``ProviderError`` on failure."""

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        await self._client.aclose()

    async def post(self, url: str, body: dict[str, Any], headers: dict[str, str]) -> httpx.Response:
        """POST JSON; transport failures become retryable ``ProviderError``s."""
        try:
            return await self._client.post(url, json=body, headers=headers)
        except httpx.TimeoutException as exc:
            raise ProviderError(
                f"{self.name}: judge call timed out ({type(exc).__name__})",
                category="timeout",
                retryable=True,
            ) from exc
        except httpx.TransportError as exc:
            raise ProviderError(
                f"{self.name}: cannot reach {self.base_url}: {exc}",
                category="connectivity",
                retryable=True,
            ) from exc


def error_text(response: httpx.Response, limit: int = 300) -> str:
    """The provider's error message, shortened and scrubbed of secrets."""
    try:
        data = response.json()
    except ValueError:
        text = response.text
    else:
        err = data.get("error", data) if isinstance(data, dict) else data
        text = err.get("message", str(err)) if isinstance(err, dict) else str(err)
    return redact_text(" ".join(str(text).split()))[:limit]


def check_response(response: httpx.Response, who: str) -> None:
    """Raise a classified ``ProviderError`` unless ``response`` is a success."""
    status = response.status_code
    if 200 <= status < 300:
        return
    message = f"{who}: HTTP {status}: {error_text(response)}"
    retry_after = _retry_after(response)
    if status in (401, 403):
        raise ProviderError(message, category="authentication", retryable=False, status=status)
    if status == 404:
        raise ProviderError(message, category="not_found", retryable=False, status=status)
    if status == 429:
        raise ProviderError(
            message, category="rate_limit", retryable=True, retry_after=retry_after, status=status
        )
    if status in (408, 409, 425) or status >= 500:
        raise ProviderError(
            message, category="server", retryable=True, retry_after=retry_after, status=status
        )
    raise ProviderError(message, category="bad_request", retryable=False, status=status)


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def json_body(response: httpx.Response, who: str) -> Any:
    """The response's JSON; a body that is not JSON is a protocol error worth retrying."""
    try:
        return response.json()
    except ValueError as exc:
        raise ProviderError(
            f"{who}: response is not JSON: {response.text[:200]!r}",
            category="protocol",
            retryable=True,
        ) from exc
