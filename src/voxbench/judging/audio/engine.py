"""Judge clips with a rubric: samples, strict forms, one corrective retry, ``undecided``,
the cache, long clips split and combined, logprob-weighted scores.

For each clip and each sample index the judge is asked once (a retryable provider failure
is retried by the shared policy, ``providers.backoff.PROVIDER_CALL``); an answer that is not
a proper form is answered with one corrective message, and a second bad form — or a
provider that keeps failing — leaves that sample *undecided*: counted apart, never a score.
A rejected key (``AuthenticationError``, exit code 3) or an unknown model (``ConfigError``)
stops everything.

Decided samples are cached by everything that changes an answer (``judgment_fields``): the
judge's endpoint and model, the rubric hash, the hash of the instructions (its evaluation
steps), the temperature, the sample index, the audio hash, the prompt version and the request
text (transcript, part note) — so judging the same clip again asks nothing, and a judgment is
never served across endpoints, temperatures or samples. The temperature is fixed by the
number of samples: one sample is greedy (0), several are all sampled at ``SAMPLE_TEMPERATURE``
— ``--samples 3`` after ``--samples 1`` asks three new samples, never mixing the greedy
answer into the spread.

Where the judge returns token logprobs, each score also gets G-Eval's probability-weighted
value: Σ p(s)·s over the scale's values among the score token's alternatives.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from voxbench.audio.wav import Audio
from voxbench.core.errors import AuthenticationError, ConfigError, ErrorCategory, ProviderError
from voxbench.judging.audio.clients import AudioJudgeClient, HeardAnswer
from voxbench.judging.audio.parse import FormAnswer, FormError, parse_form
from voxbench.judging.audio.prompt import (
    corrective_text,
    instructions,
    prompt_version,
    request_text,
)
from voxbench.judging.audio.rubric import BoundRubric, Criterion
from voxbench.judging.audio.segments import Clip, split_on_silences
from voxbench.judging.audio.steps import ensure_steps
from voxbench.judging.cache import JudgmentCache, fields_key
from voxbench.providers.backoff import PROVIDER_CALL
from voxbench.providers.completion import TokenLogprob

DEFAULT_MAX_SECONDS = 300.0
"""Longest clip sent at once; longer ones are split on silences."""
CONCURRENCY = 4
SAMPLE_TEMPERATURE = 1.0
"""The temperature of every sample when a clip is judged more than once."""
CACHE_KIND = "audio-rubric/2"


@dataclass
class SampleJudgment:
    """One sample of one piece: a score per criterion, or why it is undecided."""

    index: int
    scores: dict[str, int] = field(default_factory=dict)
    weighted: dict[str, float] = field(default_factory=dict)
    explanations: dict[str, str] = field(default_factory=dict)
    attempts: int = 0
    cached: bool = False
    undecided: str | None = None
    usage: dict[str, int] = field(default_factory=dict)


@dataclass
class CriterionResult:
    """One criterion over the samples of a clip."""

    criterion: str
    scale: tuple[int, int]
    pass_at: int
    scores: list[float]
    """One per decided sample (pieces combined as the rubric says)."""
    weighted: list[float]
    explanation: str
    undecided: int

    @property
    def mean(self) -> float | None:
        return round(statistics.fmean(self.scores), 3) if self.scores else None

    @property
    def std(self) -> float | None:
        if not self.scores:
            return None
        return round(statistics.pstdev(self.scores), 3) if len(self.scores) > 1 else 0.0

    @property
    def weighted_mean(self) -> float | None:
        return round(statistics.fmean(self.weighted), 3) if self.weighted else None

    @property
    def distribution(self) -> dict[str, int]:
        counts = Counter(self.scores)
        return {f"{k:g}": counts[k] for k in sorted(counts)}

    @property
    def passed(self) -> bool | None:
        return None if self.mean is None else self.mean >= self.pass_at

    def as_dict(self) -> dict[str, Any]:
        return {
            "criterion": self.criterion,
            "scale": list(self.scale),
            "mean": self.mean,
            "std": self.std,
            "weighted": self.weighted_mean,
            "distribution": self.distribution,
            "samples": self.scores,
            "undecided": self.undecided,
            "passed": self.passed,
            "explanation": self.explanation,
        }


@dataclass
class ClipResult:
    """A judged clip."""

    label: str
    seconds: float
    pieces: int
    criteria: dict[str, CriterionResult]
    samples: list[list[SampleJudgment]]
    """Per piece, per sample."""

    @property
    def calls(self) -> int:
        return sum(s.attempts for piece in self.samples for s in piece)

    @property
    def from_cache(self) -> int:
        return sum(s.cached for piece in self.samples for s in piece)

    def as_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "seconds": round(self.seconds, 3),
            "pieces": self.pieces,
            "criteria": {k: v.as_dict() for k, v in self.criteria.items()},
            "calls": self.calls,
            "from_cache": self.from_cache,
            "undecided_reasons": sorted(
                {s.undecided for piece in self.samples for s in piece if s.undecided}
            ),
        }


def audio_digest(audio: Audio) -> str:
    """SHA-256 of the samples (16-bit) and the rate: the same sound, the same key."""
    pcm = (np.clip(audio.samples, -1, 1) * 32767).astype("<i2").tobytes()
    digest = hashlib.sha256(pcm)
    digest.update(str(audio.sample_rate).encode())
    return digest.hexdigest()


def _alternatives(token: TokenLogprob) -> list[tuple[str, float]]:
    return list(token.top or ((token.token, token.logprob),))


def _score_weights(
    token: TokenLogprob, following: TokenLogprob | None, criterion: Criterion
) -> dict[int, float]:
    """Probability per scale value from the score's token (and the next, for two digits)."""
    weights: dict[int, float] = {}

    def add(value: int, p: float) -> None:
        if criterion.low <= value <= criterion.high:
            weights[value] = weights.get(value, 0.0) + p

    for alternative, logprob in _alternatives(token):
        value = alternative.strip()
        if not value.isdigit():
            continue
        p = math.exp(logprob)
        if alternative == token.token and following is not None and criterion.high >= 10:
            for after, after_logprob in _alternatives(following):
                more = re.match(r"\d+", after)
                add(int(value + more.group()) if more else int(value), p * math.exp(after_logprob))
        else:
            add(int(value), p)
    return weights


