"""The endpoints controller (pkg/controller/endpoint/): endpoints_controller.py (events,
syncService, truncation), repack.py (pkg/api/v1/endpoints RepackSubsets) and
trigger_time_tracker.py (pkg/controller/util/endpoint)."""

from kubelab.controllers.endpoint.endpoints_controller import (
    ENDPOINTS_LAST_CHANGE_TRIGGER_TIME,
    ENDPOINTS_OVER_CAPACITY,
    MAX_CAPACITY,
    EndpointController,
)

__all__ = ["ENDPOINTS_LAST_CHANGE_TRIGGER_TIME", "ENDPOINTS_OVER_CAPACITY", "MAX_CAPACITY",
           "EndpointController"]
