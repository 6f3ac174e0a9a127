"""autoscaling/v2 defaults (pkg/apis/autoscaling/v2/defaults.go): SetDefaults_HorizontalPodAutoscaler
and SetDefaults_HorizontalPodAutoscalerBehavior."""

from __future__ import annotations

import copy

from kubelab.api import Object

__all__ = ["DEFAULT_CPU_UTILIZATION", "HPA_SCALE_DOWN_RULES", "HPA_SCALE_UP_RULES",
           "set_horizontal_pod_autoscaler_defaults"]

# autoscaling/v2 (pkg/apis/autoscaling/v2/defaults.go): minReplicas 1, a CPU target of 80% when
# no metric is given, and a behavior, when one is given, completed with these rules; the
# scale-down window stays unset, for the controller's --horizontal-pod-autoscaler-downscale-
# stabilization (5 minutes) to fill.
DEFAULT_CPU_UTILIZATION = 80
HPA_SCALE_UP_RULES: Object = {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
    {"type": "Pods", "value": 4, "periodSeconds": 15},
    {"type": "Percent", "value": 100, "periodSeconds": 15}]}
HPA_SCALE_DOWN_RULES: Object = {"selectPolicy": "Max", "policies": [
    {"type": "Percent", "value": 100, "periodSeconds": 15}]}


def set_horizontal_pod_autoscaler_defaults(obj: Object) -> None:
    spec = obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    spec.setdefault("minReplicas", 1)
    if not spec.get("metrics"):
        spec["metrics"] = [{"type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": DEFAULT_CPU_UTILIZATION}}}]
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):  # GenerateHPAScaleUpRules, GenerateHPAScaleDownRules
        for direction, rules in (("scaleUp", HPA_SCALE_UP_RULES), ("scaleDown", HPA_SCALE_DOWN_RULES)):
            given = behavior.get(direction)
            if not isinstance(given, dict):
                given = {}
            behavior[direction] = {**copy.deepcopy(rules), **{k: v for k, v in given.items()
                                                             if v is not None}}
