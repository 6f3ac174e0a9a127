"""The seeded fault-schedule soak (issue 15): a hundred seeds of crashes, node deaths, watch
faults, a slow store and a broken registry during a rollout and a scale, then healing.
benchmarks/soak.py holds the scenario generator and the invariants; `make soak SEEDS=1000`
runs the long version and prints a table."""

from __future__ import annotations

import pytest

from benchmarks.soak import scenario


@pytest.mark.parametrize("seed", range(100))
def test_a_seeded_fault_schedule_keeps_every_invariant(seed: int) -> None:
    outcome = scenario(seed)
    assert outcome.violations == [], "\n".join(outcome.plan)
    assert outcome.converged_after is not None
    if seed % 10 == 0:  # the same seed, the same story, byte for byte
        assert scenario(seed).trace_digest == outcome.trace_digest


def test_the_soak_sees_a_violation_when_there_is_one(monkeypatch: pytest.MonkeyPatch) -> None:
    # A bound of zero pods: every check must then complain, or the soak checks nothing.
    monkeypatch.setattr("benchmarks.soak._resolve", lambda value, replicas, round_up: -replicas)
    outcome = scenario(0)
    assert outcome.violations and "active pods >" in outcome.violations[0]
