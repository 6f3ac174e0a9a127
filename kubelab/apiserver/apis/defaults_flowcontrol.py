"""The v1 defaults of FlowSchema and PriorityLevelConfiguration (kubernetes
pkg/apis/flowcontrol/v1/defaults.go), run by defaults.py's Defaults admission step."""

from __future__ import annotations

from kubelab.api import Object

__all__ = ["set_flow_schema_defaults", "set_priority_level_defaults"]


def set_flow_schema_defaults(fs: Object) -> None:
    spec = fs.get("spec")
    if isinstance(spec, dict) and not spec.get("matchingPrecedence"):
        spec["matchingPrecedence"] = 1000


def set_priority_level_defaults(pl: Object) -> None:
    spec = pl.get("spec")
    if not isinstance(spec, dict):
        return
    exempt, limited = spec.get("exempt"), spec.get("limited")
    if isinstance(exempt, dict):
        exempt.setdefault("nominalConcurrencyShares", 0)
        exempt.setdefault("lendablePercent", 0)
    if isinstance(limited, dict):
        limited.setdefault("nominalConcurrencyShares", 30)
        limited.setdefault("lendablePercent", 0)
        queuing = (limited.get("limitResponse") or {}).get("queuing")
        if isinstance(queuing, dict):
            for key, value in (("handSize", 8), ("queues", 64), ("queueLengthLimit", 50)):
                if not queuing.get(key):
                    queuing[key] = value
