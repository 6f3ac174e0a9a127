"""A pod's life on a node: start, events, crash loops, image pulls, init containers, deletion."""

from __future__ import annotations

import re

import pytest

from kubelab.cluster import Cluster
from tests.kubelet_helpers import events, kubelet_cluster, pod, status_of, waiting_reason

KUBELET = "kubelet/node-1"


def test_a_pod_goes_from_pending_to_running_with_every_event_in_order() -> None:
    c = kubelet_cluster()
    c.apply(pod("web"))
    c.run(0.2)
    assert c.get("pods", "web")["status"]["phase"] == "Pending"
    assert waiting_reason(c, "web") == "ContainerCreating"
    c.run(10)
    p = c.get("pods", "web")
    assert p["status"]["phase"] == "Running"
    assert [e["reason"] for e in events(c, "web")] == ["Pulling", "Pulled", "Created", "Started"]
    messages = [e["message"] for e in events(c, "web")]
    assert messages[0] == 'Pulling image "nginx:1.27"'
    assert re.fullmatch(r'Successfully pulled image "nginx:1\.27" in [\d.]+m?s \([\d.]+m?s including '
                        r"waiting\)\. Image size: 72099410 bytes\.", messages[1])
    assert messages[2:] == ["Created container: app", "Started container app"]
    assert all(e["source"] == {"component": "kubelet", "host": "node-1"} for e in events(c, "web"))
    s = p["status"]
    assert s["podIP"].startswith("10.244.1.") and s["hostIP"] == "172.18.0.2"
    assert {c["type"]: c["status"] for c in s["conditions"]} == {
        "PodReadyToStartContainers": "True", "Initialized": "True", "Ready": "True",
        "ContainersReady": "True", "PodScheduled": "True"}
    cs = status_of(c, "web")
    assert cs["ready"] and cs["started"] and cs["restartCount"] == 0
    assert cs["containerID"].startswith("containerd://") and "@sha256:" in cs["imageID"]
    assert c.kubectl("get pods").split("\n")[1].split()[1:3] == ["1/1", "Running"]


