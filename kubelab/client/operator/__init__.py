"""An operator toolkit on client-go's machinery, close to controller-runtime's ideas
(sigs.k8s.io/controller-runtime: pkg/reconcile, pkg/builder, pkg/handler, pkg/controller/
controllerutil, and apimachinery's meta.SetStatusCondition).

A Reconciler gets a key (Request: namespace/name), reads through the informers' cache
(`self.cache`, no API request), writes through the client (`self.client`), and returns a
Result ("requeue after"); an exception requeues the key with rate limiting. An Operator is a
component (c.add_component / kubelab.serve.connect's context): it runs the informers for the
primary kind and the kinds it owns, maps every event to a Request, and runs the reconciler.

Read in this order: reconcile.py, cache.py, handler.py, controller.py, conditions.py,
controllerutil.py.
"""

from kubelab.client.operator.cache import Cache, RequestLog
from kubelab.client.operator.conditions import (
    find_status_condition,
    is_status_condition_true,
    remove_status_condition,
    set_status_condition,
)
from kubelab.client.operator.controller import Operator, ReconcileRecord
from kubelab.client.operator.controllerutil import (
    AlreadyOwnedError,
    add_finalizer,
    contains_finalizer,
    create_or_update,
    remove_finalizer,
    set_controller_reference,
)
from kubelab.client.operator.handler import enqueue_request_for_object, enqueue_request_for_owner
from kubelab.client.operator.reconcile import Reconciler, Request, Result, TerminalError

__all__ = [
    "AlreadyOwnedError",
    "Cache",
    "Operator",
    "ReconcileRecord",
    "Reconciler",
    "Request",
    "RequestLog",
    "Result",
    "TerminalError",
    "add_finalizer",
    "contains_finalizer",
    "create_or_update",
    "enqueue_request_for_object",
    "enqueue_request_for_owner",
    "find_status_condition",
    "is_status_condition_true",
    "remove_finalizer",
    "remove_status_condition",
    "set_controller_reference",
    "set_status_condition",
]
