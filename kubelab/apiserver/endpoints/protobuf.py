"""Reading the protobuf bodies that kubectl's typed clients send.

kubectl talks JSON to most endpoints, but its typed clients (`kubectl create configmap`,
`create namespace`, `create deployment`, `create cronjob`, `create job`, `run`, `drain`'s
evictions, `auth can-i`'s access reviews, `debug node/` and `debug --copy-to`'s pods, with
their volumes) send `Content-Type: application/vnd.kubernetes.protobuf`. The body is the
Kubernetes protobuf envelope (k8s.io/apimachinery pkg/runtime/serializer/protobuf): the magic
bytes "k8s\\0", then a runtime.Unknown message whose typeMeta names the kind and whose raw
field holds the object, encoded by the field numbers of k8s.io/api's generated.proto files.

kubelab keeps the JSON form everywhere, so this module turns such a body back into the JSON
object a JSON client would have sent. It knows the messages those kubectl commands use (the
table below, written from core/v1, apps/v1, policy/v1, authorization/v1, rbac/v1,
autoscaling/v2 and meta/v1 generated.proto). A field it does not know is refused with 415, naming the field,
rather than dropped, unless it holds Go's zero value, which JSON would have left out. A JSON
client (`kubectl apply -f`, the Python client, kopf) never comes here.

Go's protobuf encoder writes every non-pointer field, empty or not, where its JSON encoder
leaves empty ones out (omitempty): decoding drops empty strings, lists, maps and messages,
and zero numbers and false unless the Go field is a pointer (marked "ptr"), where zero means
something (replicas: 0).
"""

from __future__ import annotations

import base64
import datetime
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ApiError

__all__ = ["PROTOBUF", "decode_protobuf"]

