"""Every resource's objects are stored under the etcd key prefix kube-apiserver 1.34 uses.

The expected prefixes below were read from upstream, not from kubelab:
- kubernetes pkg/kubeapiserver/default_storage_factory_builder.go: SpecialDefaultResourcePrefixes
  (nodes -> "minions", services -> "services/specs", endpoints -> "services/endpoints",
  replicationcontrollers -> "controllers", ingresses -> "ingress") and AddCohabitatingResources
  (events are stored as core events, deployments and replicasets as apps', under their plural);
- k8s.io/apiserver pkg/server/storage/storage_factory.go: DefaultStorageFactory.ResourcePrefix,
  the special prefix if there is one, else strings.ToLower(resource), with no group;
- pkg/kubeapiserver/options: DefaultEtcdPathPrefix "/registry" in front of every key;
- k8s.io/apiserver pkg/server/options/etcd.go (SimpleRestOptionsFactory) and apiextensions-apiserver
  pkg/cmd/server/options (CRDRESTOptionsGetter): ResourcePrefix is group + "/" + resource for
  CustomResourceDefinitions and for every custom resource;
- pkg/registry/<group>/<resource>/storage/storage.go: each resource's generic Store (its
  DefaultQualifiedResource is what the factory is asked for), keyed <prefix>/<ns>/<name> by
  NamespaceKeyFunc or <prefix>/<name> by NoNamespaceKeyFunc. SelfSubjectAccessReviews have no
  storage (pkg/registry/authorization/selfsubjectaccessreview/rest.go): they are never stored.
"""

from __future__ import annotations

import copy
from typing import Any

from test_apiserver_support import Env, deployment, node, pod

from kubelab.api.resources import BUILTIN_RESOURCES

# (group, resource) -> the key prefix kube-apiserver writes its objects under.
UPSTREAM_PREFIXES: dict[tuple[str, str], str] = {
    ("", "namespaces"): "/registry/namespaces/",
    ("", "nodes"): "/registry/minions/",
    ("", "pods"): "/registry/pods/",
    ("", "events"): "/registry/events/",
    ("", "configmaps"): "/registry/configmaps/",
    ("", "secrets"): "/registry/secrets/",
    ("", "serviceaccounts"): "/registry/serviceaccounts/",
    ("", "services"): "/registry/services/specs/",
    ("apps", "replicasets"): "/registry/replicasets/",
    ("apps", "deployments"): "/registry/deployments/",
    ("apps", "daemonsets"): "/registry/daemonsets/",
    ("apps", "controllerrevisions"): "/registry/controllerrevisions/",
    ("scheduling.k8s.io", "priorityclasses"): "/registry/priorityclasses/",
    # --- i31-sts --- test/integration/etcd/data.go
    ("apps", "statefulsets"): "/registry/statefulsets/",
    ("", "replicationcontrollers"): "/registry/controllers/",
    # --- i31-hpa ---
    ("autoscaling", "horizontalpodautoscalers"): "/registry/horizontalpodautoscalers/",
    # test/integration/etcd/data.go: "/registry/validatingwebhookconfigurations/hook2"
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations"):
        "/registry/validatingwebhookconfigurations/",
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"):
        "/registry/mutatingwebhookconfigurations/",
    ("coordination.k8s.io", "leases"): "/registry/leases/",
    ("rbac.authorization.k8s.io", "roles"): "/registry/roles/",
    ("rbac.authorization.k8s.io", "rolebindings"): "/registry/rolebindings/",
    ("rbac.authorization.k8s.io", "clusterroles"): "/registry/clusterroles/",
    ("rbac.authorization.k8s.io", "clusterrolebindings"): "/registry/clusterrolebindings/",
    ("apiextensions.k8s.io", "customresourcedefinitions"):
        "/registry/apiextensions.k8s.io/customresourcedefinitions/",
    ("batch", "jobs"): "/registry/jobs/",
    ("admissionregistration.k8s.io", "validatingadmissionpolicies"):
        "/registry/validatingadmissionpolicies/",
    ("admissionregistration.k8s.io", "validatingadmissionpolicybindings"):
        "/registry/validatingadmissionpolicybindings/",
    ("flowcontrol.apiserver.k8s.io", "flowschemas"): "/registry/flowschemas/",
    ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"):
        "/registry/prioritylevelconfigurations/",
    ("discovery.k8s.io", "endpointslices"): "/registry/endpointslices/",
    # --- i31-cron-pdb ---
    ("batch", "cronjobs"): "/registry/cronjobs/",
    ("policy", "poddisruptionbudgets"): "/registry/poddisruptionbudgets/",
    # --- i31-storage ---
    ("", "persistentvolumes"): "/registry/persistentvolumes/",
    ("", "persistentvolumeclaims"): "/registry/persistentvolumeclaims/",
    ("storage.k8s.io", "storageclasses"): "/registry/storageclasses/",
    ("networking.k8s.io", "ingresses"): "/registry/ingress/",
    ("networking.k8s.io", "ingressclasses"): "/registry/ingressclasses/",
    ("networking.k8s.io", "networkpolicies"): "/registry/networkpolicies/",
    ("", "resourcequotas"): "/registry/resourcequotas/",
    # --- hpacsi ---
    ("storage.k8s.io", "volumeattachments"): "/registry/volumeattachments/",
    ("certificates.k8s.io", "certificatesigningrequests"): "/registry/certificatesigningrequests/",
    ("storage.k8s.io", "csidrivers"): "/registry/csidrivers/",
    # --- endpoints ---
    ("", "endpoints"): "/registry/services/endpoints/",
}
# Answered, never stored: the reviews (the authenticator or authorizer answers) and
# ComponentStatus (probed at each request).
NOT_STORED = {("authorization.k8s.io", "selfsubjectaccessreviews"),
              ("authorization.k8s.io", "selfsubjectrulesreviews"),
              ("authentication.k8s.io", "selfsubjectreviews"), ("", "componentstatuses"),
              ("authorization.k8s.io", "subjectaccessreviews")}

CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
       "metadata": {"name": "widgets.example.com"},
       "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                    "openAPIV3Schema": {"type": "object",
                                        "x-kubernetes-preserve-unknown-fields": True}}}]}}


def test_every_served_builtin_resource_has_upstreams_key_prefix() -> None:
    env = Env()
    served = {(s.info.group, s.info.resource): s.prefix for s in env.server.served if s.builtin}
    builtin = {(i.group, i.resource) for i in BUILTIN_RESOURCES}
    assert set(served) == builtin  # every built-in is served, and the table below covers it
    assert builtin - NOT_STORED == set(UPSTREAM_PREFIXES)
    wrong = {gr: (prefix, UPSTREAM_PREFIXES[gr]) for gr, prefix in served.items()
             if gr not in NOT_STORED and prefix != UPSTREAM_PREFIXES[gr]}
    assert wrong == {}


def test_writes_land_on_upstreams_keys() -> None:
    env = Env()
    env.create("nodes", node("n1"), namespace="")
    env.create("pods", pod("web"))
    env.create("deployments", deployment("web"))
    env.create("services", {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
                            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}})
    env.create("customresourcedefinitions", copy.deepcopy(CRD), namespace="",
               group="apiextensions.k8s.io")
    env.req("create", "widgets", group="example.com", version="v1",
            body={"apiVersion": "example.com/v1", "kind": "Widget",
                  "metadata": {"name": "w", "namespace": "default"}})
    keys = {kv.key for kv in env.store.range("/registry/", prefix=True).kvs}
    assert {"/registry/minions/n1", "/registry/pods/default/web",
            "/registry/deployments/default/web", "/registry/services/specs/default/web",
            "/registry/apiextensions.k8s.io/customresourcedefinitions/widgets.example.com",
            "/registry/example.com/widgets/default/w"} <= keys
    # kubelab's old keys are gone: nothing is written where kube-apiserver writes nothing
    for old in ("/registry/nodes/", "/registry/customresourcedefinitions/",
                "/registry/services/default/"):
        assert not any(k.startswith(old) for k in keys), old


def test_every_stored_key_belongs_to_one_served_resource() -> None:
    """What reads keys by prefix (watch caches, listers, StorePanel, etcdctl in 07b) sees
    each object once: no served prefix is inside another, and every key has an owner."""
    env = Env()
    env.create("nodes", node("n1"), namespace="")
    env.create("customresourcedefinitions", copy.deepcopy(CRD), namespace="",
               group="apiextensions.k8s.io")
    prefixes = sorted({s.prefix for s in env.server.served})
    assert not [(a, b) for a in prefixes for b in prefixes if a != b and b.startswith(a)]
    owners: dict[str, list[Any]] = {}
    for kv in env.store.range("/registry/", prefix=True).kvs:
        owners[kv.key] = [p for p in prefixes if kv.key.startswith(p)]
    assert owners and all(len(found) == 1 for found in owners.values()), owners


def test_a_node_is_listed_and_watched_from_minions() -> None:
    env = Env()
    env.create("nodes", node("n1"), namespace="")
    assert [n["metadata"]["name"] for n in env.req("list", "nodes")["items"]] == ["n1"]
    # an object written to the store by hand under the upstream key is served
    raw = env.store.range("/registry/minions/n1").kvs[0].value
    env.store.put("/registry/minions/n2", raw.replace(b'"n1"', b'"n2"'))
    env.settle()
    assert sorted(n["metadata"]["name"] for n in env.req("list", "nodes")["items"]) == ["n1", "n2"]
