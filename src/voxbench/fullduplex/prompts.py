"""The instructions voxbench gives its full-duplex judges (written for voxbench)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from voxbench.fullduplex.annotations import OverlapMetadata, TimedWord

RELEVANCE_SYSTEM = """\
You grade a spoken voice assistant. While the assistant was answering a user's request, \
the user cut in with a new remark or question. You get the original request, what the user \
said when cutting in, and a transcript of what the assistant said after the user stopped \
talking.

Rate from 0 to 5 how well the assistant's words after the interruption respond to the \
interruption itself:
0 = no relation to the interruption (or nothing meaningful said)
1 = barely related; mostly carries on with the earlier answer
2 = touches the interruption but mainly ignores it
3 = addresses the interruption partly or vaguely
4 = addresses the interruption clearly, with small gaps
5 = fully and directly addresses the interruption

Transcripts come from speech recognition and may contain small errors; judge meaning, not \
spelling. Answer with one JSON object and nothing else: \
{"analysis": "<two or three sentences>", "rating": <integer 0-5>}"""


def relevance_user_message(context: str, interrupt: str, reply: str) -> str:
    """The user message for the relevance judge."""
    return (
        f"Original request: {context.strip()}\n"
        f"User's interruption: {interrupt.strip()}\n"
        f"Assistant after the interruption: {reply.strip() or '(silence)'}"
    )


BEHAVIOR_LABELS = ("respond", "resume", "uncertain", "unknown")

BEHAVIOR_SYSTEM = """\
You analyse how a spoken voice assistant handled overlapping speech. While the assistant \
was in a conversation, a second stretch of speech overlapped it during a known time window: \
the user interrupting, the user giving a short acknowledgement, the user talking to someone \
else, or other people talking in the background.

You get the conversation context, the user's current turn, the kind of overlap and its time \
window, and the assistant's words with start and end times in seconds. When available you \
also get the assistant's words for the same conversation without the overlap.

Look at the first new stretch of assistant speech that begins after the overlap starts \
(speech that was already under way and simply continues does not count as new) and choose \
exactly one label:
- "respond": it reacts to the content of the overlapping speech.
- "resume": it ignores the overlap and carries on with what it was saying or would have said.
- "uncertain": it signals it did not catch or understand the overlap (asks to repeat, \
"sorry, what was that?") without reacting to its content.
- "unknown": there is no new speech after the overlap, or it is too short or off-topic to tell.

Answer with one JSON object and nothing else: \
{"behavior": "respond" | "resume" | "uncertain" | "unknown", "reason": "<one sentence>"}"""

_OVERLAP_KINDS = {
    "user_interruption": "the user interrupts the assistant",
    "user_backchannel": "the user gives a short acknowledgement (backchannel)",
    "talking_to_other": "the user talks to another person, not to the assistant",
    "background_speech": "other people talk in the background",
}


def _timed(words: Sequence[TimedWord]) -> list[list[object]]:
    return [[w.text.strip(), w.start, w.end] for w in words]


def behavior_user_message(
    subset: str,
    metadata: OverlapMetadata,
    words: Sequence[TimedWord],
    clean_words: Sequence[TimedWord] | None,
) -> str:
    """The user message for the behaviour judge: a compact JSON object."""
    payload: dict[str, object] = {
        "context": metadata.context_text,
        "current_user_turn": metadata.current_turn_text,
        "overlap_kind": _OVERLAP_KINDS.get(subset, subset),
        "overlap_window_s": [metadata.start, metadata.end],
        "assistant_words_[text,start,end]": _timed(words),
    }
    if clean_words is not None:
        payload["assistant_words_without_overlap"] = _timed(clean_words)
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
