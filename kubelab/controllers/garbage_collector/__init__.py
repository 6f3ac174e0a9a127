"""The garbage collector (kubernetes/kubernetes pkg/controller/garbagecollector/).

graph.py: nodes and ownerReference edges; graph_builder.py: the graph kept current from
informer events; garbage_collector.py: deleting, orphaning and the three propagation policies.
"""

from kubelab.controllers.garbage_collector.garbage_collector import GarbageCollector
from kubelab.controllers.garbage_collector.graph import Node, ObjectReference
from kubelab.controllers.garbage_collector.graph_builder import GraphBuilder

__all__ = ["GarbageCollector", "GraphBuilder", "Node", "ObjectReference"]
