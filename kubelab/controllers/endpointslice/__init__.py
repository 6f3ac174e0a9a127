"""The EndpointSlice controller (pkg/controller/endpointslice/ and kubernetes/endpointslice):
endpointslice_controller.py (events, syncService, the tracker), reconciler.py (the plan of
creates, updates and deletes), utils.py (pods as endpoints)."""

from kubelab.controllers.endpointslice.endpointslice_controller import (
    EndpointSliceController,
    EndpointSliceTracker,
    Reconciler,
    StaleInformerCache,
)
from kubelab.controllers.endpointslice.reconciler import Plan, reconcile

__all__ = ["EndpointSliceController", "EndpointSliceTracker", "Plan", "Reconciler",
           "StaleInformerCache", "reconcile"]
