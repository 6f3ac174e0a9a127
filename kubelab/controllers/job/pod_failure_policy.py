"""spec.podFailurePolicy: what a failed pod means for its Job
(kubernetes/kubernetes pkg/controller/job/pod_failure_policy.go).

The first rule that matches decides: FailJob fails the whole Job at once (with a message naming
the rule), Ignore does not count the failure against backoffLimit, Count counts it (as if no
rule matched). A rule matches on a container's non-zero exit code (In / NotIn a list) or on a
pod condition, such as the DisruptionTarget condition an eviction or preemption sets. A rule
whose action is unknown is skipped, as is an exit-code rule with an unknown operator (it
matches nothing). FailIndex is reported as the matching action and counted, as upstream's
matchPodFailurePolicy does; what it does to an index (backoffLimitPerIndex) kubelab leaves out.
"""

from __future__ import annotations

from kubelab.api import Object

__all__ = ["match_pod_failure_policy"]


def _match_on_exit_codes(pod: Object, requirement: Object) -> Object | None:
    """matchOnExitCodes: the first terminated container (regular ones first, then init
    containers) with a non-zero exit code the requirement matches."""
    status = pod.get("status") or {}
    for key in ("containerStatuses", "initContainerStatuses"):
        for cs in status.get(key) or ():
            terminated = (cs.get("state") or {}).get("terminated")
            if not terminated or terminated.get("exitCode", 0) == 0:
                continue
            name = requirement.get("containerName")
            if name is not None and name != cs.get("name"):
                continue
            if _is_on_exit_codes_operator_matching(terminated["exitCode"], requirement):
                return cs  # type: ignore[no-any-return]
    return None


def _is_on_exit_codes_operator_matching(code: int, requirement: Object) -> bool:
    """isOnExitCodesOperatorMatching: In, NotIn; an unknown operator matches nothing."""
    values = requirement.get("values") or []
    operator = requirement.get("operator")
    if operator == "In":
        return code in values
    if operator == "NotIn":
        return code not in values
    return False


def _match_on_pod_conditions(pod: Object, patterns: list[Object]) -> Object | None:
    for condition in (pod.get("status") or {}).get("conditions") or ():
        for pattern in patterns:
            if condition.get("type") == pattern.get("type") and \
                    condition.get("status") == pattern.get("status", "True"):
                return condition  # type: ignore[no-any-return]
    return None


def match_pod_failure_policy(policy: Object | None, pod: Object) -> tuple[str | None, bool, str | None]:
    """matchPodFailurePolicy: (the FailJob message or None, whether the failure counts towards
    backoffLimit, the matching rule's action or None). A matching rule whose action is none of
    Ignore, FailIndex, Count, FailJob is skipped: the next rule decides."""
    if policy is None:
        return None, True, None
    meta = pod["metadata"]
    for index, rule in enumerate(policy.get("rules") or ()):
        action = rule.get("action")
        if rule.get("onExitCodes") is not None:
            cs = _match_on_exit_codes(pod, rule["onExitCodes"])
            if cs is None:
                continue
            code = cs["state"]["terminated"]["exitCode"]
            message = (f"Container {cs.get('name', '')} for pod {meta.get('namespace', '')}/"
                       f"{meta['name']} failed with exit code {code} matching {action} rule at "
                       f"index {index}")
        elif rule.get("onPodConditions") is not None:
            condition = _match_on_pod_conditions(pod, rule["onPodConditions"])
            if condition is None:
                continue
            message = (f"Pod {meta.get('namespace', '')}/{meta['name']} has condition "
                       f"{condition.get('type')} matching {action} rule at index {index}")
        else:
            continue
        if action == "Ignore":
            return None, False, action
        if action in ("FailIndex", "Count"):  # FailIndex: kubelab has no backoffLimitPerIndex
            return None, True, action
        if action == "FailJob":
            return message, True, action
    return None, True, None
