"""kubelab: the Kubernetes control plane, built one component at a time.

Start with `kubelab.Cluster` (see README.md) or the notebooks in notebooks/.
"""

from importlib.metadata import PackageNotFoundError, version

from kubelab.api import ApiError, ParseError, Quantity, load_objects, parse_quantity, parse_selector
from kubelab.cluster import Cluster
from kubelab.sim import Clock, LivelockError, Trace

try:
    __version__ = version("kubelab")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0"

__all__ = [
    "ApiError",
    "Clock",
    "Cluster",
    "LivelockError",
    "ParseError",
    "Quantity",
    "Trace",
    "__version__",
    "load_objects",
    "parse_quantity",
    "parse_selector",
]
