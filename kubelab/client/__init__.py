"""What client-go gives every component: a client, list-watch, informers, the workqueue and the
controller loop. Never imports the API server or the store: it is handed an object that speaks
the API (kubelab.api.request.API).

Read in this order: client.py, reflector.py, delta_fifo.py, indexer.py and listers.py,
shared_informer.py, workqueue/, controller_loop.py, retry.py, events.py, component.py, and
leaderelection/ (one active replica, chosen through a Lease).
"""

from kubelab.client.apply import apply_objects
from kubelab.client.client import Client
from kubelab.client.component import Component, ComponentContext
from kubelab.client.controller_loop import Controller
from kubelab.client.delta_fifo import DeletedFinalStateUnknown, Delta, DeltaFIFO, DeltaType
from kubelab.client.events import NORMAL, WARNING, EventRecorder
from kubelab.client.indexer import Indexer, meta_namespace_key_func
from kubelab.client.listers import GenericLister
from kubelab.client.reflector import Reflector
from kubelab.client.retry import DEFAULT_RETRY, Backoff, retry_on_conflict
from kubelab.client.shared_informer import (
    ResourceEventHandler,
    SharedIndexInformer,
    SharedInformerFactory,
)
from kubelab.client.workqueue import (
    DelayingQueue,
    Queue,
    RateLimitingQueue,
    default_controller_rate_limiter,
)

__all__ = [
    "DEFAULT_RETRY",
    "NORMAL",
    "WARNING",
    "Backoff",
    "Client",
    "Component",
    "ComponentContext",
    "Controller",
    "DelayingQueue",
    "DeletedFinalStateUnknown",
    "Delta",
    "DeltaFIFO",
    "DeltaType",
    "EventRecorder",
    "GenericLister",
    "Indexer",
    "Queue",
    "RateLimitingQueue",
    "Reflector",
    "ResourceEventHandler",
    "SharedIndexInformer",
    "SharedInformerFactory",
    "apply_objects",
    "default_controller_rate_limiter",
    "meta_namespace_key_func",
    "retry_on_conflict",
]
