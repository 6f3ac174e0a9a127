"""The replication manager: ReplicationControllers, run by the ReplicaSet controller's code
(kubernetes/kubernetes pkg/controller/replication/replication_controller.go and
conversion.go).

Upstream's NewReplicationManager calls replicaset.NewBaseController with the kind
ReplicationController, its informer and client wrapped in adapters that convert each RC into a
ReplicaSet and back, and an event recorder of its own ("replication-controller"). The sync is
the ReplicaSet's: the same expectations, slow-start creates, deletion ranking and status.

kubelab passes the same parameters as class attributes (KIND, RESOURCE, EVENT_SOURCE), and
its adapter converts only what differs between the two kinds for that code: an RC's selector
is a plain map of labels, which the ReplicaSet code reads as `{"matchLabels": ...}`. Pods,
owner references, status writes and events name the ReplicationController itself, as the
adapters' conversions back make them upstream.
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object
from kubelab.controllers.replicaset.replica_set import ReplicaSetController

__all__ = ["ReplicationManager"]


class ReplicationManager(ReplicaSetController):
    NAME = "replicationmanager"  # the workqueue's name in NewBaseController's call
    KIND, RESOURCE, EVENT_SOURCE = ("ReplicationController", "replicationcontrollers",
                                    "replication-controller")

    @staticmethod
    def label_selector(rs: Object) -> Any:
        """conversion.go's Convert_v1_ReplicationControllerSpec_To_apps_ReplicaSetSpec: the
        map becomes the matchLabels of a LabelSelector (none: a selector of nothing)."""
        selector = rs["spec"].get("selector")
        return {"matchLabels": dict(selector)} if selector else None
