"""The disruption controller (kubernetes/kubernetes pkg/controller/disruption)."""

from kubelab.controllers.disruption.disruption import DisruptionController

__all__ = ["DisruptionController"]
