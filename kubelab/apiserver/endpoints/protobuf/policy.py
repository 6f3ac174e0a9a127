"""The protobuf field tables of policy/v1.

Its kinds: PodDisruptionBudget and Eviction.

Transcribed from k8s.io/api policy/v1/generated.proto,
release v0.34.0, with each field's Go type from types.go beside it (by
scripts/transcribe_protobuf.py): message -> {field number: (JSON name, type, how)}.
Types and hows are explained in kubelab/apiserver/endpoints/protobuf/__init__.py.
"""

from __future__ import annotations

MESSAGES: dict[str, dict[int, tuple[str, str, str]]] = {
    "Eviction": {1: ("metadata", "ObjectMeta", ""), 2: ("deleteOptions", "DeleteOptions", "ptr")},
    "PodDisruptionBudget": {1: ("metadata", "ObjectMeta", ""), 2: ("spec", "PodDisruptionBudgetSpec", ""),
                            3: ("status", "PodDisruptionBudgetStatus", "")},
    "PodDisruptionBudgetSpec": {1: ("minAvailable", "intstr", "ptr"),
                                2: ("selector", "LabelSelector", "ptr"),
                                3: ("maxUnavailable", "intstr", "ptr"),
                                4: ("unhealthyPodEvictionPolicy", "str", "ptr")},
    "PodDisruptionBudgetStatus": {1: ("observedGeneration", "int", ""), 2: ("disruptedPods", "time", "map"),
                                  3: ("disruptionsAllowed", "int", ""), 4: ("currentHealthy", "int", ""),
                                  5: ("desiredHealthy", "int", ""), 6: ("expectedPods", "int", ""),
                                  7: ("conditions", "Condition", "rep")},
}
