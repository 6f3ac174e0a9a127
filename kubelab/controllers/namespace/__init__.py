"""The namespace controller (kubernetes pkg/controller/namespace)."""

from kubelab.controllers.namespace.namespace_controller import NamespaceController, ResourcesRemainingError

__all__ = ["NamespaceController", "ResourcesRemainingError"]
