"""The run clock: real, or virtual time that moves only when waited on."""

from __future__ import annotations

import time

from voxbench.core.clock import Clock, VirtualClock


async def test_virtual_time_stands_still_while_work_is_done_and_jumps_over_waits() -> None:
    real = Clock(start_at=10.0)
    clock = VirtualClock(start_at=2.0, wall=real)
    before = clock.wall()
    until = time.perf_counter() + 0.02
    while time.perf_counter() < until:  # work between two waits (a target computing) ...
        pass
    assert clock.now() == 2.0  # ... takes no virtual time
    assert clock.wall() > before  # ... but the wall clock saw it
    await clock.sleep(1.5)
    assert clock.now() == 3.5
    await clock.sleep_until(4.25)
    assert clock.now() == 4.25
    await clock.sleep(-1.0)  # a time already passed: no wait, no step back
    assert clock.now() == 4.25
    assert clock.virtual and not real.virtual
    assert clock.wall() > 10.0  # its wall time is the run's real clock


def test_a_real_clock_reads_its_wall_time() -> None:
    clock = Clock(start_at=5.0)
    first = clock.now()
    assert 5.0 <= first <= clock.wall() <= clock.now()
