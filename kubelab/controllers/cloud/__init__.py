"""A small simulated cloud-controller-manager: its service controller gives LoadBalancer
Services an address from a seeded pool and keeps each balancer's node list current
(kubernetes/cloud-provider controllers/service/controller.go). cloud.py is the cloud itself,
outside the API, like a node's container runtime."""

from kubelab.controllers.cloud.cloud import FakeCloud, LoadBalancer
from kubelab.controllers.cloud.service_controller import CloudControllerManager, ServiceController

__all__ = ["CloudControllerManager", "FakeCloud", "LoadBalancer", "ServiceController"]
