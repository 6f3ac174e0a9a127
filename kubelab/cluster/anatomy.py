"""The cluster's anatomy as kind builds it: `Cluster(anatomy=True)` and `kubelab serve`.

kind runs kubeadm on each node container. kubeadm init (cmd/kubeadm/app/phases) gives the
first node the control-plane role and writes the control plane as static pod manifests into
/etc/kubernetes/manifests; its add-ons phase applies kube-proxy (a DaemonSet) and CoreDNS (a
Deployment behind the `kube-dns` Service); kind applies its CNI, kindnet (a DaemonSet).
This module holds those manifests, in kubeadm's and kind's shape (names, labels, images of the
1.34 release, priority classes, tolerations), and the names of the nodes:

- `control-plane` (one per API server in an HA cluster: control-plane, control-plane2, ...,
  kubeadm's stacked topology; kind names them `<cluster>-control-plane`, and a Cluster has no
  name), labelled node-role.kubernetes.io/control-plane and tainted
  node-role.kubernetes.io/control-plane:NoSchedule (kubeadm's
  phases/markcontrolplane), beside the workers node-1, node-2, ...;
- its static pods etcd-<node>, kube-apiserver-<node>, kube-controller-manager-<node> and
  kube-scheduler-<node> in kube-system (phases/controlplane/manifests.go, phases/etcd/local.go:
  labels component and tier, priorityClassName system-node-critical, hostNetwork);
- kube-proxy with its ServiceAccount and the binding kubeadm:node-proxier
  (phases/addons/proxy/manifests.go), kindnet (kind's pkg/build/nodeimage/const_cni.go),
  coredns and kube-dns (phases/addons/dns/manifests.go), and the two PriorityClasses;
- kind's default StorageClass `standard` (rancher.io/local-path, WaitForFirstConsumer, Delete).

What the wiring does with them is in cluster.py: the static pods' containers and the kube-proxy
pods' containers stand for the components they are (kubelab/kubelet/runtime.py `processes`),
so a crashed scheduler shows as a crashing pod. Departures: the PriorityClasses are created by
the wiring with the add-ons (upstream's API server creates them in a post-start hook), and
manifests keep only the fields a learner reads (no volumes, probes or kubeconfig flags).
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object

__all__ = ["ADDON_IMAGES", "CONTROL_PLANE_LABEL", "CONTROL_PLANE_TAINT", "KUBE_VERSION",
           "STATIC_IMAGES", "addon_objects", "control_plane_names", "control_plane_node",
           "static_pod"]

KUBE_VERSION = "v1.34.0"
CONTROL_PLANE_LABEL = "node-role.kubernetes.io/control-plane"
CONTROL_PLANE_TAINT = {"key": CONTROL_PLANE_LABEL, "effect": "NoSchedule"}
# The images kubeadm 1.34 and kind's node image use (kubeadm config images list).
STATIC_IMAGES = {
    "etcd": "registry.k8s.io/etcd:3.6.4-0",
    "kube-apiserver": f"registry.k8s.io/kube-apiserver:{KUBE_VERSION}",
    "kube-controller-manager": f"registry.k8s.io/kube-controller-manager:{KUBE_VERSION}",
    "kube-scheduler": f"registry.k8s.io/kube-scheduler:{KUBE_VERSION}",
}
ADDON_IMAGES = {
    "kube-proxy": f"registry.k8s.io/kube-proxy:{KUBE_VERSION}",
    "kindnet": "docker.io/kindest/kindnetd:v20250512-df8de77b",
    "coredns": "registry.k8s.io/coredns/coredns:v1.12.1",
}
APISERVER_PORT = 6443
# --- i31-storage --- kind's StorageClass `standard`, as its const_storage.go applies it.
STANDARD_STORAGE_CLASS: Object = {
    "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
    "metadata": {"name": "standard",
                 "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
    "provisioner": "rancher.io/local-path", "volumeBindingMode": "WaitForFirstConsumer",
    "reclaimPolicy": "Delete"}


def control_plane_names(count: int) -> list[str]:
    """kind's names: control-plane, then control-plane2, control-plane3, ..."""
    return ["control-plane"] + [f"control-plane{i}" for i in range(2, count + 1)]


