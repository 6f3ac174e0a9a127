"""The wiring, like a main.go: `Cluster` builds every part on one clock and hands each its client.

Read in this order: cluster.py (the Cluster), components.py (what it can run), replicas.py and
loadbalancer.py (the replicated control plane), network.py, dns.py and traffic.py (what a packet
meets), ledger.py (a system outside the cluster), faults/ (every way to break it). The wiring
imports everything; nothing in the simulation imports it.
"""

from kubelab.cluster.cluster import ADMIN_TOKEN, Cluster
from kubelab.cluster.components import COMPONENTS

__all__ = ["ADMIN_TOKEN", "COMPONENTS", "Cluster"]
