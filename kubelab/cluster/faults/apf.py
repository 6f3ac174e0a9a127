"""A noisy tenant: one client flooding the API server with requests (c.faults.flood).

The fault API Priority and Fairness exists for: a user, a controller gone wrong or a script
in a loop that sends more requests than the server can serve. With APF on
(Cluster(apf=True)), the flood lands in its own flow (global-default, ByUser, for an
ordinary user), fills the queues of its hand and gets 429s, while kubelets' lease renewals
keep their seats on node-high. Without APF nothing limits it in kubelab.

    flood = c.faults.flood("noisy-tenant", per_second=500, seconds=10)
    c.run(10)
    flood.sent, flood.answered, flood.rejected
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kubelab.api.errors import ApiError

if TYPE_CHECKING:
    from kubelab.client import Client
    from kubelab.cluster import Cluster
    from kubelab.sim.clock import Timer

__all__ = ["Flood", "start_flood"]


@dataclass(eq=False)
class Flood:
    """A running flood: how many requests it sent, were answered, and were refused with 429."""

    user: str
    verb: str
    resource: str
    namespace: str
    name: str
    per_tick: int
    interval: float
    until: float
    client: Client
    sent: int = 0
    answered: int = 0
    rejected: int = 0
    errors: int = 0
    _timer: Timer | None = None

    def tick(self, cluster: Cluster) -> None:
        self._timer = None
        for _ in range(self.per_tick):
            self.sent += 1
            try:
                if self.verb == "list":
                    self.client.list(self.resource, self.namespace)
                else:
                    self.client.get(self.resource, self.name, self.namespace or "default")
                self.answered += 1
            except ApiError as err:
                if err.code == 429:
                    self.rejected += 1
                else:
                    self.errors += 1
        if cluster.clock.now + self.interval <= self.until:
            self._timer = cluster.clock.call_later(self.interval, self.tick, cluster)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    @property
    def running(self) -> bool:
        return self._timer is not None


def _may_view(cluster: Cluster, user: str) -> None:
    """The tenant may read what it floods: bind it to the view ClusterRole, as an admin would."""
    name = f"kubelab:flood:{user}"
    try:
        cluster.client.get("clusterrolebindings", name, "")
    except ApiError:
        cluster.client.create({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": "view"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]})


def start_flood(cluster: Cluster, user: str, *, per_second: float, seconds: float,
                verb: str = "list", resource: str = "pods", namespace: str = "", name: str = "",
                ticks_per_second: int = 100) -> Flood:
    """Send per_second requests for `seconds`, in bursts ticks_per_second times a second:
    lists of resource (in namespace, "" for all), or gets of the object `name`."""
    if per_second <= 0 or seconds <= 0 or ticks_per_second <= 0:
        raise ValueError("per_second, seconds and ticks_per_second must be positive")
    if verb not in ("list", "get"):
        raise ValueError(f"a flood sends list or get requests, not {verb!r}")
    if verb == "get" and not name:
        raise ValueError("a flood of gets needs the name of the object to get")
    ticks = max(1, min(ticks_per_second, int(per_second)))
    _may_view(cluster, user)
    flood = Flood(user, verb, resource, namespace, name, max(1, round(per_second / ticks)), 1.0 / ticks,
                  cluster.clock.now + seconds, cluster.client_for(user))
    flood._timer = cluster.clock.call_later(0, flood.tick, cluster)
    return flood
