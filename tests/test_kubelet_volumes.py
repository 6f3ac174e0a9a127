"""The kubelet's volume manager: a pod's volumes are set up before its containers start
(pkg/kubelet/volumemanager WaitForAttachAndMount), with upstream's FailedMount words; the
pod heals when the object appears; container_files() is what each container can read."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from kubelab import Cluster
from kubelab.kubelet.volumemanager.volume_manager import ATTACH_AND_MOUNT_TIMEOUT


def make_pod(name: str, volumes: list[dict[str, Any]], mounts: list[dict[str, Any]],
             **more: Any) -> dict[str, Any]:
    """A pod with these volumes only: automountServiceAccountToken false keeps the
    ServiceAccount admission plugin's kube-api-access volume out of what the tests compare."""
    more.setdefault("automountServiceAccountToken", False)
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": {"app": name, "tier": "web"}},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.27", "volumeMounts": mounts},
                                    {"name": "sidecar", "image": "busybox:1.36",
                                     "volumeMounts": [m for m in mounts if m["name"] == "scratch"]}],
                     "volumes": volumes, **more}}


def kubelet(c: Cluster, pod: dict[str, Any]) -> Any:
    return c.components[f"kubelet/{pod['spec']['nodeName']}"]


def events(c: Cluster, name: str, reason: str) -> list[str]:
    return [e["message"] for e in c.client.list("events", "default")["items"]
            if e["involvedObject"]["name"] == name and e["reason"] == reason]


def status(c: Cluster, name: str) -> str:
    pod = c.client.get("pods", name, "default")
    waiting = ((pod["status"].get("containerStatuses") or [{}])[0].get("state") or {}).get("waiting")
    return waiting["reason"] if waiting else pod["status"]["phase"]


def test_a_missing_configmap_blocks_the_pod_until_it_appears() -> None:
    c = Cluster(nodes=1, seed=5)
    c.client.create(make_pod("web", [{"name": "config", "configMap": {"name": "app-config"}}],
                             [{"name": "config", "mountPath": "/etc/app"}]))
    c.run(ATTACH_AND_MOUNT_TIMEOUT + 5)
    assert status(c, "web") == "ContainerCreating"
    assert 'MountVolume.SetUp failed for volume "config" : configmap "app-config" not found' in \
        events(c, "web", "FailedMount")
    assert ("Unable to attach or mount volumes: unmounted volumes=[config], unattached volumes=[], "
            "failed to process volumes=[]: context deadline exceeded") in events(c, "web", "FailedMount")
    assert events(c, "web", "Started") == []
    c.client.create({"apiVersion": "v1", "kind": "ConfigMap",
                     "metadata": {"name": "app-config", "namespace": "default"},
                     "data": {"app.conf": "debug=true"}})
    c.run(130)  # the back-off is at most 2m2s
    assert status(c, "web") == "Running"
    pod = c.client.get("pods", "web", "default")
    assert kubelet(c, pod).volume_manager.container_files(pod, "app") == {"/etc/app/app.conf": b"debug=true"}


def test_optional_sources_do_not_block_and_missing_keys_do() -> None:
    c = Cluster(nodes=1, seed=5)
    c.client.create({"apiVersion": "v1", "kind": "ConfigMap",
                     "metadata": {"name": "cm", "namespace": "default"}, "data": {"a": "1"}})
    c.client.create(make_pod("relaxed", [
        {"name": "maybe", "secret": {"secretName": "nope", "optional": True}}],
        [{"name": "maybe", "mountPath": "/maybe"}]))
    c.client.create(make_pod("strict", [
        {"name": "keys", "configMap": {"name": "cm", "items": [{"key": "b", "path": "b.txt"}]}}],
        [{"name": "keys", "mountPath": "/keys"}]))
    c.run(20)
    assert status(c, "relaxed") == "Running" and status(c, "strict") == "ContainerCreating"
    assert events(c, "strict", "FailedMount")[0] == (
        'MountVolume.SetUp failed for volume "keys" : configmap references non-existent config key: b')


