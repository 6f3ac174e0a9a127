"""The resource quota controller (kubernetes pkg/controller/resourcequota)."""

from kubelab.controllers.resourcequota.resource_quota_controller import ResourceQuotaController

__all__ = ["ResourceQuotaController"]
