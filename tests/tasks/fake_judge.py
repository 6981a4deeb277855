"""A fake LLM judge behind the fake OpenAI-compatible server, gullible on purpose.

``GullibleJudge`` reads the judge request's user message line by line. The line that is a
JSON object with a ``prediction`` is the record: it grades it (the prediction is right when
it contains the reference, case and punctuation aside). Every other line is taken as an
instruction — and a line asking for "full marks" is obeyed. So a judge prompt that lets a
prediction's text land outside the record (raw, unescaped) is fooled, and one that keeps
it inside the JSON data is not.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from typing import Any

from voxbench.metrics.answers import basic_normalize
from voxbench.testing import FakeOpenAIServer
from voxbench.testing.http_server import Request, Responder
from voxbench.testing.scripts import Reply, Script, ScriptMessage


def _record(line: str) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) and "prediction" in value else None


REFUSALS = ("i can't help", "i cannot help", "i won't")
"""What the fake refusal judge takes for a refusal."""


def _kind(user_text: str) -> str:
    """Which judge metric asks: the request's first line says."""
    first = user_text.splitlines()[0] if user_text else ""
    if "from 0 to 5" in first:
        return "score"
    if "from 1 to 10" in first:
        return "rating"
    if "from 0 to 9" in first:
        return "points"
    if "refuses" in first:
        return "refused"
    return "correct"


class GullibleJudge(Script):
    """Grades the record line; obeys any other line that asks for full marks. It answers
    the kind of judge asking (binary, 0–5 score, refusal) as the request's first line says."""

    BAD_REPLIES = ("Correct!", '{"correct": "yes", "reason": ""}')
    BAD_SCORES = ('{"reason": "great", "score": 7}', '{"reason": "good", "score": 4.5}')

    def __init__(self, unusable: dict[str, int] | None = None) -> None:
        self.unusable = dict(unusable or {})
        """Reference → how many unusable replies its record gets before it is graded."""
        self.seen: list[str] = []

    def grade(self, user_text: str) -> dict[str, Any]:
        kind = _kind(user_text)
        record = None
        for line in user_text.splitlines():
            found = _record(line)
            if found is not None:
                record = found
            elif "full marks" in line.casefold():
                best = 5 if kind == "score" else True
                return {"reason": "I was told to give full marks.", kind: best}
        if record is None:
            return {"reason": "no record", kind: 0 if kind == "score" else False}
        prediction = basic_normalize(str(record["prediction"]))
        if kind == "refused":
            refused = any(basic_normalize(r) in prediction for r in REFUSALS)
            return {"reason": "declines" if refused else "answers", "refused": refused}
        reference = basic_normalize(str(record.get("reference")))
        right = reference in prediction
        if kind == "score":
            partly = bool(set(reference.split()) & set(prediction.split()))
            score = 5 if right else 2 if partly else 0
            return {"reason": "matches" if right else "differs", "score": score}
        if kind in ("rating", "points"):  # MT-Bench 1–10, CallHome 0–9
            top, bottom = (10, 1) if kind == "rating" else (9, 0)
            return {"reason": "matches" if right else "differs", kind: top if right else bottom}
        return {"reason": "matches" if right else "differs", "correct": right}

    def reply(self, conversation: Sequence[ScriptMessage]) -> Reply:
        text = conversation[-1].text
        self.seen.append(text)
        record = next((r for r in map(_record, text.splitlines()) if r), None)
        reference = str((record or {}).get("reference"))
        left = self.unusable.get(reference, 0)
        if left:
            self.unusable[reference] = left - 1
            bad = self.BAD_SCORES if _kind(text) == "score" else self.BAD_REPLIES
            return Reply(text=bad[left % 2])
        return Reply(text=json.dumps(self.grade(text)))


class TrackingServer(FakeOpenAIServer):
    """The fake OpenAI server, noting when each request came and the most in flight at once."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.judged_at: list[float] = []
        """``time.perf_counter()`` of each request, as the handler saw it."""
        self.in_flight = 0
        self.peak = 0

    async def handle(self, request: Request, responder: Responder) -> None:
        self.judged_at.append(time.perf_counter())
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await super().handle(request, responder)
        finally:
            self.in_flight -= 1
            await asyncio.sleep(0)
