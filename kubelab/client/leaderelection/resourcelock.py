"""The lock a leader election holds: a coordination.k8s.io/v1 Lease (client-go
tools/leaderelection/resourcelock/interface.go and leaselock.go).

A LeaderElectionRecord is what the candidates agree on: who holds the lock, for how long, when it
was acquired and last renewed, and how many times it changed hands. LeaseLock keeps it in the
spec of one Lease (holderIdentity, leaseDurationSeconds, acquireTime, renewTime as MicroTime,
leaseTransitions) and writes it with optimistic concurrency: Update sends the Lease it last read
or wrote, resourceVersion included, so a candidate working from a stale copy gets 409 Conflict.

The lock's client has a timeout, as resourcelock.NewFromKubeconfig gives it: RenewDeadline / 2,
at least one second. A request that the API server answers later than that (kubelab's API
server is slow when its store's disk is: c.faults.slow_store) fails on the client side with
`context deadline exceeded`, although the server may still have applied it, as upstream's may.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass

from kubelab.api import Object
from kubelab.api.errors import ApiError, ConnectionFailed
from kubelab.api.meta import micro_time, parse_time
from kubelab.api.request import Request
from kubelab.client.client import Client
from kubelab.client.events import EventRecorder

__all__ = ["LeaderElectionRecord", "LeaseLock", "lease_spec_to_record", "record_to_lease_spec"]


@dataclass
class LeaderElectionRecord:
    """interface.go LeaderElectionRecord; the times are virtual seconds (metav1.Time)."""

    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: float = 0.0
    renew_time: float = 0.0
    leader_transitions: int = 0


def lease_spec_to_record(spec: Object) -> LeaderElectionRecord:
    """LeaseSpecToLeaderElectionRecord: absent fields are zero."""
    def when(field: str) -> float:
        text = spec.get(field)
        return parse_time(text) if isinstance(text, str) and text else 0.0

    return LeaderElectionRecord(str(spec.get("holderIdentity") or ""),
                                int(spec.get("leaseDurationSeconds") or 0),
                                when("acquireTime"), when("renewTime"),
                                int(spec.get("leaseTransitions") or 0))


def record_to_lease_spec(record: LeaderElectionRecord) -> Object:
    """LeaderElectionRecordToLeaseSpec: every field set, the times as MicroTime."""
    return {"holderIdentity": record.holder_identity,
            "leaseDurationSeconds": record.lease_duration_seconds,
            "acquireTime": micro_time(record.acquire_time),
            "renewTime": micro_time(record.renew_time),
            "leaseTransitions": record.leader_transitions}


class LeaseLock:
    """leaselock.go LeaseLock: Get, Create, Update, RecordEvent, Describe, Identity.

    timeout: the client's request timeout in seconds (0: none). elapsed adds up the virtual
    seconds the lock's requests took since the elector last reset it.
    """

    def __init__(self, client: Client, namespace: str, name: str, identity: str, *,
                 recorder: EventRecorder | None = None, timeout: float = 0.0) -> None:
        self.client, self.namespace, self.name = client, namespace, name
        self._identity, self.recorder, self.timeout = identity, recorder, timeout
        self.lease: Object | None = None  # the Lease as last read or written
        self.elapsed = 0.0

    def _call(self, verb: str, send: Callable[[], Object]) -> Object:
        """Send one request, charging the time its round trip took (its answer says:
        Client.last_latency); past the timeout, the client gives up."""
        result = send()
        latency = self.client.last_latency
        if self.timeout and latency > self.timeout:
            self.elapsed += self.timeout
            method = {"get": "Get", "create": "Post", "update": "Put"}[verb]
            request = Request(verb, "leases", self.namespace, "" if verb == "create" else self.name,
                              group="coordination.k8s.io")
            url = f"{self.client.server}{request.path}?timeout={self.timeout:g}s"
            raise ConnectionFailed(method, url, self.client.server.split("://", 1)[-1],
                                   "context deadline exceeded (Client.Timeout exceeded while "
                                   "awaiting headers)")
        self.elapsed += latency
        return result

    def get(self) -> tuple[LeaderElectionRecord, bytes]:
        """The record in the Lease, and its raw form (JSON) to compare with the last one seen.
        Raises the API's error, 404 NotFound included."""
        lease = self._call("get", lambda: self.client.get("leases", self.name, self.namespace))
        self.lease = lease
        record = lease_spec_to_record(lease.get("spec") or {})
        return record, json.dumps(asdict(record), sort_keys=True).encode()

    def create(self, record: LeaderElectionRecord) -> None:
        lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                 "metadata": {"name": self.name, "namespace": self.namespace},
                 "spec": record_to_lease_spec(record)}
        self.lease = self._call("create", lambda: self.client.create(lease, self.namespace))

    def update(self, record: LeaderElectionRecord) -> None:
        """Write the record over the Lease last read or written (its resourceVersion decides)."""
        if self.lease is None:
            raise ApiError(0, "", "lease not initialized, call get or create first")
        lease = {**self.lease, "spec": record_to_lease_spec(record)}
        self.lease = self._call("update", lambda: self.client.update(lease))

    def record_event(self, message: str) -> None:
        """An event on the Lease: `<identity> became leader`, reason LeaderElection."""
        if self.recorder is None or self.lease is None:
            return
        meta = self.lease["metadata"]
        ref = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
               "metadata": {"name": meta["name"], "namespace": meta.get("namespace", ""),
                            "uid": meta.get("uid", ""),
                            "resourceVersion": meta.get("resourceVersion", "")}}
        self.recorder.event(ref, "Normal", "LeaderElection", f"{self._identity} {message}")

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"

    def identity(self) -> str:
        return self._identity
