"""The ReplicaSet controller (kubernetes pkg/controller/replicaset)."""

from kubelab.controllers.replicaset.replica_set import ReplicaSetController

__all__ = ["ReplicaSetController"]
