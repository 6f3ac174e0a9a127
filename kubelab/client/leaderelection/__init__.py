"""client-go's tools/leaderelection: one active replica of a component, chosen through a Lease.

- resourcelock.py: LeaderElectionRecord and LeaseLock (the record kept in a Lease's spec);
- leaderelection.py: LeaderElectionConfig, LeaderCallbacks, LeaderElector (acquire, renew,
  release, try_acquire_or_renew), new_leader_elector.

The elector's names load on first use (PEP 562), so that importing the records alone, as
exercise 7.1's sandbox does, leaves leaderelection.py unloaded.
"""

from __future__ import annotations

import importlib
from typing import Any

from kubelab.client.leaderelection.resourcelock import LeaderElectionRecord, LeaseLock

__all__ = ["JITTER_FACTOR", "LeaderCallbacks", "LeaderElectionConfig", "LeaderElectionRecord",
           "LeaderElector", "LeaseLock", "new_leader_elector"]

_ELECTOR = frozenset({"JITTER_FACTOR", "LeaderCallbacks", "LeaderElectionConfig", "LeaderElector",
                      "new_leader_elector"})


def __getattr__(name: str) -> Any:
    if name in _ELECTOR:
        return getattr(importlib.import_module("kubelab.client.leaderelection.leaderelection"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
