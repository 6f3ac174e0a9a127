"""Where each resource's objects live in etcd: the key prefix its REST storage is given.

A registry never picks its own prefix. kube-apiserver's storage factory hands each resource's
generic Store a ResourcePrefix (k8s.io/apiserver pkg/server/storage/storage_factory.go,
DefaultStorageFactory.ResourcePrefix): the resource's entry in a short table of historical
names (pkg/kubeapiserver/default_storage_factory_builder.go, SpecialDefaultResourcePrefixes),
else its lower-case plural with no group. The etcd path prefix, `/registry` by default
(--etcd-prefix), goes in front. So a Node is `/registry/minions/<name>`, a name from before
nodes were called nodes, and a Service is `/registry/services/specs/<namespace>/<name>`.

apiextensions-apiserver, the server behind kube-apiserver that serves CustomResourceDefinitions
and custom resources, builds its options differently (k8s.io/apiserver pkg/server/options/
etcd.go, SimpleRestOptionsFactory; apiextensions' CRDRESTOptionsGetter): the prefix is
`<group>/<resource>`. A CRD is `/registry/apiextensions.k8s.io/customresourcedefinitions/<name>`
and a custom object `/registry/<group>/<plural>/<namespace>/<name>`.

This module is the one place kubelab decides a key prefix; everything that reads keys by prefix
asks it (or the Served the server built from it).
"""

from __future__ import annotations

__all__ = ["ETCD_PREFIX", "SPECIAL_DEFAULT_RESOURCE_PREFIXES", "key_prefix", "resource_prefix"]

ETCD_PREFIX = "/registry"  # pkg/kubeapiserver/options: DefaultEtcdPathPrefix (--etcd-prefix)

# (group, resource) -> the prefix kube-apiserver stores it under, when not its plural. Several
# entries are resources kubelab does not serve; they are here so the table reads as upstream's.
SPECIAL_DEFAULT_RESOURCE_PREFIXES: dict[tuple[str, str], str] = {
    ("", "replicationcontrollers"): "controllers",
    ("", "endpoints"): "services/endpoints",
    ("", "nodes"): "minions",
    ("", "services"): "services/specs",
    ("extensions", "ingresses"): "ingress",
    ("networking.k8s.io", "ingresses"): "ingress",
}

# The resources apiextensions-apiserver serves itself (custom resources are its too), and
# kube-aggregator's APIServices, whose storage is built the same way (test/integration/etcd/
# data.go: "/registry/apiregistration.k8s.io/apiservices/as1.foo.com").
APIEXTENSIONS_RESOURCES = frozenset({("apiextensions.k8s.io", "customresourcedefinitions"),
                                     ("apiregistration.k8s.io", "apiservices")})


def resource_prefix(group: str, resource: str, *, custom: bool = False) -> str:
    """The ResourcePrefix of group/resource, without ETCD_PREFIX: `minions`, `pods`,
    `apiextensions.k8s.io/customresourcedefinitions`. custom: a resource a CRD defines."""
    if custom or (group, resource) in APIEXTENSIONS_RESOURCES:
        return f"{group}/{resource}"
    return SPECIAL_DEFAULT_RESOURCE_PREFIXES.get((group, resource), resource.lower())


def key_prefix(group: str, resource: str, *, custom: bool = False) -> str:
    """The keys of every object of group/resource start with this: `/registry/minions/`. A
    namespaced object's key adds `<namespace>/<name>`, a cluster-scoped one's `<name>`."""
    return f"{ETCD_PREFIX}/{resource_prefix(group, resource, custom=custom)}/"
