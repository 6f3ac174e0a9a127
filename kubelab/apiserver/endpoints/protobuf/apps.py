"""The protobuf field tables of apps/v1.

Its kinds: Deployment.

Transcribed from k8s.io/api apps/v1/generated.proto,
release v0.34.0, with each field's Go type from types.go beside it (by
scripts/transcribe_protobuf.py): message -> {field number: (JSON name, type, how)}.
Types and hows are explained in kubelab/apiserver/endpoints/protobuf/__init__.py.
"""

from __future__ import annotations

MESSAGES: dict[str, dict[int, tuple[str, str, str]]] = {
    "Deployment": {1: ("metadata", "ObjectMeta", ""), 2: ("spec", "DeploymentSpec", ""),
                   3: ("status", "DeploymentStatus", "")},
    "DeploymentCondition": {1: ("type", "str", ""), 2: ("status", "str", ""), 4: ("reason", "str", ""),
                            5: ("message", "str", ""), 6: ("lastUpdateTime", "time", ""),
                            7: ("lastTransitionTime", "time", "")},
    "DeploymentSpec": {1: ("replicas", "int", "ptr"), 2: ("selector", "LabelSelector", "ptr"),
                       3: ("template", "PodTemplateSpec", ""), 4: ("strategy", "DeploymentStrategy", ""),
                       5: ("minReadySeconds", "int", ""), 6: ("revisionHistoryLimit", "int", "ptr"),
                       7: ("paused", "bool", ""), 9: ("progressDeadlineSeconds", "int", "ptr")},
    "DeploymentStatus": {1: ("observedGeneration", "int", ""), 2: ("replicas", "int", ""),
                         3: ("updatedReplicas", "int", ""), 4: ("availableReplicas", "int", ""),
                         5: ("unavailableReplicas", "int", ""),
                         6: ("conditions", "DeploymentCondition", "rep"), 7: ("readyReplicas", "int", ""),
                         8: ("collisionCount", "int", "ptr"), 9: ("terminatingReplicas", "int", "ptr")},
    "DeploymentStrategy": {1: ("type", "str", ""), 2: ("rollingUpdate", "RollingUpdateDeployment", "ptr")},
    "RollingUpdateDeployment": {1: ("maxUnavailable", "intstr", "ptr"), 2: ("maxSurge", "intstr", "ptr")},
}