PROTOBUF = "application/vnd.kubernetes.protobuf"
_MAGIC = b"k8s\x00"
# "map" a map<string, type>, "ptr" one value that keeps zero and false, "inline" a message
# whose fields the JSON form puts in the parent's (a Volume's VolumeSource).
# Types: str, int, bool, bytes (base64 in JSON), quantity, time, intstr, or a message name.
_F = dict[int, tuple[str, str, str]]
MESSAGES: dict[str, _F] = {
    "Unknown": {1: ("typeMeta", "TypeMeta", ""), 2: ("raw", "bytes", ""),
                3: ("contentEncoding", "str", ""), 4: ("contentType", "str", "")},
    "TypeMeta": {1: ("apiVersion", "str", ""), 2: ("kind", "str", "")},
    "ObjectMeta": {1: ("name", "str", ""), 2: ("generateName", "str", ""), 3: ("namespace", "str", ""),
                   4: ("selfLink", "str", ""), 5: ("uid", "str", ""), 6: ("resourceVersion", "str", ""),
                   7: ("generation", "int", ""), 8: ("creationTimestamp", "time", ""),
                   9: ("deletionTimestamp", "time", ""), 10: ("deletionGracePeriodSeconds", "int", "ptr"),
                   11: ("labels", "str", "map"), 12: ("annotations", "str", "map"),
                   13: ("ownerReferences", "OwnerReference", "rep"), 14: ("finalizers", "str", "rep")},
    "OwnerReference": {1: ("kind", "str", ""), 3: ("name", "str", ""), 4: ("uid", "str", ""),
                       5: ("apiVersion", "str", ""), 6: ("controller", "bool", "ptr"),
                       7: ("blockOwnerDeletion", "bool", "ptr")},
    "LabelSelector": {1: ("matchLabels", "str", "map"),
                      2: ("matchExpressions", "LabelSelectorRequirement", "rep")},
    "LabelSelectorRequirement": {1: ("key", "str", ""), 2: ("operator", "str", ""),
                                 3: ("values", "str", "rep")},
    # core/v1
    "ConfigMap": {1: ("metadata", "ObjectMeta", ""), 2: ("data", "str", "map"),
                  3: ("binaryData", "bytes", "map"), 4: ("immutable", "bool", "ptr")},
    "Secret": {1: ("metadata", "ObjectMeta", ""), 2: ("data", "bytes", "map"), 3: ("type", "str", ""),
               4: ("stringData", "str", "map"), 5: ("immutable", "bool", "ptr")},
    "Namespace": {1: ("metadata", "ObjectMeta", ""), 2: ("spec", "NamespaceSpec", "")},
    "NamespaceSpec": {1: ("finalizers", "str", "rep")},
    "ServiceAccount": {1: ("metadata", "ObjectMeta", ""), 2: ("secrets", "ObjectReference", "rep"),
                       3: ("imagePullSecrets", "LocalObjectReference", "rep"),
                       4: ("automountServiceAccountToken", "bool", "ptr")},
    "ObjectReference": {1: ("kind", "str", ""), 2: ("namespace", "str", ""), 3: ("name", "str", ""),
                        4: ("uid", "str", ""), 5: ("apiVersion", "str", ""),
                        6: ("resourceVersion", "str", ""), 7: ("fieldPath", "str", "")},
    "LocalObjectReference": {1: ("name", "str", "")},
    "Pod": {1: ("metadata", "ObjectMeta", ""), 2: ("spec", "PodSpec", "")},
    "PodTemplateSpec": {1: ("metadata", "ObjectMeta", ""), 2: ("spec", "PodSpec", "")},
    "PodSpec": {1: ("volumes", "Volume", "rep"),
                2: ("containers", "Container", "rep"), 3: ("restartPolicy", "str", ""),
                4: ("terminationGracePeriodSeconds", "int", "ptr"),
                5: ("activeDeadlineSeconds", "int", "ptr"),
                6: ("dnsPolicy", "str", ""), 7: ("nodeSelector", "str", "map"),
                8: ("serviceAccountName", "str", ""), 9: ("serviceAccount", "str", ""),
                10: ("nodeName", "str", ""), 11: ("hostNetwork", "bool", ""), 12: ("hostPID", "bool", ""),
                13: ("hostIPC", "bool", ""), 15: ("imagePullSecrets", "LocalObjectReference", "rep"),
                16: ("hostname", "str", ""), 17: ("subdomain", "str", ""), 19: ("schedulerName", "str", ""),
                20: ("initContainers", "Container", "rep"),
                21: ("automountServiceAccountToken", "bool", "ptr"),
                22: ("tolerations", "Toleration", "rep"), 24: ("priorityClassName", "str", ""),
                25: ("priority", "int", "ptr"), 27: ("shareProcessNamespace", "bool", "ptr"),
                30: ("enableServiceLinks", "bool", "ptr"), 31: ("preemptionPolicy", "str", "ptr"),
                34: ("ephemeralContainers", "EphemeralContainer", "rep")},
    # kubectl debug: node/ (a hostPath of /) and --copy-to (the pod's own volumes).
    "Volume": {1: ("name", "str", ""), 2: ("", "VolumeSource", "inline")},
    "VolumeSource": {1: ("hostPath", "HostPathVolumeSource", "ptr"),
                     2: ("emptyDir", "EmptyDirVolumeSource", "ptr"),
                     6: ("secret", "SecretVolumeSource", "ptr"),
                     10: ("persistentVolumeClaim", "PersistentVolumeClaimVolumeSource", "ptr"),
                     19: ("configMap", "ConfigMapVolumeSource", "ptr")},
    "HostPathVolumeSource": {1: ("path", "str", ""), 2: ("type", "str", "ptr")},
    "EmptyDirVolumeSource": {1: ("medium", "str", ""), 2: ("sizeLimit", "quantity", "ptr")},
    "SecretVolumeSource": {1: ("secretName", "str", ""), 2: ("items", "KeyToPath", "rep"),
                           3: ("defaultMode", "int", "ptr"), 4: ("optional", "bool", "ptr")},
    "ConfigMapVolumeSource": {1: ("", "LocalObjectReference", "inline"), 2: ("items", "KeyToPath", "rep"),
                              3: ("defaultMode", "int", "ptr"), 4: ("optional", "bool", "ptr")},
    "PersistentVolumeClaimVolumeSource": {1: ("claimName", "str", ""), 2: ("readOnly", "bool", "")},
    "KeyToPath": {1: ("key", "str", ""), 2: ("path", "str", ""), 3: ("mode", "int", "ptr")},
    "VolumeMount": {1: ("name", "str", ""), 2: ("readOnly", "bool", ""), 3: ("mountPath", "str", ""),
                    4: ("subPath", "str", ""), 5: ("mountPropagation", "str", "ptr"),
                    6: ("subPathExpr", "str", "")},
    "Container": {1: ("name", "str", ""), 2: ("image", "str", ""), 3: ("command", "str", "rep"),
                  4: ("args", "str", "rep"), 5: ("workingDir", "str", ""),
                  6: ("ports", "ContainerPort", "rep"),
                  7: ("env", "EnvVar", "rep"), 8: ("resources", "ResourceRequirements", ""),
                  9: ("volumeMounts", "VolumeMount", "rep"),
                  13: ("terminationMessagePath", "str", ""), 14: ("imagePullPolicy", "str", ""),
                  16: ("stdin", "bool", ""), 17: ("stdinOnce", "bool", ""), 18: ("tty", "bool", ""),
                  20: ("terminationMessagePolicy", "str", ""), 24: ("restartPolicy", "str", "")},
    # EphemeralContainerCommon has a Container's field numbers; the JSON inlines it.
    "EphemeralContainer": {1: ("", "Container", "inline"), 2: ("targetContainerName", "str", "")},
    "ContainerPort": {1: ("name", "str", ""), 2: ("hostPort", "int", ""), 3: ("containerPort", "int", ""),
                      4: ("protocol", "str", ""), 5: ("hostIP", "str", "")},
    "EnvVar": {1: ("name", "str", ""), 2: ("value", "str", "")},
    "ResourceRequirements": {1: ("limits", "quantity", "map"), 2: ("requests", "quantity", "map")},
    "Toleration": {1: ("key", "str", ""), 2: ("operator", "str", ""), 3: ("value", "str", ""),
                   4: ("effect", "str", ""), 5: ("tolerationSeconds", "int", "ptr")},
    # apps/v1
    "Deployment": {1: ("metadata", "ObjectMeta", ""), 2: ("spec", "DeploymentSpec", "")},
    "DeploymentSpec": {1: ("replicas", "int", "ptr"), 2: ("selector", "LabelSelector", ""),
                       3: ("template", "PodTemplateSpec", ""), 4: ("strategy", "DeploymentStrategy", ""),
                       5: ("minReadySeconds", "int", ""), 6: ("revisionHistoryLimit", "int", "ptr"),
                       7: ("paused", "bool", ""), 9: ("progressDeadlineSeconds", "int", "ptr")},
    "DeploymentStrategy": {1: ("type", "str", ""), 2: ("rollingUpdate", "RollingUpdateDeployment", "")},
    "RollingUpdateDeployment": {1: ("maxUnavailable", "intstr", ""), 2: ("maxSurge", "intstr", "")},
    # policy/v1 and meta/v1 DeleteOptions
    "Eviction": {1: ("metadata", "ObjectMeta", ""), 2: ("deleteOptions", "DeleteOptions", "")},
    "DeleteOptions": {1: ("gracePeriodSeconds", "int", "ptr"), 2: ("preconditions", "Preconditions", ""),
                      3: ("orphanDependents", "bool", "ptr"), 4: ("propagationPolicy", "str", ""),
                      5: ("dryRun", "str", "rep")},
    "Preconditions": {1: ("uid", "str", ""), 2: ("resourceVersion", "str", "")},
    # authorization/v1
    "SelfSubjectAccessReview": {1: ("metadata", "ObjectMeta", ""),
                                2: ("spec", "SelfSubjectAccessReviewSpec", "")},
    "SelfSubjectAccessReviewSpec": {1: ("resourceAttributes", "ResourceAttributes", ""),
                                    2: ("nonResourceAttributes", "NonResourceAttributes", "")},
    "ResourceAttributes": {1: ("namespace", "str", ""), 2: ("verb", "str", ""), 3: ("group", "str", ""),
                           4: ("version", "str", ""), 5: ("resource", "str", ""),
                           6: ("subresource", "str", ""), 7: ("name", "str", "")},
    "NonResourceAttributes": {1: ("path", "str", ""), 2: ("verb", "str", "")},
    "SelfSubjectRulesReview": {1: ("metadata", "ObjectMeta", ""),
                               2: ("spec", "SelfSubjectRulesReviewSpec", "")},
    "SelfSubjectRulesReviewSpec": {1: ("namespace", "str", "")},
    # authentication/v1 (`kubectl auth whoami` sends one with nothing in it)
    "SelfSubjectReview": {1: ("metadata", "ObjectMeta", "")},
    # rbac/v1
    "Role": {1: ("metadata", "ObjectMeta", ""), 2: ("rules", "PolicyRule", "rep")},
    "ClusterRole": {1: ("metadata", "ObjectMeta", ""), 2: ("rules", "PolicyRule", "rep")},
    "PolicyRule": {1: ("verbs", "str", "rep"), 2: ("apiGroups", "str", "rep"), 3: ("resources", "str", "rep"),
                   4: ("resourceNames", "str", "rep"), 5: ("nonResourceURLs", "str", "rep")},
    "RoleBinding": {1: ("metadata", "ObjectMeta", ""), 2: ("subjects", "Subject", "rep"),
                    3: ("roleRef", "RoleRef", "")},
    "ClusterRoleBinding": {1: ("metadata", "ObjectMeta", ""), 2: ("subjects", "Subject", "rep"),
                           3: ("roleRef", "RoleRef", "")},
    "Subject": {1: ("kind", "str", ""), 2: ("apiGroup", "str", ""), 3: ("name", "str", ""),
                4: ("namespace", "str", "")},
    "RoleRef": {1: ("apiGroup", "str", ""), 2: ("kind", "str", ""), 3: ("name", "str", "")},
    # --- i31-cron-pdb --- batch/v1: `kubectl create cronjob` and `create job`
    "CronJob": {1: ("metadata", "ObjectMeta", ""), 2: ("spec", "CronJobSpec", "")},
    "CronJobSpec": {1: ("schedule", "str", ""), 2: ("startingDeadlineSeconds", "int", "ptr"),
                    3: ("concurrencyPolicy", "str", ""), 4: ("suspend", "bool", "ptr"),
                    5: ("jobTemplate", "JobTemplateSpec", ""),
                    6: ("successfulJobsHistoryLimit", "int", "ptr"),
                    7: ("failedJobsHistoryLimit", "int", "ptr"), 8: ("timeZone", "str", "ptr")},
    "JobTemplateSpec": {1: ("metadata", "ObjectMeta", ""), 2: ("spec", "JobSpec", "")},
    "Job": {1: ("metadata", "ObjectMeta", ""), 2: ("spec", "JobSpec", "")},
    "JobSpec": {1: ("parallelism", "int", "ptr"), 2: ("completions", "int", "ptr"),
                3: ("activeDeadlineSeconds", "int", "ptr"), 4: ("selector", "LabelSelector", ""),
                5: ("manualSelector", "bool", "ptr"), 6: ("template", "PodTemplateSpec", ""),
                7: ("backoffLimit", "int", "ptr"), 8: ("ttlSecondsAfterFinished", "int", "ptr"),
                9: ("completionMode", "str", "ptr"), 10: ("suspend", "bool", "ptr")},
    # --- i31-hpa ---
    # autoscaling/v2 (`kubectl autoscale`)
    "HorizontalPodAutoscaler": {1: ("metadata", "ObjectMeta", ""),
                                2: ("spec", "HorizontalPodAutoscalerSpec", "")},
    "HorizontalPodAutoscalerSpec": {1: ("scaleTargetRef", "CrossVersionObjectReference", ""),
                                    2: ("minReplicas", "int", "ptr"), 3: ("maxReplicas", "int", ""),
                                    4: ("metrics", "MetricSpec", "rep"),
                                    5: ("behavior", "HorizontalPodAutoscalerBehavior", "")},
    "CrossVersionObjectReference": {1: ("kind", "str", ""), 2: ("name", "str", ""),
                                    3: ("apiVersion", "str", "")},
    "MetricSpec": {1: ("type", "str", ""), 4: ("resource", "ResourceMetricSource", ""),
                   7: ("containerResource", "ContainerResourceMetricSource", "")},
    "ResourceMetricSource": {1: ("name", "str", ""), 2: ("target", "MetricTarget", "")},
    "ContainerResourceMetricSource": {1: ("name", "str", ""), 2: ("target", "MetricTarget", ""),
                                      3: ("container", "str", "")},
    "MetricTarget": {1: ("type", "str", ""), 2: ("value", "quantity", ""),
                     3: ("averageValue", "quantity", ""), 4: ("averageUtilization", "int", "ptr")},
    "HorizontalPodAutoscalerBehavior": {1: ("scaleUp", "HPAScalingRules", ""),
                                        2: ("scaleDown", "HPAScalingRules", "")},
    "HPAScalingRules": {1: ("selectPolicy", "str", "ptr"), 2: ("policies", "HPAScalingPolicy", "rep"),
                        3: ("stabilizationWindowSeconds", "int", "ptr"), 4: ("tolerance", "quantity", "")},
    "HPAScalingPolicy": {1: ("type", "str", ""), 2: ("value", "int", ""), 3: ("periodSeconds", "int", "")},
}
# --- sa --- authentication/v1 (`kubectl create token`)
MESSAGES.update({
    "TokenRequest": {1: ("metadata", "ObjectMeta", ""), 2: ("spec", "TokenRequestSpec", "")},
    "TokenRequestSpec": {1: ("audiences", "str", "rep"), 3: ("boundObjectRef", "BoundObjectReference", ""),
                         4: ("expirationSeconds", "int", "ptr")},
    "BoundObjectReference": {1: ("kind", "str", ""), 2: ("apiVersion", "str", ""), 3: ("name", "str", ""),
                             4: ("uid", "str", "")},
})
# The special messages of apimachinery, each with its own JSON form.
_QUANTITY = {1: ("string", "str", "")}
_TIME = {1: ("seconds", "int", ""), 2: ("nanos", "int", "")}
_INTSTR = {1: ("type", "int", ""), 2: ("intVal", "int", ""), 3: ("strVal", "str", "")}
_SPECIAL: dict[str, _F] = {"quantity": _QUANTITY, "time": _TIME, "intstr": _INTSTR}


