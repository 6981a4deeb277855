"""Size and composition of a benchmark (``voxbench bench stats``)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from voxbench.core.benchmark import Benchmark


def estimate_tokens(text: str) -> int:
    """Token count estimate for English prose (≈ 4 characters a token, as BPE tokenizers give)."""
    return round(len(text) / 4)


@dataclass
class BenchmarkStats:
    """What a benchmark holds."""

    turns: int
    tools: int
    expected_calls: int
    tool_turns: int
    forbidden_calls: int
    facts: int
    kb_tokens: int
    kb_lines: int
    prompt_tokens: int
    categories: dict[str, int] = field(default_factory=dict)
    dimensions: dict[str, int] = field(default_factory=dict)
    audio_turns: int = 0


def benchmark_stats(benchmark: Benchmark) -> BenchmarkStats:
    """Count turns per category, tools, expected calls and knowledge-base tokens."""
    categories: Counter[str] = Counter()
    dimensions: Counter[str] = Counter()
    for turn in benchmark.turns:
        categories.update(set(turn.categories))
        dimensions.update(benchmark.dimensions.for_turn(turn))
    return BenchmarkStats(
        turns=len(benchmark.turns),
        tools=len(benchmark.tools),
        expected_calls=sum(len(t.expect.required_calls) for t in benchmark.turns),
        tool_turns=sum(bool(t.expect.required_calls) for t in benchmark.turns),
        forbidden_calls=sum(len(t.expect.forbidden_calls) for t in benchmark.turns),
        facts=sum(
            len(t.expect.must_mention) + len(t.expect.must_not_claim) for t in benchmark.turns
        ),
        kb_tokens=estimate_tokens(benchmark.knowledge_base),
        kb_lines=len(benchmark.knowledge_base.splitlines()),
        prompt_tokens=estimate_tokens(benchmark.render_system_prompt()),
        categories=dict(categories.most_common()),
        dimensions=dict(dimensions.most_common()),
        audio_turns=sum(t.audio is not None for t in benchmark.turns),
    )
