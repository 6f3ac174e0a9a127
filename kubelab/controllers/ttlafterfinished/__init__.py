"""The TTL-after-finished controller (kubernetes pkg/controller/ttlafterfinished)."""

from kubelab.controllers.ttlafterfinished.ttlafterfinished_controller import TTLAfterFinishedController

__all__ = ["TTLAfterFinishedController"]
