"""`kubectl get statefulsets` and `kubectl get replicationcontrollers` columns.

pkg/printers/internalversion/printers.go: printStatefulSet (NAME READY AGE, wide: CONTAINERS
IMAGES) and printReplicationController (NAME DESIRED CURRENT READY AGE, wide: CONTAINERS
IMAGES SELECTOR), registered by add_handlers as printers.go's AddHandlers registers them.
Cells are the strings kubectl prints, as in internalversion.py.
"""

from __future__ import annotations

from kubelab.api import Object
from kubelab.apiserver.printers.tablegenerator import TableGenerator, column
from kubelab.apiserver.printers.tablegenerator import translate_timestamp_since as _age

__all__ = ["add_handlers"]


def _containers_and_images(template: Object | None) -> list[str]:
    """layoutContainerCells: the names and images, comma-separated."""
    containers = ((template or {}).get("spec") or {}).get("containers") or []
    return [",".join(c.get("name", "") for c in containers),
            ",".join(c.get("image", "") for c in containers)]


def _stateful_set_row(sts: Object, now: float) -> list[str]:
    """printStatefulSet: READY is readyReplicas/spec.replicas."""
    spec, status = sts.get("spec") or {}, sts.get("status") or {}
    return [sts["metadata"]["name"], f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 1)}",
            _age(sts, now), *_containers_and_images(spec.get("template"))]


def _replication_controller_row(rc: Object, now: float) -> list[str]:
    """printReplicationController: the selector is a plain map, printed as labels are."""
    spec, status = rc.get("spec") or {}, rc.get("status") or {}
    selector = ",".join(f"{k}={v}" for k, v in sorted((spec.get("selector") or {}).items()))
    return [rc["metadata"]["name"], str(spec.get("replicas", 1)), str(status.get("replicas", 0)),
            str(status.get("readyReplicas", 0)), _age(rc, now),
            *_containers_and_images(spec.get("template")), selector or "<none>"]


def add_handlers(h: TableGenerator) -> None:
    name, age = column("Name", format_="name"), column("Age")
    wide = [column("Containers", priority=1), column("Images", priority=1)]
    h.table_handler("statefulsets", [name, column("Ready"), age, *wide], _stateful_set_row)
    h.table_handler("replicationcontrollers", [
        name, column("Desired", "integer"), column("Current", "integer"), column("Ready", "integer"),
        age, *wide, column("Selector", priority=1)], _replication_controller_row)
