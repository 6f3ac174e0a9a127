"""Zones and the pace of tainting: how the node lifecycle controller avoids evicting everything.

- zone_key: nodes are grouped by their topology.kubernetes.io/region and /zone labels
  (component-helpers node/topology.GetZoneKey); nodes without them form one zone, "".
- compute_zone_state (ComputeZoneState): FullDisruption when no node of the zone is Ready,
  PartialDisruption when more than two are not Ready and they are at least
  unhealthy-zone-threshold (55 %) of it, Normal otherwise.
- one RateLimitedTimedQueue per zone (rate_limited_queue.py): nodes waiting for a NoExecute
  taint, taken off in the order they came, no faster than a token bucket allows
  (--node-eviction-rate 0.1 per second, burst 1). A qps of 0 stops tainting altogether.
- Zones.handle_disruption (handleDisruption): each zone's state sets its queue's pace; when
  every zone is fully disrupted, tainting stops and the taints come off.
"""

from __future__ import annotations

from typing import Any

from kubelab.controllers.node_lifecycle.rate_limited_queue import RateLimitedTimedQueue

__all__ = ["Zones", "compute_zone_state", "zone_key"]

REGION = "topology.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"


def zone_key(node: dict[str, Any]) -> str:
    labels = (node.get("metadata") or {}).get("labels") or {}
    region, zone = labels.get(REGION, ""), labels.get(ZONE, "")
    return "" if not region and not zone else f"{region}:\x00:{zone}"


def compute_zone_state(ready_conditions: list[dict[str, Any] | None], threshold: float) -> tuple[int, str]:
    ready = sum(1 for c in ready_conditions if c is not None and c.get("status") == "True")
    not_ready = len(ready_conditions) - ready
    if ready == 0 and not_ready > 0:
        return not_ready, "FullDisruption"
    if not_ready > 2 and not_ready / (not_ready + ready) >= threshold:
        return not_ready, "PartialDisruption"
    return not_ready, "Normal"


class Zones:
    """One tainting queue and one state per zone."""

    def __init__(self, qps: float, secondary_qps: float, large_cluster_threshold: int,
                 unhealthy_zone_threshold: float) -> None:
        self.qps, self.secondary_qps = qps, secondary_qps
        self.large_cluster_threshold = large_cluster_threshold
        self.unhealthy_zone_threshold = unhealthy_zone_threshold
        self.states: dict[str, str] = {}
        self.tainters: dict[str, RateLimitedTimedQueue] = {}

    def tainter(self, zone: str) -> RateLimitedTimedQueue:
        if zone not in self.tainters:
            self.tainters[zone] = RateLimitedTimedQueue(self.qps)
            self.states.setdefault(zone, "Initial")
        return self.tainters[zone]

    def _qps_for(self, state: str, zone_size: int) -> float:
        if state == "PartialDisruption":  # ReducedQPSFunc: small clusters stop evicting
            return self.secondary_qps if zone_size > self.large_cluster_threshold else 0.0
        return self.qps

    def handle_disruption(self, zone_conditions: dict[str, list[dict[str, Any] | None]],
                          now: float) -> str:
        """Update the states; returns "enter" when every zone just became fully disrupted,
        "exit" when the cluster just left that state, "" otherwise."""
        new = {zone: compute_zone_state(conds, self.unhealthy_zone_threshold)[1]
               for zone, conds in zone_conditions.items()}
        for zone in new:
            self.states.setdefault(zone, "Initial")
        for zone in [z for z in self.states if z not in new]:
            del self.states[zone]
        all_now = bool(new) and all(s == "FullDisruption" for s in new.values())
        all_before = all(s == "FullDisruption" for s in self.states.values())
        if all_now and all_before:
            return ""
        if all_now:
            for zone in self.states:
                self.tainter(zone).swap_limiter(0.0, now)
                self.states[zone] = "FullDisruption"
            return "enter"
        for zone, state in new.items():
            if all_before or self.states.get(zone) != state:
                self.tainter(zone).swap_limiter(self._qps_for(state, len(zone_conditions[zone])), now)
                self.states[zone] = state
        return "exit" if all_before else ""
