"""LLM judges of full-duplex outputs, through any ``text_completion`` provider.

Two questions are asked: how relevant the reply after a barge-in is to what the user said
(0–5, the public interruption metric), and how the model handled a v1.5 speech overlap
(respond / resume / uncertain / unknown). Each call records the judge's name, seed and
temperature; an answer that cannot be parsed is retried a bounded number of times with the
next seed, then recorded as an error (never a guessed score).
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from voxbench.core.errors import ProviderError
from voxbench.fullduplex.annotations import OverlapMetadata, TimedWord
from voxbench.fullduplex.prompts import (
    BEHAVIOR_LABELS,
    BEHAVIOR_SYSTEM,
    RELEVANCE_SYSTEM,
    behavior_user_message,
    relevance_user_message,
)
from voxbench.providers.backoff import PROVIDER_CALL
from voxbench.providers.completion import CompletionRequest
from voxbench.providers.registry import Role, make

MAX_ATTEMPTS = 3
"""Questions per judgment, each with the next seed, before an unparseable answer is an error.
(A provider's transient failures are retried apart, by ``providers.backoff.PROVIDER_CALL``.)"""


@dataclass(frozen=True)
class RelevanceRating:
    """A 0–5 relevance rating of the reply to an interruption."""

    rating: int
    analysis: str
    judge: str
    seed: int


@dataclass(frozen=True)
class BehaviorLabel:
    """How the model handled a speech overlap."""

    label: str
    reason: str
    judge: str
    seed: int


class ChatJudge:
    """A judge named ``provider/model``: any ``text_completion`` provider in the registry.

    Blocking by design (the scorers are synchronous): each call runs on the judge's own
    event loop in a helper thread, so one connection pool serves every call and a caller
    inside another event loop (a test, a notebook) can still use it.
    """

    def __init__(
        self,
        name: str,
        *,
        base_url: str | None = None,
        seed: int = 0,
        temperature: float | None = 0.0,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float = 120.0,
    ) -> None:
        self._client = make(
            Role.TEXT_COMPLETION,
            name,
            base_url=base_url,
            transport=transport,
            timeout=timeout,
            base_url_field="judge-base-url",
        )
        self.name = self._client.name
        self.model = self._client.model
        self.base_url = self._client.base_url
        self.seed = seed
        self.temperature = temperature
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name=f"judge-{self.name}", daemon=True
        )
        self._thread.start()

    def describe(self) -> dict[str, Any]:
        """What to record about this judge (no secrets)."""
        return {"name": self.name, "seed": self.seed, "temperature": self.temperature}

    def ask(self, system: str, user: str, *, seed: int | None = None) -> str:
        """One completion; transient failures are retried by the shared policy
        (``providers.backoff.PROVIDER_CALL``)."""
        request = CompletionRequest(
            system=system,
            user=user,
            temperature=self.temperature,
            seed=self.seed if seed is None else seed,
        )
        return asyncio.run_coroutine_threadsafe(self._ask(request), self._loop).result()

    async def _ask(self, request: CompletionRequest) -> str:
        return (await PROVIDER_CALL.call(lambda: self._client.complete(request))).text

    def close(self) -> None:
        """Close the connection pool and the judge's event loop."""
        if self._loop.is_closed():
            return
        asyncio.run_coroutine_threadsafe(self._client.aclose(), self._loop).result()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()


def _json_object(text: str) -> dict[str, Any] | None:
    match = re.search(r"\{.*\}", text, re.DOTALL)
    if not match:
        return None
    try:
        value = json.loads(match.group(0))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def parse_rating(text: str) -> tuple[int, str] | None:
    """``(rating, analysis)`` from a judge answer, or None when it holds no 0–5 rating."""
    obj = _json_object(text)
    if obj is not None and "rating" in obj:
        try:
            rating = int(obj["rating"])
        except (TypeError, ValueError):
            rating = -1
        if 0 <= rating <= 5:
            return rating, str(obj.get("analysis", ""))
    # Free text: "rating: 4" or "I would rate the response as 4" (the last one counts).
    found = re.findall(r"(?:rating|\brate\b[^.\n]*?\bas)\W{0,4}([0-5])\b", text, re.IGNORECASE)
    return (int(found[-1]), text.strip()) if found else None


def parse_behavior(text: str) -> tuple[str, str] | None:
    """``(label, reason)`` from a judge answer, or None when it names no known label."""
    obj = _json_object(text)
    if obj is not None:
        label = str(obj.get("behavior", "")).strip().lower()
        if label in BEHAVIOR_LABELS:
            return label, str(obj.get("reason", ""))
    return None


def _ask_parsed(judge: ChatJudge, system: str, user: str, parse: Any) -> tuple[Any, int]:
    last = ""
    for k in range(MAX_ATTEMPTS):
        seed = judge.seed + k
        last = judge.ask(system, user, seed=seed)
        parsed = parse(last)
        if parsed is not None:
            return parsed, seed
    raise ProviderError(
        f"judge {judge.name} gave no parseable answer in {MAX_ATTEMPTS} tries (last: {last[:120]!r})",
        category="protocol",
        retryable=False,
    )


def rate_relevance(judge: ChatJudge, context: str, interrupt: str, reply: str) -> RelevanceRating:
    """Rate 0–5 how well ``reply`` addresses the ``interrupt`` that cut into ``context``."""
    (rating, analysis), seed = _ask_parsed(
        judge, RELEVANCE_SYSTEM, relevance_user_message(context, interrupt, reply), parse_rating
    )
    return RelevanceRating(rating, analysis, judge.name, seed)


def classify_behavior(
    judge: ChatJudge,
    subset: str,
    metadata: OverlapMetadata,
    words: Sequence[TimedWord],
    clean_words: Sequence[TimedWord] | None,
) -> BehaviorLabel:
    """Label how the model reacted to the overlap of a v1.5 sample."""
    user = behavior_user_message(subset, metadata, words, clean_words)
    (label, reason), seed = _ask_parsed(judge, BEHAVIOR_SYSTEM, user, parse_behavior)
    return BehaviorLabel(label, reason, judge.name, seed)
