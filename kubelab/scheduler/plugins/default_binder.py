"""DefaultBinder: the Bind plugin that tells the API server which node the pod goes to.

pkg/scheduler/framework/plugins/defaultbinder/default_binder.go POSTs a Binding to
pods/<name>/binding. Here the framework is handed that call (Framework(bind=...)), so the
scheduler's core never talks to the API itself: the Scheduler wires a function that uses
its client.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubelab.scheduler.interface import CycleState, Handle, Status, as_status
from kubelab.scheduler.types import Object

__all__ = ["DefaultBinder"]


class DefaultBinder:
    name = "DefaultBinder"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        del args
        self.handle = handle

    def bind(self, state: CycleState, pod: Object, node_name: str) -> Status | None:
        try:
            self.handle.bind_pod(pod, node_name)
        except Exception as err:  # the API said no (or nothing was wired): an Error status
            return as_status(err)
        return None
