"""A real etcd behind kubelab's API server: an edge, like kubelab/serve/.

    c = kubelab.Cluster(store="etcd")                    # kubelab starts one etcd member
    c = kubelab.Cluster(store="etcd", etcd_members=3)    # ... or three, one cluster
    c = kubelab.Cluster(store="etcd://127.0.0.1:2379")   # an etcd that is already running

Read in this order: backend.py (the Backend protocol over etcd's v3 API), wire.py (its JSON),
client.py (the gateway client, and why the gateway), watch.py (reader threads and the inbox the
clock drains), errors.py (etcd's errors as kubelab's), process.py (members kubelab starts).

A cluster on a real etcd runs on the real-time clock: virtual time follows the wall clock, the
same seed no longer gives the same trace, and `c.run_until(...)` waits up to its timeout in
real seconds. Nothing in the simulation imports this package (pyproject.toml's contracts).
"""

from __future__ import annotations

from kubelab.etcd.backend import POLL_SECONDS, EtcdBackend
from kubelab.etcd.client import parse_endpoints
from kubelab.etcd.errors import EtcdTimeoutError, EtcdUnavailableError
from kubelab.etcd.process import INSTALL_HINT, EtcdCluster, EtcdMember
from kubelab.sim import Clock

__all__ = ["INSTALL_HINT", "POLL_SECONDS", "EtcdBackend", "EtcdCluster", "EtcdMember",
           "EtcdTimeoutError", "EtcdUnavailableError", "open_store"]


def open_store(store: str, clock: Clock, *, members: int = 1
               ) -> tuple[EtcdBackend, EtcdCluster | None]:
    """The backend for Cluster(store=...): "etcd" starts `members` members of our own (returned
    too, so the cluster can stop them); "etcd://host:port[,host:port]" uses running ones."""
    if store == "etcd":
        etcd = EtcdCluster(members)
        try:
            return EtcdBackend(etcd.endpoints, clock), etcd
        except BaseException:
            etcd.close()
            raise
    if store.startswith(("etcd://", "http://")):
        if members != 1:
            raise ValueError("etcd_members starts members of kubelab's own (store=\"etcd\"); "
                             "an etcd:// URL names running ones")
        return EtcdBackend(parse_endpoints(store), clock), None
    raise ValueError(f"store must be \"embedded\", \"etcd\" or \"etcd://host:port\", got {store!r}")
