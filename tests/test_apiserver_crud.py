"""Create, get, list, update: the generic registry's semantics and the request pipeline."""

from __future__ import annotations

import pytest
from test_apiserver_support import Env, config_map, deployment, node, pod

from kubelab.api.errors import ApiError
from kubelab.api.request import Request


@pytest.fixture
def env() -> Env:
    return Env()


def test_create_fills_system_fields_and_stores_under_the_registry_key(env: Env) -> None:
    created = env.create("pods", pod())
    meta = created["metadata"]
    assert meta["uid"] and meta["creationTimestamp"] == "2025-01-01T00:00:00Z"
    assert meta["generation"] == 1
    assert meta["resourceVersion"] == str(env.store.revision)
    kv = env.store.range("/registry/pods/default/web").kvs[0]
    assert str(kv.mod_revision) == meta["resourceVersion"]
    assert b"resourceVersion" not in kv.value  # the revision is the version, as in etcd3
    assert created["status"] == {"phase": "Pending", "qosClass": "BestEffort"}
    assert env.get("pods", "web") == created


def test_cluster_scoped_objects_have_no_namespace_in_their_key(env: Env) -> None:
    env.create("nodes", node("node-1"), namespace="")
    # Under kube-apiserver's prefix for nodes, "minions" (storage/prefixes.py), not "nodes".
    assert env.store.range("/registry/minions/node-1").kvs
    assert not env.store.range("/registry/nodes/", prefix=True).kvs


def test_the_caller_keeps_its_dict_and_the_result_is_a_copy(env: Env) -> None:
    body = pod()
    result = env.server.handle(Request("create", "pods", namespace="default", body=body,
                                       token=env.admin))
    assert "uid" not in body["metadata"]
    result["spec"]["containers"][0]["image"] = "changed"
    assert env.get("pods", "web")["spec"]["containers"][0]["image"] == "nginx:1.25"


def test_create_existing_is_409_already_exists(env: Env) -> None:
    env.create("pods", pod())
    err = env.error("create", "pods", body=pod())
    assert (err.code, err.reason, err.message) == (409, "AlreadyExists",
                                                    'pods "web" already exists')
    env.create("deployments", deployment())
    err = env.error("create", "deployments", body=deployment())
    assert err.message == 'deployments.apps "web" already exists'


def test_generate_name_appends_five_random_characters(env: Env) -> None:
    body = pod()
    del body["metadata"]["name"]
    body["metadata"]["generateName"] = "web-"
    names = {env.create("pods", body)["metadata"]["name"] for _ in range(5)}
    assert len(names) == 5
    assert all(n.startswith("web-") and len(n) == 9 for n in names)
    assert all(c in "bcdfghjklmnpqrstvwxz2456789" for n in names for c in n[4:])


def test_generate_name_is_deterministic_per_seed() -> None:
    def names(seed: int) -> list[str]:
        env = Env(seed)
        body = config_map()
        body["metadata"] = {"generateName": "cm-", "namespace": "default"}
        return [env.create("configmaps", body)["metadata"]["name"] for _ in range(3)]

    assert names(1) == names(1) != names(2)


def test_generate_name_retries_on_collision(env: Env) -> None:
    body = config_map()
    body["metadata"] = {"generateName": "cm-", "namespace": "default"}
    rand_state = env.server.rand.getstate()
    first = env.create("configmaps", body)["metadata"]["name"]
    env.server.rand.setstate(rand_state)  # the next suffix would collide with `first`
    second = env.create("configmaps", body)["metadata"]["name"]
    assert first != second


def test_get_missing_is_404_in_upstream_words(env: Env) -> None:
    err = env.error("get", "pods", name="nope")
    assert (err.code, err.message) == (404, 'pods "nope" not found')
    assert env.server.audit[-1].stage == "storage"
    err = env.error("get", "deployments", name="nope")
    assert err.message == 'deployments.apps "nope" not found'


