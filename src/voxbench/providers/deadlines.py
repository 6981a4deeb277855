"""Request deadlines cheap enough for thousands of requests in flight.

``asyncio.timeout`` schedules one timer per use: a ``TimerHandle`` pushed on the loop's heap
(ordered by a Python-level ``__lt__``), cancelled on exit and swept later. That is ~8-10 µs
of event-loop CPU per use with 256 requests in flight, and a task run at 4,000 requests a
second paid it twice a request (the engine's ``timeout_s`` around the call and the HTTP
client's own): ~6% of the loop's work per record.

``deadline`` groups deadlines by tick (``TICK`` seconds): the loop has one timer per tick that
holds a deadline, a block adds itself to its tick's set on entry and takes itself out on exit
(~1 µs in all). A deadline fires at most one tick late and never early (one under
``EXACT_BELOW`` seconds has a timer of its own and fires on time); otherwise it acts as
``asyncio.timeout``: the task is cancelled, and the block raises ``TimeoutError`` unless the
task was also cancelled from outside (then ``CancelledError`` goes on).
"""

from __future__ import annotations

import asyncio
import math
import weakref
from types import TracebackType

TICK = 0.05
"""Seconds per tick: a deadline fires within this after it passes (request timeouts are
seconds to minutes)."""
EXACT_BELOW = 1.0
"""Deadlines shorter than this get a timer of their own: a tick late would be a large part of
them (a 1 ms timeout must not wait 50 ms), and such short ones are rare."""


class _Ticks:
    """One event loop's pending deadlines, by the tick they fire at. It holds no reference
    to its loop (``_TICKS`` is keyed weakly by the loop: one would keep every loop alive)."""

    __slots__ = ("due",)

    def __init__(self) -> None:
        self.due: dict[int, set[deadline]] = {}

    def add(self, entry: deadline, when: float, loop: asyncio.AbstractEventLoop) -> int:
        """Keep ``entry`` until the first tick at or after ``when``; that tick's number."""
        tick = math.ceil(when / TICK)
        waiting = self.due.get(tick)
        if waiting is None:
            waiting = self.due[tick] = set()
            loop.call_at(tick * TICK, self._fire, tick)
        waiting.add(entry)
        return tick

    def discard(self, entry: deadline, tick: int) -> None:
        waiting = self.due.get(tick)
        if waiting is not None:
            waiting.discard(entry)

    def _fire(self, tick: int) -> None:
        loop = asyncio.get_running_loop()  # a callback of the loop it was scheduled on
        now = loop.time()
        for entry in self.due.pop(tick, ()):
            if entry.when > now:  # the loop may run a timer a clock tick early: never early
                entry.tick = self.add(entry, entry.when, loop)
            else:
                entry.expire()


_TICKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Ticks] = weakref.WeakKeyDictionary()


class deadline:  # noqa: N801 - used as ``async with deadline(s)``, like ``asyncio.timeout``
    """``async with deadline(seconds):`` cancels the block after ``seconds`` (None: never)
    and raises ``TimeoutError`` then, as ``asyncio.timeout`` does: to within ``TICK``, or on
    time under ``EXACT_BELOW`` seconds."""

    __slots__ = (
        "_cancelling",
        "_expired",
        "_task",
        "_ticks",
        "_timer",
        "seconds",
        "tick",
        "when",
    )

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self._expired = False
        self._timer: asyncio.TimerHandle | None = None

    async def __aenter__(self) -> deadline:
        if self.seconds is None:
            return self
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("deadline() must be used inside a task")
        loop = task.get_loop()
        self._task = task
        self._cancelling = task.cancelling()
        self.when = loop.time() + self.seconds
        if self.seconds < EXACT_BELOW:
            self._timer = loop.call_at(self.when, self.expire)
            return self
        ticks = _TICKS.get(loop)
        if ticks is None:
            ticks = _TICKS[loop] = _Ticks()
        self._ticks = ticks
        self.tick = ticks.add(self, self.when, loop)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self.seconds is None:
            return
        if not self._expired:
            if self._timer is not None:
                self._timer.cancel()
            else:
                self._ticks.discard(self, self.tick)
            return
        # Ours was the cancellation (no other pending): the block timed out.
        if self._task.uncancel() <= self._cancelling and exc_type is asyncio.CancelledError:
            raise TimeoutError from exc

    @property
    def expired(self) -> bool:
        """Whether the deadline passed while the block ran (``asyncio.Timeout.expired``)."""
        return self._expired

    def expire(self) -> None:
        """The deadline passed: cancel the block's task (its tick calls this)."""
        self._expired = True
        self._task.cancel()
