"""The StatefulSet controller (kubelab/controllers/statefulset/) and its API, with upstream's
tables where they transcribe: pkg/controller/statefulset/stateful_set_utils_test.go
(TestGetParentNameAndOrdinal, TestIdentityMatches, TestStorageMatches, TestUpdateIdentity,
TestUpdateStorage, TestUpdateClaimOwnerRefForSetAndPod, TestUpdateClaimControllerRef,
TestHasUnexpectedController, TestNewVersionedStatefulSetPod's partition rule),
stateful_set_control_test.go's scenarios (CreatesPods, ScalesUp, ScalesDown, ReplacesPods,
the OrderedReady and Parallel policies, RollingUpdate with partition, OnDelete,
revision history) on a running cluster, and pkg/apis/apps/validation's messages."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab import Cluster
from kubelab.api.errors import ApiError
from kubelab.client.indexer import Indexer
from kubelab.cluster.anatomy import STANDARD_STORAGE_CLASS
from kubelab.controllers.statefulset.stateful_pod_control import (
    StatefulPodControl,
    has_unexpected_controller,
    update_claim_owner_ref_for_set_and_pod,
)
from kubelab.controllers.statefulset.stateful_set_control import (
    get_stateful_set_max_unavailable,
    slow_start_batch,
)
from kubelab.controllers.statefulset.stateful_set_utils import (
    get_parent_name_and_ordinal,
    identity_matches,
    new_stateful_set_pod,
    new_versioned_stateful_set_pod,
    storage_matches,
    update_identity,
    update_storage,
)


def _cluster(nodes: int) -> Cluster:
    """A cluster with kind's default StorageClass (the anatomy's): the claims of
    volumeClaimTemplates need a class to be provisioned (without one they stay Pending, and so
    does the pod, as on a cluster that has no default class)."""
    c = Cluster(nodes=nodes)
    assert c.client.get("storageclasses", "standard")["provisioner"] == \
        STANDARD_STORAGE_CLASS["provisioner"]
    return c

def _set(replicas: int = 3, **spec: Any) -> dict[str, Any]:
    """newStatefulSet: a set "foo" with one claim template per volume mount ("datadir")."""
    return {"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "foo", "namespace": "default", "uid": "test"},
            "spec": {"replicas": replicas, "serviceName": "governingsvc",
                     "selector": {"matchLabels": {"foo": "bar"}},
                     "template": {"metadata": {"labels": {"foo": "bar"}},
                                  "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}},
                     "volumeClaimTemplates": [{"metadata": {"name": "datadir"},
                                               "spec": {"accessModes": ["ReadWriteOnce"]}}],
                     "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
                     **spec}}


# TestGetParentNameAndOrdinal, and names that are not <parent>-<ordinal>.
@pytest.mark.parametrize(("name", "parent", "ordinal"), [
    ("foo-1", "foo", 1), ("foo-10", "foo", 10), ("foo-bar-2", "foo-bar", 2),
    ("foo", "", -1), ("foo-", "", -1), ("1", "", -1)])
def test_get_parent_name_and_ordinal(name: str, parent: str, ordinal: int) -> None:
    assert get_parent_name_and_ordinal({"metadata": {"name": name}}) == (parent, ordinal)


def test_identity_matches_and_update_identity_restores_it() -> None:
    sts = _set()
    pod = new_stateful_set_pod(sts, 1)
    assert identity_matches(sts, pod)
    assert pod["metadata"]["labels"] == {"foo": "bar", "statefulset.kubernetes.io/pod-name": "foo-1",
                                         "apps.kubernetes.io/pod-index": "1"}
    assert (pod["spec"]["hostname"], pod["spec"]["subdomain"]) == ("foo-1", "governingsvc")
    for breaks in (lambda p: p["metadata"].update(name="foo-x"),       # not an ordinal
                   lambda p: p["metadata"].update(namespace="other"),
                   lambda p: p["metadata"]["labels"].pop("statefulset.kubernetes.io/pod-name"),
                   lambda p: p["metadata"]["labels"].update({"apps.kubernetes.io/pod-index": "7"})):
        broken = new_stateful_set_pod(sts, 1)
        breaks(broken)
        assert not identity_matches(sts, broken)
        if broken["metadata"]["name"] == "foo-1":  # update_identity needs the ordinal
            update_identity(sts, broken)
            assert identity_matches(sts, broken)


def test_storage_matches_and_update_storage_restores_it() -> None:
    sts = _set()
    pod = new_stateful_set_pod(sts, 2)
    assert storage_matches(sts, pod)
    assert pod["spec"]["volumes"] == [{"name": "datadir",
                                       "persistentVolumeClaim": {"claimName": "datadir-foo-2"}}]
    pod["spec"]["volumes"] = [{"name": "datadir", "persistentVolumeClaim": {"claimName": "other"}},
                              {"name": "scratch", "emptyDir": {}}]
    assert not storage_matches(sts, pod)
    update_storage(sts, pod)  # the claim volume restored, other volumes kept after it
    assert storage_matches(sts, pod)
    assert [v["name"] for v in pod["spec"]["volumes"]] == ["datadir", "scratch"]
    pod["spec"].pop("volumes")
    assert not storage_matches(sts, pod)


@pytest.mark.parametrize(("partition", "current_ordinals"), [(0, []), (2, [0, 1]), (5, [0, 1, 2])])
def test_new_versioned_pods_keep_the_current_revision_below_the_partition(
        partition: int, current_ordinals: list[int]) -> None:
    sts = _set(updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": partition}})
    revisions = [new_versioned_stateful_set_pod(sts, sts, "foo-current", "foo-update", ordinal)
                 ["metadata"]["labels"]["controller-revision-hash"] for ordinal in range(3)]
    assert [i for i, r in enumerate(revisions) if r == "foo-current"] == current_ordinals


# TestUpdateClaimOwnerRefForSetAndPod: (name, whenScaled, whenDeleted, condemned, needsPodRef,
# needsSetRef, unexpectedController), each run over the 8 variations of existing references.
CLAIM_OWNER_CASES = [
    ("retain", "Retain", "Retain", False, False, False, False),
    ("delete with set", "Retain", "Delete", False, False, True, False),
    ("delete with scaledown, not condemned", "Delete", "Retain", False, False, False, False),
    ("delete on scaledown, condemned", "Delete", "Retain", True, True, False, False),
    ("delete on both, not condemned", "Delete", "Delete", False, False, True, False),
    ("delete on both, condemned", "Delete", "Delete", True, True, False, False),
    ("unexpected controller", "Delete", "Delete", True, False, False, True),
]


@pytest.mark.parametrize(("name", "scaled", "deleted", "condemned", "needs_pod", "needs_set",
                          "unexpected"), CLAIM_OWNER_CASES)
@pytest.mark.parametrize("variation", range(8))
def test_update_claim_owner_ref_for_set_and_pod(name: str, scaled: str, deleted: str,
                                                condemned: bool, needs_pod: bool, needs_set: bool,
                                                unexpected: bool, variation: int) -> None:
    sts = {"metadata": {"name": "ss", "uid": "ss-123"}, "spec": {
        "replicas": 5, "persistentVolumeClaimRetentionPolicy": {"whenScaled": scaled,
                                                                 "whenDeleted": deleted}}}
    pod = {"metadata": {"name": "pod-8" if condemned else "pod-1", "uid": "pod-456"}}
    refs: list[dict[str, Any]] = []
    if variation & 1:
        refs.append({"apiVersion": "v1", "kind": "Pod", "name": pod["metadata"]["name"],
                     "uid": "pod-456", "controller": True})
    if variation & 2:
        refs.append({"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "ss",
                     "uid": "ss-123", "controller": True})
    if variation & 3:  # upstream's extraOwner: must not matter
        refs.append({"apiVersion": "custom/v1", "kind": "random", "name": "random", "uid": "abc"})
    if unexpected:
        refs.append({"apiVersion": "custom/v1", "kind": "Unknown", "name": "unknown", "uid": "xyz",
                     "controller": True})
    claim = {"metadata": {"ownerReferences": refs}}
    update_claim_owner_ref_for_set_and_pod(claim, sts, pod)

    def is_controller(uid: str) -> bool:
        ref = next((r for r in claim["metadata"]["ownerReferences"] if r.get("uid") == uid), None)
        return bool(ref and ref.get("controller"))
    assert is_controller("pod-456") == needs_pod, name
    assert is_controller("ss-123") == needs_set, name


SET_REF = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "sts", "uid": "123",
           "controller": True}


# TestUpdateClaimControllerRef: (name, originalRefs, expectedRefs) for pod-0 of a 1-replica
# set "sts" (uid 123) that deletes its claims both ways.
@pytest.mark.parametrize(("name", "original", "expected"), [
    ("set correctly", [SET_REF, {"apiVersion": "someone", "kind": "Else", "name": "foo"}],
     [SET_REF, {"apiVersion": "someone", "kind": "Else", "name": "foo"}]),
    ("missing controller", [{**SET_REF, "controller": None}], [SET_REF]),
    ("matching name but missing", [{"apiVersion": "someone", "kind": "else", "name": "sts", "uid": "456"}],
     [{"apiVersion": "someone", "kind": "else", "name": "sts", "uid": "456"}, SET_REF]),
    ("not present", [], [SET_REF]),
    ("controller, but no UID", [{k: v for k, v in SET_REF.items() if k != "uid"}], []),
    ("neither controller nor UID", [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "sts"}], []),
])
def test_update_claim_controller_ref(name: str, original: list[dict[str, Any]],
                                     expected: list[dict[str, Any]]) -> None:
    sts = {"metadata": {"name": "sts", "uid": "123"}, "spec": {
        "replicas": 1, "persistentVolumeClaimRetentionPolicy": {"whenScaled": "Delete",
                                                                 "whenDeleted": "Delete"}}}
    claim = {"metadata": {"ownerReferences": [dict(r) for r in original]}}
    update_claim_owner_ref_for_set_and_pod(claim, sts, {"metadata": {"name": "pod-0", "uid": "456"}})

    def view(refs: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        return [(r.get("apiVersion"), r.get("kind"), r.get("name"), r.get("uid"),
                 bool(r.get("controller"))) for r in refs]
    assert view(claim["metadata"]["ownerReferences"]) == view(expected), name


def _controller(kind: str, name: str, uid: str, controller: bool | None = True) -> dict[str, Any]:
    api_version = {"Pod": "v1", "StatefulSet": "apps/v1", "Set": "apps/v1"}.get(kind, "chipmunks/v1")
    ref: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid}
    if controller is not None:
        ref["controller"] = controller
    return ref


# TestHasUnexpectedController: a set "set" (uid set-uid) and a pod "pod" (uid pod-uid).
@pytest.mark.parametrize(("name", "refs", "unexpected"), [
    ("custom controller", [_controller("CustomController", "simon", "other-uid")], True),
    ("custom non-controller", [_controller("CustomController", "simon", "other-uid", False)], False),
    ("custom unspecified controller", [_controller("CustomController", "simon", "other-uid", None)], False),
    ("other pod controller", [_controller("Pod", "simon", "other-uid")], True),
    ("other set controller", [_controller("Set", "simon", "other-uid")], True),
    ("own set controller", [_controller("StatefulSet", "set", "set-uid")], False),
    ("own set controller, stale uid", [_controller("StatefulSet", "set", "stale-uid")], True),
    ("own pod controller", [_controller("Pod", "pod", "pod-uid")], False),
    ("own pod controller, stale uid", [_controller("Pod", "pod", "stale-uid")], True),
    ("own controller and another", [_controller("Pod", "pod", "pod-uid"),
                                    _controller("CustomController", "simon", "other-uid")], True),
    ("own controller and a non-controller", [_controller("Pod", "pod", "pod-uid"),
                                             _controller("CustomController", "simon", "other-uid",
                                                         False)], False),
])
def test_has_unexpected_controller(name: str, refs: list[dict[str, Any]], unexpected: bool) -> None:
    claim = {"metadata": {"ownerReferences": refs}}
    pod = {"metadata": {"name": "pod", "uid": "pod-uid"}}
    sts: dict[str, Any] = {"metadata": {"name": "set", "uid": "set-uid"}, "spec": {}}
    assert not has_unexpected_controller(claim, sts, pod), name  # no policy: Retain, anything goes
    for scaled, deleted in (("Delete", "Retain"), ("Retain", "Delete"), ("Delete", "Delete")):
        sts["spec"]["persistentVolumeClaimRetentionPolicy"] = {"whenScaled": scaled,
                                                               "whenDeleted": deleted}
        assert has_unexpected_controller(claim, sts, pod) == unexpected, (name, scaled, deleted)


def test_slow_start_batch_doubles_and_stops_after_a_failed_batch() -> None:
    calls: list[int] = []

    def fn(i: int) -> None:
        calls.append(i)
        if i == 4:
            raise ApiError(500, "InternalError", "boom")
    successes, error = slow_start_batch(1, 10, fn)
    assert calls == [0, 1, 2, 3, 4] and successes == 4 and error is not None  # batches 1, 2, 4
    assert slow_start_batch(1, 7, lambda i: None) == (7, None)


@pytest.mark.parametrize(("value", "replicas", "expected"), [
    (None, 5, 1), (3, 5, 3), ("50%", 5, 2), ("10%", 5, 1), ("100%", 4, 4)])
def test_get_stateful_set_max_unavailable(value: Any, replicas: int, expected: int) -> None:
    assert get_stateful_set_max_unavailable(value, replicas) == expected


# ---------------------------------------------------------------- the API


WEB: dict[str, Any] = {
    "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web"},
    "spec": {"serviceName": "nginx", "replicas": 3, "selector": {"matchLabels": {"app": "nginx"}},
             "template": {"metadata": {"labels": {"app": "nginx"}},
                          "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}},
             "volumeClaimTemplates": [{"metadata": {"name": "www"}, "spec": {
                 "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}}


def _web(**spec: Any) -> dict[str, Any]:
    return {**WEB, "spec": {**WEB["spec"], **spec}}


def test_defaults_as_set_defaults_stateful_set() -> None:
    c = Cluster(nodes=1, components=[])
    body = _web(updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}})
    del body["spec"]["replicas"]
    sts = c.client.create(body)
    spec = sts["spec"]
    assert spec["replicas"] == 1 and spec["podManagementPolicy"] == "OrderedReady"
    assert spec["revisionHistoryLimit"] == 10
    # MaxUnavailableStatefulSet is alpha (off) in 1.34: the strategy drops the field.
    assert spec["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    assert spec["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Retain",
                                                            "whenScaled": "Retain"}
    assert spec["volumeClaimTemplates"][0]["spec"]["volumeMode"] == "Filesystem"
    assert sts["status"] == {"replicas": 0, "availableReplicas": 0}
    assert sts["metadata"]["generation"] == 1
    on_delete = c.client.create({**_web(updateStrategy={"type": "OnDelete"}),
                                 "metadata": {"name": "od"}})
    assert on_delete["spec"]["updateStrategy"] == {"type": "OnDelete"}


@pytest.mark.parametrize(("change", "message"), [
    ({"podManagementPolicy": "Sometimes"},
     "spec.podManagementPolicy: Invalid value: \"Sometimes\": must be 'OrderedReady' or 'Parallel'"),
    ({"updateStrategy": {"type": "OnDelete", "rollingUpdate": {"partition": 1}}},
     "spec.updateStrategy.rollingUpdate: Invalid value:"),
    ({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": -1}}},
     "spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than or equal to 0"),
    ({"replicas": -1}, "spec.replicas: Invalid value: -1: must be greater than or equal to 0"),
    ({"ordinals": {"start": -2}},
     "spec.ordinals.start: Invalid value: -2: must be greater than or equal to 0"),
    ({"persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Keep", "whenScaled": "Retain"}},
     'spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: "Keep": '
     'supported values: "Retain", "Delete"'),
    ({"selector": {"matchLabels": {"app": "other"}}},
     "spec.template.metadata.labels: Invalid value:"),
    ({"selector": {}}, "empty selector is invalid for statefulset"),
    ({"serviceName": "Not_A_Label"}, "spec.serviceName: Invalid value: \"Not_A_Label\""),
])
def test_validation_in_upstreams_words(change: dict[str, Any], message: str) -> None:
    c = Cluster(nodes=1, components=[])
    with pytest.raises(ApiError) as err:
        c.client.create(_web(**change))
    assert err.value.code == 422 and message in err.value.message, err.value.message


def test_only_the_mutable_fields_may_change() -> None:
    c = Cluster(nodes=1, components=[])
    sts = c.client.create(WEB)
    for field, value in (("serviceName", "other"), ("podManagementPolicy", "Parallel"),
                         ("volumeClaimTemplates", [])):
        with pytest.raises(ApiError) as err:
            c.client.update({**sts, "spec": {**sts["spec"], field: value}})
        assert err.value.message == (
            'StatefulSet.apps "web" is invalid: spec: Forbidden: updates to statefulset spec for '
            "fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', "
            "'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and "
            "'minReadySeconds' are forbidden")
    updated = c.client.update({**sts, "spec": {**sts["spec"], "replicas": 5, "minReadySeconds": 3,
                                              "ordinals": {"start": 1}}})
    assert updated["metadata"]["generation"] == 2
    bad = {**updated, "status": {"replicas": 1, "readyReplicas": 2}}
    with pytest.raises(ApiError) as err:
        c.client.update_status(bad)
    assert "status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas" in \
        err.value.message
    assert c.kubectl("scale sts web --replicas=2") == "statefulset.apps/web scaled"
    assert c.get("statefulsets", "web")["spec"]["replicas"] == 2


# ---------------------------------------------------------------- a running cluster


def _pods(c: Cluster, label: str = "app=nginx") -> list[dict[str, Any]]:
    return [p for p in c.get("pods", label_selector=label) if not p["metadata"].get("deletionTimestamp")]


def _ready(pod: dict[str, Any]) -> bool:
    return any(cond.get("type") == "Ready" and cond.get("status") == "True"
               for cond in (pod.get("status") or {}).get("conditions") or ())


def _status(c: Cluster, name: str = "web") -> dict[str, Any]:
    return c.get("statefulsets", name).get("status") or {}


def test_ordered_ready_creates_one_pod_at_a_time_with_stable_identities() -> None:
    c = _cluster(nodes=2)
    c.apply(WEB)
    seen: list[tuple[list[str], list[str]]] = []

    def watch() -> bool:
        pods = sorted(_pods(c), key=lambda p: p["metadata"]["name"])
        view = ([p["metadata"]["name"] for p in pods], [p["metadata"]["name"] for p in pods if _ready(p)])
        if not seen or seen[-1] != view:
            seen.append(view)
        return _status(c).get("readyReplicas") == 3
    c.run_until(watch, timeout=120)
    # Pod n+1 appears only once pods 0..n are Running and Ready.
    for names, ready in seen:
        assert names == [f"web-{i}" for i in range(len(names))]
        assert len(ready) >= len(names) - 1 and ready == names[:len(ready)]
    pod = c.get("pods", "web-1")
    assert pod["metadata"]["labels"] == {
        "app": "nginx", "statefulset.kubernetes.io/pod-name": "web-1",
        "apps.kubernetes.io/pod-index": "1",
        "controller-revision-hash": _status(c)["updateRevision"]}
    assert (pod["spec"]["hostname"], pod["spec"]["subdomain"]) == ("web-1", "nginx")
    assert pod["spec"]["volumes"][0] == {"name": "www", "persistentVolumeClaim": {"claimName": "www-web-1"}}
    assert pod["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet"
    status = _status(c)
    revision = status["updateRevision"]
    assert status == {"observedGeneration": 1, "replicas": 3, "readyReplicas": 3,
                      "availableReplicas": 3, "currentReplicas": 3, "updatedReplicas": 3,
                      "currentRevision": revision, "updateRevision": revision, "collisionCount": 0}
    revisions = c.get("controllerrevisions")
    assert [(r["metadata"]["name"], r["revision"]) for r in revisions] == [(revision, 1)]
    assert revision.startswith("web-")
    events = [e["message"] for e in c.get("events") if e["involvedObject"]["kind"] == "StatefulSet"]
    # Each pod's claim first (recordClaimEvent's words end in "success"), then the pod.
    assert events == [m for i in range(3) for m in (
        f"create Claim www-web-{i} Pod web-{i} in StatefulSet web success",
        f"create Pod web-{i} in StatefulSet web successful")]
    table = c.kubectl("get sts -o wide").splitlines()
    assert table[0].split() == ["NAME", "READY", "AGE", "CONTAINERS", "IMAGES"]
    assert table[1].split()[:2] == ["web", "3/3"] and table[1].split()[3:] == ["nginx", "nginx:1.27"]
    blocks = c.kubectl("get all").split("\n\n")  # the "all" category holds StatefulSets
    assert [b.splitlines()[1].split("/")[0] for b in blocks] == ["pod", "statefulset.apps"]
    described = c.kubectl("describe sts web").splitlines()
    assert "Replicas:           3 desired | 3 total" in described
    assert "Update Strategy:    RollingUpdate" in described and "  Partition:        0" in described
    assert "Pods Status:        3 Running / 0 Waiting / 0 Succeeded / 0 Failed" in described
    assert "  Name:          www" in described and "  Access Modes:  [ReadWriteOnce]" in described
    assert c.kubectl("rollout status sts/web") == \
        "partitioned roll out complete: 3 new pods have been updated..."

    # A deleted pod comes back under its own name.
    uid = pod["metadata"]["uid"]
    c.kubectl("delete pod web-1")
    c.run_until(lambda: any(p["metadata"]["name"] == "web-1" and p["metadata"]["uid"] != uid and _ready(p)
                            for p in _pods(c)), timeout=120)

    # Scale down: from the highest ordinal, one at a time.
    c.kubectl("scale sts web --replicas=1")
    gone: list[str] = []

    def watch_down() -> bool:
        names = {p["metadata"]["name"] for p in _pods(c)}
        gone.extend(n for n in ("web-2", "web-1") if n not in names and n not in gone)
        return names == {"web-0"} and _status(c).get("replicas") == 1
    c.run_until(watch_down, timeout=120)
    assert gone == ["web-2", "web-1"]
    deletes = [e["message"] for e in c.get("events") if e["reason"] == "SuccessfulDelete"]
    assert deletes == ["delete Pod web-2 in StatefulSet web successful",
                       "delete Pod web-1 in StatefulSet web successful"]


@pytest.mark.parametrize(("policy", "present_before_ready"), [("OrderedReady", 1), ("Parallel", 3)])
def test_pod_management_policy(policy: str, present_before_ready: int) -> None:
    """OrderedReady waits for web-0 to be Ready before web-1 exists; Parallel creates them all."""
    c = _cluster(nodes=2)
    template = {"metadata": {"labels": {"app": "nginx"},
                             "annotations": {"kubelab.dev/behavior": "startup=20"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27", "readinessProbe": {
                    "httpGet": {"path": "/", "port": 80}, "periodSeconds": 1}}]}}
    c.apply(_web(podManagementPolicy=policy, template=template))
    c.run(10)
    assert len(_pods(c)) == present_before_ready and not any(_ready(p) for p in _pods(c))
    c.run_until(lambda: _status(c).get("readyReplicas") == 3, timeout=300)


def _update_image(c: Cluster, image: str) -> None:
    c.client.patch("statefulsets", "web", {"spec": {"template": {"spec": {"containers": [
        {"name": "nginx", "image": image}]}}}}, "default", patch_type="strategic")


def _images(c: Cluster) -> dict[str, str]:
    return {p["metadata"]["name"]: p["spec"]["containers"][0]["image"] for p in _pods(c)}


def test_rolling_update_from_the_highest_ordinal_down_to_the_partition() -> None:
    c = _cluster(nodes=2)
    c.apply(_web(updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}))
    c.run_until(lambda: _status(c).get("readyReplicas") == 3, timeout=120)
    old = _status(c)["currentRevision"]
    _update_image(c, "nginx:1.28")
    order: list[str] = []

    def watch() -> bool:
        for name, image in sorted(_images(c).items()):
            if image == "nginx:1.28" and name not in order:
                order.append(name)
        st = _status(c)
        return st.get("updatedReplicas") == 2 and st.get("readyReplicas") == 3
    c.run_until(watch, timeout=300)
    assert order == ["web-2", "web-1"] and _images(c)["web-0"] == "nginx:1.27"
    st = _status(c)
    assert st["currentRevision"] == old != st["updateRevision"] and st["currentReplicas"] == 1
    assert c.kubectl("rollout status sts/web") == \
        "partitioned roll out complete: 2 new pods have been updated..."
    # Partition 0: the last pod follows, and the update revision becomes the current one.
    c.client.patch("statefulsets", "web", {"spec": {"updateStrategy": {"rollingUpdate": {"partition": 0}}}},
                   "default", patch_type="strategic")
    c.run_until(lambda: _status(c).get("currentRevision") == _status(c).get("updateRevision") and
                _status(c).get("readyReplicas") == 3, timeout=300)
    assert set(_images(c).values()) == {"nginx:1.28"}
    history = c.kubectl("rollout history sts/web").splitlines()
    assert history == ["statefulset.apps/web ", "REVISION  CHANGE-CAUSE", "1         <none>",
                       "2         <none>"]
    # Undo: the old revision's template comes back, renumbered 3 (ControllerRevisions reused).
    assert c.kubectl("rollout undo sts/web") == "statefulset.apps/web rolled back"
    c.run_until(lambda: set(_images(c).values()) == {"nginx:1.27"} and
                _status(c).get("currentRevision") == _status(c).get("updateRevision") == old and
                _status(c).get("readyReplicas") == 3, timeout=300)
    numbers = {r["metadata"]["name"]: r["revision"] for r in c.get("controllerrevisions")}
    assert len(numbers) == 2 and numbers.pop(old) == 3 and list(numbers.values()) == [2]


def test_on_delete_updates_a_pod_only_when_it_is_deleted() -> None:
    c = _cluster(nodes=2)
    c.apply(_web(updateStrategy={"type": "OnDelete"}, revisionHistoryLimit=0))
    c.run_until(lambda: _status(c).get("readyReplicas") == 3, timeout=120)
    _update_image(c, "nginx:1.28")
    c.run(30)
    assert set(_images(c).values()) == {"nginx:1.27"} and _status(c).get("updatedReplicas", 0) == 0
    c.kubectl("delete pod web-1")
    c.run_until(lambda: _images(c).get("web-1") == "nginx:1.28" and
                _status(c).get("readyReplicas") == 3, timeout=120)
    assert _images(c) == {"web-0": "nginx:1.27", "web-1": "nginx:1.28", "web-2": "nginx:1.27"}
    assert _status(c)["updatedReplicas"] == 1 and _status(c)["currentReplicas"] == 2
    assert c.kubectl("rollout status sts/web") == \
        "error: rollout status is only available for RollingUpdate strategy type"
    # revisionHistoryLimit 0: only revisions that pods still run (or status names) are kept.
    assert len(c.get("controllerrevisions")) == 2


# ---------------------------------------------------------------- claims, once they are served


class _Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    def event(self, obj: Any, type_: str, reason: str, message: str) -> None:
        self.events.append((type_, reason, message))


class _Claims:
    """What StatefulPodControl asks of its client for claims and pods: create and update."""

    def __init__(self, indexer: Any) -> None:
        self.indexer, self.created, self.updated = indexer, [], []  # type: ignore[var-annotated]

    def create(self, obj: dict[str, Any], namespace: str = "") -> dict[str, Any]:
        if obj["kind"] == "Pod":
            return {**obj, "metadata": {**obj["metadata"], "uid": "pod-uid"}}
        self.created.append(obj)
        self.indexer.add({**obj, "metadata": {**obj["metadata"], "uid": f"uid-{obj['metadata']['name']}"}})
        return obj

    def update(self, obj: dict[str, Any]) -> dict[str, Any]:
        self.updated.append(obj)
        self.indexer.update(obj)
        return obj


def test_claims_are_created_before_the_pod_and_owned_as_the_policy_says() -> None:
    """createPersistentVolumeClaims and UpdatePodClaimForRetentionPolicy, with a claims lister
    (as when the API serves PersistentVolumeClaims)."""
    indexer = Indexer()
    client, recorder = _Claims(indexer), _Recorder()
    control = StatefulPodControl(client, recorder, indexer)  # type: ignore[arg-type]
    sts = _set(persistentVolumeClaimRetentionPolicy={"whenDeleted": "Delete", "whenScaled": "Retain"})
    pod = new_stateful_set_pod(sts, 0)
    control.create_stateful_pod(sts, pod)
    assert [(c["metadata"]["name"], c["metadata"]["labels"]) for c in client.created] == [
        ("datadir-foo-0", {"foo": "bar"})]
    assert recorder.events == [
        ("Normal", "SuccessfulCreate", "create Claim datadir-foo-0 Pod foo-0 in StatefulSet foo success"),
        ("Normal", "SuccessfulCreate", "create Pod foo-0 in StatefulSet foo successful")]
    claim, _ = indexer.get_by_key("default/datadir-foo-0")
    assert claim["metadata"]["ownerReferences"] == [  # whenDeleted=Delete: the set owns it
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "foo", "uid": "test", "controller": True}]
    assert control.claims_match_retention_policy(sts, pod)
    control.create_persistent_volume_claims(sts, pod)  # it exists: nothing created again
    assert len(client.created) == 1
    # A claim being deleted keeps the pod from being made.
    indexer.update({**claim, "metadata": {**claim["metadata"], "deletionTimestamp": "2025-01-01T00:00:00Z"}})
    with pytest.raises(ApiError, match="pvc datadir-foo-0 is being deleted"):
        control.create_persistent_volume_claims(sts, pod)


def test_min_ready_seconds_holds_the_next_pod_until_this_one_is_available() -> None:
    c = _cluster(nodes=2)
    c.apply(_web(replicas=2, minReadySeconds=5))
    ready_at: dict[str, float] = {}
    created_at: dict[str, float] = {}

    def watch() -> bool:
        for p in c.get("pods", label_selector="app=nginx"):
            created_at.setdefault(p["metadata"]["name"], c.clock.now)
            if _ready(p):
                ready_at.setdefault(p["metadata"]["name"], c.clock.now)
        return _status(c).get("availableReplicas") == 2
    c.run_until(watch, timeout=120)
    assert created_at["web-1"] >= ready_at["web-0"] + 5  # web-0 Available first
    assert _status(c)["readyReplicas"] == 2


def test_a_failed_pod_is_recreated_under_its_name() -> None:
    c = _cluster(nodes=1)
    c.apply(_web(replicas=1))
    c.run_until(lambda: _status(c).get("readyReplicas") == 1, timeout=60)
    pod = c.get("pods", "web-0")
    pod["status"]["phase"] = "Failed"  # as an eviction or a node's reboot would leave it
    c.client.update_status(pod)
    c.run_until(lambda: any(p["metadata"]["uid"] != pod["metadata"]["uid"] and _ready(p)
                            for p in _pods(c)), timeout=60)
    assert [e["message"] for e in c.get("events") if e["reason"] == "RecreatingFailedPod"] == [
        "StatefulSet default/web is recreating failed Pod web-0"]