def weighted_score(
    form: FormAnswer, logprobs: list[TokenLogprob] | None, criterion: Criterion
) -> float | None:
    """Σ p(s)·s / Σ p(s) over the scale's values among the alternatives of the token that
    holds the score (None when the answer came without logprobs or the token is not found).

    On a scale that reaches 10 a number can span two tokens (``1`` + ``0``): the mass of the
    sampled first token is split by the next token's alternatives — a digit continues the
    number (``10``), anything else ends it (``1``). The other first-token alternatives are
    whole values."""
    if not logprobs or form.score_at < 0:
        return None
    offset = 0
    for i, token in enumerate(logprobs):
        end = offset + len(token.token)
        if offset <= form.score_at < end:
            if not token.token[form.score_at - offset :].strip()[:1].isdigit():
                return None  # the offset does not point at the score's digits
            following = logprobs[i + 1] if i + 1 < len(logprobs) else None
            weights = _score_weights(token, following, criterion)
            total = sum(weights.values())
            return round(sum(v * p for v, p in weights.items()) / total, 4) if total > 0 else None
        offset = end
    return None


class RubricJudge:
    """Judges clips with one rubric and one judge client."""

    def __init__(
        self,
        client: AudioJudgeClient,
        bound: BoundRubric,
        *,
        samples: int = 1,
        cache: JudgmentCache | None = None,
        max_seconds: float = DEFAULT_MAX_SECONDS,
        concurrency: int = CONCURRENCY,
        steps_dir: Path | None = None,
    ) -> None:
        if samples < 1:
            raise ValueError("samples must be at least 1")
        self.client = client
        self.bound = bound
        self.samples = samples
        self.cache = cache
        self.max_seconds = max_seconds
        self._gate = asyncio.Semaphore(max(1, concurrency))
        self._steps_dir = steps_dir
        self._instructions: str | None = None
        self._endpoint: str | None = None
        self._prepared = asyncio.Lock()

    @property
    def version(self) -> str:
        """``<rubric hash>-<prompt version>``: what a cached judgment depends on."""
        return f"{self.bound.digest()}-{prompt_version()}"

    async def prepare(self) -> str:
        """The instructions (writing the steps first when the rubric asks for that; once,
        however many clips are judged at the same time)."""
        async with self._prepared:
            if self._instructions is None:
                steps = await ensure_steps(self.bound, self.client, self._steps_dir)
                self._instructions = instructions(self.bound, steps)
        return self._instructions

    async def judge_clips(self, clips: list[Clip]) -> list[ClipResult]:
        """Every clip, judged at the same time: the calls share the judge's concurrency
        limit (``concurrency``), so N clips cost about N / concurrency calls' time."""
        await self.prepare()
        return list(await asyncio.gather(*(self.judge_clip(c) for c in clips)))

    async def judge_clip(self, clip: Clip) -> ClipResult:
        """Every sample of every piece of ``clip``, combined per criterion."""
        await self.prepare()
        pieces = split_on_silences(clip.audio, self.max_seconds)
        jobs = [
            self._sample(piece, clip.transcript, i, len(pieces), s)
            for i, piece in enumerate(pieces)
            for s in range(self.samples)
        ]
        flat = await asyncio.gather(*jobs)
        by_piece = [flat[i * self.samples : (i + 1) * self.samples] for i in range(len(pieces))]
        return ClipResult(
            label=clip.label,
            seconds=clip.audio.duration,
            pieces=len(pieces),
            criteria={c.name: self._combine(c, by_piece) for c in self.bound.criteria},
            samples=by_piece,
        )

    def _combine(self, c: Criterion, by_piece: list[list[SampleJudgment]]) -> CriterionResult:
        combine = min if self.bound.rubric.combine == "min" else statistics.fmean
        scores: list[float] = []
        weighted: list[float] = []
        undecided = 0
        for s in range(self.samples):
            row = [piece[s] for piece in by_piece]
            if any(c.name not in j.scores for j in row):
                undecided += 1
                continue
            scores.append(round(float(combine([j.scores[c.name] for j in row])), 3))
            if all(c.name in j.weighted for j in row):
                weighted.append(round(float(combine([j.weighted[c.name] for j in row])), 4))
        explanation = next(
            (
                j.explanations[c.name]
                for piece in by_piece
                for j in piece
                if c.name in j.explanations
            ),
            next((j.undecided for piece in by_piece for j in piece if j.undecided), ""),
        )
        return CriterionResult(
            criterion=c.name,
            scale=c.scale,
            pass_at=int(c.pass_at or c.high),
            scores=scores,
            weighted=weighted,
            explanation=explanation or "",
            undecided=undecided,
        )

    @property
    def temperature(self) -> float:
        """Greedy for one sample; every sample at ``SAMPLE_TEMPERATURE`` for several."""
        return 0.0 if self.samples == 1 else SAMPLE_TEMPERATURE

    @property
    def endpoint(self) -> str:
        """Where the judge is reached (its base URL), part of every cache key."""
        if self._endpoint is None:
            self._endpoint = str(getattr(self.client, "endpoint", "") or "")
        return self._endpoint

    def judgment_fields(self, audio: Audio, request: str, index: int) -> dict[str, Any]:
        """Everything that changes the judge's answer to one sample: the cache key's fields."""
        assert self._instructions is not None
        return {
            "endpoint": self.endpoint,
            "model": self.client.name,
            "rubric": self.bound.digest(),
            "steps": hashlib.sha256(self._instructions.encode("utf-8")).hexdigest()[:16],
            "temperature": self.temperature,
            "sample": index,
            "audio": audio_digest(audio),
            "prompt_version": prompt_version(),
            "request": hashlib.sha256(request.encode("utf-8")).hexdigest()[:16],
        }

    async def _sample(
        self, audio: Audio, transcript: str | None, piece: int, pieces: int, index: int
    ) -> SampleJudgment:
        note = f"This is part {piece + 1} of {pieces} of a longer recording." if pieces > 1 else ""
        request = request_text(self.bound, transcript, note)
        fields = self.judgment_fields(audio, request, index)
        key = fields_key(CACHE_KIND, fields)
        if self.cache is not None:
            hit = self.cache.get_matching(key, fields)
            if hit is not None and isinstance(hit.get("scores"), dict):
                return SampleJudgment(
                    index=index,
                    scores={k: int(v) for k, v in hit["scores"].items()},
                    weighted={k: float(v) for k, v in (hit.get("weighted") or {}).items()},
                    explanations=dict(hit.get("explanations") or {}),
                    cached=True,
                )
        async with self._gate:
            result = await self._ask(audio, request, index)
        if result.undecided is None and self.cache is not None:
            self.cache.put(
                key,
                {
                    "fields": fields,
                    "scores": result.scores,
                    "weighted": result.weighted,
                    "explanations": result.explanations,
                },
            )
        return result

    async def _ask(self, audio: Audio, request: str, index: int) -> SampleJudgment:
        assert self._instructions is not None
        result = SampleJudgment(index=index)
        followup: tuple[tuple[str, str], ...] = ()
        for form_try in range(2):
            try:
                answer = await self._call(audio, request, followup, result)
            except ProviderError as exc:
                if exc.category == ErrorCategory.AUTHENTICATION:
                    raise AuthenticationError(f"the audio judge's key was rejected: {exc}") from exc
                if exc.category == ErrorCategory.NOT_FOUND:
                    raise ConfigError(
                        f"the audio judge was not found: {exc}",
                        field="--judge",
                        expected="a model (or deployment) the provider serves",
                    ) from exc
                result.undecided = f"the judge failed: {exc}"
                return result
            try:
                forms = parse_form(answer.text, self.bound)
            except FormError as exc:
                if form_try == 0:
                    followup = ((answer.text, corrective_text(str(exc), self.bound)),)
                    continue
                result.undecided = f"malformed evaluation form twice: {exc}"
                return result
            for c in self.bound.criteria:
                form = forms[c.name]
                result.scores[c.name] = form.score
                result.explanations[c.name] = form.explanation
                w = weighted_score(form, answer.logprobs, c)
                if w is not None:
                    result.weighted[c.name] = w
            return result
        return result  # not reached: the loop returns

    async def _call(
        self,
        audio: Audio,
        request: str,
        followup: tuple[tuple[str, str], ...],
        result: SampleJudgment,
    ) -> HeardAnswer:
        instructions = self._instructions
        assert instructions is not None

        async def hear() -> HeardAnswer:
            result.attempts += 1
            return await self.client.hear(
                instructions,
                request,
                audio,
                followup=followup,
                logprobs=True,
                temperature=self.temperature,
            )

        # A rejected key or an unknown model is never retried (``NEVER_RETRIED``): the
        # caller stops the judging on them.
        answer = await PROVIDER_CALL.call(hear)
        for k, v in answer.usage.items():
            result.usage[k] = result.usage.get(k, 0) + v
        return answer
