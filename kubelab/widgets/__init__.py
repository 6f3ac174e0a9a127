"""Failure-injection controls and live views over the parts of a cluster.

Each panel works on its own so that a notebook shows only what its step has built.
"""

from kubelab.widgets.store_panel import StorePanel

__all__ = ["StorePanel"]
