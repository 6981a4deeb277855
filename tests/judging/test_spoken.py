"""Facts said aloud are recognised in whatever form the ASR writes them."""

from __future__ import annotations

import pytest

from voxbench.core.benchmark import FactPattern
from voxbench.judging.spoken import fact_holds


@pytest.mark.parametrize(
    ("alternatives", "heard", "holds"),
    [
        (["8:30", "eight thirty"], "The doors open at 8, 30 in the morning", True),
        (["8:30", "eight thirty"], "Doors open at 9:30", False),
        (["\\$?\\b90\\b", "ninety"], "that comes to ninety dollars", True),
        (["\\$?\\b90\\b", "ninety"], "that comes to nineteen dollars", False),
        (["\\$1,299"], "It is twelve hundred ninety nine dollars", False),
        (["\\$1,299"], "It costs 1299 dollars", True),
        (["lighthouse lobby"], "in the Lighthouse-Lobby.", True),
        (["turn[- ]taking"], "Evaluating Turn Taking", True),
    ],
)
def test_spoken_forms(alternatives: list[str], heard: str, holds: bool) -> None:
    assert fact_holds(FactPattern.model_validate(alternatives), heard) is holds