def test_what_each_container_reads() -> None:
    c = Cluster(nodes=1, seed=6)
    c.client.create({"apiVersion": "v1", "kind": "ConfigMap",
                     "metadata": {"name": "cm", "namespace": "default"},
                     "data": {"app.conf": "mode=fast", "other": "x"}})
    c.client.create({"apiVersion": "v1", "kind": "Secret",
                     "metadata": {"name": "creds", "namespace": "default"},
                     "data": {"password": base64.b64encode(b"s3cret").decode()}})
    volumes = [
        {"name": "config", "configMap": {"name": "cm",
                                         "items": [{"key": "app.conf", "path": "conf/app.conf"}]}},
        {"name": "creds", "secret": {"secretName": "creds"}},
        {"name": "scratch", "emptyDir": {}},
        {"name": "info", "downwardAPI": {"items": [
            {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
            {"path": "ns", "fieldRef": {"fieldPath": "metadata.namespace"}}]}},
        {"name": "all", "projected": {"sources": [
            {"configMap": {"name": "cm", "items": [{"key": "other", "path": "other"}]}},
            {"serviceAccountToken": {"path": "token", "audience": "vault", "expirationSeconds": 600}}]}}]
    mounts = [{"name": "config", "mountPath": "/etc/app"},
              {"name": "creds", "mountPath": "/etc/creds", "readOnly": True},
              {"name": "scratch", "mountPath": "/scratch"},
              {"name": "info", "mountPath": "/etc/podinfo"},
              {"name": "all", "mountPath": "/var/run/all"},
              {"name": "config", "mountPath": "/app.conf", "subPath": "conf/app.conf"}]
    c.client.create(make_pod("web", volumes, mounts))
    c.run(10)
    pod = c.client.get("pods", "web", "default")
    vm = kubelet(c, pod).volume_manager
    files = vm.container_files(pod, "app")
    token = files.pop("/var/run/all/token").decode()
    assert files == {
        "/etc/app/conf/app.conf": b"mode=fast", "/etc/creds/password": b"s3cret",
        "/etc/podinfo/labels": b'app="web"\ntier="web"', "/etc/podinfo/ns": b"default",
        "/var/run/all/other": b"x", "/app.conf": b"mode=fast"}
    header, claims, _ = token.split(".")
    assert json.loads(base64.urlsafe_b64decode(header + "=="))["alg"] == "HS256"  # in-process key
    payload = json.loads(base64.urlsafe_b64decode(claims + "=="))
    assert payload["aud"] == ["vault"] and payload["exp"] - payload["iat"] == 600
    assert payload["sub"] == "system:serviceaccount:default:default"
    assert payload["kubernetes.io"]["pod"] == {"name": "web", "uid": pod["metadata"]["uid"]}
    # emptyDir is shared between the pod's containers; configMap and readOnly mounts refuse writes
    assert vm.write_file(pod, "app", "/scratch/out.txt", b"hello")
    assert vm.container_files(pod, "sidecar") == {"/scratch/out.txt": b"hello"}
    for path in ("/etc/app/new", "/etc/creds/password"):
        with pytest.raises(PermissionError, match="Read-only file system"):
            vm.write_file(pod, "app", path, b"no")
    assert not vm.write_file(pod, "app", "/tmp/elsewhere", b"x")
    described = [" ".join(line.split()) for line in str(c.kubectl("describe pod web")).splitlines()]
    for line in ("/app.conf from config (rw,path=\"conf/app.conf\")", "/etc/creds from creds (ro)",
                 "Type: ConfigMap (a volume populated by a ConfigMap)", "Name: cm",
                 "Type: EmptyDir (a temporary directory that shares a pod's lifetime)",
                 "metadata.labels -> labels", "TokenExpirationSeconds: 600"):
        assert line in described, line
    # an edited ConfigMap shows in the files at the next sync
    cm = c.client.get("configmaps", "cm", "default")
    cm["data"]["app.conf"] = "mode=slow"
    c.client.update(cm)
    c.run(65)
    assert vm.container_files(pod, "app")["/etc/app/conf/app.conf"] == b"mode=slow"


def test_a_claim_is_mounted_once_bound_and_its_data_outlives_the_pod() -> None:
    c = Cluster(nodes=1, seed=7)  # with kind's StorageClass `standard` (the anatomy's)
    c.client.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                     "metadata": {"name": "data", "namespace": "default"},
                     "spec": {"accessModes": ["ReadWriteOnce"],
                              "resources": {"requests": {"storage": "1Gi"}}}})
    claim_volume = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
    mount = [{"name": "data", "mountPath": "/var/lib/data"}]
    c.client.create(make_pod("db", claim_volume, mount))
    c.run(20)
    assert status(c, "db") == "Running"
    pod = c.client.get("pods", "db", "default")
    assert kubelet(c, pod).volume_manager.write_file(pod, "app", "/var/lib/data/table", b"rows")
    c.client.delete("pods", "db", "default")
    c.run(40)
    c.client.create(make_pod("db2", claim_volume, mount))
    c.run(20)
    again = c.client.get("pods", "db2", "default")
    assert kubelet(c, again).volume_manager.container_files(again, "app") == {
        "/var/lib/data/table": b"rows"}


def test_an_unbound_claim_is_a_volume_that_failed_to_process() -> None:
    c = Cluster(nodes=1, seed=8)
    c.client.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                     "metadata": {"name": "data", "namespace": "default"},
                     "spec": {"storageClassName": "", "accessModes": ["ReadWriteOnce"],
                              "resources": {"requests": {"storage": "1Gi"}}}})
    pod = make_pod("db", [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}],
                   [{"name": "data", "mountPath": "/data"}], nodeName="node-1")
    c.client.create(pod)  # bound to the node by hand: the scheduler would keep it Pending
    c.run(ATTACH_AND_MOUNT_TIMEOUT + 5)
    assert status(c, "db") == "ContainerCreating"
    assert events(c, "db", "FailedMount") == [
        "Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[], "
        "failed to process volumes=[data]: context deadline exceeded"]


def test_a_container_reads_the_files_its_volumes_mounted() -> None:
    """The volume manager's container_files is what the process model's cat and ls see (the
    kubelet wires one to the other): a mounted ConfigMap key is a file, in the log and by exec."""
    from kubelab import Cluster

    c = Cluster(nodes=1)
    c.kubectl("create configmap app --from-literal=key=hello")
    c.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {
        "containers": [{"name": "c", "image": "busybox",
                        "command": ["sh", "-c", "cat /etc/config/key; echo; ls /etc/config; sleep 3600"],
                        "volumeMounts": [{"name": "cfg", "mountPath": "/etc/config"}]}],
        "volumes": [{"name": "cfg", "configMap": {"name": "app"}}]}})
    c.run(20)
    assert c.kubectl("logs p").splitlines() == ["hello", "key"]
    assert c.kubectl("exec p -- cat /etc/config/key") == "hello"