def _unsupported(what: str) -> ApiError:
    return ApiError(415, "UnsupportedMediaType",
                    f"kubelab cannot read {what} in a protobuf body; send the object as JSON "
                    f"(for example with kubectl apply -f)")


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise ApiError(400, "BadRequest", "proto: truncated or malformed varint")
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7


def _fields(buf: bytes) -> list[tuple[int, int | bytes]]:
    """The (field number, value) pairs of one message: varints as ints, the rest as bytes."""
    out: list[tuple[int, int | bytes]] = []
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
            out.append((number, value - (1 << 64) if value >= 1 << 63 else value))
        elif wire == 2:
            length, pos = _varint(buf, pos)
            if pos + length > len(buf):
                raise ApiError(400, "BadRequest", "proto: unexpected end of message")
            out.append((number, buf[pos:pos + length]))
            pos += length
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            out.append((number, buf[pos:pos + size]))
            pos += size
        else:
            raise ApiError(400, "BadRequest", f"proto: illegal wireType {wire}")
    return out


def _scalar(kind: str, raw: int | bytes) -> Any:
    if kind in ("int", "bool"):
        if not isinstance(raw, int):
            raise ApiError(400, "BadRequest", "proto: wrong wireType for an integer field")
        return bool(raw) if kind == "bool" else raw
    if not isinstance(raw, bytes):
        raise ApiError(400, "BadRequest", "proto: wrong wireType for a length-delimited field")
    if kind == "str":
        return raw.decode("utf-8", "replace")
    if kind == "bytes":
        return base64.b64encode(raw).decode()
    if kind == "quantity":
        return _message(raw, "Quantity", _QUANTITY).get("string", "0")
    if kind == "time":
        t = _message(raw, "Time", _TIME, keep_zero=True)
        if not t.get("seconds"):
            return None
        when = datetime.datetime.fromtimestamp(t["seconds"], datetime.UTC)
        return when.strftime("%Y-%m-%dT%H:%M:%SZ")
    if kind == "intstr":
        v = _message(raw, "IntOrString", _INTSTR, keep_zero=True)
        return v.get("strVal", "") if v.get("type") == 1 else v.get("intVal", 0)
    return _message(raw, kind, MESSAGES[kind])


