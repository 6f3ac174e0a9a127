"""apiregistration.k8s.io/v1 APIServices: stored, validated and printed as kube-aggregator does
(pkg/apis/apiregistration/validation/validation.go, pkg/registry/apiservice/strategy.go and
etcd/etcd.go's ConvertToTable)."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab.api.errors import ApiError
from kubelab.apiserver.apis.validation.apiregistration import validate_api_service
from kubelab.cluster import Cluster


def api_service(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
            "metadata": {"name": name},
            "spec": {"groupPriorityMinimum": 1000, "versionPriority": 15, **spec}}


REMOTE = {"group": "wardle.example.com", "version": "v1alpha1",
          "service": {"namespace": "wardle", "name": "api"}}


@pytest.mark.parametrize(("name", "spec", "errors"), [
    ("v1alpha1.wardle.example.com", REMOTE, []),
    ("v1.", {"version": "v1"}, []),   # the legacy core group: empty group, Local
    ("v1alpha1.wardle.example.com", {**REMOTE, "insecureSkipTLSVerify": True}, []),
    ("v1.wardle.example.com", REMOTE,
     ['metadata.name: Invalid value: "v1.wardle.example.com": must be '
      '`spec.version+"."+spec.group`: "v1alpha1.wardle.example.com"']),
    ("a/b", {"version": "v1"},
     ['metadata.name: Invalid value: "a/b": may not contain \'/\'']),
    ("v2.", {"version": "v2"},
     ["spec.group: Required value: only v1 may have an empty group and it better be legacy kube"]),
    ("V1.Foo", {"group": "Foo", "version": "V1"},
     ['spec.group: Invalid value: "Foo": a lowercase RFC 1123 subdomain must consist of lower '
      "case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
      "character (e.g. 'example.com', regex used for validation is "
      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
      'spec.version: Invalid value: "V1": a DNS-1035 label must consist of lower case '
      "alphanumeric characters or '-', start with an alphabetic character, and end with an "
      "alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
      "'[a-z]([-a-z0-9]*[a-z0-9])?')"]),
    ("v1.", {"version": "v1", "groupPriorityMinimum": 20001, "versionPriority": 0},
     ["spec.groupPriorityMinimum: Invalid value: 20001: must be positive and less than 20000",
      "spec.versionPriority: Invalid value: 0: must be positive and less than 1000"]),
    ("v1.", {"version": "v1", "caBundle": "YWJj", "insecureSkipTLSVerify": True},
     ['spec.caBundle: Invalid value: "3 bytes": local APIServices may not have a caBundle',
      "spec.insecureSkipTLSVerify: Invalid value: true: local APIServices may not have "
      "insecureSkipTLSVerify"]),
    ("v1alpha1.wardle.example.com", {**REMOTE, "service": {}, "caBundle": "YWJj",
                                     "insecureSkipTLSVerify": True},
     ["spec.service.namespace: Required value", "spec.service.name: Required value",
      "spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present"]),
])
def test_validate_api_service(name: str, spec: dict[str, Any], errors: list[str]) -> None:
    assert [str(e) for e in validate_api_service(api_service(name, **spec))] == errors


def test_create_status_and_table() -> None:
    c = Cluster(nodes=1, seed=1)
    remote = c.client.create(api_service("v1alpha1.wardle.example.com", **REMOTE))
    local = c.client.create(api_service("v1.", version="v1"))
    # PrepareForCreate: the status is emptied; a local APIService is Available at once.
    assert remote["status"] == {}
    assert local["status"]["conditions"] == [{
        "type": "Available", "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z",
        "reason": "Local", "message": "Local APIServices are always available"}]
    with pytest.raises(ApiError) as exists:
        c.client.create(api_service("v1alpha1.wardle.example.com", **REMOTE))
    assert exists.value.message == ('apiservices.apiregistration.k8s.io '
                                    '"v1alpha1.wardle.example.com" already exists')
    # The status subresource changes only the status; a condition's status is True, False or
    # Unknown (ValidateAPIServiceStatus).
    remote["status"] = {"conditions": [{"type": "Available", "status": "False",
                                        "reason": "ServiceNotFound",
                                        "message": 'service/api in "wardle" is not present'}]}
    remote["spec"]["versionPriority"] = 99
    c.client.update_status(remote)
    stored = c.client.get("apiservices", "v1alpha1.wardle.example.com", "")
    assert stored["spec"]["versionPriority"] == 15
    assert c.kubectl("get apiservices").splitlines() == [
        "NAME                          SERVICE      AVAILABLE                 AGE",
        "v1.                           Local        True                      0s",
        "v1alpha1.wardle.example.com   wardle/api   False (ServiceNotFound)   0s"]
    remote = c.client.get("apiservices", "v1alpha1.wardle.example.com", "")
    remote["status"]["conditions"][0]["status"] = "Maybe"
    with pytest.raises(ApiError) as invalid:
        c.client.update_status(remote)
    assert 'status.conditions[0].status: Unsupported value: "Maybe": supported values: ' \
        '"True", "False", "Unknown"' in invalid.value.message


def test_a_cluster_trace_gains_only_the_garbage_collectors_list_and_watch() -> None:
    # Nothing creates APIServices; the garbage collector monitors every deletable kind (as
    # upstream's, which watches APIServices too), so its list and watch are all that is new.
    c = Cluster(nodes=1, seed=2)
    c.run(5)
    seen = {(r.component, r.verb) for r in c.trace.filter(object_prefix="apiservices")}
    assert seen == {("apiserver", "list"), ("apiserver", "watch"),
                    ("controller-manager/reflector", "list"),
                    ("controller-manager/reflector", "watch")}
