"""A Ray the executor starts for itself (no ``--ray-address``): its workers run at the
driver's priority, as the local executor's pool processes do, and it is stopped afterwards."""

from __future__ import annotations

import os

import pytest

ray = pytest.importorskip("ray")

pytestmark = pytest.mark.slow


def test_workers_of_a_ray_started_here_run_at_our_priority():
    if ray.is_initialized():
        pytest.skip("a Ray is already up: the executor would join it, not start its own")
    from voxbench.scale.ray_executor import RayExecutor

    def niceness() -> int:
        return os.nice(0)

    # Ray's default is nice 15: any other process on the machine would take their cores.
    assert RayExecutor(num_cpus=1).map_shards(niceness, [()], cpus=1) == [os.nice(0)]
    assert not ray.is_initialized()
