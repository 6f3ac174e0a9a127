"""Ephemeral containers (pods/ephemeralcontainers) and `kubectl debug` against c.serve().

The validation cases are upstream's rules (ValidatePodEphemeralContainersUpdate and
validateEphemeralContainers, pkg/apis/core/validation/validation.go), in their words; the
kubelet starts an added container (SyncPod's step 5) and reports it in
ephemeralContainerStatuses; the real kubectl's three debug forms run a shell whose output comes
back over attach."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from kubelab import Cluster
from kubelab.api.errors import ApiError
from kubelab.api.request import Request
from kubelab.serve.server import kubectl_binary

KUBECTL = kubectl_binary()
BOX = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "box"},
       "spec": {"containers": [{"name": "box", "image": "busybox", "command": ["sleep", "3600"]}]}}


def _debugger(name: str = "debugger", **extra: Any) -> dict[str, Any]:
    return {"name": name, "image": "busybox", "stdin": True, "tty": True, **extra}


def _patch(c: Cluster, *containers: dict[str, Any], name: str = "box") -> Any:
    return c.api.handle(Request("patch", "pods", namespace="default", name=name,
                                subresource="ephemeralcontainers", token="token-admin",
                                body={"spec": {"ephemeralContainers": list(containers)}},
                                options={"patchType": "strategic"}))


@pytest.fixture()
def cluster() -> Cluster:
    c = Cluster(nodes=1, seed=0)
    c.apply(BOX)
    c.run(20)
    return c


def test_the_kubelet_starts_an_added_ephemeral_container(cluster: Cluster) -> None:
    c = cluster
    pod = _patch(c, _debugger(targetContainerName="box"))
    assert [e["name"] for e in pod["spec"]["ephemeralContainers"]] == ["debugger"]
    assert pod["spec"]["containers"] == c.client.get("pods", "box", namespace="default")["spec"]["containers"]
    c.run(10)
    status = c.client.get("pods", "box", namespace="default")["status"]
    (eph,) = status["ephemeralContainerStatuses"]
    assert eph["name"] == "debugger" and "running" in eph["state"] and eph["restartCount"] == 0
    assert [s["name"] for s in status["containerStatuses"]] == ["box"]  # the pod's own stay
    # It is a container like the others: exec reaches it.
    session = c.runtimes["node-1"].exec(
        c.client.get("pods", "box", namespace="default")["metadata"]["uid"], "debugger",
        ["echo", "inside"], False, False)
    assert session is not None
    c.run(1)
    assert session.read()[0] == b"inside\n" and session.exit_code == 0


@pytest.mark.parametrize(("containers", "message"), [
    ([{"name": "box", "image": "busybox"}],
     'spec.ephemeralContainers[1].name: Duplicate value: "box"'),
    ([_debugger("d2", targetContainerName="nope")],
     'spec.ephemeralContainers[1].targetContainerName: Not found: "nope"'),
    ([_debugger("d2", ports=[{"containerPort": 80}])],
     "spec.ephemeralContainers[1].ports: Forbidden: cannot be set for an Ephemeral Container"),
    ([_debugger("d2", readinessProbe={"exec": {"command": ["true"]}})],
     "spec.ephemeralContainers[1].readinessProbe: Forbidden: cannot be set for an Ephemeral Container"),
    ([{"name": "d2"}], "spec.ephemeralContainers[1].image: Required value"),
])
def test_what_an_ephemeral_container_may_not_be(cluster: Cluster, containers: list[dict[str, Any]],
                                                message: str) -> None:
    _patch(cluster, _debugger())
    with pytest.raises(ApiError) as info:
        _patch(cluster, *containers)  # a strategic merge: added after "debugger"
    assert info.value.code == 422 and message in info.value.message


def test_existing_ephemeral_containers_stay_as_they_are(cluster: Cluster) -> None:
    c = cluster
    _patch(c, _debugger())
    pod = c.client.get("pods", "box", namespace="default")
    for ephemeral, message in (([], 'existing ephemeral containers "debugger" may not be removed'),
                               ([_debugger(image="alpine")],
                                'existing ephemeral containers "debugger" may not be changed')):
        body = {**pod, "spec": {**pod["spec"], "ephemeralContainers": ephemeral}}
        with pytest.raises(ApiError) as info:
            c.api.handle(Request("update", "pods", namespace="default", name="box", body=body,
                                 subresource="ephemeralcontainers", token="token-admin"))
        assert info.value.code == 422 and message in info.value.message
    with pytest.raises(ApiError, match=r"spec\.ephemeralContainers: Forbidden: cannot be set on create"):
        c.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"},
                 "spec": {"containers": [{"name": "a", "image": "busybox"}],
                          "ephemeralContainers": [_debugger()]}})


def test_static_pods_have_none(cluster: Cluster) -> None:
    c = cluster
    c.apply({"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": "mirror", "annotations": {"kubernetes.io/config.mirror": "x"}},
             "spec": {"containers": [{"name": "a", "image": "busybox"}]}})
    with pytest.raises(ApiError, match="static pods do not support ephemeral containers"):
        _patch(c, _debugger(), name="mirror")


def test_kubectl_debug_in_all_three_forms(tmp_path: Path) -> None:
    if KUBECTL is None:
        pytest.skip("kubectl is not installed (make installs it)")
    c = Cluster(nodes=1, seed=0)
    c.apply(BOX)
    c.run(20)
    node = "node-1"

    async def debug(config: Path, *args: str) -> tuple[int, str, str]:
        proc = await asyncio.create_subprocess_exec(
            KUBECTL, "--context", "kubelab", "debug", *args, "-it", "--image=busybox",
            env=dict(os.environ, KUBECONFIG=str(config)), stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(b"echo in-debug\nhostname\nexit 0\n"), 60)
        return proc.returncode or 0, out.decode(), err.decode()

    async def main() -> None:
        c.serve(port=0, speed=5)
        config = Path(c.kubeconfig(str(tmp_path / "kubeconfig.yaml")))
        try:
            code, out, err = await debug(config, "box", "--target=box")
            assert code == 0 and 'Targeting container "box"' in out and "in-debug\r\n" in out, err
            pod = c.client.get("pods", "box", namespace="default")
            (eph,) = pod["spec"]["ephemeralContainers"]
            assert eph["targetContainerName"] == "box" and eph["name"].startswith("debugger-")
            (status,) = pod["status"]["ephemeralContainerStatuses"]
            assert status["state"]["terminated"]["exitCode"] == 0  # the shell exited

            code, out, err = await debug(config, f"node/{node}")
            assert code == 0 and f"with container debugger on node {node}" in out, err
            debugger = next(p for p in c.client.list("pods")["items"]
                            if p["metadata"]["name"].startswith(f"node-debugger-{node}-"))
            spec = debugger["spec"]
            assert spec["nodeName"] == node and spec["hostPID"] and spec["hostNetwork"] and spec["hostIPC"]
            assert spec["volumes"][0]["hostPath"]["path"] == "/"
            assert spec["containers"][0]["volumeMounts"][0]["mountPath"] == "/host"

            code, out, err = await debug(config, "box", "--copy-to=box-copy")
            assert code == 0 and "in-debug\r\n" in out and "box-copy" in out, err
            copy = c.client.get("pods", "box-copy", namespace="default")["spec"]["containers"]
            assert copy[0]["name"] == "box" and len(copy) == 2
        finally:
            await c.server.stop()

    asyncio.run(main())
