"""Every way to break the cluster, on `c.faults` (docs/ARCHITECTURE.md section 6).

faults.py holds `Faults` and the node and watch faults; each other module is one mixin of
Faults: ha.py (replicas), raft.py (etcd members), scale.py (relist storms, etcd maintenance),
services.py (lost EndpointSlice events), apf.py (a flood of requests).
"""

from kubelab.cluster.faults.faults import Faults, NodeLink, WatchFaults

__all__ = ["Faults", "NodeLink", "WatchFaults"]
