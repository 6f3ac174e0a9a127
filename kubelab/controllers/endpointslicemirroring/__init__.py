"""The EndpointSlice mirroring controller (pkg/controller/endpointslicemirroring/):
endpointslicemirroring_controller.py."""

from kubelab.controllers.endpointslicemirroring.endpointslicemirroring_controller import (
    CONTROLLER_NAME,
    LABEL_SKIP_MIRROR,
    Controller,
)

__all__ = ["CONTROLLER_NAME", "LABEL_SKIP_MIRROR", "Controller"]
