"""The seeded fault-schedule soak (issues 15 and 28): seeds, each on one of three cluster
families (one replica of everything; an HA control plane; a simulated Raft etcd), with
crashes, node deaths, watch faults, a slow store, a broken registry, leader crashes, slow API
servers and lost etcd quorums during a rollout and a scale, with traffic to a Service, then
healing and a rollout with no fault. benchmarks/soak.py holds the scenario generator and the
invariants; `make soak SEEDS=1000` runs the long version and prints a table.

`make test` runs three seeds of each family (a few seconds each); the hundred seeds this file
once ran in `make test` (several minutes on one xdist worker) are the first hundred of
`make soak`, which checks the same of every seed, or run here with KUBELAB_SOAK=1.

Each invariant has a test below that breaks it on purpose (a bound, a rule, a hook) and checks
that the soak complains: a soak that cannot fail proves nothing."""

from __future__ import annotations

import os

import pytest

from benchmarks import soak
from benchmarks.soak import FAMILIES, family_of, scenario
from kubelab.store.raft import rules

SEEDS = range(100)
# Run twice, the same seed, the same story: the first seed of each family (make soak replays
# these and every tenth seed).
REPLAYED = sorted({family_of(s): s for s in reversed(SEEDS)}.values())
PER_FAMILY = 3  # seeds of each family in `make test`
RUN = SEEDS if os.environ.get("KUBELAB_SOAK") else sorted(
    s for f in FAMILIES for s in [s for s in SEEDS if family_of(s) == f][:PER_FAMILY])


@pytest.mark.parametrize("seed", RUN)
def test_a_seeded_fault_schedule_keeps_every_invariant(seed: int) -> None:
    outcome = scenario(seed)
    assert outcome.violations == [], "\n".join([*outcome.violations, "plan:", *outcome.plan])
    assert outcome.converged_after is not None
    assert outcome.requests > 0  # the Service had traffic all along
    if seed in REPLAYED:  # byte for byte, traffic included
        assert scenario(seed).trace_digest == outcome.trace_digest


def test_every_family_is_drawn_and_replayed() -> None:
    assert sorted(family_of(s) for s in REPLAYED) == sorted(FAMILIES)
    assert set(REPLAYED) <= set(RUN) and sorted({family_of(s) for s in RUN}) == sorted(FAMILIES)
    assert set(REPLAYED) == soak.REPLAYED_IN_SOAK  # make soak replays them too
    drawn = [family_of(s) for s in SEEDS]
    assert all(drawn.count(f) >= 20 for f in FAMILIES), drawn


def first_seed(family: str) -> int:
    return next(s for s in SEEDS if family_of(s) == family)


def test_the_soak_sees_a_violation_when_there_is_one(monkeypatch: pytest.MonkeyPatch) -> None:
    # A bound of zero pods: every check must then complain, or the soak checks nothing.
    monkeypatch.setattr("benchmarks.soak._resolve", lambda value, replicas, round_up: -replicas)
    outcome = scenario(0)
    assert outcome.violations and "active pods >" in outcome.violations[0]


def test_the_soak_sees_a_component_without_exactly_one_leader(monkeypatch: pytest.MonkeyPatch) -> None:
    # Two leaders expected where the cluster (rightly) has one: the end check must say so.
    monkeypatch.setattr(soak, "LEADERS_PER_COMPONENT", 2)
    outcome = scenario(first_seed("ha"))
    assert any("1 replicas of scheduler lead (scheduler-" in v for v in outcome.violations), \
        outcome.violations
    assert any("1 replicas of controller-manager lead" in v for v in outcome.violations)


def test_the_soak_sees_two_leaders_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every replica believes it leads (its elector is ignored): the check during the run must
    # see two schedulers leading at one instant.
    monkeypatch.setattr(soak._Soak, "leading", lambda self, component: replica_names(self, component))
    outcome = scenario(first_seed("ha"))
    assert any("2 replicas of scheduler lead at once: scheduler-1, scheduler-2" in v
               for v in outcome.violations), outcome.violations


def replica_names(s: soak._Soak, component: str) -> list[str]:
    return soak.replica_names(component, s.c.replicas.get(component, 1))


class VotesForAnyone:
    """Exercise 7.2's classic mistake: a vote for every candidate that asks."""

    request_vote = staticmethod(lambda state, request: request.term >= state.term)
    commit_index = staticmethod(rules.commit_index)


def test_the_soak_sees_raft_break_its_safety(monkeypatch: pytest.MonkeyPatch) -> None:
    # etcd members that vote for anyone: two leaders in one term, which the soak must report.
    monkeypatch.setattr(soak, "RAFT_RULES", VotesForAnyone)
    found = []
    for seed in [s for s in SEEDS if family_of(s) == "raft"][:8]:
        found += [v for v in scenario(seed).violations if "election safety" in v]
        if found:
            break
    assert found and "were both leader of term" in found[0]


def test_the_soak_sees_a_rollout_drop_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    # Neither a readiness probe nor a preStop hook: the rolling update after healing sends
    # requests to pods still starting and to pods already gone, and the soak must count them.
    monkeypatch.setattr(soak, "PROBE", False)
    monkeypatch.setattr(soak, "PRE_STOP", 0)
    outcome = scenario(first_seed("single"))
    assert any("dropped during the rolling update after healing" in v for v in outcome.violations), \
        outcome.violations
