"""The StatefulSet controller (pkg/controller/statefulset)."""

from kubelab.controllers.statefulset.stateful_set import StatefulSetController

__all__ = ["StatefulSetController"]
