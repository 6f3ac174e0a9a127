"""The Leases that leader election writes pass the API server's Lease validation
(apiserver/apis/validation/coordination.py, upstream's ValidateLease) at every step of a
replica's life: the first acquire (a create), each renew, a takeover after the holder
crashed, and the release on cancel (holder "", leaseDurationSeconds 1), as kube-scheduler's
ReleaseOnCancel does."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab import Cluster
from kubelab.api.errors import ApiError
from kubelab.client.leaderelection import JITTER_FACTOR

LATEST = 15 + 2 * 2 * (1 + JITTER_FACTOR)  # LeaseDuration + 2 x RetryPeriod x (1 + JitterFactor)


def lease_writes(c: Cluster) -> list[Any]:
    return sorted((r for s in c.apiservers for r in s.audit
                   if r.resource == "leases" and r.name == "kube-scheduler"
                   and r.verb in ("create", "update", "patch")), key=lambda r: r.time)


def spec(c: Cluster) -> dict[str, Any]:
    return dict(c.get("leases", "kube-scheduler", namespace="kube-system")["spec"])


def test_acquire_renew_takeover_and_release_write_valid_leases() -> None:
    c = Cluster(replicas={"scheduler": 2}, seed=2)
    c.run(10)
    first = c.leader("scheduler") or ""
    writes = lease_writes(c)
    assert writes[0].verb == "create" and writes[0].code in (200, 201)     # acquire
    renews = [r for r in writes if r.verb == "update" and r.user_agent == first]
    assert len(renews) >= 3 and all(r.code == 200 for r in renews)          # renew
    # takeover: the holder dies, the other waits out the lease and takes it
    c.faults.crash_leader("scheduler")
    c.run_until(lambda: c.leader("scheduler") not in (None, first), timeout=LATEST + 1)
    second = c.leader("scheduler") or ""
    assert spec(c)["leaseTransitions"] == 1
    # release: the new leader is cancelled and gives the lease up at once
    c.faults.restart(first)
    c.run(1)
    elector = c.components[second].elector
    assert elector is not None
    elector.cancel()
    released = spec(c)
    assert released["holderIdentity"] == "" and released["leaseDurationSeconds"] == 1
    c.run(5)
    assert c.leader("scheduler") == first and spec(c)["leaseTransitions"] == 2
    writes = lease_writes(c)
    by = {r.user_agent for r in writes if r.code == 200}
    assert {first, second} <= by
    assert [r for r in writes if r.code == 422] == [], [(r.user_agent, r.message) for r in writes]
    assert all(r.code in (200, 201, 409) for r in writes), [(r.verb, r.code, r.message) for r in writes]
    assert "is invalid" not in c.trace.text()


def test_the_check_would_see_an_invalid_lease() -> None:
    """The audit log does record a Lease the validation refuses: the test above can fail."""
    c = Cluster(replicas={"scheduler": 2}, seed=2)
    c.run(3)
    lease = c.get("leases", "kube-scheduler", namespace="kube-system")
    lease["spec"]["leaseDurationSeconds"] = 0
    with pytest.raises(ApiError) as err:
        c.client.update(lease)
    assert err.value.code == 422
    assert "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0" in err.value.message
    refused = [r for r in lease_writes(c) if r.code == 422]
    assert len(refused) == 1 and refused[0].stage == "validation"