def test_crash_loop_back_off_doubles_from_10s_to_5m_after_an_immediate_first_restart() -> None:
    c = kubelet_cluster()
    c.apply(pod("crash", image="busybox:1.36", behavior="crash"))
    c.run(1500)
    exits = [r.time for r in c.trace.filter(component="runtime/node-1", verb="exit")]
    restarts = [r.time for r in c.trace.filter(component=KUBELET, verb="start-container")][1:]
    delays = [round(start - end, 6) for end, start in zip(exits, restarts, strict=False)]
    assert delays[:8] == [0, 10, 20, 40, 80, 160, 300, 300]
    cs = status_of(c, "crash")
    assert cs["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    uid = c.get("pods", "crash")["metadata"]["uid"]
    assert cs["state"]["waiting"]["message"] == \
        f"back-off 5m0s restarting failed container=app pod=crash_default({uid})"
    assert cs["lastState"]["terminated"]["reason"] == "Error"
    assert cs["lastState"]["terminated"]["exitCode"] == 1
    assert cs["restartCount"] == len(restarts)
    assert c.get("pods", "crash")["status"]["phase"] == "Running"  # restartPolicy Always
    assert events(c, "crash", "BackOff")[0]["message"] == \
        f"Back-off restarting failed container app in pod crash_default({uid})"
    assert "CrashLoopBackOff" in c.kubectl("get pods")


def test_back_off_resets_for_a_container_that_ran_longer_than_ten_minutes() -> None:
    short = kubelet_cluster()
    short.apply(pod("short", behavior="exit=30,code=1"))
    long = kubelet_cluster()
    long.apply(pod("long", behavior="exit=700,code=1"))
    short.run(300)
    long.run(3000)

    def delays(c: Cluster) -> list[float]:
        exits = [r.time for r in c.trace.filter(component="runtime/node-1", verb="exit")]
        starts = [r.time for r in c.trace.filter(component=KUBELET, verb="start-container")][1:]
        return [round(s - e, 6) for e, s in zip(exits, starts, strict=False)]
    assert delays(short)[:4] == [0, 10, 20, 40]
    assert delays(long) == [0, 0, 0, 0]   # more than 2 x 300 s since the last failure: no back-off


def test_image_pull_back_off_retries_on_its_own_until_the_registry_works_again() -> None:
    c = kubelet_cluster()
    c.faults.break_registry("registry.example.com/shop/api", "unauthorized")
    c.apply(pod("api", image="registry.example.com/shop/api:2.3"))
    c.run(0.2)
    assert waiting_reason(c, "api") == "ContainerCreating"
    c.run(5)
    assert waiting_reason(c, "api") == "ErrImagePull"
    assert "401 Unauthorized" in status_of(c, "api")["state"]["waiting"]["message"]
    c.run(2000)
    pulls = [r.time for r in c.trace.filter(component=KUBELET, verb="pull")]
    failures = [r.time for r in c.trace.filter(component=KUBELET, verb="pull-failed")]
    assert [r.detail["backoff"] for r in c.trace.filter(component=KUBELET, verb="pull-failed")][:7] == \
        [10, 20, 40, 80, 160, 300, 300]
    assert [round(p - f, 6) for f, p in zip(failures, pulls[1:], strict=False)][:8] == \
        [10, 20, 40, 80, 160, 300, 300, 300]
    assert waiting_reason(c, "api") == "ImagePullBackOff"
    message = status_of(c, "api")["state"]["waiting"]["message"]
    assert message.startswith('Back-off pulling image "registry.example.com/shop/api:2.3": ErrImagePull: '
                              "rpc error: code = Unknown desc = failed to pull and unpack image")
    assert {e["message"] for e in events(c, "api", "Failed")} >= {"Error: ErrImagePull",
                                                                   "Error: ImagePullBackOff"}
    c.faults.fix_registry()
    waited = c.run_until(lambda: c.get("pods", "api")["status"]["phase"] == "Running", timeout=400)
    assert 0 < waited <= 301   # the next scheduled retry succeeds, nobody intervened
    assert c.trace.filter(component=KUBELET, verb="pulled")
    assert status_of(c, "api")["restartCount"] == 0 and status_of(c, "api")["ready"]


def test_registry_modes_not_found_flaky_slow_and_pull_policies() -> None:
    c = kubelet_cluster(nodes=1)
    c.faults.break_registry("nginx:1.99", "notfound")
    c.apply(pod("missing", image="nginx:1.99"))
    c.run(5)
    assert waiting_reason(c, "missing") == "ErrImagePull"
    assert status_of(c, "missing")["state"]["waiting"]["message"] == (
        'rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/nginx:1.99": '
        'failed to resolve reference "docker.io/library/nginx:1.99": docker.io/library/nginx:1.99: not found')
    never = pod("never", image="redis:7")
    never["spec"]["containers"][0]["imagePullPolicy"] = "Never"
    c.apply(never)
    c.run(3)
    assert waiting_reason(c, "never") == "ErrImageNeverPull"
    assert events(c, "never", "ErrImageNeverPull")[0]["message"] == \
        'Container image "redis:7" is not present with pull policy of Never'
    # A slow registry still works, twenty times slower.
    c.faults.fix_registry()
    c.faults.break_registry(None, "slow")
    c.apply(pod("slow", image="postgres:17"))
    c.run(10)
    assert waiting_reason(c, "slow") == "ContainerCreating"
    c.run_until(lambda: c.get("pods", "slow")["status"]["phase"] == "Running", timeout=600)
    # Always resolves the manifest even for a cached image: a broken registry breaks it.
    c.faults.fix_registry()
    c.apply(pod("cached", image="nginx:1.27"))
    c.run_until(lambda: c.get("pods", "cached")["status"]["phase"] == "Running", timeout=60)
    c.faults.break_registry("nginx", "unauthorized")
    always = pod("always", image="nginx:1.27")
    always["spec"]["containers"][0]["imagePullPolicy"] = "Always"
    c.apply(always)
    c.apply(pod("ifnotpresent", image="nginx:1.27"))
    # (pulls are serialized: "always" may queue behind another pod's pull)
    c.run_until(lambda: waiting_reason(c, "always") == "ErrImagePull", timeout=60)
    c.run_until(lambda: c.get("pods", "ifnotpresent")["status"]["phase"] == "Running", timeout=60)


def test_init_containers_run_one_at_a_time_before_the_app() -> None:
    c = kubelet_cluster()
    body = pod("init")
    body["spec"]["initContainers"] = [{"name": "migrate", "image": "busybox:1.36"},
                                      {"name": "warm", "image": "busybox:1.36"}]
    body["metadata"]["annotations"] = {"kubelab.dev/behavior.migrate": "exit=5"}
    c.apply(body)
    c.run(3)
    p = c.get("pods", "init")
    assert p["status"]["phase"] == "Pending"
    assert waiting_reason(c, "init") == "PodInitializing"
    initialized = next(x for x in p["status"]["conditions"] if x["type"] == "Initialized")
    assert initialized["message"] == "containers with incomplete status: [migrate warm]"
    c.run(20)
    started = [e["message"] for e in events(c, "init", "Started")]
    assert started == ["Started container migrate", "Started container warm", "Started container app"]
    inits = c.get("pods", "init")["status"]["initContainerStatuses"]
    assert [s["state"]["terminated"]["reason"] for s in inits] == ["Completed", "Completed"]
    assert c.get("pods", "init")["status"]["phase"] == "Running"


@pytest.mark.parametrize(("policy", "behavior", "phase", "restarts"), [
    ("Never", "exit=5,code=0", "Succeeded", 0),
    ("Never", "exit=5,code=2", "Failed", 0),
    ("OnFailure", "exit=5,code=0", "Succeeded", 0),
    ("OnFailure", "exit=5,code=2", "Running", 1),
])
def test_restart_policy_decides_what_an_exit_means(policy: str, behavior: str, phase: str,
                                                   restarts: int) -> None:
    c = kubelet_cluster()
    c.apply(pod("job", behavior=behavior, policy=policy))
    c.run(8)
    assert c.get("pods", "job")["status"]["phase"] == phase
    assert status_of(c, "job")["restartCount"] == restarts
    if phase == "Succeeded":
        ready = next(x for x in c.get("pods", "job")["status"]["conditions"] if x["type"] == "Ready")
        assert ready["reason"] == "PodCompleted"
        c.run(120)  # a finished pod stays finished
        assert c.get("pods", "job")["status"]["phase"] == "Succeeded"


def test_oom_killed_and_bad_behavior_annotation() -> None:
    c = kubelet_cluster()
    c.apply(pod("oom", behavior="oom=5"))
    c.apply(pod("typo", behavior="exit=soon"))
    c.run(10)
    last = status_of(c, "oom")["lastState"]["terminated"]
    assert (last["reason"], last["exitCode"]) == ("OOMKilled", 137)
    assert waiting_reason(c, "typo") == "CreateContainerConfigError"
    assert "exit must be a number of seconds" in status_of(c, "typo")["state"]["waiting"]["message"]


def test_graceful_deletion_stops_containers_then_the_kubelet_deletes_the_pod() -> None:
    c = kubelet_cluster()
    c.apply(pod("quick"))
    body = pod("stubborn", behavior="shutdown=never", terminationGracePeriodSeconds=20)
    c.apply(body)
    c.run(10)
    c.client.delete("pods", "quick")
    c.client.delete("pods", "stubborn")
    assert c.get("pods", "stubborn")["metadata"]["deletionTimestamp"]
    c.run(1)
    assert not c.exists("pods", "quick")   # honoured SIGTERM at once: gone
    assert [e["message"] for e in events(c, "stubborn", "Killing")] == ["Stopping container app"]
    c.run(17)
    assert c.exists("pods", "stubborn")    # ignores SIGTERM: waits out the grace period
    c.run(3)
    assert not c.exists("pods", "stubborn")
    exits = c.trace.filter(component="runtime/node-1", verb="exit")
    assert [r.detail["code"] for r in exits] == [0, 137]  # nginx exits 0 on SIGTERM
    final = [a for a in c.apiserver.audit if a.verb == "delete" and a.name == "stubborn"]
    assert final[-1].user == "system:node:node-1" and final[-1].code == 200
    assert not c.runtimes["node-1"].running()
