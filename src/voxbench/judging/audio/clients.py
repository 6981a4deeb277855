"""What every audio judge client does (``factory.make_audio_judge`` chooses one).

A client hears one clip with the judge's instructions and a request text, optionally after
an earlier exchange (the answer that broke the form, and the corrective message), and
returns the text it answered (with token logprobs where the provider gives them). It can
also answer a text-only request (writing a rubric's evaluation steps).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from voxbench.audio.wav import Audio
from voxbench.providers.completion import TokenLogprob


@dataclass
class HeardAnswer:
    """What the judge answered about one clip."""

    text: str
    usage: dict[str, int] = field(default_factory=dict)
    logprobs: list[TokenLogprob] | None = None


class AudioJudgeClient(Protocol):
    """A model that hears a clip and answers in text."""

    name: str
    """``provider/model``."""

    @property
    def endpoint(self) -> str:
        """Where it is reached (base URL, no credentials): part of the cache key."""
        ...

    async def hear(
        self,
        instructions: str,
        request: str,
        audio: Audio,
        *,
        followup: tuple[tuple[str, str], ...] = (),
        logprobs: bool = False,
        temperature: float | None = 0.0,
    ) -> HeardAnswer:
        """Judge ``audio``; raise ``ProviderError`` on a failure."""
        ...

    async def write(self, system: str, user: str) -> str:
        """Answer a text-only request (no audio)."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...
