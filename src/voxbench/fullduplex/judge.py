"""LLM judges of full-duplex outputs, over any OpenAI-compatible chat endpoint.

Two questions are asked: how relevant the reply after a barge-in is to what the user said
(0–5, the public interruption metric), and how the model handled a v1.5 speech overlap
(respond / resume / uncertain / unknown). Each call records the judge's name, seed and
temperature; an answer that cannot be parsed is retried a bounded number of times with the
next seed, then recorded as an error (never a guessed score).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from voxbench.core.errors import ConfigError, ProviderError
from voxbench.core.secrets import get_secret, redact_text
from voxbench.fullduplex.annotations import OverlapMetadata, TimedWord
from voxbench.fullduplex.prompts import (
    BEHAVIOR_LABELS,
    BEHAVIOR_SYSTEM,
    RELEVANCE_SYSTEM,
    behavior_user_message,
    relevance_user_message,
)
from voxbench.targets.openai_chat import COMPATIBLE_PROVIDERS

BACKOFF_S = 2.0
"""Seconds before retrying a transient HTTP failure; doubles per try (tests set it to 0)."""
MAX_ATTEMPTS = 3
_RETRYABLE = {408, 409, 425, 429, 500, 502, 503, 504}


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
    """A chat-completions judge named ``provider/model`` (OpenAI-compatible wire format)."""

    def __init__(
        self,
        name: str,
        *,
        base_url: str | None = None,
        seed: int = 0,
        temperature: float | None = 0.0,
        transport: httpx.BaseTransport | None = None,
        timeout: float = 120.0,
    ) -> None:
        provider, sep, model = name.partition("/")
        if not sep:
            provider, sep, model = name.partition(":")
        spec = next((p for p in COMPATIBLE_PROVIDERS if p.name == provider), None)
        if not sep or not model or spec is None:
            known = ", ".join(p.name for p in COMPATIBLE_PROVIDERS)
            raise ConfigError(
                f"unknown judge {name!r}",
                field="judge",
                expected=f"provider/model, provider in: {known}",
            )
        self.name = f"{provider}/{model}"
        self.model = model
        self.seed = seed
        self.temperature = temperature
        url = base_url or os.environ.get(spec.base_url_var) or spec.base_url
        if not url:
            raise ConfigError(
                f"judge {name!r} needs an endpoint", field="judge-base-url",
                expected=f"--judge-base-url or {spec.base_url_var}",
            )  # fmt: skip
        self.base_url = url.rstrip("/")
        key = (
            get_secret(*spec.key_vars, required=spec.key_required, purpose=f"the judge {name}")
            if spec.key_vars
            else None
        )
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._client = httpx.Client(
            timeout=timeout, headers=headers, transport=transport, trust_env=False
        )

    def describe(self) -> dict[str, Any]:
        """What to record about this judge (no secrets)."""
        return {"name": self.name, "seed": self.seed, "temperature": self.temperature}

    def ask(self, system: str, user: str, *, seed: int | None = None) -> str:
        """One chat completion; transient failures are retried with backoff."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "seed": self.seed if seed is None else seed,
        }
        if self.temperature is not None:
            body["temperature"] = self.temperature
        for attempt in range(MAX_ATTEMPTS):
            try:
                response = self._client.post(f"{self.base_url}/chat/completions", json=body)
            except httpx.HTTPError as exc:
                if attempt + 1 == MAX_ATTEMPTS:
                    raise ProviderError(
                        f"judge {self.name}: {redact_text(str(exc))}",
                        category="connectivity",
                        retryable=True,
                    ) from exc
                time.sleep(BACKOFF_S * 2**attempt)
                continue
            if response.status_code in _RETRYABLE and attempt + 1 < MAX_ATTEMPTS:
                time.sleep(BACKOFF_S * 2**attempt)
                continue
            if response.status_code >= 400:
                raise ProviderError(
                    f"judge {self.name}: HTTP {response.status_code}: {redact_text(response.text[:300])}",
                    category="server" if response.status_code >= 500 else "bad_request",
                    retryable=response.status_code in _RETRYABLE,
                    status=response.status_code,
                )
            try:
                return str(response.json()["choices"][0]["message"]["content"] or "")
            except (ValueError, KeyError, IndexError, TypeError) as exc:
                raise ProviderError(
                    f"judge {self.name}: response is not a chat completion", category="protocol",
                    retryable=False,
                ) from exc  # fmt: skip
        raise AssertionError("unreachable")

    def close(self) -> None:
        self._client.close()


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