def control_plane_node(name: str, cpu: str = "4", memory: str = "8Gi", pods: str = "110") -> Object:
    """The Node a control-plane kubelet registers: kubeadm's role label (empty value), the
    exclusion from external load balancers, and the NoSchedule taint."""
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
            "beta.kubernetes.io/arch": "amd64", CONTROL_PLANE_LABEL: "",
            "node.kubernetes.io/exclude-from-external-load-balancers": ""}},
        "spec": {"taints": [dict(CONTROL_PLANE_TAINT)]},
        "status": {"capacity": {"cpu": cpu, "memory": memory, "pods": pods},
                   "allocatable": {"cpu": cpu, "memory": memory, "pods": pods}},
    }


def _flags(command: str, **flags: Any) -> list[str]:
    return [command, *(f"--{k.replace('_', '-')}={v}" for k, v in flags.items())]


def static_pod(component: str, node_ip: str, etcd_endpoints: str = "") -> Object:
    """One static pod manifest of kubeadm's, as the file in /etc/kubernetes/manifests."""
    image = STATIC_IMAGES[component]
    if component == "etcd":
        command = _flags("etcd", advertise_client_urls=f"https://{node_ip}:2379",
                         data_dir="/var/lib/etcd", listen_client_urls=f"https://127.0.0.1:2379,https://{node_ip}:2379",
                         name="control-plane")
        requests = {"cpu": "100m", "memory": "100Mi"}
        annotations = {"kubeadm.kubernetes.io/etcd.advertise-client-urls": f"https://{node_ip}:2379"}
    elif component == "kube-apiserver":
        command = _flags("kube-apiserver", advertise_address=node_ip, authorization_mode="Node,RBAC",
                         etcd_servers=etcd_endpoints or "https://127.0.0.1:2379",
                         secure_port=APISERVER_PORT, service_cluster_ip_range="10.96.0.0/16")
        requests = {"cpu": "250m"}
        annotations = {"kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint":
                       f"{node_ip}:{APISERVER_PORT}"}
    elif component == "kube-controller-manager":
        command = _flags("kube-controller-manager", allocate_node_cidrs="true",
                         cluster_cidr="10.244.0.0/16", controllers="*,bootstrapsigner,tokencleaner",
                         leader_elect="true", service_cluster_ip_range="10.96.0.0/16")
        requests = {"cpu": "200m"}
        annotations = {}
    else:
        command = _flags("kube-scheduler", bind_address="127.0.0.1", leader_elect="true")
        requests = {"cpu": "100m"}
        annotations = {}
    meta: Object = {"name": component, "namespace": "kube-system",
                    "labels": {"component": component, "tier": "control-plane"}}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {
        "containers": [{"name": component, "image": image, "command": command,
                        "imagePullPolicy": "IfNotPresent", "resources": {"requests": requests}}],
        "hostNetwork": True, "priority": 2000001000, "priorityClassName": "system-node-critical",
        "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}}}}


def _daemon_set(name: str, labels: dict[str, str], selector: dict[str, str], container: Object,
                service_account: str) -> Object:
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": name, "namespace": "kube-system", "labels": dict(labels)},
            "spec": {"selector": {"matchLabels": selector},
                     "updateStrategy": {"type": "RollingUpdate"},
                     "template": {"metadata": {"labels": dict(labels)}, "spec": {
                         "containers": [container], "hostNetwork": True,
                         "nodeSelector": {"kubernetes.io/os": "linux"},
                         "priorityClassName": "system-node-critical",
                         "serviceAccountName": service_account,
                         "tolerations": [{"operator": "Exists"}]}}}}


def _service_account(name: str) -> Object:
    return {"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": name, "namespace": "kube-system"}}


def _binding(name: str, role: str, service_account: str) -> Object:
    rbac = "rbac.authorization.k8s.io"
    return {"apiVersion": f"{rbac}/v1", "kind": "ClusterRoleBinding", "metadata": {"name": name},
            "roleRef": {"apiGroup": rbac, "kind": "ClusterRole", "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": service_account,
                          "namespace": "kube-system"}]}


def _priority_class(name: str, value: int, description: str) -> Object:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": name}, "value": value, "preemptionPolicy": "PreemptLowerPriority",
            "description": description}


