"""Scoring with a judge model served by the fake OpenAI-compatible server."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from voxbench.fullduplex.judge import ChatJudge
from voxbench.fullduplex.scoring import ScoreReport, score_directory
from voxbench.testing.openai_http import FakeOpenAIServer
from voxbench.testing.scripts import Reply, Script, ScriptMessage

JUDGE = "openai-compatible/judge-model"


class JudgeScript(Script):
    """A judge model: rates interruptions 5, labels every overlap 'resume'."""

    def reply(self, conversation: Sequence[ScriptMessage]) -> Reply:
        text = conversation[-1].text
        if "User's interruption" in text:
            return Reply(text='{"analysis": "It talks about movies.", "rating": 5}')
        return Reply(text='Sure. {"behavior": "resume", "reason": "It carries on with the story."}')


def score_with_fake_judge(root: Path, mode: str, target: str | None = "test/model") -> ScoreReport:
    """``score_directory`` in a worker thread while the fake judge serves on this loop."""

    async def go() -> ScoreReport:
        async with FakeOpenAIServer(JudgeScript()) as server:
            judge = ChatJudge(JUDGE, base_url=server.url)
            try:
                return await asyncio.to_thread(
                    score_directory, root, mode=mode, judge=judge, target=target
                )
            finally:
                judge.close()

    return asyncio.run(go())
