"""One clock for every timestamp.

Timestamps are seconds (float) since the clock's origin, read from a monotonic source so
that wall-clock jumps never bend a latency. The runner owns one clock per run and stamps
every event with it; nothing else reads time on its own.
"""

from __future__ import annotations

import asyncio
import time


class Clock:
    """Monotonic seconds since creation (``perf_counter_ns`` based).

    ``start_at`` lets a resumed run continue its timeline where the stopped one ended.
    """

    def __init__(self, start_at: float = 0.0) -> None:
        self._origin_ns = time.perf_counter_ns()
        self._start_at = start_at

    def now(self) -> float:
        """Seconds since the origin."""
        return self._start_at + (time.perf_counter_ns() - self._origin_ns) / 1e9

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` on this clock."""
        if seconds > 0:
            await asyncio.sleep(seconds)

    def sleep_until(self, t: float) -> asyncio.Future[None] | asyncio.Task[None]:
        """Wait until the clock reads ``t``."""
        return asyncio.ensure_future(self.sleep(t - self.now()))


class VirtualClock(Clock):
    """A clock that jumps over waits instead of sleeping.

    In-process targets (oracle, baseline, local cascade) run faster than real time with it:
    a wait advances the virtual time at once, while work done between waits still counts its
    real duration, so every reported latency is real processing time.
    """

    def __init__(self, start_at: float = 0.0) -> None:
        super().__init__(start_at)
        self._skipped = 0.0

    def now(self) -> float:
        return super().now() + self._skipped

    async def sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._skipped += seconds
        await asyncio.sleep(0)
