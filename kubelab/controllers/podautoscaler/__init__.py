"""The horizontal pod autoscaler (pkg/controller/podautoscaler): horizontal.py (the controller),
replica_calculator.py (the replica count a metric asks for), metrics.py (metrics.k8s.io)."""

from kubelab.controllers.podautoscaler.horizontal import HorizontalController

__all__ = ["HorizontalController"]
