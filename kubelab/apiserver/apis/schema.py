"""A light schema of the known fields of the main kinds, for strict decoding (decode.py).

kube-apiserver decodes a request body into Go structs, so a misspelt field or a value of the
wrong JSON type is refused before any validation runs. We keep the part of those structs that
the course uses (k8s.io/api core/v1, apps/v1, coordination/v1, rbac/v1, apiextensions/v1), with
Go's type names so that the error messages read like upstream's. Fields whose insides we do not
check (lifecycle hooks, affinity, volume sources, ...) are ANY: any JSON value is accepted there.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ANY", "OBJECT_META", "QUANTITY", "SCHEMAS", "STRING", "ListOf", "MapOf", "Scalar",
           "Struct", "Type"]


@dataclass(frozen=True)
class Scalar:
    go: str  # "string", "int32", "int64", "bool", "float64", "resource.Quantity", ...


@dataclass(frozen=True)
class ListOf:
    item: Type

    @property
    def go(self) -> str:
        return "[]" + self.item.go


@dataclass(frozen=True)
class MapOf:
    value: Type

    @property
    def go(self) -> str:
        return "map[string]" + self.value.go


@dataclass(frozen=True)
class Struct:
    name: str                      # Go struct name, e.g. "PodSpec"
    fields: dict[str, Type] = field(hash=False, compare=False)
    package: str = "v1"

    @property
    def go(self) -> str:
        return f"{self.package}.{self.name}"


Type = Scalar | ListOf | MapOf | Struct

STRING = Scalar("string")
INT32 = Scalar("int32")
INT64 = Scalar("int64")
BOOL = Scalar("bool")
QUANTITY = Scalar("resource.Quantity")
TIME = Scalar("metav1.Time")  # RFC 3339, stored in UTC to the second
MICRO_TIME = Scalar("metav1.MicroTime")  # RFC 3339 with microseconds (leases, events)
INT_OR_STRING = Scalar("intstr.IntOrString")
BYTES = Scalar("[]uint8")     # base64 text in JSON (Secret.data)
ANY = Scalar("any")           # not checked
STRINGS = ListOf(STRING)
STRING_MAP = MapOf(STRING)
RESOURCES = MapOf(QUANTITY)


def struct(name: str, package: str = "v1", /, **fields: Type) -> Struct:
    return Struct(name, fields, package)


def _strings(*names: str) -> dict[str, Type]:
    return dict.fromkeys(names, STRING)


def kind(name: str, package: str = "v1", /, **fields: Type) -> Struct:
    """A top-level kind: apiVersion, kind and metadata, plus its own fields."""
    return struct(name, package, apiVersion=STRING, kind=STRING, metadata=OBJECT_META, **fields)


# apiextensions v1 JSONSchemaProps: a typed decode refuses `minimum: "zero"` or
# `x-kubernetes-preserve-unknown-fields: "yes"` before validation runs. The struct refers to
# itself (properties, items, allOf, ...), so its fields are filled in after it exists.
FLOAT64 = Scalar("float64")
JSON_SCHEMA_PROPS = struct("JSONSchemaProps")
JSON_SCHEMA_PROPS.fields.update(
    _strings("id", "$schema", "$ref", "description", "type", "format", "title", "pattern",
             "x-kubernetes-list-type", "x-kubernetes-map-type"),
    **dict.fromkeys(("maximum", "minimum", "multipleOf"), FLOAT64),
    **dict.fromkeys(("maxLength", "minLength", "maxItems", "minItems", "maxProperties",
                     "minProperties"), INT64),
    **dict.fromkeys(("exclusiveMaximum", "exclusiveMinimum", "uniqueItems", "nullable",
                     "x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource",
                     "x-kubernetes-int-or-string"), BOOL),
    # JSON, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool and friends take more than one shape.
    **dict.fromkeys(("default", "enum", "example", "items", "additionalProperties",
                     "additionalItems", "dependencies", "externalDocs"), ANY),
    required=STRINGS, **{"x-kubernetes-list-map-keys": STRINGS},
    **dict.fromkeys(("allOf", "oneOf", "anyOf"), ListOf(JSON_SCHEMA_PROPS)),
    **{"not": JSON_SCHEMA_PROPS},
    **dict.fromkeys(("properties", "patternProperties", "definitions"),
                    MapOf(JSON_SCHEMA_PROPS)),
    **{"x-kubernetes-validations": ListOf(struct(
        "ValidationRule", **_strings("rule", "message", "messageExpression", "reason",
                                     "fieldPath"), optionalOldSelf=BOOL))})


OWNER_REFERENCE = struct("OwnerReference", **_strings("apiVersion", "kind", "name", "uid"),
                         controller=BOOL, blockOwnerDeletion=BOOL)
OBJECT_META = struct(
    "ObjectMeta",
    **_strings("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion"),
    creationTimestamp=TIME, deletionTimestamp=TIME,
    generation=INT64, deletionGracePeriodSeconds=INT64, labels=STRING_MAP,
    annotations=STRING_MAP, ownerReferences=ListOf(OWNER_REFERENCE), finalizers=STRINGS,
    managedFields=ANY)
LABEL_SELECTOR = struct(
    "LabelSelector", matchLabels=STRING_MAP,
    matchExpressions=ListOf(struct("LabelSelectorRequirement", key=STRING, operator=STRING,
                                   values=STRINGS)))
CONDITION_FIELDS: dict[str, Type] = {
    **_strings("type", "status", "reason", "message"), "lastProbeTime": TIME,
    "lastHeartbeatTime": TIME, "lastUpdateTime": TIME, "lastTransitionTime": TIME}

# ------------------------------------------------------------------------------ core/v1 Pod

# core/v1 Probe: its handler's fields and its numbers are typed, so a probe "yes" or a
# periodSeconds "2" is refused by the decoder, as Go's would.
PROBE = struct(
    "Probe",
    exec=struct("ExecAction", command=STRINGS),
    httpGet=struct("HTTPGetAction", path=STRING, port=INT_OR_STRING, host=STRING, scheme=STRING,
                   httpHeaders=ListOf(struct("HTTPHeader", name=STRING, value=STRING))),
    tcpSocket=struct("TCPSocketAction", port=INT_OR_STRING, host=STRING),
    grpc=struct("GRPCAction", port=INT32, service=STRING),
    **dict.fromkeys(("initialDelaySeconds", "timeoutSeconds", "periodSeconds",
                     "successThreshold", "failureThreshold"), INT32),
    terminationGracePeriodSeconds=INT64)
CONTAINER = struct(
    "Container",
    **_strings("name", "image", "workingDir", "terminationMessagePath",
               "terminationMessagePolicy", "imagePullPolicy", "restartPolicy"),
    command=STRINGS, args=STRINGS,
    ports=ListOf(struct("ContainerPort", name=STRING, hostPort=INT32, containerPort=INT32,
                        protocol=STRING, hostIP=STRING)),
    env=ListOf(struct("EnvVar", name=STRING, value=STRING, valueFrom=ANY)),
    envFrom=ANY,
    resources=struct("ResourceRequirements", limits=RESOURCES, requests=RESOURCES, claims=ANY),
    volumeMounts=ListOf(struct("VolumeMount", **_strings(
        "name", "mountPath", "subPath", "mountPropagation", "subPathExpr", "recursiveReadOnly"),
        readOnly=BOOL)),
    livenessProbe=PROBE, readinessProbe=PROBE, startupProbe=PROBE,
    **dict.fromkeys(("lifecycle", "securityContext", "resizePolicy", "volumeDevices"), ANY),
    stdin=BOOL, stdinOnce=BOOL, tty=BOOL)
TOLERATION = struct("Toleration", key=STRING, operator=STRING, value=STRING, effect=STRING,
                    tolerationSeconds=INT64)
VOLUME = struct("Volume", name=STRING, **dict.fromkeys((
    "emptyDir", "hostPath", "configMap", "secret", "persistentVolumeClaim", "projected",
    "downwardAPI", "nfs", "csi", "ephemeral", "image"), ANY))
POD_SPEC = struct(
    "PodSpec",
    **_strings("restartPolicy", "dnsPolicy", "serviceAccountName", "serviceAccount", "nodeName",
               "hostname", "subdomain", "schedulerName", "priorityClassName",
               "runtimeClassName", "preemptionPolicy"),
    volumes=ListOf(VOLUME), containers=ListOf(CONTAINER), initContainers=ListOf(CONTAINER),
    terminationGracePeriodSeconds=INT64, activeDeadlineSeconds=INT64, nodeSelector=STRING_MAP,
    **dict.fromkeys(("automountServiceAccountToken", "hostNetwork", "hostPID", "hostIPC",
                     "shareProcessNamespace", "enableServiceLinks", "setHostnameAsFQDN",
                     "hostUsers"), BOOL),
    imagePullSecrets=ListOf(struct("LocalObjectReference", name=STRING)),
    tolerations=ListOf(TOLERATION), priority=INT32, overhead=RESOURCES,
    **dict.fromkeys(("ephemeralContainers", "securityContext", "affinity", "hostAliases",
                     "dnsConfig", "readinessGates", "topologySpreadConstraints", "os",
                     "schedulingGates", "resourceClaims", "resources"), ANY))
POD_STATUS = struct(
    "PodStatus",
    **_strings("phase", "message", "reason", "nominatedNodeName", "hostIP", "podIP", "startTime",
               "qosClass", "resize"),
    observedGeneration=INT64,
    conditions=ListOf(struct("PodCondition", **CONDITION_FIELDS, observedGeneration=INT64)),
    **dict.fromkeys(("hostIPs", "podIPs", "initContainerStatuses", "containerStatuses",
                     "ephemeralContainerStatuses", "resourceClaimStatuses"), ANY))
POD_TEMPLATE = struct("PodTemplateSpec", metadata=OBJECT_META, spec=POD_SPEC)

# ------------------------------------------------------------------------------ apps/v1

INT32_FIELDS = ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas",
                "unavailableReplicas", "terminatingReplicas", "fullyLabeledReplicas",
                "collisionCount")
APPS_CONDITION = struct("DeploymentCondition", **CONDITION_FIELDS)
DEPLOYMENT = kind(
    "Deployment",
    spec=struct("DeploymentSpec", replicas=INT32, selector=LABEL_SELECTOR, template=POD_TEMPLATE,
                strategy=struct("DeploymentStrategy", type=STRING, rollingUpdate=struct(
                    "RollingUpdateDeployment", maxUnavailable=INT_OR_STRING,
                    maxSurge=INT_OR_STRING)),
                minReadySeconds=INT32, revisionHistoryLimit=INT32, paused=BOOL,
                progressDeadlineSeconds=INT32),
    status=struct("DeploymentStatus", observedGeneration=INT64,
                  **dict.fromkeys(INT32_FIELDS, INT32), conditions=ListOf(APPS_CONDITION)))
REPLICA_SET = kind(
    "ReplicaSet",
    spec=struct("ReplicaSetSpec", replicas=INT32, minReadySeconds=INT32,
                selector=LABEL_SELECTOR, template=POD_TEMPLATE),
    status=struct("ReplicaSetStatus", observedGeneration=INT64,
                  **dict.fromkeys(INT32_FIELDS, INT32), conditions=ListOf(APPS_CONDITION)))
DAEMON_SET = kind(
    "DaemonSet",
    spec=struct("DaemonSetSpec", selector=LABEL_SELECTOR, template=POD_TEMPLATE,
                updateStrategy=struct("DaemonSetUpdateStrategy", type=STRING, rollingUpdate=struct(
                    "RollingUpdateDaemonSet", maxUnavailable=INT_OR_STRING,
                    maxSurge=INT_OR_STRING)),
                minReadySeconds=INT32, revisionHistoryLimit=INT32),
    status=struct("DaemonSetStatus", observedGeneration=INT64, **dict.fromkeys((
        "currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady",
        "updatedNumberScheduled", "numberAvailable", "numberUnavailable", "collisionCount"),
        INT32), conditions=ListOf(struct("DaemonSetCondition", **CONDITION_FIELDS))))
CONTROLLER_REVISION = kind("ControllerRevision", data=ANY, revision=INT64)
PRIORITY_CLASS = kind("PriorityClass", value=INT32, globalDefault=BOOL, description=STRING,
                      preemptionPolicy=STRING)
# --- i31-sts ---
# apps/v1 StatefulSet; its volumeClaimTemplates are PersistentVolumeClaims whose spec is not
# type-checked here (the claim's own kind belongs to the storage work).
CLAIM_TEMPLATE = struct("PersistentVolumeClaim", apiVersion=STRING, kind=STRING,
                        metadata=OBJECT_META, spec=ANY, status=ANY)
STATEFUL_SET = kind(
    "StatefulSet",
    spec=struct("StatefulSetSpec", replicas=INT32, selector=LABEL_SELECTOR, template=POD_TEMPLATE,
                volumeClaimTemplates=ListOf(CLAIM_TEMPLATE), serviceName=STRING,
                podManagementPolicy=STRING,
                updateStrategy=struct("StatefulSetUpdateStrategy", type=STRING, rollingUpdate=struct(
                    "RollingUpdateStatefulSetStrategy", partition=INT32,
                    maxUnavailable=INT_OR_STRING)),
                revisionHistoryLimit=INT32, minReadySeconds=INT32,
                persistentVolumeClaimRetentionPolicy=struct(
                    "StatefulSetPersistentVolumeClaimRetentionPolicy", whenDeleted=STRING,
                    whenScaled=STRING),
                ordinals=struct("StatefulSetOrdinals", start=INT32)),
    status=struct("StatefulSetStatus", observedGeneration=INT64, **dict.fromkeys((
        "replicas", "readyReplicas", "currentReplicas", "updatedReplicas", "collisionCount",
        "availableReplicas"), INT32), currentRevision=STRING, updateRevision=STRING,
        conditions=ListOf(struct("StatefulSetCondition", **CONDITION_FIELDS))))
# core/v1 ReplicationController: a ReplicaSet whose selector is a plain map.
REPLICATION_CONTROLLER = kind(
    "ReplicationController",
    spec=struct("ReplicationControllerSpec", replicas=INT32, minReadySeconds=INT32,
                selector=STRING_MAP, template=POD_TEMPLATE),
    status=struct("ReplicationControllerStatus", observedGeneration=INT64, **dict.fromkeys((
        "replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas"), INT32),
        conditions=ListOf(struct("ReplicationControllerCondition", **CONDITION_FIELDS))))
# --- i31-hpa ---
# autoscaling/v2 (k8s.io/api autoscaling/v2 types.go)
CROSS_VERSION_OBJECT_REFERENCE = struct("CrossVersionObjectReference", **_strings(
    "kind", "name", "apiVersion"))
METRIC_TARGET = struct("MetricTarget", type=STRING, value=QUANTITY, averageValue=QUANTITY,
                       averageUtilization=INT32)
METRIC_VALUE_STATUS = struct("MetricValueStatus", value=QUANTITY, averageValue=QUANTITY,
                             averageUtilization=INT32)
METRIC_IDENTIFIER = struct("MetricIdentifier", name=STRING, selector=LABEL_SELECTOR)
HPA_SCALING_RULES = struct(
    "HPAScalingRules", stabilizationWindowSeconds=INT32, selectPolicy=STRING, tolerance=QUANTITY,
    policies=ListOf(struct("HPAScalingPolicy", type=STRING, value=INT32, periodSeconds=INT32)))
HORIZONTAL_POD_AUTOSCALER = kind(
    "HorizontalPodAutoscaler",
    spec=struct(
        "HorizontalPodAutoscalerSpec", scaleTargetRef=CROSS_VERSION_OBJECT_REFERENCE,
        minReplicas=INT32, maxReplicas=INT32,
        metrics=ListOf(struct(
            "MetricSpec", type=STRING,
            resource=struct("ResourceMetricSource", name=STRING, target=METRIC_TARGET),
            containerResource=struct("ContainerResourceMetricSource", name=STRING,
                                     container=STRING, target=METRIC_TARGET),
            pods=struct("PodsMetricSource", metric=METRIC_IDENTIFIER, target=METRIC_TARGET),
            object=struct("ObjectMetricSource", describedObject=CROSS_VERSION_OBJECT_REFERENCE,
                          metric=METRIC_IDENTIFIER, target=METRIC_TARGET),
            external=struct("ExternalMetricSource", metric=METRIC_IDENTIFIER,
                            target=METRIC_TARGET))),
        behavior=struct("HorizontalPodAutoscalerBehavior", scaleUp=HPA_SCALING_RULES,
                        scaleDown=HPA_SCALING_RULES)),
    status=struct(
        "HorizontalPodAutoscalerStatus", observedGeneration=INT64, lastScaleTime=STRING,
        currentReplicas=INT32, desiredReplicas=INT32,
        currentMetrics=ListOf(struct(
            "MetricStatus", type=STRING,
            resource=struct("ResourceMetricStatus", name=STRING, current=METRIC_VALUE_STATUS),
            containerResource=struct("ContainerResourceMetricStatus", name=STRING,
                                     container=STRING, current=METRIC_VALUE_STATUS),
            pods=ANY, object=ANY, external=ANY)),
        conditions=ListOf(struct("HorizontalPodAutoscalerCondition", **CONDITION_FIELDS))))

# ------------------------------------------------------------------------------ the rest

TAINT = struct("Taint", key=STRING, value=STRING, effect=STRING, timeAdded=STRING)
NODE = kind(
    "Node",
    spec=struct("NodeSpec", podCIDR=STRING, podCIDRs=STRINGS, providerID=STRING,
                unschedulable=BOOL, taints=ListOf(TAINT), configSource=ANY, externalID=STRING),
    status=struct("NodeStatus", capacity=RESOURCES, allocatable=RESOURCES, phase=STRING,
                  conditions=ListOf(struct("NodeCondition", **CONDITION_FIELDS)),
                  addresses=ListOf(struct("NodeAddress", type=STRING, address=STRING)),
                  **dict.fromkeys(("daemonEndpoints", "nodeInfo", "images", "volumesInUse",
                                   "volumesAttached", "config", "runtimeHandlers", "features"),
                                  ANY)))
POLICY_RULE = struct("PolicyRule", **dict.fromkeys(
    ("verbs", "apiGroups", "resources", "resourceNames", "nonResourceURLs"), STRINGS))
BINDING_FIELDS: dict[str, Type] = {
    "subjects": ListOf(struct("Subject", kind=STRING, apiGroup=STRING, name=STRING,
                              namespace=STRING)),
    "roleRef": struct("RoleRef", apiGroup=STRING, kind=STRING, name=STRING),
}
OBJECT_REFERENCE = struct("ObjectReference", **_strings(
    "kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"))

# ------------------------------------------------------------------------------ batch/v1 (notebook 08)

POD_FAILURE_POLICY = struct("PodFailurePolicy", rules=ListOf(struct(
    "PodFailurePolicyRule", action=STRING,
    onExitCodes=struct("PodFailurePolicyOnExitCodesRequirement", containerName=STRING,
                       operator=STRING, values=ListOf(INT32)),
    onPodConditions=ListOf(struct("PodFailurePolicyOnPodConditionsPattern", type=STRING,
                                  status=STRING)))))
JOB = kind(
    "Job",
    spec=struct("JobSpec", parallelism=INT32, completions=INT32, activeDeadlineSeconds=INT64,
                podFailurePolicy=POD_FAILURE_POLICY, successPolicy=ANY, backoffLimit=INT32,
                backoffLimitPerIndex=INT32, maxFailedIndexes=INT32, selector=LABEL_SELECTOR,
                manualSelector=BOOL, template=POD_TEMPLATE, ttlSecondsAfterFinished=INT32,
                completionMode=STRING, suspend=BOOL, podReplacementPolicy=STRING,
                managedBy=STRING),
    status=struct("JobStatus", conditions=ListOf(struct("JobCondition", **CONDITION_FIELDS)),
                  startTime=TIME, completionTime=TIME, active=INT32, succeeded=INT32,
                  failed=INT32, terminating=INT32, completedIndexes=STRING, failedIndexes=STRING,
                  uncountedTerminatedPods=struct("UncountedTerminatedPods", succeeded=STRINGS,
                                                 failed=STRINGS),
                  ready=INT32))

# --- i31-cron-pdb ---
# batch/v1 CronJob (kubelab/controllers/cronjob/) and policy/v1 PodDisruptionBudget
# (kubelab/controllers/disruption/).
CRON_JOB = kind(
    "CronJob",
    spec=struct("CronJobSpec", schedule=STRING, timeZone=STRING, startingDeadlineSeconds=INT64,
                concurrencyPolicy=STRING, suspend=BOOL,
                jobTemplate=struct("JobTemplateSpec", metadata=OBJECT_META,
                                   spec=JOB.fields["spec"]),
                successfulJobsHistoryLimit=INT32, failedJobsHistoryLimit=INT32),
    status=struct("CronJobStatus", active=ListOf(OBJECT_REFERENCE), lastScheduleTime=STRING,
                  lastSuccessfulTime=STRING))
POD_DISRUPTION_BUDGET = kind(
    "PodDisruptionBudget",
    spec=struct("PodDisruptionBudgetSpec", minAvailable=INT_OR_STRING, selector=LABEL_SELECTOR,
                maxUnavailable=INT_OR_STRING, unhealthyPodEvictionPolicy=STRING),
    status=struct("PodDisruptionBudgetStatus", observedGeneration=INT64,
                  disruptedPods=STRING_MAP, disruptionsAllowed=INT32, currentHealthy=INT32,
                  desiredHealthy=INT32, expectedPods=INT32,
                  conditions=ListOf(struct("Condition", **_strings(
                      "type", "status", "lastTransitionTime", "reason", "message"),
                      observedGeneration=INT64))))

# admissionregistration/v1 webhooks (kubelab/apiserver/admission/webhook/).
_WEBHOOK_FIELDS: dict[str, Type] = {
    **_strings("name", "failurePolicy", "matchPolicy", "sideEffects"),
    "clientConfig": struct("WebhookClientConfig", url=STRING, caBundle=BYTES, service=struct(
        "ServiceReference", namespace=STRING, name=STRING, path=STRING, port=INT32)),
    "rules": ListOf(struct("RuleWithOperations", operations=STRINGS, apiGroups=STRINGS,
                           apiVersions=STRINGS, resources=STRINGS, scope=STRING)),
    "namespaceSelector": LABEL_SELECTOR, "objectSelector": LABEL_SELECTOR,
    "timeoutSeconds": INT32, "admissionReviewVersions": STRINGS,
    "matchConditions": ListOf(struct("MatchCondition", name=STRING, expression=STRING)),
}
WEBHOOK_CONFIGURATIONS = (
    kind("MutatingWebhookConfiguration", webhooks=ListOf(struct(
        "MutatingWebhook", reinvocationPolicy=STRING, **_WEBHOOK_FIELDS))),
    kind("ValidatingWebhookConfiguration", webhooks=ListOf(struct(
        "ValidatingWebhook", **_WEBHOOK_FIELDS))),
)

SCHEMAS: dict[str, Struct] = {s.name: s for s in (
    *WEBHOOK_CONFIGURATIONS,
    kind("Pod", spec=POD_SPEC, status=POD_STATUS),
    DEPLOYMENT,
    REPLICA_SET,
    DAEMON_SET,
    CONTROLLER_REVISION,
    PRIORITY_CLASS,
    # --- i31-sts ---
    STATEFUL_SET,
    REPLICATION_CONTROLLER,
    # ---
    NODE,
    kind("Namespace", spec=struct("NamespaceSpec", finalizers=STRINGS),
         status=struct("NamespaceStatus", phase=STRING, conditions=ANY)),
    kind("ConfigMap", immutable=BOOL, data=STRING_MAP, binaryData=MapOf(BYTES)),
    kind("Secret", immutable=BOOL, data=MapOf(BYTES), stringData=STRING_MAP, type=STRING),
    kind("ServiceAccount", secrets=ANY, imagePullSecrets=ANY, automountServiceAccountToken=BOOL),
    kind("Event", involvedObject=OBJECT_REFERENCE, related=ANY, series=ANY,
         **_strings("reason", "message", "type", "action", "reportingComponent",
                    "reportingInstance"),
         firstTimestamp=TIME, lastTimestamp=TIME, eventTime=MICRO_TIME,
         source=struct("EventSource", component=STRING, host=STRING), count=INT32),
    kind("Lease", spec=struct("LeaseSpec", **_strings(
        "holderIdentity", "strategy", "preferredHolder"), acquireTime=MICRO_TIME, renewTime=MICRO_TIME,
        leaseDurationSeconds=INT32, leaseTransitions=INT32)),
    kind("Role", rules=ListOf(POLICY_RULE)),
    kind("ClusterRole", rules=ListOf(POLICY_RULE), aggregationRule=struct(
        "AggregationRule", clusterRoleSelectors=ListOf(LABEL_SELECTOR))),
    kind("RoleBinding", **BINDING_FIELDS),
    kind("ClusterRoleBinding", **BINDING_FIELDS),
    kind("CustomResourceDefinition", spec=struct(
        "CustomResourceDefinitionSpec", group=STRING, scope=STRING, preserveUnknownFields=BOOL,
        conversion=ANY,
        names=struct("CustomResourceDefinitionNames", plural=STRING, singular=STRING,
                     kind=STRING, listKind=STRING, shortNames=STRINGS, categories=STRINGS),
        versions=ListOf(struct("CustomResourceDefinitionVersion", name=STRING, served=BOOL,
                               storage=BOOL, deprecated=BOOL, deprecationWarning=STRING,
                               schema=struct("CustomResourceValidation",
                                             openAPIV3Schema=JSON_SCHEMA_PROPS),
                               **dict.fromkeys(("subresources", "additionalPrinterColumns",
                                                "selectableFields"), ANY)))),
        status=ANY),
    kind("Binding", target=OBJECT_REFERENCE),
    kind("Eviction", deleteOptions=struct(
        "DeleteOptions", gracePeriodSeconds=INT64, preconditions=struct(
            "Preconditions", uid=STRING, resourceVersion=STRING),
        orphanDependents=BOOL, propagationPolicy=STRING, dryRun=STRINGS)),
    kind("SelfSubjectAccessReview", spec=struct(
        "SelfSubjectAccessReviewSpec",
        resourceAttributes=struct("ResourceAttributes", **_strings(
            "namespace", "verb", "group", "version", "resource", "subresource", "name"),
            fieldSelector=ANY, labelSelector=ANY),
        nonResourceAttributes=struct("NonResourceAttributes", path=STRING, verb=STRING)),
        status=ANY),
    # --- csr --- what the CSR approver asks for the requestor (sarapprove.go authorize)
    kind("SubjectAccessReview", spec=struct(
        "SubjectAccessReviewSpec",
        resourceAttributes=struct("ResourceAttributes", **_strings(
            "namespace", "verb", "group", "version", "resource", "subresource", "name"),
            fieldSelector=ANY, labelSelector=ANY),
        nonResourceAttributes=struct("NonResourceAttributes", path=STRING, verb=STRING),
        user=STRING, groups=STRINGS, uid=STRING, extra=MapOf(STRINGS)),
        status=ANY),
    kind("SelfSubjectReview", status=ANY),
    kind("SelfSubjectRulesReview", spec=struct("SelfSubjectRulesReviewSpec", namespace=STRING),
         status=ANY),
    kind("Scale", spec=struct("ScaleSpec", replicas=INT32),
         status=struct("ScaleStatus", replicas=INT32, selector=STRING)),
    JOB,
    # --- i31-cron-pdb ---
    CRON_JOB,
    POD_DISRUPTION_BUDGET,
    # --- i31-hpa ---
    HORIZONTAL_POD_AUTOSCALER,
)}

# --- i31-storage ---
# core/v1 PersistentVolume and PersistentVolumeClaim, storage.k8s.io/v1 StorageClass (k8s.io/api
# core/v1 types.go, storage/v1 types.go). The volume sources' insides are not checked (ANY).
_NODE_SELECTOR = struct("NodeSelector", nodeSelectorTerms=ListOf(struct(
    "NodeSelectorTerm", **dict.fromkeys(("matchExpressions", "matchFields"), ListOf(struct(
        "NodeSelectorRequirement", key=STRING, operator=STRING, values=STRINGS))))))
_PV_SOURCES = ("hostPath", "local", "csi", "nfs", "iscsi", "fc", "rbd", "cephfs",
               "awsElasticBlockStore", "gcePersistentDisk", "azureDisk", "azureFile")
PERSISTENT_VOLUME = kind(
    "PersistentVolume",
    spec=struct("PersistentVolumeSpec", capacity=RESOURCES, accessModes=STRINGS,
                claimRef=OBJECT_REFERENCE, persistentVolumeReclaimPolicy=STRING,
                storageClassName=STRING, mountOptions=STRINGS, volumeMode=STRING,
                volumeAttributesClassName=STRING,
                nodeAffinity=struct("VolumeNodeAffinity", required=_NODE_SELECTOR),
                **dict.fromkeys(_PV_SOURCES, ANY)),
    status=struct("PersistentVolumeStatus", **_strings("phase", "message", "reason",
                                                        "lastPhaseTransitionTime")))
PERSISTENT_VOLUME_CLAIM = kind(
    "PersistentVolumeClaim",
    spec=struct("PersistentVolumeClaimSpec", accessModes=STRINGS, selector=LABEL_SELECTOR,
                resources=struct("VolumeResourceRequirements", limits=RESOURCES,
                                 requests=RESOURCES),
                **_strings("volumeName", "storageClassName", "volumeMode",
                           "volumeAttributesClassName"),
                dataSource=ANY, dataSourceRef=ANY),
    status=struct("PersistentVolumeClaimStatus", phase=STRING, accessModes=STRINGS,
                  capacity=RESOURCES, conditions=ANY, allocatedResources=RESOURCES,
                  allocatedResourceStatuses=STRING_MAP, **_strings(
                      "currentVolumeAttributesClassName"), modifyVolumeStatus=ANY))
STORAGE_CLASS = kind("StorageClass", provisioner=STRING, parameters=STRING_MAP,
                     reclaimPolicy=STRING, mountOptions=STRINGS, allowVolumeExpansion=BOOL,
                     volumeBindingMode=STRING, allowedTopologies=ANY)
SCHEMAS.update({s.name: s for s in (PERSISTENT_VOLUME, PERSISTENT_VOLUME_CLAIM, STORAGE_CLASS)})
# --- hpacsi --- storage.k8s.io/v1 VolumeAttachment and CSIDriver (k8s.io/api storage/v1 types.go)
_VA_ERROR = struct("VolumeError", time=STRING, message=STRING, errorCode=INT32)
VOLUME_ATTACHMENT = kind(
    "VolumeAttachment",
    spec=struct("VolumeAttachmentSpec", attacher=STRING, nodeName=STRING, source=struct(
        "VolumeAttachmentSource", persistentVolumeName=STRING, inlineVolumeSpec=ANY)),
    status=struct("VolumeAttachmentStatus", attached=BOOL, attachmentMetadata=STRING_MAP,
                  attachError=_VA_ERROR, detachError=_VA_ERROR))
CSI_DRIVER = kind("CSIDriver", spec=struct(
    "CSIDriverSpec", attachRequired=BOOL, podInfoOnMount=BOOL, storageCapacity=BOOL,
    requiresRepublish=BOOL, seLinuxMount=BOOL, fsGroupPolicy=STRING,
    volumeLifecycleModes=STRINGS, nodeAllocatableUpdatePeriodSeconds=ANY,
    tokenRequests=ListOf(struct("TokenRequest", audience=STRING, expirationSeconds=ANY))))
SCHEMAS.update({s.name: s for s in (VOLUME_ATTACHMENT, CSI_DRIVER)})

# --- csr --- certificates.k8s.io/v1 CertificateSigningRequest (k8s.io/api certificates/v1 types.go)
CERTIFICATE_SIGNING_REQUEST = kind(
    "CertificateSigningRequest",
    spec=struct("CertificateSigningRequestSpec", request=BYTES, signerName=STRING,
                expirationSeconds=INT32, usages=STRINGS, username=STRING, uid=STRING,
                groups=STRINGS, extra=MapOf(STRINGS)),
    status=struct("CertificateSigningRequestStatus", certificate=BYTES, conditions=ListOf(struct(
        "CertificateSigningRequestCondition", **_strings("type", "status", "reason", "message"),
        lastUpdateTime=TIME, lastTransitionTime=TIME))))
SCHEMAS[CERTIFICATE_SIGNING_REQUEST.name] = CERTIFICATE_SIGNING_REQUEST

# networking.k8s.io/v1 Ingress, IngressClass, NetworkPolicy (k8s.io/api networking/v1 types.go).
_SERVICE_BACKEND = struct("IngressServiceBackend", "v1", name=STRING, port=struct(
    "ServiceBackendPort", name=STRING, number=INT32))
_TYPED_REF = struct("TypedLocalObjectReference", apiGroup=STRING, kind=STRING, name=STRING)
_BACKEND = struct("IngressBackend", service=_SERVICE_BACKEND, resource=_TYPED_REF)
INGRESS = kind(
    "Ingress",
    spec=struct("IngressSpec", ingressClassName=STRING, defaultBackend=_BACKEND,
                tls=ListOf(struct("IngressTLS", hosts=STRINGS, secretName=STRING)),
                rules=ListOf(struct("IngressRule", host=STRING, http=struct(
                    "HTTPIngressRuleValue", paths=ListOf(struct(
                        "HTTPIngressPath", path=STRING, pathType=STRING, backend=_BACKEND)))))),
    status=struct("IngressStatus", loadBalancer=struct("IngressLoadBalancerStatus", ingress=ANY)))
INGRESS_CLASS = kind("IngressClass", spec=struct(
    "IngressClassSpec", controller=STRING, parameters=struct(
        "IngressClassParametersReference", **_strings("apiGroup", "kind", "name", "scope",
                                                       "namespace"))))
_PEER = struct("NetworkPolicyPeer", podSelector=LABEL_SELECTOR, namespaceSelector=LABEL_SELECTOR,
               ipBlock=struct("IPBlock", cidr=STRING, **{"except": STRINGS}))
_NP_PORT = struct("NetworkPolicyPort", protocol=STRING, port=INT_OR_STRING, endPort=INT32)
NETWORK_POLICY = kind("NetworkPolicy", spec=struct(
    "NetworkPolicySpec", podSelector=LABEL_SELECTOR, policyTypes=STRINGS,
    ingress=ListOf(struct("NetworkPolicyIngressRule", ports=ListOf(_NP_PORT), **{"from": ListOf(_PEER)})),
    egress=ListOf(struct("NetworkPolicyEgressRule", ports=ListOf(_NP_PORT), to=ListOf(_PEER)))))
SCHEMAS.update({s.name: s for s in (INGRESS, INGRESS_CLASS, NETWORK_POLICY)})

# --- sa --- authentication.k8s.io/v1 TokenRequest, the body of serviceaccounts/<name>/token
# (k8s.io/api authentication/v1 types.go).
TOKEN_REQUEST = kind("TokenRequest", spec=struct(
    "TokenRequestSpec", audiences=STRINGS, expirationSeconds=INT64,
    boundObjectRef=struct("BoundObjectReference", **_strings("kind", "apiVersion", "name", "uid"))),
    status=struct("TokenRequestStatus", token=STRING, expirationTimestamp=TIME))
SCHEMAS.update({TOKEN_REQUEST.name: TOKEN_REQUEST})

# core/v1 ResourceQuota (k8s.io/api core/v1 types.go).
RESOURCE_QUOTA = kind(
    "ResourceQuota",
    spec=struct("ResourceQuotaSpec", hard=RESOURCES, scopes=STRINGS, scopeSelector=struct(
        "ScopeSelector", matchExpressions=ListOf(struct(
            "ScopedResourceSelectorRequirement", scopeName=STRING, operator=STRING,
            values=STRINGS)))),
    status=struct("ResourceQuotaStatus", hard=RESOURCES, used=RESOURCES))
SCHEMAS[RESOURCE_QUOTA.name] = RESOURCE_QUOTA
