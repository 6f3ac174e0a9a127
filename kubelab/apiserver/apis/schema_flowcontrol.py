"""The light schema of flowcontrol.apiserver.k8s.io/v1 (k8s.io/api flowcontrol/v1 types.go):
FlowSchema and PriorityLevelConfiguration, for strict decoding (schema.py, decode.py)."""

from __future__ import annotations

from kubelab.apiserver.apis.schema import (
    BOOL,
    INT32,
    SCHEMAS,
    STRING,
    STRINGS,
    ListOf,
    Struct,
    kind,
    struct,
)

__all__ = ["FLOWCONTROL_SCHEMAS"]

_NAMED = {"name": STRING}
CONDITIONS = ListOf(struct("Condition", **dict.fromkeys(
    ("type", "status", "lastTransitionTime", "reason", "message"), STRING)))
SUBJECT = struct("Subject", kind=STRING, user=struct("UserSubject", **_NAMED),
                 group=struct("GroupSubject", **_NAMED),
                 serviceAccount=struct("ServiceAccountSubject", name=STRING, namespace=STRING))
RULES = struct(
    "PolicyRulesWithSubjects", subjects=ListOf(SUBJECT),
    resourceRules=ListOf(struct("ResourcePolicyRule", verbs=STRINGS, apiGroups=STRINGS,
                                resources=STRINGS, clusterScope=BOOL, namespaces=STRINGS)),
    nonResourceRules=ListOf(struct("NonResourcePolicyRule", verbs=STRINGS,
                                   nonResourceURLs=STRINGS)))
FLOW_SCHEMA = kind(
    "FlowSchema",
    spec=struct("FlowSchemaSpec",
                priorityLevelConfiguration=struct("PriorityLevelConfigurationReference", **_NAMED),
                matchingPrecedence=INT32,
                distinguisherMethod=struct("FlowDistinguisherMethod", type=STRING),
                rules=ListOf(RULES)),
    status=struct("FlowSchemaStatus", conditions=CONDITIONS))
PRIORITY_LEVEL = kind(
    "PriorityLevelConfiguration",
    spec=struct(
        "PriorityLevelConfigurationSpec", type=STRING,
        limited=struct(
            "LimitedPriorityLevelConfiguration", nominalConcurrencyShares=INT32,
            lendablePercent=INT32, borrowingLimitPercent=INT32,
            limitResponse=struct("LimitResponse", type=STRING, queuing=struct(
                "QueuingConfiguration", queues=INT32, handSize=INT32, queueLengthLimit=INT32))),
        exempt=struct("ExemptPriorityLevelConfiguration", nominalConcurrencyShares=INT32,
                      lendablePercent=INT32)),
    status=struct("PriorityLevelConfigurationStatus", conditions=CONDITIONS))

FLOWCONTROL_SCHEMAS: dict[str, Struct] = {s.name: s for s in (FLOW_SCHEMA, PRIORITY_LEVEL)}
# Served from the start: kubelab.apiserver imports the flowcontrol package, which imports this.
SCHEMAS.update(FLOWCONTROL_SCHEMAS)
