"""The simulated clock, seeded randomness and the trace."""

from __future__ import annotations

import random

import pytest

from kubelab.sim import Clock, LivelockError, RealTimeClock, Trace, new_rand


def test_callbacks_run_in_time_then_priority_then_insertion_order() -> None:
    clock = Clock()
    seen: list[str] = []
    clock.call_later(2, seen.append, "late")
    clock.call_later(1, seen.append, "b", priority=1)
    clock.call_later(1, seen.append, "a", priority=0)
    clock.call_later(1, seen.append, "a2", priority=0)
    clock.run()
    assert seen == ["a", "a2", "b", "late"]
    assert clock.now == 2


def test_cancel_and_call_at_in_the_past_runs_now() -> None:
    clock = Clock(start=10)
    seen: list[str] = []
    timer = clock.call_later(1, seen.append, "cancelled")
    clock.cancel(timer)
    clock.call_at(5, seen.append, "past")
    assert clock.peek() == 10
    clock.run()
    assert seen == ["past"] and clock.now == 10


def test_run_until_stops_at_the_boundary_and_advances_time() -> None:
    clock = Clock()
    seen: list[float] = []
    for t in (1, 2, 3):
        clock.call_at(t, lambda: seen.append(clock.now))
    clock.run(until=2)
    assert seen == [1, 2] and clock.now == 2
    clock.run(until=2.5)
    assert clock.now == 2.5 and seen == [1, 2]
    with pytest.raises(ValueError, match="in the past"):
        clock.run(until=1)


def test_bad_delays_are_refused() -> None:
    clock = Clock()
    with pytest.raises(ValueError, match="delay must be >= 0"):
        clock.call_later(-1, print)
    with pytest.raises(ValueError, match="NaN"):
        clock.call_at(float("nan"), print)


def test_run_until_idle_ignores_background_loops_and_catches_livelock() -> None:
    clock = Clock()
    ticks: list[float] = []

    def heartbeat() -> None:
        ticks.append(clock.now)
        clock.call_later(10, heartbeat, background=True)

    clock.call_later(10, heartbeat, background=True)
    clock.call_later(1, lambda: None)
    assert clock.run_until_idle() == 1
    assert ticks == []  # the background loop did not keep it busy

    def hot_loop() -> None:
        clock.call_later(0, hot_loop)

    clock.call_later(0, hot_loop)
    with pytest.raises(LivelockError, match="still busy after 50 steps"):
        clock.run_until_idle(max_steps=50)


def test_a_clock_that_would_spin_at_one_instant_raises_and_names_the_callback() -> None:
    clock = Clock(start=100.0)
    spins: list[float] = []

    def rearm() -> None:  # 1e-15 s does not move a float clock at t = 100 s
        spins.append(clock.now)
        clock.call_later(1e-15, rearm, background=True)
    clock.steps_per_instant = 1000
    clock.call_later(0.0, rearm)
    with pytest.raises(LivelockError, match=r"1000 callbacks ran at t=100.0s and "
                       r"\S*test_sim.test_a_clock\w*.<locals>.rearm is due"):
        clock.run(until=200.0)
    assert len(spins) == 1000 and clock.now == 100.0
    assert clock.pending() == 1          # the callback stays: the clock refuses, again
    with pytest.raises(LivelockError):
        clock.step()


def test_many_callbacks_at_one_instant_are_fine_when_time_then_moves() -> None:
    clock = Clock()
    clock.steps_per_instant = 10
    ran: list[float] = []
    for when in (1.0, 2.0):
        for _ in range(10):              # exactly the budget at each instant
            clock.call_at(when, lambda: ran.append(clock.now))
    clock.run(until=5.0)                 # run(until) moving time resets the count as well
    for _ in range(10):
        clock.call_later(0.0, lambda: ran.append(clock.now))
    clock.run(until=6.0)
    assert ran == [1.0] * 10 + [2.0] * 10 + [5.0] * 10


def test_real_time_clock_waits_for_the_wall_clock_at_its_speed() -> None:
    real = [100.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        real[0] += seconds

    clock = RealTimeClock(speed=10, sleep=sleep, monotonic=lambda: real[0])
    order: list[int] = []
    clock.call_later(5, order.append, 1)
    clock.call_later(20, order.append, 2)
    clock.run()
    assert order == [1, 2]
    assert slept == pytest.approx([0.5, 1.5])  # 5 s then 15 more virtual seconds at 10x
    with pytest.raises(ValueError):
        RealTimeClock(speed=0)


def test_new_rand_is_private_and_seeded() -> None:
    a, b = new_rand(7), new_rand(7)
    state = random.getstate()
    assert [a.random() for _ in range(5)] == [b.random() for _ in range(5)]
    assert random.getstate() == state  # the global generator was not touched
    with pytest.raises(TypeError):
        new_rand("7")  # type: ignore[arg-type]


def test_trace_records_filter_and_render_stably() -> None:
    clock = Clock()
    trace = Trace(lambda: clock.now)
    trace.record("apiserver", "create", "pods/default/web-1", user="admin", code=201)
    clock.run(until=1.5)
    trace.record("scheduler/main", "bind", "pods/default/web-1", node="node-2")
    trace.record("faults", "crash", "", reason="button pressed")
    assert [r.verb for r in trace.filter(component="scheduler")] == ["bind"]
    assert len(trace.filter(object_prefix="pods/")) == 2
    assert trace.text().splitlines() == [
        "     0.000  apiserver              create         pods/default/web-1  user=admin code=201",
        "     1.500  scheduler/main         bind           pods/default/web-1  node=node-2",
        "     1.500  faults                 crash            reason='button pressed'",
    ]


def test_trace_subscribers_and_switch() -> None:
    trace = Trace()
    seen: list[str] = []
    unsubscribe = trace.subscribe(lambda r: seen.append(r.verb))
    trace.record("a", "one")
    unsubscribe()
    trace.record("a", "two")
    trace.enabled = False
    assert trace.record("a", "three") is None
    assert seen == ["one"] and len(trace) == 2


def _seeded_story(seed: int) -> str:
    """A small simulation whose order depends on the seed: the trace must not depend on anything else."""
    clock = Clock()
    rand = new_rand(seed)
    trace = Trace(lambda: clock.now)

    def worker(name: str, left: int) -> None:
        trace.record(name, "tick", f"jobs/{left}", jitter=round(rand.random(), 6))
        if left:
            clock.call_later(rand.uniform(0, 2), worker, name, left - 1)

    for i in range(4):
        clock.call_later(rand.random(), worker, f"worker-{i}", 5)
    clock.run()
    return trace.text()


def test_same_seed_gives_identical_trace_text() -> None:
    assert _seeded_story(3) == _seeded_story(3)
    assert _seeded_story(3) != _seeded_story(4)
