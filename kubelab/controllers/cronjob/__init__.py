"""The CronJob controller (kubernetes/kubernetes pkg/controller/cronjob, the v2 controller)."""

from kubelab.controllers.cronjob.cronjob_controllerv2 import ControllerV2

__all__ = ["ControllerV2"]
