"""The replication manager (pkg/controller/replication): ReplicationControllers."""

from kubelab.controllers.replication.replication_controller import ReplicationManager

__all__ = ["ReplicationManager"]
