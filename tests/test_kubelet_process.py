"""The process model: containers run their command on the virtual clock, and what they print,
how they exit and what they see drive the pod as on a real cluster (kind)."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from kubelab import Cluster
from kubelab.kubelet.process import Process, ProcessContext, command_line, parse, run_argv
from kubelab.kubelet.process.shell import ShellSyntaxError
from kubelab.sim.clock import Clock

Object = dict[str, Any]


def run(argv: list[str], *, env: dict[str, str] | None = None, files: dict[str, bytes] | None = None,
        seconds: float = 100, stdin: bytes | None = None) -> tuple[str, str, int | None, float]:
    """Run argv alone on a clock: (stdout, stderr, exit code, when it ended)."""
    clock = Clock()
    ctx = ProcessContext(env=dict(env or {}), files=dict(files or {}), hostname="box",
                         now=lambda: clock.now)
    ended: list[float] = []
    p = Process(clock, lambda io: run_argv(ctx, argv, io), stdin=stdin is not None,
                on_exit=lambda _: ended.append(clock.now))
    p.start()
    if stdin is not None:
        p.write(stdin)
        p.close_stdin()
    clock.run(until=seconds)
    out, err = p.read()
    return out.decode(), err.decode(), p.exit_code, ended[0] if ended else -1.0


# ---------------------------------------------------------------------- the programs alone

@pytest.mark.parametrize(("script", "out", "code"), [
    ("echo hi", "hi\n", 0),
    ("echo -n a; echo b", "ab\n", 0),
    ("true && echo yes || echo no", "yes\n", 0),
    ("false && echo yes || echo no", "no\n", 0),
    ("false; echo $?", "1\n", 0),
    ("exit 3; echo never", "", 3),
    ("X=1; echo \"x=$X\" '$X' ${X}2", "x=1 $X 12\n", 0),
    ("for i in a b; do echo $i; done", "a\nb\n", 0),
    ("i=0; while [ $i != 3 ]; do echo $i; i=3; done", "0\n", 0),
    ("if [ 2 -gt 1 ]; then echo big; else echo small; fi", "big\n", 0),
    ("! true; echo $?", "1\n", 0),
    ("echo a | cat", "a\n", 0),
    ("echo secret > /tmp/f; cat /tmp/f", "secret\n", 0),
    ("printenv GREETING; env | cat", "hello\nGREETING=hello\n", 0),
    ("hostname; cat /etc/hostname", "box\nbox\n", 0),
    ("ls /etc", "hostname\n", 0),
    # --- pye2e --- what the official Python client's e2e tests run in busybox
    ("for i in $(seq 1 3); do echo \"<$i>\"; done", "<1>\n<2>\n<3>\n", 0),
    ("X=\"$(echo a; echo b)\"; echo \"$X\"; echo $X", "a\nb\na b\n", 0),
    ("X='p  q'; for w in $X \"$X\" $UNSET; do echo \"[$w]\"; done", "[p]\n[q]\n[p  q]\n", 0),
    ("X=$(exit 3); echo $? $(echo inner; false) $?", "3 inner 1\n", 0),
    ("seq 3; seq 4 2 8; seq 3 -1 2", "1\n2\n3\n4\n6\n8\n3\n2\n", 0),
    ("echo -n abc | gzip | gzip -d; echo", "abc\n", 0),
    ("uptime", " 00:00:00 up 0 min,  0 users,  load average: 0.00, 0.00, 0.00\n", 0),
])
def test_sh_runs_the_documented_subset(script: str, out: str, code: int) -> None:
    got, err, exit_code, _ = run(["sh", "-c", script], env={"GREETING": "hello"},
                                 files={"/etc/hostname": b"box\n"})
    assert (got, err, exit_code) == (out, "", code)


@pytest.mark.parametrize(("argv", "err", "code"), [
    (["sh", "-c", "foo bar"], "sh: foo: not found\n", 127),
    (["sh", "-c", "cat /nope"], "cat: can't open '/nope': No such file or directory\n", 1),
    (["sh", "-c", "while true; do echo x"], "sh: syntax error: unexpected end of file\n", 2),
    (["sh", "-c", "done"], 'sh: syntax error: unexpected "done"\n', 2),
    (["sh", "-c", "echo $((1 + 2))"], "sh: arithmetic expansion $((...)) is not simulated\n", 2),
    (["sh", "-c", "echo $(date"], 'sh: syntax error: unexpected end of file (expecting ")")\n', 2),
    (["seq", "1", "x"], "seq: invalid number 'x'\n", 1),
    (["sleep", "x"], "sleep: invalid number 'x'\n", 1),
])
def test_what_is_not_there_fails_as_a_shell_would(argv: list[str], err: str, code: int) -> None:
    assert run(argv)[1:3] == (err, code)


def test_sleep_and_loops_advance_on_the_virtual_clock() -> None:
    out, _, code, ended = run(["sh", "-c", "echo a; sleep 5; echo b; sleep 1m; exit 4"], seconds=1000)
    assert (out, code, ended) == ("a\nb\n", 4, 65.0)
    out, _, code, _ = run(["sh", "-c", "while true; do echo tick; sleep 10; done"], seconds=35)
    assert (out, code) == ("tick\n" * 4, None)
    busy, _, code, _ = run(["sh", "-c", "while true; do echo x; done"], seconds=1)
    assert code is None and 90 <= busy.count("x") <= 101  # 10 ms a turn: the clock still moves


def test_stdin_reaches_cat_and_an_interactive_sh() -> None:
    assert run(["cat"], stdin=b"one\ntwo")[0::2] == ("one\ntwo\n", 0)
    out, err, code, _ = run(["sh"], stdin=b"echo in; exit 9\necho never\n")
    assert (out, err, code) == ("in\n", "", 9)


def test_a_shell_syntax_error_names_the_token() -> None:
    with pytest.raises(ShellSyntaxError, match='unexpected "fi"'):
        parse("fi")


@pytest.mark.parametrize(("image", "container", "argv"), [
    ("busybox:1.36", {}, ["sh"]),
    ("nginx:1.27", {}, ["/docker-entrypoint.sh", "nginx", "-g", "daemon off;"]),
    ("nginx:1.27", {"args": ["nginx-debug"]}, ["/docker-entrypoint.sh", "nginx-debug"]),
    ("nginx:1.27", {"command": ["sleep"]}, ["sleep"]),
    ("busybox", {"command": ["sh", "-c"], "args": ["echo hi"]}, ["sh", "-c", "echo hi"]),
    ("redis:7", {}, ["docker-entrypoint.sh", "redis-server"]),
    ("registry.k8s.io/pause:3.10", {}, ["/pause"]),
    ("registry.example.com/shop/api:2.3", {}, ["kubelab-app"]),
])
def test_command_and_args_replace_entrypoint_and_cmd(image: str, container: Object,
                                                      argv: list[str]) -> None:
    assert command_line(image, container) == argv


# ---------------------------------------------------------------------- in the cluster

def cluster() -> Cluster:
    c = Cluster(nodes=1)
    c.run(2)
    return c


def container_status(c: Cluster, pod: str, init: bool = False) -> Object:
    status = c.get("pods", pod)["status"]
    return status["initContainerStatuses" if init else "containerStatuses"][0]


def test_run_echo_hi_completes_and_logs_hi() -> None:
    c = cluster()
    c.kubectl("run t --image=busybox --restart=Never -- echo hi")
    c.run(15)
    assert c.kubectl("get pod t").splitlines()[1].split()[1:4] == ["0/1", "Completed", "0"]
    assert c.kubectl("logs t") == "hi"
    terminated = container_status(c, "t")["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (0, "Completed")
    stamp, text = c.kubectl("logs t --timestamps").split(" ", 1)
    assert text == "hi" and stamp.startswith("2025-01-01T00:00:") and len(stamp) == 30


def test_a_command_that_exits_crash_loops_and_logs_previous_shows_its_last_run() -> None:
    c = cluster()
    c.kubectl("run crasher --image=busybox:1.36 -- sh -c 'echo bye; exit 1'")
    c.run(60)
    row = c.kubectl("get pod crasher").splitlines()[1].split()
    assert row[2] == "CrashLoopBackOff" and int(row[3]) >= 2
    assert c.kubectl("logs crasher --previous") == "bye"
    last = container_status(c, "crasher")["lastState"]["terminated"]
    assert (last["exitCode"], last["reason"]) == (1, "Error")


def test_restart_policy_on_failure_restarts_only_failures() -> None:
    c = cluster()
    for name, script in (("ok", "exit 0"), ("bad", "exit 2")):
        c.kubectl(f"run {name} --image=busybox --restart=OnFailure -- sh -c '{script}'")
    c.run(40)
    assert c.get("pods", "ok")["status"]["phase"] == "Succeeded"
    assert container_status(c, "bad")["restartCount"] >= 1
    assert c.get("pods", "bad")["status"]["phase"] == "Running"


def test_a_job_whose_command_exits_3_runs_to_its_backoff_limit() -> None:
    c = cluster()
    c.apply({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "fail"},
             "spec": {"backoffLimit": 2, "template": {"spec": {"restartPolicy": "Never", "containers": [
                 {"name": "main", "image": "busybox:1.36", "command": ["sh", "-c", "exit 3"]}]}}}})
    c.apply({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi"},
             "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
                 {"name": "main", "image": "busybox:1.36",
                  "command": ["sh", "-c", "sleep 3; echo 3.14"]}]}}}})
    c.run(120)
    failed = c.get("jobs", "fail")["status"]
    assert failed["failed"] == 3
    assert [(x["type"], x["reason"]) for x in failed["conditions"] if x["status"] == "True"] == [
        ("FailureTarget", "BackoffLimitExceeded"), ("Failed", "BackoffLimitExceeded")]
    codes = {p["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"]
             for p in c.get("pods", label_selector="job-name=fail")}
    assert codes == {3}
    assert c.get("jobs", "pi")["status"].get("succeeded") == 1
    pi = c.get("pods", label_selector="job-name=pi")[0]["metadata"]["name"]
    assert c.kubectl(f"logs {pi}") == "3.14"


def test_init_containers_run_in_order_before_the_app() -> None:
    c = cluster()
    c.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {
        "initContainers": [{"name": "one", "image": "busybox", "command": ["sh", "-c", "sleep 10; echo one"]},
                           {"name": "two", "image": "busybox", "command": ["echo", "two"]}],
        "containers": [{"name": "app", "image": "nginx:1.27"}]}})
    c.run(6)
    assert c.kubectl("get pod p").splitlines()[1].split()[2] == "Init:0/2"
    assert c.kubectl("logs p -c two") == ('Error from server (BadRequest): container "two" in pod "p" '
                                          "is waiting to start: PodInitializing")
    c.run(20)
    assert c.kubectl("get pod p").splitlines()[1].split()[1:3] == ["1/1", "Running"]
    one, two = c.get("pods", "p")["status"]["initContainerStatuses"]
    assert one["state"]["terminated"]["finishedAt"] <= two["state"]["terminated"]["startedAt"]
    assert (c.kubectl("logs p -c one"), c.kubectl("logs p -c two")) == ("one", "two")


def test_memory_past_the_limit_is_oom_killed() -> None:
    c = cluster()
    c.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "memory-demo"}, "spec": {
        "restartPolicy": "Never", "containers": [{
            "name": "memory-demo-ctr", "image": "polinux/stress",
            "resources": {"limits": {"memory": "100Mi"}, "requests": {"memory": "50Mi"}},
            "command": ["stress"], "args": ["--vm", "1", "--vm-bytes", "250M", "--vm-hang", "1"]}]}})
    c.run(20)
    terminated = container_status(c, "memory-demo")["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (137, "OOMKilled")
    assert c.kubectl("get pod memory-demo").splitlines()[1].split()[2] == "OOMKilled"


def test_yes_burns_a_cpu_that_the_container_usage_shows() -> None:
    c = cluster()
    c.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "hog"}, "spec": {"containers": [
        {"name": "c", "image": "busybox", "command": ["sh", "-c", "yes > /dev/null"],
         "resources": {"limits": {"cpu": "500m"}}}]}})
    c.run(10)
    (container,) = c.runtimes["node-1"].running()[-1:]
    assert container.name == "c" and container.process_usage["cpu"] == 500
    assert c.kubectl("logs hog") == ""


def test_termination_message_from_the_file_or_the_log() -> None:
    c = cluster()
    for name, policy, script in (
            ("file", "File", "echo 'disk full' > /dev/termination-log; exit 1"),
            ("fallback", "FallbackToLogsOnError", "echo first; echo 'last words'; exit 1"),
            ("quiet", "FallbackToLogsOnError", "echo fine")):
        c.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {
            "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox",
                                                      "terminationMessagePolicy": policy,
                                                      "command": ["sh", "-c", script]}]}})
    c.run(15)
    messages = {name: container_status(c, name)["state"]["terminated"].get("message")
                for name in ("file", "fallback", "quiet")}
    assert messages == {"file": "disk full\n", "fallback": "first\nlast words\n", "quiet": None}


def test_a_command_that_is_not_in_the_image_is_a_start_error() -> None:
    c = cluster()
    c.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "typo"}, "spec": {
        "restartPolicy": "Never",
        "containers": [{"name": "c", "image": "busybox", "command": ["ech0", "hi"]}]}})
    c.run(15)
    terminated = container_status(c, "typo")["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (128, "StartError")
    assert terminated["message"].endswith('exec: "ech0": executable file not found in $PATH: unknown')


def test_postgres_refuses_to_start_without_a_password() -> None:
    c = cluster()
    c.kubectl("run db --image=postgres:16 --restart=Never")
    c.kubectl("run db2 --image=postgres:16 --env=POSTGRES_PASSWORD=x")
    c.run(30)
    assert c.kubectl("logs db").startswith("Error: Database is uninitialized and superuser password "
                                           "is not specified.")
    assert c.get("pods", "db")["status"]["phase"] == "Failed"
    assert c.get("pods", "db2")["status"]["phase"] == "Running"


# ---------------------------------------------------------------------- the environment

def env_pod(name: str, container: Object) -> Object:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "x"}},
            "spec": {"restartPolicy": "Never", "containers": [
                {"name": "c", "image": "busybox", "command": ["env"], **container}]}}


def test_env_envfrom_downward_api_and_references() -> None:
    c = cluster()
    c.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"},
             "data": {"MODE": "fast", "LEVEL": "3"}})
    c.apply({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds"},
             "data": {"password": base64.b64encode(b"s3cret").decode()}})
    c.apply(env_pod("e", {
        "envFrom": [{"configMapRef": {"name": "cfg"}, "prefix": "CFG_"}],
        "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "$(A)-$(NOPE)-$$(A)"},
                {"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "password"}}},
                {"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "MODE"}}},
                {"name": "MISSING", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "x",
                                                                       "optional": True}}},
                {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                {"name": "APP", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
                {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
                {"name": "IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                {"name": "MEM", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory",
                                                                   "divisor": "1Mi"}}},
                {"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}}],
        "resources": {"limits": {"memory": "64Mi", "cpu": "250m"}}}))
    c.run(15)
    env = dict(line.split("=", 1) for line in c.kubectl("logs e").splitlines())
    ip = c.get("pods", "e")["status"]["podIP"]
    assert {k: env.get(k) for k in ("CFG_MODE", "CFG_LEVEL", "A", "B", "PASSWORD", "MODE", "MISSING",
                                    "POD", "APP", "NODE", "IP", "MEM", "CPU", "HOSTNAME")} == {
        "CFG_MODE": "fast", "CFG_LEVEL": "3", "A": "1", "B": "1-$(NOPE)-$(A)", "PASSWORD": "s3cret",
        "MODE": "fast", "MISSING": None, "POD": "e", "APP": "x", "NODE": "node-1", "IP": ip,
        "MEM": "64", "CPU": "1", "HOSTNAME": "e"}


@pytest.mark.parametrize(("container", "message"), [
    ({"env": [{"name": "X", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "x"}}}]},
     "couldn't find key x in ConfigMap default/cfg"),
    ({"env": [{"name": "X", "valueFrom": {"secretKeyRef": {"name": "nope", "key": "x"}}}]},
     'secret "nope" not found'),
    ({"envFrom": [{"configMapRef": {"name": "absent"}}]}, 'configmap "absent" not found'),
])
def test_a_missing_key_is_a_create_container_config_error(container: Object, message: str) -> None:
    c = cluster()
    c.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}, "data": {"y": "1"}})
    c.apply(env_pod("bad", container))
    c.run(15)
    waiting = container_status(c, "bad")["state"]["waiting"]
    assert (waiting["reason"], waiting["message"]) == ("CreateContainerConfigError", message)
    assert c.kubectl("get pod bad").splitlines()[1].split()[2] == "CreateContainerConfigError"
    assert any(e["reason"] == "Failed" and e["message"] == f"Error: {message}" for e in c.events())


def test_a_sidecar_starts_before_the_app_restarts_when_it_exits_and_stops_with_the_job() -> None:
    c = cluster()
    c.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "side"}, "spec": {
        "restartPolicy": "Never",
        "initContainers": [
            {"name": "proxy", "image": "nginx:1.27", "restartPolicy": "Always"},
            {"name": "flaky", "image": "busybox", "restartPolicy": "Always",
             "command": ["sh", "-c", "sleep 5; exit 1"]}],
        "containers": [{"name": "app", "image": "busybox",
                        "command": ["sh", "-c", "wget -qO- localhost > /dev/null && sleep 30"]}]}})
    c.run(15)
    status = c.get("pods", "side")["status"]
    assert status["phase"] == "Running"
    flaky = status["initContainerStatuses"][1]
    assert flaky["restartCount"] >= 1  # the pod's restartPolicy Never does not apply to it
    c.run(40)
    status = c.get("pods", "side")["status"]
    app = status["containerStatuses"][0]["state"]["terminated"]
    assert (status["phase"], app["exitCode"]) == ("Succeeded", 0)  # it reached its sidecar
    assert not [x for x in c.runtimes["node-1"].running() if x.pod_uid == c.get(
        "pods", "side")["metadata"]["uid"]]  # and the sidecars were stopped after it


def test_the_liveness_exec_example_restarts_the_container_once_the_file_is_gone() -> None:
    """The "Define a liveness command" task page: cat /tmp/healthy fails after 30 s."""
    c = cluster()
    c.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "liveness-exec"}, "spec": {
        "containers": [{"name": "liveness", "image": "registry.k8s.io/busybox:1.27.2", "args": [
            "/bin/sh", "-c", "touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600"],
            "livenessProbe": {"exec": {"command": ["cat", "/tmp/healthy"]},
                              "initialDelaySeconds": 5, "periodSeconds": 5}}]}})
    c.run(30)
    assert container_status(c, "liveness-exec")["restartCount"] == 0
    c.run(20)  # three failures 5 s apart: killed; sh as PID 1 ignores SIGTERM, so SIGKILL ends
    assert "Container liveness failed liveness probe, will be restarted" in [  # it 30 s later
        e["message"] for e in c.events() if e["reason"] == "Killing"]
    assert container_status(c, "liveness-exec")["restartCount"] == 0
    c.run(30)
    status = container_status(c, "liveness-exec")
    assert status["restartCount"] == 1 and status["lastState"]["terminated"]["exitCode"] == 137
    messages = [e["message"] for e in c.events() if e["reason"] == "Unhealthy"]
    assert messages[0] == ("Liveness probe failed: cat: can't open '/tmp/healthy': No such file or "
                           "directory\n")
