"""The SettlementJob sample operator under seeded faults: crashes mid-reconcile, a deleted
child Job, dropped watch events, and deletion while the outside ledger is down."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab.api.meta import parse_time
from kubelab.client.operator import Operator
from kubelab.cluster import Cluster
from kubelab.cluster.ledger import Ledger, ledger_for
from kubelab.samples.settlement_job import (
    FINALIZER,
    SETTLEMENT_JOB_CRD,
    settlement_job,
    settlement_operator,
)

Object = dict[str, Any]


def setup(seed: int = 0) -> tuple[Cluster, Ledger, Operator]:
    c = Cluster(nodes=2, seed=seed)
    c.apply(SETTLEMENT_JOB_CRD)
    ledger = ledger_for(c)
    op = c.add_component("settlement-operator", lambda ctx: settlement_operator(ctx, ledger))
    c.run(1)
    return c, ledger, op


def status(c: Cluster, name: str = "eod") -> Object:
    return c.get("settlementjobs", name).get("status") or {}


def test_a_night_that_succeeds() -> None:
    c, ledger, _ = setup()
    c.apply(settlement_job("eod", behavior="exit=20"))
    c.run_until(lambda: status(c).get("phase") == "Succeeded", timeout=120)
    sj = c.get("settlementjobs", "eod")
    assert sj["metadata"]["finalizers"] == [FINALIZER]
    ready = sj["status"]["conditions"][0]
    assert (ready["type"], ready["status"], ready["reason"], ready["observedGeneration"]) == \
        ("Ready", "True", "Settled", 1)
    assert ledger.holder_of("equities") == sj["metadata"]["uid"]
    (job,) = c.get("jobs")
    assert job["metadata"]["ownerReferences"][0]["kind"] == "SettlementJob"


def test_failed_attempts_back_off_then_give_up() -> None:
    c, _, _ = setup()
    c.apply(settlement_job("eod", behavior="exit=5,code=1", maxAttempts=3))
    c.run_until(lambda: status(c).get("phase") == "Failed", timeout=600)
    assert status(c)["attempts"] == 3
    assert sorted(j["metadata"]["name"] for j in c.get("jobs")) == ["eod-1", "eod-2", "eod-3"]
    starts = {j["metadata"]["name"]: j["metadata"]["creationTimestamp"] for j in c.get("jobs")}
    gap1 = parse_time(starts["eod-2"]) - parse_time(starts["eod-1"])
    gap2 = parse_time(starts["eod-3"]) - parse_time(starts["eod-2"])
    assert 30 < gap1 < 45 and 60 < gap2 < 75  # 30 s, then 60 s after each failure
    assert status(c)["conditions"][0]["reason"] == "AttemptsExhausted"


def test_deleted_child_job_is_made_again() -> None:
    c, _, _ = setup()
    c.apply(settlement_job("eod", behavior="exit=60"))
    c.run(5)
    c.client.delete("jobs", "eod-1", propagation_policy="Background")
    c.run(3)
    assert c.exists("jobs", "eod-1") and status(c)["phase"] == "Running"


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_crashes_and_lost_events_still_converge(seed: int) -> None:
    c, _, _ = setup(seed)
    c.faults.drop_watch_events(0.5, user="kubernetes-admin")
    c.apply(settlement_job("eod", behavior="exit=20"))
    for t in (0.5, 2, 8, 15):
        c.faults.at(c.clock.now + t, "crash", "settlement-operator")
        c.faults.at(c.clock.now + t + 1, "restart", "settlement-operator")
    c.run(30)
    c.faults.heal_watch_events()
    c.run_until(lambda: status(c).get("phase") == "Succeeded", timeout=300)
    assert [j["metadata"]["name"] for j in c.get("jobs")] == ["eod-1"]  # never two runs


def test_deletion_waits_for_the_ledger_and_releases_once() -> None:
    c, ledger, _ = setup()
    c.apply(settlement_job("eod", behavior="exit=20"))
    c.run_until(lambda: status(c).get("phase") == "Succeeded", timeout=120)
    c.faults.ledger_down()
    c.client.delete("settlementjobs", "eod")
    c.run(60)
    sj = c.get("settlementjobs", "eod")  # still there: the finalizer waits for the ledger
    assert sj["metadata"]["deletionTimestamp"] and sj["metadata"]["finalizers"] == [FINALIZER]
    assert ledger.released == []
    assert "LedgerUnavailable" in [e["reason"] for e in c.events()]
    c.faults.crash("settlement-operator")
    c.faults.ledger_up()
    c.faults.restart("settlement-operator")
    c.run(15)
    assert not c.exists("settlementjobs", "eod")
    assert len(ledger.released) == 1 and ledger.locks == {}
    c.run(10)
    assert c.get("jobs") == []  # the garbage collector removed the owned Job


def test_same_seed_same_trace() -> None:
    def trace(seed: int) -> str:
        c, _, _ = setup(seed)
        c.apply(settlement_job("eod", behavior="exit=5,code=1", maxAttempts=2))
        c.run(120)
        return c.trace.text()
    assert trace(4) == trace(4)


def test_api_resources_lists_a_crd_as_soon_as_it_exists() -> None:
    """kubectl api-resources asks discovery every time (it used to show only kinds the client
    had already looked up)."""
    c = Cluster(nodes=1, components=[])
    c.kubectl("api-resources")
    c.apply(SETTLEMENT_JOB_CRD)
    rows = [line.split() for line in str(c.kubectl("api-resources")).splitlines()]
    assert ["settlementjobs", "sj", "batch.kubelab.dev/v1", "true", "SettlementJob"] in rows
