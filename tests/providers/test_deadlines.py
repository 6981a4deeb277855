"""``providers.deadlines.deadline``: ``asyncio.timeout``'s behaviour, one timer per tick."""

from __future__ import annotations

import asyncio

import pytest

from voxbench.providers import deadlines
from voxbench.providers.deadlines import TICK, deadline


@pytest.fixture(autouse=True, params=["ticks", "own timers"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test twice: deadlines grouped by tick, and each on a timer of its own (what a
    deadline under ``EXACT_BELOW`` gets)."""
    monkeypatch.setattr(deadlines, "EXACT_BELOW", 0.0 if request.param == "ticks" else 1e9)
    return str(request.param)


def _pending(loop: asyncio.AbstractEventLoop) -> int:
    """Deadlines still kept for ``loop`` (none once every block has exited)."""
    ticks = deadlines._TICKS.get(loop)
    return 0 if ticks is None else sum(len(s) for s in ticks.due.values())


async def test_a_block_past_its_deadline_raises_timeout_error_never_early() -> None:
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(TimeoutError):
        async with deadline(0.02) as limit:
            await asyncio.sleep(30)
    assert loop.time() - started >= 0.02
    assert limit.expired
    assert _pending(loop) == 0


async def test_a_block_done_in_time_is_left_alone_afterwards() -> None:
    async with deadline(TICK) as limit:
        await asyncio.sleep(0)
        value = 7
    assert value == 7 and not limit.expired
    await asyncio.sleep(3 * TICK)  # its tick passes: nothing cancels the task now
    assert _pending(asyncio.get_running_loop()) == 0


async def test_a_short_deadline_fires_on_time_not_a_tick_late(mode: str) -> None:
    """A 1 ms timeout must not wait for the next 50 ms tick (a request answered in 20 ms
    then would not time out)."""
    if mode == "ticks":
        pytest.skip("on its own timer only")
    deadlines.EXACT_BELOW = 1.0  # the default: what a short timeout gets
    with pytest.raises(TimeoutError):
        async with deadline(0.001):
            await asyncio.sleep(TICK / 2)


def test_a_finished_loop_is_not_kept_alive() -> None:
    """The per-loop deadlines are keyed weakly by the loop: a run's loop is freed after it."""
    import gc

    async def run() -> None:
        async with deadline(30):
            await asyncio.sleep(0)

    before = len(deadlines._TICKS)
    for _ in range(3):
        asyncio.run(run())
    gc.collect()
    assert len(deadlines._TICKS) <= before


async def test_none_never_expires() -> None:
    async with deadline(None) as limit:
        await asyncio.sleep(2 * TICK)
    assert not limit.expired


async def test_a_deadline_already_past_expires_at_the_next_wait() -> None:
    for seconds in (0.0, -1.0):
        with pytest.raises(TimeoutError):
            async with deadline(seconds):
                await asyncio.sleep(30)


async def test_a_cancellation_from_outside_stays_a_cancellation() -> None:
    entered = asyncio.Event()

    async def body() -> None:
        async with deadline(30):
            entered.set()
            await asyncio.sleep(30)

    task = asyncio.create_task(body())
    await entered.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert _pending(asyncio.get_running_loop()) == 0


async def test_an_error_in_the_block_goes_through_unchanged() -> None:
    with pytest.raises(KeyError, match="x"):
        async with deadline(30):
            raise KeyError("x")
    assert _pending(asyncio.get_running_loop()) == 0


async def test_the_inner_of_two_deadlines_fires_and_the_outer_goes_on() -> None:
    async with deadline(30) as outer:
        with pytest.raises(TimeoutError):
            async with deadline(0.01):
                await asyncio.sleep(30)
        await asyncio.sleep(0)  # not cancelled: the outer block carries on
    assert not outer.expired


async def test_many_blocks_each_keep_their_own_deadline() -> None:
    """Hundreds of deadlines sharing ticks: exactly the blocks that outlive theirs time out."""

    async def one(limit: float, takes: float) -> str:
        try:
            async with deadline(limit):
                await asyncio.sleep(takes)
        except TimeoutError:
            return "timed out"
        return "done"

    cases = [(0.05, 30.0) if i % 3 == 0 else (30.0, 0.001 * (i % 7)) for i in range(300)]
    results = await asyncio.gather(*(one(limit, takes) for limit, takes in cases))
    assert results == ["timed out" if i % 3 == 0 else "done" for i in range(300)]
    assert _pending(asyncio.get_running_loop()) == 0


async def test_outside_a_task_it_says_so() -> None:
    async def enter() -> None:
        async with deadline(1):
            pass

    raised: list[BaseException] = []

    def step() -> None:  # a loop callback: a running loop, but no task
        coro = enter()
        try:
            coro.send(None)
        except RuntimeError as exc:
            raised.append(exc)
        coro.close()

    asyncio.get_running_loop().call_soon(step)
    await asyncio.sleep(0.01)
    assert len(raised) == 1 and "inside a task" in str(raised[0])
