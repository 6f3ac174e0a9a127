"""Failure-injection controls and live views over the parts of a cluster.

Each panel works on its own so that a notebook shows only what its step has built:
StorePanel (01), ApiServerPanel (02), WatchPanel (03), SchedulerPanel (04), ControllersPanel
(05), KubeletPanel (06), APFPanel (10). Dashboard puts the whole cluster on one screen (00 and anywhere a full
cluster runs), composed of RunControls, FailurePanel, GraphPanel, NodesView, PodsTable and
EventStream, each usable alone too.
"""

from kubelab.widgets.apf_panel import APFPanel
from kubelab.widgets.apiserver_panel import ApiServerPanel
from kubelab.widgets.controllers_panel import ControllersPanel
from kubelab.widgets.dashboard import Dashboard
from kubelab.widgets.failure_panel import FailurePanel
from kubelab.widgets.graph_panel import GraphPanel
from kubelab.widgets.kubelet_panel import KubeletPanel
from kubelab.widgets.nodes_view import NodesView
from kubelab.widgets.run_controls import RunControls
from kubelab.widgets.scheduler_panel import SchedulerPanel
from kubelab.widgets.store_panel import StorePanel
from kubelab.widgets.tables import EventStream, PodsTable
from kubelab.widgets.watch_panel import WatchPanel

__all__ = [
    "APFPanel",
    "ApiServerPanel",
    "ControllersPanel",
    "Dashboard",
    "EventStream",
    "FailurePanel",
    "GraphPanel",
    "KubeletPanel",
    "NodesView",
    "PodsTable",
    "RunControls",
    "SchedulerPanel",
    "StorePanel",
    "WatchPanel",
]