def _is_zero(raw: int | bytes) -> bool:
    """0, empty, or a message all of whose fields are zero (an empty `status: {}`)."""
    if isinstance(raw, int) or not raw:
        return not raw
    try:
        return all(_is_zero(value) for _, value in _fields(raw))
    except ApiError:  # not a message: a non-empty string or bytes
        return False


def _empty(value: Any) -> bool:
    return value is None or value in ("", 0, False) or value == [] or value == {}


def _message(buf: bytes, name: str, fields: _F, keep_zero: bool = False) -> Object:
    obj: Object = {}
    for number, raw in _fields(buf):
        if number not in fields:
            if _is_zero(raw):  # a Go zero value: what JSON would have left out
                continue
            raise _unsupported(f"field {number} of {name}")
        key, kind, how = fields[number]
        if how == "map":
            if not isinstance(raw, bytes):
                raise ApiError(400, "BadRequest", "proto: wrong wireType for a map entry")
            entry = dict(_fields(raw))
            k = _scalar("str", entry.get(1, b""))
            obj.setdefault(key, {})[k] = _scalar(kind, entry.get(2, b"" if kind != "int" else 0))
        elif how == "rep":
            obj.setdefault(key, []).append(_scalar(kind, raw))
        elif how == "inline":
            obj.update(_scalar(kind, raw))
        else:
            value = _scalar(kind, raw)
            if keep_zero or how == "ptr" or not _empty(value):
                obj[key] = value
    return obj


def decode_protobuf(body: bytes) -> Object:
    """A protobuf request body as the JSON object it stands for."""
    if not body.startswith(_MAGIC):
        raise ApiError(400, "BadRequest", "provided data does not appear to be a protobuf message, "
                                          "expected prefix [107 56 115 0]")
    unknown = _message(body[len(_MAGIC):], "Unknown", MESSAGES["Unknown"])
    type_meta = unknown.get("typeMeta") or {}
    kind = type_meta.get("kind", "")
    if kind not in MESSAGES or kind in ("Unknown", "TypeMeta"):
        raise _unsupported(f"the kind {kind or '(none)'}")
    raw = base64.b64decode(unknown.get("raw", ""))
    obj = {"apiVersion": type_meta.get("apiVersion", ""), "kind": kind}
    obj.update(_message(raw, kind, MESSAGES[kind]))
    return obj
