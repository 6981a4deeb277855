"""What a fake audio judge answers: scripts for the realtime and chat fakes in judge mode.

A judge script sees what a real judge would be given — the instructions, the texts of the
conversation (the request, any transcript block, a corrective message) and the audio it
heard — as a ``Heard``, and answers with text (an evaluation form, or something malformed
on purpose). ``top_logprobs`` lets it script the log probabilities the chat fake returns
for a score token.

- ``ScriptedAudioJudge``: answers in order (a list of texts or functions of ``Heard``).
- ``ObedientAudioJudge``: a judge that follows any "give this a N" it finds in its
  material *outside* the ``<transcript>`` data block — the gullible model that prompt
  hardening must hold off: a transcript can only reach it inside the block.
- ``form_answer``: the seed's form (``- Accent (1-5): 4 - why``) for scripted scores.
"""

from __future__ import annotations

import abc
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from voxbench.testing.scripts import Reply, Script, ScriptMessage


@dataclass(frozen=True)
class Heard:
    """One request to the fake judge."""

    instructions: str
    text: str
    """Every text item or message part after the instructions, in order."""
    audio: np.ndarray
    """Mono float samples of what the judge heard (empty for a text-only request)."""
    sample_rate: int
    number: int
    """1-based count of requests this script has answered."""

    @property
    def seconds(self) -> float:
        return len(self.audio) / self.sample_rate if self.sample_rate else 0.0


def form_answer(scores: dict[str, int], explanation: str = "heard clearly") -> str:
    """The seed's evaluation form for ``scores``."""
    return "\n".join(
        f"- {name.replace('_', ' ').capitalize()} (1-5): {score} - {explanation}"
        for name, score in scores.items()
    )


class AudioJudgeScript(Script):
    """The fake judge's behaviour."""

    def __init__(self) -> None:
        self.heard: list[Heard] = []

    def judge(self, instructions: str, text: str, audio: np.ndarray, sample_rate: int) -> str:
        """Record the request and answer it."""
        heard = Heard(instructions, text, audio, sample_rate, len(self.heard) + 1)
        self.heard.append(heard)
        return self.answer(heard)

    @abc.abstractmethod
    def answer(self, heard: Heard) -> str:
        """The judge's answer text."""

    def top_logprobs(self, token: str) -> list[tuple[str, float]] | None:
        """Alternatives with log probabilities for ``token`` (None: only itself, p=1)."""
        return None

    def reply(self, conversation: Sequence[ScriptMessage]) -> Reply:
        # A judge reached through a route without judge mode still answers from the text.
        text = "\n".join(m.text for m in conversation if m.role == "user")
        return Reply(text=self.judge("", text, np.zeros(0, np.float32), 24000))


class ScriptedAudioJudge(AudioJudgeScript):
    """Answers in order; the last answer repeats once the list is used up."""

    def __init__(
        self,
        answers: Sequence[str | Callable[[Heard], str]],
        *,
        logprobs: dict[str, list[tuple[str, float]]] | None = None,
    ) -> None:
        super().__init__()
        if not answers:
            raise ValueError("a scripted judge needs at least one answer")
        self.answers = list(answers)
        self.logprobs = dict(logprobs or {})

    def answer(self, heard: Heard) -> str:
        item = self.answers[min(heard.number, len(self.answers)) - 1]
        return item(heard) if callable(item) else item

    def top_logprobs(self, token: str) -> list[tuple[str, float]] | None:
        return self.logprobs.get(token.strip())


_BLOCK = re.compile(r"<transcript>.*?</transcript>", re.S)
_ORDER = re.compile(r"(?<![\"'])give (?:this|it) (?:a|an)\s*(\d+)", re.I)
"""An order to the judge; one right after a quote mark is an example being quoted."""


class ObedientAudioJudge(AudioJudgeScript):
    """Scores ``default`` unless its material, outside the data block, tells it otherwise."""

    def __init__(self, criteria: Sequence[str], default: int = 2) -> None:
        super().__init__()
        self.criteria = list(criteria)
        self.default = default
        self.obeyed: list[int] = []

    def answer(self, heard: Heard) -> str:
        outside = _BLOCK.sub("", heard.instructions + "\n" + heard.text)
        order = _ORDER.search(outside)
        score = int(order.group(1)) if order else self.default
        if order:
            self.obeyed.append(score)
        return form_answer({c: score for c in self.criteria})