def addon_objects() -> list[Object]:
    """What kubeadm's and kind's add-on phases apply, in their order."""
    rbac = "rbac.authorization.k8s.io"
    kube_proxy = {"name": "kube-proxy", "image": ADDON_IMAGES["kube-proxy"],
                  "command": ["/usr/local/bin/kube-proxy", "--config=/var/lib/kube-proxy/config.conf",
                              "--hostname-override=$(NODE_NAME)"],
                  "env": [{"name": "NODE_NAME",
                           "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
                  "securityContext": {"privileged": True}}
    kindnet = {"name": "kindnet-cni", "image": ADDON_IMAGES["kindnet"],
               "env": [{"name": "HOST_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}},
                       {"name": "POD_SUBNET", "value": "10.244.0.0/16"}],
               "resources": {"requests": {"cpu": "100m", "memory": "50Mi"},
                             "limits": {"cpu": "100m", "memory": "50Mi"}},
               "securityContext": {"capabilities": {"add": ["NET_RAW", "NET_ADMIN"]}}}
    dns_labels = {"k8s-app": "kube-dns"}
    coredns = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "coredns", "namespace": "kube-system", "labels": dict(dns_labels)},
        "spec": {"replicas": 2, "selector": {"matchLabels": dict(dns_labels)},
                 "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
                 "template": {"metadata": {"labels": dict(dns_labels)}, "spec": {
                     "priorityClassName": "system-cluster-critical",
                     "serviceAccountName": "coredns", "dnsPolicy": "Default",
                     "nodeSelector": {"kubernetes.io/os": "linux"},
                     "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"},
                                     {"key": CONTROL_PLANE_LABEL, "effect": "NoSchedule"}],
                     "containers": [{
                         "name": "coredns", "image": ADDON_IMAGES["coredns"],
                         "args": ["-conf", "/etc/coredns/Corefile"],
                         "resources": {"limits": {"memory": "170Mi"},
                                       "requests": {"cpu": "100m", "memory": "70Mi"}},
                         "ports": [{"containerPort": 53, "name": "dns", "protocol": "UDP"},
                                   {"containerPort": 53, "name": "dns-tcp", "protocol": "TCP"},
                                   {"containerPort": 9153, "name": "metrics", "protocol": "TCP"}]}]}}}}
    kube_dns = {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "kube-dns", "namespace": "kube-system",
                     "labels": {**dns_labels, "kubernetes.io/cluster-service": "true",
                                "kubernetes.io/name": "CoreDNS"},
                     "annotations": {"prometheus.io/port": "9153", "prometheus.io/scrape": "true"}},
        "spec": {"clusterIP": "10.96.0.10", "selector": dict(dns_labels), "ports": [
            {"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53},
            {"name": "dns-tcp", "port": 53, "protocol": "TCP", "targetPort": 53},
            {"name": "metrics", "port": 9153, "protocol": "TCP", "targetPort": 9153}]}}
    return [
        _priority_class("system-node-critical", 2000001000,
                        "Used for system critical pods that must not be moved from their current node."),
        _priority_class("system-cluster-critical", 2000000000,
                        "Used for system critical pods that must run in the cluster, but can be "
                        "moved to another node if necessary."),
        _service_account("kube-proxy"),
        _binding("kubeadm:node-proxier", "system:node-proxier", "kube-proxy"),
        _daemon_set("kube-proxy", {"k8s-app": "kube-proxy"}, {"k8s-app": "kube-proxy"}, kube_proxy,
                    "kube-proxy"),
        {"apiVersion": f"{rbac}/v1", "kind": "ClusterRole", "metadata": {"name": "kindnet"},
         "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["list", "watch", "patch"]},
                   {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]},
        _binding("kindnet", "kindnet", "kindnet"),
        _service_account("kindnet"),
        _daemon_set("kindnet", {"tier": "node", "app": "kindnet", "k8s-app": "kindnet"},
                    {"app": "kindnet"}, kindnet, "kindnet"),
        _service_account("coredns"),
        coredns,
        kube_dns,
        # --- i31-storage --- kind's default storage (pkg/build/nodeimage/const_storage.go):
        # the local-path provisioner's class, the cluster's default. The provisioner itself is
        # simulated in the controller manager (kubelab/controllers/volume/provisioner.py).
        STANDARD_STORAGE_CLASS,
    ]
