"""GET /metrics: the API server's metrics in Prometheus' text format.

The exposition is kubelab/cluster/prometheus.py's (prometheus_client over the counts the API
server keeps, apiserver/metrics.py), shared with Cluster.metrics(); this module names it for the
HTTP handler.
"""

from __future__ import annotations

from kubelab.cluster.prometheus import CONTENT_TYPE, exposition

__all__ = ["CONTENT_TYPE", "exposition"]
