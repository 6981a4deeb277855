"""One clock for every timestamp.

Timestamps are seconds (float) since the clock's origin, read from a monotonic source so
that wall-clock jumps never bend a latency. The runner owns one clock per run and stamps
every event with it; nothing else reads time on its own.

A run's clock is real (``Clock``) or virtual (``VirtualClock``). Virtual time moves only when
it is waited on: work done between two waits takes none of it, so what an in-process target
computes lands on its timeline (a conversation's recording, a full-duplex output) the same on
a fast, slow or busy host. Its ``wall()`` still reads the real time, so how long the host
took is recorded beside it.
"""

from __future__ import annotations

import asyncio
import time


class Clock:
    """Monotonic seconds since creation (``perf_counter_ns`` based).

    ``start_at`` lets a resumed run continue its timeline where the stopped one ended.
    """

    virtual = False

    def __init__(self, start_at: float = 0.0) -> None:
        self._origin_ns = time.perf_counter_ns()
        self._start_at = start_at

    def now(self) -> float:
        """Seconds since the origin."""
        return self.wall()

    def wall(self) -> float:
        """Real seconds since the origin (the same as ``now`` on a real clock)."""
        return self._start_at + (time.perf_counter_ns() - self._origin_ns) / 1e9

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` on this clock."""
        if seconds > 0:
            await asyncio.sleep(seconds)

    def sleep_until(self, t: float) -> asyncio.Future[None] | asyncio.Task[None]:
        """Wait until the clock reads ``t``."""
        return asyncio.ensure_future(self.sleep(t - self.now()))


class VirtualClock(Clock):
    """Virtual time that moves only when waited on: work done between waits takes none.

    A wait advances it at once (a run goes faster than real time); while a target computes,
    nobody waits on it, so it stands still. ``wall()`` reads ``wall`` (the real clock it
    replaces, so wall stamps go on from it), or its own real time from ``start_at``.
    """

    virtual = True

    def __init__(self, start_at: float = 0.0, wall: Clock | None = None) -> None:
        super().__init__(start_at)
        self._t = start_at
        self._wall = wall

    def now(self) -> float:
        return self._t

    def wall(self) -> float:
        return self._wall.wall() if self._wall is not None else super().wall()

    async def sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._t += seconds
        await asyncio.sleep(0)
