"""The take-over rule (TOR) and response latencies, from time-aligned ASR words.

The public rule: a sample is a take-over when the model said at least one word and either
more than 3 words or words spanning at least 1 s (first word start to last word end).
``fdb-v1`` applies it to every word of the output; ``voxbench`` mode applies it to the
words inside the annotated window only (see ``words_in_window``).
"""

from __future__ import annotations

from collections.abc import Sequence

from voxbench.fullduplex.annotations import TimedWord

TURN_DURATION_THRESHOLD_S = 1.0
TURN_NUM_WORDS_THRESHOLD = 3
JOIN_GAP_S = 0.5
"""Words closer than this belong to one utterance (the v1.5 timing script's model merge gap)."""


def take_over(words: Sequence[TimedWord]) -> int:
    """1 when ``words`` amount to taking the turn, else 0 (the public rule, exactly).

    A null last end falls back to the last start, as the public pause script does; a null
    first start counts as 0 s so a broken chunk never hides a long answer.
    """
    if not words:
        return 0
    first = words[0].start if words[0].start is not None else 0.0
    last = words[-1].end if words[-1].end is not None else words[-1].start
    span = (last if last is not None else first) - first
    if span < TURN_DURATION_THRESHOLD_S and len(words) <= TURN_NUM_WORDS_THRESHOLD:
        return 0
    return 1


def words_in_window(
    words: Sequence[TimedWord], cue: float, *, join_gap_s: float = JOIN_GAP_S
) -> list[TimedWord]:
    """The words of the speech that is live at ``cue`` or comes after it.

    voxbench mode uses this to count only speech that can be a reaction to the annotated
    event (pause onset, end of the user's turn, end of the interrupt): an utterance finished
    before the cue belongs to an earlier turn. The utterance still going at the cue is kept
    from its first word (words less than ``join_gap_s`` apart are one utterance), so talking
    over the user shows as a negative latency instead of vanishing.
    """
    ends = [(w, end) for w in words if (end := w.end if w.end is not None else w.start) is not None]
    timed = [w for w, _ in ends]
    first = next((i for i, (_, end) in enumerate(ends) if end > cue), None)
    if first is None:
        return []
    while first > 0:
        prev, cur = timed[first - 1], timed[first]
        prev_end = prev.end if prev.end is not None else prev.start
        if cur.start is None or prev_end is None or cur.start - prev_end > join_gap_s:
            break
        first -= 1
    return timed[first:]


def first_start(words: Sequence[TimedWord]) -> float | None:
    """Start of the first word that has one."""
    for w in words:
        if w.start is not None:
            return w.start
    return None


def latency_fdb_v1(words: Sequence[TimedWord], cue: float) -> float | None:
    """The public latency: first word start minus ``cue``, clamped at 0; None when no words."""
    if not words or words[0].start is None:
        return None
    return max(0.0, words[0].start - cue)


def latency_signed(words: Sequence[TimedWord], cue: float) -> float | None:
    """First word start minus ``cue``, unclamped: negative means the model talked over."""
    start = first_start(words)
    return None if start is None else start - cue