def test_update_with_stale_resource_version_is_a_conflict(env: Env) -> None:
    created = env.create("configmaps", config_map())
    fresh = dict(created, data={"k": "v2"})
    env.update("configmaps", fresh)
    stale = dict(created, data={"k": "v3"})
    err = env.error("update", "configmaps", name="cm", body=stale)
    assert (err.code, err.reason) == (409, "Conflict")
    assert err.message == ('Operation cannot be fulfilled on configmaps "cm": the object has been '
                           "modified; please apply your changes to the latest version and try "
                           "again")
    assert env.get("configmaps", "cm")["data"] == {"k": "v2"}


def test_update_without_resource_version_is_unconditional(env: Env) -> None:
    created = env.create("configmaps", config_map())
    env.update("configmaps", dict(created, data={"k": "v2"}))
    body = config_map(k="v3")
    updated = env.update("configmaps", body)
    assert updated["data"] == {"k": "v3"}
    assert updated["metadata"]["uid"] == created["metadata"]["uid"]
    assert updated["metadata"]["creationTimestamp"] == created["metadata"]["creationTimestamp"]


def test_an_update_that_changes_nothing_writes_nothing(env: Env) -> None:
    created = env.create("configmaps", config_map())
    revision = env.store.revision
    again = env.update("configmaps", created)
    assert env.store.revision == revision
    assert again["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


def test_update_of_a_missing_object_is_404(env: Env) -> None:
    err = env.error("update", "configmaps", name="cm", body=config_map())
    assert err.code == 404


def test_uid_cannot_change(env: Env) -> None:
    created = env.create("configmaps", config_map())
    created["metadata"]["uid"] = "other"
    err = env.error("update", "configmaps", name="cm", body=created)
    assert err.code == 422
    assert 'metadata.uid: Invalid value: "other": field is immutable' in err.message


def test_generation_is_bumped_by_spec_changes_only(env: Env) -> None:
    d = env.create("deployments", deployment())
    assert d["metadata"]["generation"] == 1
    d["metadata"]["labels"] = {"team": "a"}
    d = env.update("deployments", d)
    assert d["metadata"]["generation"] == 1
    d["spec"]["replicas"] = 5
    d = env.update("deployments", d)
    assert d["metadata"]["generation"] == 2
    d["status"] = {"replicas": 5, "observedGeneration": 2}
    d = env.req("update", "deployments", name="web", subresource="status", body=d)
    assert d["metadata"]["generation"] == 2
    assert d["status"]["replicas"] == 5


def test_status_updates_ignore_spec_and_object_updates_ignore_status(env: Env) -> None:
    d = env.create("deployments", deployment())
    d["spec"]["replicas"] = 9
    d["status"] = {"replicas": 3}
    after_status = env.req("update", "deployments", name="web", subresource="status", body=d)
    assert after_status["spec"]["replicas"] == 2 and after_status["status"] == {"replicas": 3}
    after_status["status"] = {"replicas": 100}
    after_status["spec"]["replicas"] = 4
    after_update = env.update("deployments", after_status)
    assert after_update["status"] == {"replicas": 3} and after_update["spec"]["replicas"] == 4


def test_create_resets_status_of_kinds_with_a_status_subresource(env: Env) -> None:
    body = deployment()
    body["status"] = {"replicas": 7}
    assert env.create("deployments", body)["status"] == {}
    assert env.create("nodes", node(), namespace="")["status"]["capacity"]["cpu"] == "4"


def test_list_returns_a_list_object_at_the_store_revision(env: Env) -> None:
    env.create("configmaps", config_map("a"))
    env.create("configmaps", config_map("b"))
    env.create("configmaps", config_map("c", namespace="kube-system"), namespace="kube-system")
    listing = env.req("list", "configmaps")
    assert listing["kind"] == "ConfigMapList" and listing["apiVersion"] == "v1"
    assert listing["metadata"]["resourceVersion"] == str(env.store.revision)
    assert [i["metadata"]["name"] for i in listing["items"]] == ["a", "b"]
    assert len(env.req("list", "configmaps", namespace="")["items"]) == 3


def test_namespace_must_exist_and_not_be_terminating(env: Env) -> None:
    err = env.error("create", "configmaps", namespace="nope", body=config_map(namespace="nope"))
    assert (err.code, err.message) == (404, 'namespaces "nope" not found')
    assert env.server.audit[-1].stage == "mutating-admission"
    assert env.server.audit[-1].plugin == "NamespaceLifecycle"
    env.create("namespaces", {"apiVersion": "v1", "kind": "Namespace",
                              "metadata": {"name": "team"}}, namespace="")
    env.create("configmaps", config_map(namespace="team"), namespace="team")
    env.delete("namespaces", "team", namespace="")
    ns = env.get("namespaces", "team", namespace="")
    assert ns["status"]["phase"] == "Terminating" and ns["metadata"]["deletionTimestamp"]
    err = env.error("create", "configmaps", namespace="team", body=config_map("x", "team"))
    assert (err.code, err.message) == (403, 'configmaps "x" is forbidden: unable to create new '
                                            "content in namespace team because it is being "
                                            "terminated")


def test_system_namespaces_exist_and_cannot_be_deleted(env: Env) -> None:
    names = [n["metadata"]["name"] for n in env.req("list", "namespaces")["items"]]
    assert names == ["default", "kube-node-lease", "kube-public", "kube-system"]
    err = env.error("delete", "namespaces", name="kube-system")
    assert err.message == 'namespaces "kube-system" is forbidden: this namespace may not be deleted'


def test_namespace_is_removed_once_its_finalizers_are_cleared(env: Env) -> None:
    env.create("namespaces", {"apiVersion": "v1", "kind": "Namespace",
                              "metadata": {"name": "team"}}, namespace="")
    ns = env.delete("namespaces", "team", namespace="")
    assert ns["spec"]["finalizers"] == ["kubernetes"]
    ns["spec"]["finalizers"] = []
    env.req("update", "namespaces", name="team", subresource="finalize", body=ns)
    assert env.error("get", "namespaces", name="team").code == 404


@pytest.mark.parametrize(("request_kwargs", "code", "message"), [
    ({"verb": "get", "resource": "widgets", "name": "x"}, 404,
     "the server could not find the requested resource"),
    ({"verb": "get", "resource": "pods", "name": "x", "version": "v2"}, 404,
     "the server could not find the requested resource"),
    ({"verb": "get", "resource": "pods", "name": "x", "subresource": "logs"}, 404,
     "the server could not find the requested resource"),
    ({"verb": "delete", "resource": "pods", "name": "x", "subresource": "binding"}, 405,
     'delete is not supported on resources of kind "pods/binding"'),
    ({"verb": "get", "resource": "pods"}, 400, "resource name may not be empty"),
])
def test_resolve_stage_refusals(env: Env, request_kwargs: dict[str, str], code: int,
                                message: str) -> None:
    with pytest.raises(ApiError) as info:
        env.server.handle(Request(namespace="default", token=env.admin, **request_kwargs))
    assert (info.value.code, info.value.message) == (code, message)
    assert env.server.audit[-1].stage == "resolve"


def test_unknown_token_is_401_and_empty_token_is_anonymous(env: Env) -> None:
    err = env.error("get", "pods", name="x", token="bogus")
    assert (err.code, err.reason, env.server.audit[-1].stage) == (401, "Unauthorized",
                                                                  "authentication")
    err = env.error("list", "nodes", token="")
    assert err.message == ('nodes is forbidden: User "system:anonymous" cannot list resource '
                           '"nodes" in API group "" at the cluster scope')


def test_stop_makes_every_request_503_and_start_restores(env: Env) -> None:
    env.create("configmaps", config_map())
    env.server.stop()
    err = env.error("get", "configmaps", name="cm")
    assert (err.code, err.reason) == (503, "ServiceUnavailable")
    assert env.server.audit[-1].stage == "availability"
    with pytest.raises(ApiError):
        env.server.watch(Request("watch", "configmaps", token=env.admin), lambda e: None)
    env.server.start()
    assert env.get("configmaps", "cm")["data"] == {"k": "v"}


def test_audit_records_every_request_with_its_stages(env: Env) -> None:
    before = len(env.server.audit)
    env.create("configmaps", config_map())
    env.error("create", "configmaps", body=config_map())
    env.error("get", "configmaps", name="cm", token="")
    ok, exists, denied = env.server.audit[before:]
    assert (ok.user, ok.verb, ok.resource, ok.namespace, ok.name, ok.code, ok.stage) == \
        ("admin", "create", "configmaps", "default", "cm", 201, "")
    assert ok.stages == ["availability", "resolve", "authentication", "authorization", "decode",
                         "mutating-admission", "validation", "validating-admission", "storage"]
    assert (exists.code, exists.stage) == (409, "storage")
    assert (denied.user, denied.code, denied.stage) == ("system:anonymous", 403, "authorization")
    records = env.trace.filter(component="apiserver", verb="create",
                               object_prefix="configmaps/default/cm")
    assert [r.detail["code"] for r in records] == [201, 409]
    assert records[0].detail["user"] == "admin"


def test_the_audit_log_rotates_past_its_limit(env: Env) -> None:
    """Like --audit-log-maxsize: the oldest half goes, the newest records stay, in order."""
    env.server.audit_limit = 10
    sizes = []
    for i in range(25):
        env.create("configmaps", config_map(f"cm-{i}"))
        sizes.append(len(env.server.audit))
    assert max(sizes) == 10 and min(sizes) == 5  # 11 records: the oldest 6 go
    names = [r.name for r in env.server.audit]
    assert names == [f"cm-{i}" for i in range(25 - len(names), 25)]


def test_a_slow_store_shows_in_the_request_latency(env: Env) -> None:
    env.store.latency = 0.25
    env.create("configmaps", config_map("a"))
    env.create("configmaps", config_map("b"))
    assert [r.latency for r in env.server.audit[-2:]] == [0.25, 0.5]


def test_dry_run_changes_nothing(env: Env) -> None:
    revision = env.store.revision
    result = env.create("configmaps", config_map(), dry_run=True)
    assert result["metadata"]["uid"]
    assert env.store.revision == revision
    assert "resourceVersion" not in result["metadata"]  # dryrun.go: nothing was stored
    assert env.error("get", "configmaps", name="cm").code == 404


def test_a_dry_run_update_keeps_the_live_resource_version_and_a_dry_run_create_collides(env: Env) -> None:
    live = env.create("configmaps", config_map())
    changed = {**live, "data": {"k": "changed"}}
    result = env.update("configmaps", changed, dry_run=True)
    assert result["metadata"]["resourceVersion"] == live["metadata"]["resourceVersion"]
    assert result["data"] == {"k": "changed"} and env.get("configmaps", "cm")["data"] != {"k": "changed"}
    assert env.error("create", "configmaps", body=config_map(), dry_run=True).code == 409


def test_unexpected_errors_become_500_and_are_traced(env: Env) -> None:
    class Broken:
        name = "Broken"

        def validate(self, attrs: object) -> None:
            raise RuntimeError("boom")

    env.server.admission.register(Broken())
    revision = env.store.revision
    err = env.error("create", "configmaps", body=config_map())
    assert (err.code, err.reason) == (500, "InternalError")
    assert "boom" in err.message
    assert env.store.revision == revision
    assert env.trace.filter(verb="internal-error")
    assert env.server.audit[-1].plugin == "Broken"
