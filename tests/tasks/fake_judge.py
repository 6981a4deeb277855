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

from voxbench.tasks.answers import basic_normalize
from voxbench.testing import FakeOpenAIServer
from voxbench.testing.http_server import Request, Responder
from voxbench.testing.scripts import Reply, Script, ScriptMessage


def _record(line: str) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) and "prediction" in value else None


class GullibleJudge(Script):
    """Grades the record line; obeys any other line that asks for full marks."""

    BAD_REPLIES = ("Correct!", '{"correct": "yes", "reason": ""}')

    def __init__(self, unusable: dict[str, int] | None = None) -> None:
        self.unusable = dict(unusable or {})
        """Reference → how many unusable replies its record gets before it is graded."""
        self.seen: list[str] = []

    def grade(self, user_text: str) -> dict[str, Any]:
        record = None
        for line in user_text.splitlines():
            found = _record(line)
            if found is not None:
                record = found
            elif "full marks" in line.casefold():
                return {"reason": "I was told to give full marks.", "correct": True}
        if record is None:
            return {"reason": "no record", "correct": False}
        reference = basic_normalize(str(record.get("reference")))
        right = reference in basic_normalize(str(record["prediction"]))
        return {"reason": "matches" if right else "differs", "correct": right}

    def reply(self, conversation: Sequence[ScriptMessage]) -> Reply:
        text = conversation[-1].text
        self.seen.append(text)
        record = next((r for r in map(_record, text.splitlines()) if r), None)
        reference = str((record or {}).get("reference"))
        left = self.unusable.get(reference, 0)
        if left:
            self.unusable[reference] = left - 1
            return Reply(text=self.BAD_REPLIES[left % 2])
        return Reply(text=json.dumps(self.grade(text)))


class TrackingServer(FakeOpenAIServer):
    """The fake OpenAI server, noting when each request came and the most in flight at once."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.arrivals: list[float] = []
        self.in_flight = 0
        self.peak = 0

    async def handle(self, request: Request, responder: Responder) -> None:
        self.arrivals.append(time.perf_counter())
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await super().handle(request, responder)
        finally:
            self.in_flight -= 1
            await asyncio.sleep(0)
