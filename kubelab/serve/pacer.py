"""Simulated time that follows the wall clock: the one bridge between the two.

kubelab's components run on a Clock (kubelab/sim/clock.py) that only moves when it is told
to. At the edge, where real clients and real servers live on real time, a pacer task on the
asyncio loop tells it to: every PACE_INTERVAL real seconds it advances the clock by the real
time that passed (times `speed`), running whatever fell due. `kubelab serve` paces a served
cluster's clock this way; kubelab.serve.connect paces the clock of informers and controllers
that talk to a real server.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["PACE_INTERVAL", "pace"]

PACE_INTERVAL = 0.02  # real seconds between two advances of the clock


async def pace(advance: Callable[[float], None], speed: float = 1.0,
               interval: float = PACE_INTERVAL) -> None:
    """Call advance(virtual seconds) with the wall time elapsed since the last call, forever
    (until the task is cancelled). advance is e.g. Cluster.run or a Clock's run."""
    if speed <= 0:
        raise ValueError(f"speed must be > 0, got {speed}")
    loop = asyncio.get_running_loop()
    last = loop.time()
    while True:
        await asyncio.sleep(interval)
        now = loop.time()
        advance((now - last) * speed)
        last = now
