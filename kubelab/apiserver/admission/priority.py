"""The Priority admission plugin (plugin/pkg/admission/priority/admission.go).

On a pod's create it resolves spec.priorityClassName to the class's value (spec.priority) and
preemptionPolicy; a pod naming no class gets the globalDefault class, or priority 0. A class
that does not exist refuses the pod: `pods "x" is forbidden: no PriorityClass with name gold was
found`; so does a spec.priority that differs from the class's value. On an update the priority
may not change (the pod keeps the one it was admitted with). On a PriorityClass's create or
update, only one class may be the globalDefault.

kubelab's departures: the two system classes (system-node-critical, system-cluster-critical)
resolve even when their objects are absent, as kube-apiserver's post-start hook would have
created them (kubelab creates them only with the anatomy's add-ons); the Defaults plugin has
already set a pod's preemptionPolicy (and its priority when it names no class or a system
class), so a pod that gave a preemptionPolicy different from its class's is not refused: the
class's wins.
"""

from __future__ import annotations

from typing import Any

from kubelab.apiserver.admission.chain import CREATE, UPDATE, AdmissionPlugin, Attributes, admission_forbidden
from kubelab.apiserver.apis.defaults import SYSTEM_PRIORITIES

__all__ = ["Priority"]

GROUP = "scheduling.k8s.io"


class Priority(AdmissionPlugin):
    name = "Priority"

    def mutate(self, attrs: Attributes) -> None:
        if attrs.subresource or not isinstance(attrs.object, dict):
            return
        if attrs.resource == "pods" and not attrs.group:
            self.admit_pod(attrs)

    def validate(self, attrs: Attributes) -> None:
        if attrs.resource == "priorityclasses" and attrs.group == GROUP and not attrs.subresource \
                and attrs.operation in (CREATE, UPDATE) and isinstance(attrs.object, dict):
            self.validate_priority_class(attrs)

    def admit_pod(self, attrs: Attributes) -> None:
        pod = attrs.object
        assert pod is not None
        spec = pod.get("spec")
        if not isinstance(spec, dict):
            return
        if attrs.operation == UPDATE:
            old = (attrs.old_object or {}).get("spec") or {}
            for field in ("priority", "preemptionPolicy"):  # set on create, kept ever after
                if field in old:
                    spec[field] = old[field]
            return
        if attrs.operation != CREATE:
            return
        class_name = spec.get("priorityClassName") or ""
        if not class_name:
            default = self.default_priority_class(attrs)
            if default is None:
                return  # the Defaults plugin gave it priority 0, PreemptLowerPriority
            spec["priorityClassName"] = default["metadata"]["name"]
            value, policy = int(default.get("value", 0)), default.get("preemptionPolicy")
            given = None  # Defaults set the 0 a pod without a class gets
        else:
            pc = attrs.lister.get("priorityclasses", "", class_name, GROUP)
            if pc is None and class_name in SYSTEM_PRIORITIES:
                pc = {"value": SYSTEM_PRIORITIES[class_name]}
            if pc is None:
                raise admission_forbidden(attrs, f"no PriorityClass with name {class_name} was found")
            value, policy = int(pc.get("value", 0)), pc.get("preemptionPolicy")
            given = spec.get("priority") if class_name not in SYSTEM_PRIORITIES else None
        if given is not None and given != value:
            raise admission_forbidden(
                attrs, f"the integer value of priority ({given}) must not be provided in pod spec; "
                       f"priority admission controller computed {value} from the given "
                       "PriorityClass name")
        spec["priority"] = value
        if policy:
            spec["preemptionPolicy"] = policy

    def default_priority_class(self, attrs: Attributes) -> dict[str, Any] | None:
        """getDefaultPriorityClass: the globalDefault class with the lowest value, if any."""
        classes = [pc for pc in _list(attrs) if pc.get("globalDefault")]
        return min(classes, key=lambda pc: int(pc.get("value", 0))) if classes else None

    def validate_priority_class(self, attrs: Attributes) -> None:
        pc = attrs.object
        assert pc is not None
        if not pc.get("globalDefault"):
            return
        default = self.default_priority_class(attrs)
        if default is not None and (attrs.operation == CREATE or
                                    default["metadata"]["name"] != attrs.name):
            raise admission_forbidden(attrs, f"PriorityClass {default['metadata']['name']} is "
                                             "already marked as default. Only one default can exist")


def _list(attrs: Attributes) -> list[dict[str, Any]]:
    list_objects = getattr(attrs.lister, "list_objects", None)
    return list(list_objects("priorityclasses", GROUP)) if list_objects is not None else []
