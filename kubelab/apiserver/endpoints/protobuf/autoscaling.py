"""The protobuf field tables of autoscaling.

Its kinds: HorizontalPodAutoscaler (v2) and Scale (v1).

Transcribed from k8s.io/api autoscaling/v2/generated.proto and autoscaling/v1/generated.proto,
release v0.34.0, with each field's Go type from types.go beside it (by
scripts/transcribe_protobuf.py): message -> {field number: (JSON name, type, how)}.
Types and hows are explained in kubelab/apiserver/endpoints/protobuf/__init__.py.
"""

from __future__ import annotations

MESSAGES: dict[str, dict[int, tuple[str, str, str]]] = {
    "ContainerResourceMetricSource": {1: ("name", "str", ""), 2: ("target", "MetricTarget", ""),
                                      3: ("container", "str", "")},
    "ContainerResourceMetricStatus": {1: ("name", "str", ""), 2: ("current", "MetricValueStatus", ""),
                                      3: ("container", "str", "")},
    "CrossVersionObjectReference": {1: ("kind", "str", ""), 2: ("name", "str", ""),
                                    3: ("apiVersion", "str", "")},
    "ExternalMetricSource": {1: ("metric", "MetricIdentifier", ""), 2: ("target", "MetricTarget", "")},
    "ExternalMetricStatus": {1: ("metric", "MetricIdentifier", ""),
                             2: ("current", "MetricValueStatus", "")},
    "HPAScalingPolicy": {1: ("type", "str", ""), 2: ("value", "int", ""), 3: ("periodSeconds", "int", "")},
    "HPAScalingRules": {1: ("selectPolicy", "str", "ptr"), 2: ("policies", "HPAScalingPolicy", "rep"),
                        3: ("stabilizationWindowSeconds", "int", "ptr"),
                        4: ("tolerance", "quantity", "ptr")},
    "HorizontalPodAutoscaler": {1: ("metadata", "ObjectMeta", ""),
                                2: ("spec", "HorizontalPodAutoscalerSpec", ""),
                                3: ("status", "HorizontalPodAutoscalerStatus", "")},
    "HorizontalPodAutoscalerBehavior": {1: ("scaleUp", "HPAScalingRules", "ptr"),
                                        2: ("scaleDown", "HPAScalingRules", "ptr")},
    "HorizontalPodAutoscalerCondition": {1: ("type", "str", ""), 2: ("status", "str", ""),
                                         3: ("lastTransitionTime", "time", ""), 4: ("reason", "str", ""),
                                         5: ("message", "str", "")},
    "HorizontalPodAutoscalerSpec": {1: ("scaleTargetRef", "CrossVersionObjectReference", ""),
                                    2: ("minReplicas", "int", "ptr"), 3: ("maxReplicas", "int", ""),
                                    4: ("metrics", "MetricSpec", "rep"),
                                    5: ("behavior", "HorizontalPodAutoscalerBehavior", "ptr")},
    "HorizontalPodAutoscalerStatus": {1: ("observedGeneration", "int", "ptr"),
                                      2: ("lastScaleTime", "time", "ptr"),
                                      3: ("currentReplicas", "int", ""), 4: ("desiredReplicas", "int", ""),
                                      5: ("currentMetrics", "MetricStatus", "rep"),
                                      6: ("conditions", "HorizontalPodAutoscalerCondition", "rep")},
    "MetricIdentifier": {1: ("name", "str", ""), 2: ("selector", "LabelSelector", "ptr")},
    "MetricSpec": {1: ("type", "str", ""), 2: ("object", "ObjectMetricSource", "ptr"),
                   3: ("pods", "PodsMetricSource", "ptr"), 4: ("resource", "ResourceMetricSource", "ptr"),
                   5: ("external", "ExternalMetricSource", "ptr"),
                   7: ("containerResource", "ContainerResourceMetricSource", "ptr")},
    "MetricStatus": {1: ("type", "str", ""), 2: ("object", "ObjectMetricStatus", "ptr"),
                     3: ("pods", "PodsMetricStatus", "ptr"), 4: ("resource", "ResourceMetricStatus", "ptr"),
                     5: ("external", "ExternalMetricStatus", "ptr"),
                     7: ("containerResource", "ContainerResourceMetricStatus", "ptr")},
    "MetricTarget": {1: ("type", "str", ""), 2: ("value", "quantity", "ptr"),
                     3: ("averageValue", "quantity", "ptr"), 4: ("averageUtilization", "int", "ptr")},
    "MetricValueStatus": {1: ("value", "quantity", "ptr"), 2: ("averageValue", "quantity", "ptr"),
                          3: ("averageUtilization", "int", "ptr")},
    "ObjectMetricSource": {1: ("describedObject", "CrossVersionObjectReference", ""),
                           2: ("target", "MetricTarget", ""), 3: ("metric", "MetricIdentifier", "")},
    "ObjectMetricStatus": {1: ("metric", "MetricIdentifier", ""), 2: ("current", "MetricValueStatus", ""),
                           3: ("describedObject", "CrossVersionObjectReference", "")},
    "PodsMetricSource": {1: ("metric", "MetricIdentifier", ""), 2: ("target", "MetricTarget", "")},
    "PodsMetricStatus": {1: ("metric", "MetricIdentifier", ""), 2: ("current", "MetricValueStatus", "")},
    "ResourceMetricSource": {1: ("name", "str", ""), 2: ("target", "MetricTarget", "")},
    "ResourceMetricStatus": {1: ("name", "str", ""), 2: ("current", "MetricValueStatus", "")},
    "Scale": {1: ("metadata", "ObjectMeta", ""), 2: ("spec", "ScaleSpec", ""),
              3: ("status", "ScaleStatus", "")},
    "ScaleSpec": {1: ("replicas", "int", "")},
    "ScaleStatus": {1: ("replicas", "int", ""), 2: ("selector", "str", "")},
}
