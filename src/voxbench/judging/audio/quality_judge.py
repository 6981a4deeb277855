"""The ``audio_quality`` dimension: DNSMOS P.835 of the agent's audio, per agent turn.

``voxbench judge RUN --audio-quality`` scores each agent turn's audio on the agent channel
of ``conversation.wav`` (the same clips the audio rubric judge hears under ``scope:
agent``) offline with DNSMOS P.835 (``audio.dnsmos``): a turn passes when its OVRL reaches
``PASS_AT`` (3, "fair" on the P.835 scale); SIG, BAK and OVRL are in the judgment's details
and the status line gives their means. No model is called and nothing leaves the machine.

It measures noise and distortion in what the agent sent — a noisy TTS, a codec, clipping —
not accent, naturalness of prosody or whether the words were right. A turn too short to
score (under ``audio.dnsmos.MIN_SECONDS``) is undecided.
"""

from __future__ import annotations

import asyncio
import statistics

from voxbench.audio.dnsmos import QualityScore, dnsmos
from voxbench.core.records import Judgment
from voxbench.judging.audio.segments import turn_clips
from voxbench.judging.base import JudgeContext, JudgeFindings

NAME = "audio-quality"
VERSION = "dnsmos-p835/1"
DIMENSION = "audio_quality"
PASS_AT = 3.0
"""The lowest passing OVRL (P.835: 3 is "fair")."""


def quality_judgment(turn: str, score: QualityScore | None) -> Judgment:
    """The ``audio_quality`` judgment of one turn's agent audio."""
    if score is None:
        return Judgment(turn=turn, dimension=DIMENSION, passed=None, judge=NAME,
                        judge_version=VERSION, judge_failed=True,
                        reasoning="undecided: the agent's audio is too short to score")  # fmt: skip
    return Judgment(
        turn=turn,
        dimension=DIMENSION,
        passed=score.ovrl >= PASS_AT,
        reasoning=(
            f"DNSMOS P.835 OVRL {score.ovrl:.2f} (passes at {PASS_AT:g}), SIG {score.sig:.2f}, "
            f"BAK {score.bak:.2f}"
        ),
        judge=NAME,
        judge_version=VERSION,
        details=score.as_dict(),
    )


class AudioQualityRunJudge:
    """The ``RunJudge`` for ``--audio-quality``."""

    name = NAME
    version = VERSION

    def skip_reason(self, context: JudgeContext) -> str | None:
        if not context.options.audio_quality:
            return "not asked (no --audio-quality)"
        if context.run_dir is None or not context.run_dir.has_recording:
            return "not judged: the run has no conversation.wav (a text run)"
        return None

    async def judge(self, context: JudgeContext) -> JudgeFindings:
        assert context.run_dir is not None
        clips, missing = turn_clips(context.run_dir, context.selected_records, "agent")
        scores = await asyncio.to_thread(lambda: [dnsmos(c.audio) for c in clips])
        judgments = [quality_judgment(c.label, s) for c, s in zip(clips, scores, strict=True)]
        decided = [s for s in scores if s is not None]
        status = f"DNSMOS P.835 on {len(clips)} agent turns"
        if decided:
            status += ": mean " + ", ".join(
                f"{k.upper()} {statistics.fmean(getattr(s, k) for s in decided):.2f}"
                for k in ("ovrl", "sig", "bak")
            )
        if missing:
            status += f"; {len(missing)} turns without agent audio not scored"
        return JudgeFindings(
            judgments=judgments, status=status, labels=[f"{NAME}@{VERSION}"], details=scores
        )
