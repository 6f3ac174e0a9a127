"""The real-time clock's hook for clusters on a real etcd: how far behind the wall clock it is,
so Cluster.run resyncs after a pause (a notebook between cells) and not while paced."""

from __future__ import annotations

import pytest

from kubelab.sim import RealTimeClock


def test_behind_says_how_far_the_virtual_time_lags_the_wall_clock_and_resync_forgets_it() -> None:
    real = [100.0]

    def sleep(seconds: float) -> None:
        real[0] += seconds

    clock = RealTimeClock(speed=2, sleep=sleep, monotonic=lambda: real[0])
    assert clock.behind() == 0.0  # never waited: nothing to lag
    clock.call_later(4, lambda: None)
    clock.run()
    assert clock.now == 4.0 and real[0] == pytest.approx(102.0)
    assert clock.behind() == pytest.approx(0.0)
    real[0] += 30  # the learner reads for half a minute
    assert clock.behind() == pytest.approx(30.0)
    clock.run(until=5.0)  # caught up in a burst: no sleep
    assert real[0] == pytest.approx(132.0) and clock.behind() == pytest.approx(29.5)
    clock.resync()
    assert clock.behind() == 0.0
    clock.run(until=6.0)  # from the wall clock's now: waits 0.5 real s at speed 2
    assert real[0] == pytest.approx(132.5) and clock.behind() == pytest.approx(0.0)
