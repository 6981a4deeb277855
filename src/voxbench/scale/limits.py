"""What an executor is allowed: cells in flight, per provider, and request pacing."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from voxbench.providers.ratelimit import RateLimit
from voxbench.scale.cells import Cell, CellResult

CellCallback = Callable[[Cell, CellResult], None]


@dataclass(frozen=True)
class Limits:
    """How much runs at once."""

    max_concurrency: int = 4
    per_provider: Mapping[str, int] = field(default_factory=dict)
    """Provider (``openai``, ``local``…) → cells of that provider in flight at most."""
    rate_limits: Mapping[str, RateLimit] = field(default_factory=dict)
    """Endpoint origin → requests per second and burst, per key."""

    def slots(self, provider: str) -> int:
        """Cells of ``provider`` allowed in flight."""
        return min(self.max_concurrency, self.per_provider.get(provider, self.max_concurrency))
