"""The faults of notebook 09, mixed into kubelab.cluster.faults.Faults (c.faults.<name>).

Crashing and restarting kube-proxy on a node is c.faults.crash("kube-proxy/node-1") and
restart(...); kill_node stops it and empties the node's rules. This module adds the loss of
EndpointSlice updates on their way to kube-proxy: the controller keeps writing correct slices,
and every node's rules go stale (until heal_watch_events, when kube-proxy's watch ends with
410 and it relists).
"""

from __future__ import annotations

from typing import Any

from kubelab.cluster.control_plane import KUBE_PROXY_USER

__all__ = ["ServiceFaults"]


class ServiceFaults:
    def _record(self, name: str, obj: str = "", **detail: Any) -> None: ...  # Faults records

    def _watch_faults(self) -> Any: ...  # Faults has them

    _cluster: Any  # Faults has it

    def drop_endpointslice_updates(self, probability: float = 1.0) -> None:
        """Lose EndpointSlice watch events to every kube-proxy (heal with heal_watch_events).
        kind's kube-proxies authenticate with their ServiceAccount's token, kubelab's bare
        cluster's as the user system:kube-proxy."""
        user = KUBE_PROXY_USER if self._cluster.anatomy else "system:kube-proxy"
        self._watch_faults().set(drop=probability, user=user, resource="endpointslices")
        self._record("drop_endpointslice_updates", "watch", probability=probability)
