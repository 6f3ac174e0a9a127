"""Real kubectl against `kubelab serve`: the same API, over HTTPS, as a real cluster's."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serve_helpers import KUBECTL, Served, serving

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed (make installs it)")

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: nginx:1.27
        resources:
          requests: {cpu: 100m}
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from serving(tmp_path_factory.mktemp("serve"), "--nodes", "2", "--speed", "4")


def test_kubectl_sees_the_release_and_the_resources(served: Served) -> None:
    version = json.loads(served.kubectl("version", "-o", "json").stdout)
    assert (version["serverVersion"]["major"], version["serverVersion"]["minor"]) == ("1", "34")
    resources = served.kubectl("api-resources", "--no-headers").stdout
    # metrics-server's add-on serves nodes and pods too, in metrics.k8s.io (as on a cluster
    # that installed it): those rows are checked apart.
    lines = [line.split() for line in resources.splitlines()]
    rows = {r[0]: r for r in lines if "metrics.k8s.io/v1beta1" not in r}
    assert rows["deployments"][1:3] == ["deploy", "apps/v1"]
    assert rows["pods"][1:4] == ["po", "v1", "true"]
    assert [r for r in lines if "metrics.k8s.io/v1beta1" in r] == [
        ["nodes", "metrics.k8s.io/v1beta1", "false", "NodeMetrics"],
        ["pods", "metrics.k8s.io/v1beta1", "true", "PodMetrics"]]
    nodes = served.kubectl("get", "nodes", "--no-headers").stdout.splitlines()
    # `kubelab serve` builds the cluster as kind does: a control-plane node beside the workers
    # (Cluster(anatomy=True)), with its role in the ROLES column.
    assert [n.split()[:3] for n in nodes] == [["control-plane", "Ready", "control-plane"],
                                              ["node-1", "Ready", "<none>"], ["node-2", "Ready", "<none>"]]


def test_apply_wait_and_get_in_every_form(served: Served) -> None:
    created = served.kubectl("apply", "-f", "-", stdin=DEPLOYMENT).stdout
    assert created.strip() == "deployment.apps/web created"
    # A second apply with a change is a strategic merge patch computed by kubectl itself.
    changed = DEPLOYMENT.replace("replicas: 3", "replicas: 2")
    configured = served.kubectl("apply", "-f", "-", stdin=changed).stdout
    assert configured.strip() == "deployment.apps/web configured"
    assert "condition met" in served.kubectl("wait", "--for=condition=Available", "deployment/web",
                                             "--timeout=60s", timeout=90).stdout
    wide = served.kubectl("get", "pods", "-l", "app=web", "-o", "wide").stdout.splitlines()
    assert wide[0].split()[:5] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert "NODE" in wide[0] and len(wide) == 3
    assert all(row.split()[1:3] == ["1/1", "Running"] for row in wide[1:])
    items = json.loads(served.kubectl("get", "pods", "-l", "app=web", "-o", "json").stdout)["items"]
    names = served.kubectl("get", "pods", "-l", "app=web", "-o", "jsonpath={.items[*].metadata.name}").stdout
    assert sorted(names.split()) == sorted(p["metadata"]["name"] for p in items)
    assert "kind: Deployment" in served.kubectl("get", "deploy", "web", "-o", "yaml").stdout
    deploy = served.kubectl("get", "deploy", "web").stdout.splitlines()
    assert deploy[1].split()[:4] == ["web", "2/2", "2", "2"]


def test_errors_are_kubectls_own_words(served: Served) -> None:
    missing = served.kubectl("get", "pod", "nope", check=False)
    assert missing.returncode == 1
    assert missing.stderr.strip() == 'Error from server (NotFound): pods "nope" not found'
    denied = served.kubectl("--context", "kubelab-viewer", "create", "configmap", "x", check=False)
    assert denied.returncode == 1
    assert ('configmaps is forbidden: User "viewer" cannot create resource "configmaps" in API group ""'
            ' in the namespace "default"') in denied.stderr
    # view is a namespaced role, as upstream's: pods yes, nodes no.
    assert served.kubectl("--context", "kubelab-viewer", "get", "pods", "-l", "app=web", "-o", "name").stdout
    nodes = served.kubectl("--context", "kubelab-viewer", "get", "nodes", check=False)
    assert nodes.stderr.strip() == ('Error from server (Forbidden): nodes is forbidden: User "viewer" '
                                    'cannot list resource "nodes" in API group "" at the cluster scope')
    invalid = served.kubectl("create", "deployment", "Bad_Name", "--image=nginx", check=False)
    assert invalid.returncode == 1 and "Bad_Name" in invalid.stderr and "Invalid value" in invalid.stderr


def test_typed_create_commands_send_protobuf_and_work(served: Served) -> None:
    assert served.kubectl("create", "namespace", "team-a").stdout.strip() == "namespace/team-a created"
    assert served.kubectl("create", "configmap", "settings", "-n", "team-a",
                          "--from-literal=mode=fast").stdout.strip() == "configmap/settings created"
    data = json.loads(served.kubectl("get", "cm", "settings", "-n", "team-a", "-o", "json").stdout)["data"]
    assert data == {"mode": "fast"}
    out = served.kubectl("create", "deployment", "api", "-n", "team-a", "--image=nginx:1.27", "--replicas=0")
    assert out.stdout.strip() == "deployment.apps/api created"
    spec = json.loads(served.kubectl("get", "deploy", "api", "-n", "team-a", "-o", "json").stdout)["spec"]
    assert spec["replicas"] == 0  # a pointer field: zero is kept, not dropped as empty
    assert spec["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"


def test_scale_and_delete(served: Served) -> None:
    served.kubectl("apply", "-f", "-", stdin=DEPLOYMENT.replace("name: web", "name: batch"))
    scaled = served.kubectl("scale", "deploy", "batch", "--replicas=1").stdout
    assert scaled.strip() == "deployment.apps/batch scaled"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        pods = served.kubectl("get", "pods", "-l", "app=web", "-o", "name").stdout.split()
        if len([p for p in pods if "batch" in p]) == 1:
            break
        time.sleep(0.5)
    assert served.kubectl("get", "deploy", "batch", "-o", "jsonpath={.spec.replicas}").stdout == "1"
    deleted = served.kubectl("delete", "deploy", "batch").stdout.strip()
    assert deleted == 'deployment.apps "batch" deleted from default namespace'  # 1.34 names it
    assert served.kubectl("get", "deploy", "batch", check=False).returncode == 1


def test_get_watch_streams_changes(served: Served, tmp_path: Path) -> None:
    assert KUBECTL is not None
    watch = subprocess.Popen([KUBECTL, "get", "configmaps", "-w", "--output-watch-events"],
                             env=served.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(1.0)
        served.kubectl("create", "configmap", "watched", "--from-literal=a=1")
        served.kubectl("delete", "configmap", "watched")
        time.sleep(1.5)
    finally:
        watch.terminate()
        out, err = watch.communicate(timeout=10)
    events = [line.split()[:2] for line in out.splitlines()[1:]]
    assert ["ADDED", "watched"] in events and ["DELETED", "watched"] in events, out + err


def test_auth_can_i_asks_the_authorizer(served: Served) -> None:
    assert served.kubectl("auth", "can-i", "create", "deployments").stdout.strip() == "yes"
    viewer = ("--context", "kubelab-viewer", "auth", "can-i")
    assert served.kubectl(*viewer, "list", "pods").stdout.strip() == "yes"
    refused = served.kubectl(*viewer, "delete", "pods", check=False)
    assert (refused.returncode, refused.stdout.strip()) == (1, "no")
    assert served.kubectl(*viewer, "get", "/healthz").stdout.strip() == "yes"


def test_drain_evicts_and_the_deployment_heals(served: Served) -> None:
    served.kubectl("apply", "-f", "-", stdin=DEPLOYMENT.replace("name: web", "name: drained"))
    served.kubectl("wait", "--for=condition=Available", "deployment/drained", "--timeout=60s", timeout=90)
    drained = served.kubectl("drain", "node-1", "--ignore-daemonsets", "--timeout=60s", timeout=90)
    out = drained.stdout
    assert "node/node-1 cordoned" in out and "node/node-1 drained" in out
    # kind's DaemonSets give --ignore-daemonsets something to ignore, and they stay.
    assert "Warning: ignoring DaemonSet-managed Pods: kube-system/kindnet-" in drained.stderr
    assert "kube-system/kube-proxy-" in drained.stderr
    served.kubectl("wait", "--for=condition=Available", "deployment/drained", "--timeout=60s", timeout=90)
    nodes = served.kubectl("get", "pods", "-o", "jsonpath={.items[*].spec.nodeName}").stdout.split()
    assert nodes and "node-1" not in nodes
    assert "node/node-1 uncordoned" in served.kubectl("uncordon", "node-1").stdout


WEBSITE_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: websites.kubelab.dev}
spec:
  group: kubelab.dev
  scope: Namespaced
  names: {plural: websites, singular: website, kind: Website}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              replicas: {type: integer, description: How many copies to serve.}
"""


def test_explain_built_in_and_custom_kinds(served: Served) -> None:
    replicas = served.kubectl("explain", "deployment.spec.replicas").stdout
    assert "KIND:       Deployment" in replicas and "FIELD: replicas <integer>" in replicas
    served.kubectl("apply", "-f", "-", stdin=WEBSITE_CRD)
    deadline = time.monotonic() + 20
    while served.kubectl("api-resources", "--api-group=kubelab.dev", "-o", "name").stdout.strip() != \
            "websites.kubelab.dev" and time.monotonic() < deadline:
        time.sleep(0.5)
    spec = served.kubectl("explain", "website.spec").stdout
    assert "KIND:       Website" in spec and "replicas\t<integer>" in spec and "How many copies" in spec
    # Deleting the CRD takes its group out of discovery again.
    served.kubectl("delete", "crd", "websites.kubelab.dev")
    assert served.kubectl("api-resources", "--api-group=kubelab.dev", "-o", "name").stdout.strip() == ""


def test_logs_come_from_the_node_through_the_api(served: Served) -> None:
    served.kubectl("apply", "-f", "-", stdin=DEPLOYMENT.replace("name: web", "name: talk"))
    served.kubectl("wait", "--for=condition=Available", "deployment/talk", "--timeout=60s", timeout=90)
    logs = served.kubectl("logs", "deploy/talk").stdout
    assert "[notice] 1#1: start worker processes" in logs  # nginx's own log, from its node
    pod = served.kubectl("get", "pods", "-o", "name").stdout.split()[0]
    assert KUBECTL is not None
    follow = subprocess.Popen([KUBECTL, "logs", "-f", pod], env=served.env(), stdout=subprocess.PIPE,
                              text=True)
    try:
        assert follow.stdout is not None
        assert follow.stdout.readline().startswith("/docker-entrypoint.sh:")  # nginx's first line;
        # the stream stays open while the container runs
        assert follow.poll() is None
    finally:
        follow.terminate()
        follow.wait(timeout=10)


def test_server_side_apply_owns_fields_and_reports_conflicts(served: Served) -> None:
    manifest = DEPLOYMENT.replace("name: web", "name: owned")
    assert served.kubectl("apply", "--server-side", "-f", "-", stdin=manifest).stdout.strip() == \
        "deployment.apps/owned serverside-applied"
    rival = manifest.replace("replicas: 3", "replicas: 1")
    conflict = served.kubectl("apply", "--server-side", "--field-manager=rival", "-f", "-", stdin=rival,
                              check=False)
    assert conflict.returncode == 1
    expected = 'Apply failed with 1 conflict: conflict with "kubectl" using apps/v1: .spec.replicas'
    assert expected in conflict.stderr
    served.kubectl("apply", "--server-side", "--field-manager=rival", "--force-conflicts", "-f", "-",
                   stdin=rival)
    managers = served.kubectl("get", "deploy", "owned", "-o",
                              "jsonpath={range .metadata.managedFields[*]}{.manager} {end}").stdout.split()
    assert sorted(managers) == ["kubectl", "rival"]
    assert served.kubectl("get", "deploy", "owned", "-o", "jsonpath={.spec.replicas}").stdout == "1"


def test_describe_rollout_and_events(served: Served) -> None:
    manifest = DEPLOYMENT.replace("name: web", "name: roll")
    served.kubectl("apply", "-f", "-", stdin=manifest)
    assert 'deployment "roll" successfully rolled out' in served.kubectl(
        "rollout", "status", "deployment/roll", "--timeout=60s", timeout=90).stdout
    served.kubectl("apply", "-f", "-", stdin=manifest.replace("nginx:1.27", "nginx:1.28"))
    served.kubectl("rollout", "status", "deployment/roll", "--timeout=60s", timeout=90)
    undone = served.kubectl("rollout", "undo", "deployment/roll").stdout
    assert undone.strip() == "deployment.apps/roll rolled back"
    served.kubectl("rollout", "status", "deployment/roll", "--timeout=60s", timeout=90)
    image = "jsonpath={.spec.template.spec.containers[0].image}"
    assert served.kubectl("get", "deploy", "roll", "-o", image).stdout == "nginx:1.27"
    described = served.kubectl("describe", "deployment", "roll").stdout
    assert described.startswith("Name:                   roll\nNamespace:              default\n")
    replicas = "Replicas:               3 desired | 3 updated | 3 total | 3 available | 0 unavailable"
    assert replicas in described
    assert "ScalingReplicaSet" in described  # its Events, found by the describer's own query
    events = served.kubectl("get", "events", "--field-selector", "involvedObject.name=roll").stdout
    assert "ScalingReplicaSet" in events and "deployment/roll" in events


def test_server_dry_run_changes_nothing(served: Served) -> None:
    served.kubectl("create", "configmap", "keep-me", "--from-literal=a=1")
    out = served.kubectl("delete", "configmap", "keep-me", "--dry-run=server").stdout
    assert out.strip() == 'configmap "keep-me" deleted from default namespace (server dry run)'
    assert served.kubectl("get", "configmap", "keep-me", "-o", "name").stdout.strip() == "configmap/keep-me"
    out = served.kubectl("create", "configmap", "not-made", "--dry-run=server").stdout
    assert out.strip() == "configmap/not-made created (server dry run)"
    assert served.kubectl("get", "configmap", "not-made", check=False).returncode == 1


def test_the_real_kubectl_is_the_release_kubelab_follows() -> None:
    # scripts/system_deps.py installs it; a kubectl of another release words things differently
    # (1.34's delete names the namespace, 1.32's does not), so the comparisons above need it.
    done = subprocess.run([str(KUBECTL), "version", "--client", "-o", "json"], capture_output=True,
                          text=True, timeout=60, check=True)
    assert json.loads(done.stdout)["clientVersion"]["gitVersion"].startswith("v1.34.")


def test_kubectl_diff_shows_only_the_real_change(served: Served) -> None:
    """kubectl diff sends a server-side dry run; its answer keeps the live resourceVersion
    (dryrun.go), so the only lines that differ are the ones the manifest changes."""
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: diffed\ndata:\n  k: before\n"
    served.kubectl("apply", "-f", "-", stdin=cm)
    same = served.kubectl("diff", "-f", "-", stdin=cm, check=False)
    assert (same.returncode, same.stdout) == (0, "")
    changed = served.kubectl("diff", "-f", "-", stdin=cm.replace("before", "after"), check=False)
    assert changed.returncode == 1, changed.stderr
    lines = [x for x in changed.stdout.splitlines()
             if x[:1] in "+-" and not x.startswith(("+++", "---"))]
    assert lines == ["-  k: before", "+  k: after"]


def test_kubectl_get_cs_prints_the_deprecation_warning_and_the_components(served: Served) -> None:
    done = served.kubectl("get", "cs")
    assert done.stderr == "Warning: v1 ComponentStatus is deprecated in v1.19+\n"
    assert [line.split()[:2] for line in done.stdout.splitlines()] == [
        ["NAME", "STATUS"], ["controller-manager", "Healthy"], ["etcd-0", "Healthy"],
        ["scheduler", "Healthy"]]


# --- proto --- kubectl's typed commands send their objects as application/vnd.kubernetes.protobuf:
# the server must read every field they send (kubelab/apiserver/endpoints/protobuf/). They run
# in order, in their own namespace, after the tests above (the drain among them).
N = ("-n", "proto")
COMMANDS: list[tuple[tuple[str, ...], str]] = [
    (("create", "namespace", "proto"), "namespace/proto created"),
    (("create", "deployment", "d", "--image=nginx", "--replicas=0", *N), "deployment.apps/d created"),
    (("create", "job", "j", "--image=busybox", *N, "--", "echo", "hi"), "job.batch/j created"),
    (("create", "cronjob", "cj", "--image=busybox", "--schedule=*/5 * * * *", *N),
     "cronjob.batch/cj created"),
    (("create", "job", "j2", "--from=cronjob/cj", *N), "job.batch/j2 created"),
    (("create", "service", "clusterip", "s1", "--tcp=80:8080", *N), "service/s1 created"),
    (("create", "service", "nodeport", "s2", "--tcp=80:8080", *N), "service/s2 created"),
    (("create", "service", "loadbalancer", "s3", "--tcp=80:8080", *N), "service/s3 created"),
    (("create", "service", "externalname", "s4", "--external-name=example.com", *N),
     "service/s4 created"),
    (("create", "configmap", "c", "--from-literal=a=b", *N), "configmap/c created"),
    (("create", "secret", "generic", "g", "--from-literal=a=b", *N), "secret/g created"),
    (("create", "secret", "docker-registry", "dr", "--docker-username=u", "--docker-password=p",
      "--docker-server=r.io", *N), "secret/dr created"),
    (("create", "serviceaccount", "sa", *N), "serviceaccount/sa created"),
    (("create", "priorityclass", "proto-pc", "--value=100", "--description=x"),
     "priorityclass.scheduling.k8s.io/proto-pc created"),
    (("create", "poddisruptionbudget", "pdb", "--selector=app=x", "--min-available=1", *N),
     "poddisruptionbudget.policy/pdb created"),
    (("create", "role", "r", "--verb=get", "--resource=pods", *N),
     "role.rbac.authorization.k8s.io/r created"),
    (("create", "rolebinding", "rb", "--role=r", "--user=u", "--serviceaccount=proto:sa", *N),
     "rolebinding.rbac.authorization.k8s.io/rb created"),
    (("create", "clusterrole", "proto-cr", "--aggregation-rule=a=b"),
     "clusterrole.rbac.authorization.k8s.io/proto-cr created"),
    (("create", "clusterrolebinding", "proto-crb", "--clusterrole=proto-cr", "--group=g"),
     "clusterrolebinding.rbac.authorization.k8s.io/proto-crb created"),
    (("create", "ingress", "ing", "--rule=foo.com/bar=svc1:8080,tls=my-cert", "--class=default",
      "--default-backend=s1:http", *N), "ingress.networking.k8s.io/ing created"),
    (("run", "p", "--image=nginx", "--labels=app=p", "--env=X=1", "--port=80", *N), "pod/p created"),
    (("expose", "pod", "p", "--port=80", *N), "service/p exposed"),
    (("expose", "deployment", "d", "--port=80", "--name=dsvc", "--type=NodePort", *N),
     "service/dsvc exposed"),
    (("scale", "deployment", "d", "--replicas=1", *N), "deployment.apps/d scaled"),
    (("autoscale", "deployment", "d", "--min=1", "--max=3", "--cpu=50%", *N),
     "horizontalpodautoscaler.autoscaling/d autoscaled"),
    (("set", "image", "deployment/d", "nginx=nginx:1.27", *N), "deployment.apps/d image updated"),
    (("set", "env", "deployment/d", "A=B", *N), "deployment.apps/d env updated"),
    (("set", "resources", "deployment/d", "--limits=cpu=200m", *N),
     "deployment.apps/d resource requirements updated"),
    (("label", "deployment", "d", "x=y", *N), "deployment.apps/d labeled"),
    (("annotate", "deployment", "d", "x=y", *N), "deployment.apps/d annotated"),
    (("debug", "p", "--image=busybox", "--copy-to=p-copy", "--profile=restricted", *N, "--", "true"),
     ""),
    (("debug", "node/node-2", "--image=busybox", "--profile=sysadmin", *N, "--", "true"),
     "Creating debugging pod node-debugger-node-2-"),
]


def test_every_typed_command_sends_protobuf_and_succeeds(served: Served) -> None:
    for args, said in COMMANDS:
        done = served.kubectl(*args, check=False)
        assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stderr}"
        assert said in done.stdout + done.stderr, (args, done.stdout, done.stderr)


def test_create_quota_get_quota_and_the_403(served: Served) -> None:
    """`kubectl create quota` (sent as protobuf) reaches a served ResourceQuota; the controller
    fills its status and the admission plugin refuses what passes it, in upstream's words."""
    served.kubectl("create", "namespace", "quota")
    done = served.kubectl("create", "quota", "small", "--hard=pods=1,requests.cpu=1", "-n", "quota")
    assert done.stdout.strip() == "resourcequota/small created"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        rows = served.kubectl("get", "quota", "-n", "quota").stdout.splitlines()
        if "pods: 0/1" in rows[-1]:
            break
        time.sleep(0.3)
    assert rows[0].split() == ["NAME", "AGE", "REQUEST", "LIMIT"]
    assert rows[1].split(None, 2)[2].strip() == "pods: 0/1, requests.cpu: 0/1"
    ok = served.kubectl("run", "a", "--image=nginx", "--overrides",
                        '{"spec":{"containers":[{"name":"a","image":"nginx","resources":'
                        '{"requests":{"cpu":"100m"}}}]}}', "-n", "quota")
    assert ok.stdout.strip() == "pod/a created"
    refused = served.kubectl("run", "b", "--image=nginx", "-n", "quota", check=False)
    assert refused.stderr.strip() == ('Error from server (Forbidden): pods "b" is forbidden: '
                                      "failed quota: small: must specify requests.cpu for: b")
    described = served.kubectl("describe", "quota", "small", "-n", "quota").stdout.splitlines()
    assert described[2].split() == ["Resource", "Used", "Hard"]


def _get(served: Served, *args: str) -> Any:
    return json.loads(served.kubectl("get", *args, "-o", "json").stdout)


def test_what_the_typed_commands_sent_is_what_was_stored(served: Served) -> None:
    container = _get(served, "deploy", "d", *N)["spec"]["template"]["spec"]["containers"][0]
    # a template keeps what was written: SetDefaults_Pod's requests are for pods only
    assert (container["image"], container["resources"]) == ("nginx:1.27", {"limits": {"cpu": "200m"}})
    ports = _get(served, "svc", "s2", *N)["spec"]["ports"]
    assert [(p["port"], p["targetPort"], p["protocol"]) for p in ports] == [(80, 8080, "TCP")]
    assert _get(served, "svc", "s4", *N)["spec"]["externalName"] == "example.com"
    assert _get(served, "job", "j2", *N)["metadata"]["ownerReferences"][0]["kind"] == "CronJob"
    assert _get(served, "pdb", "pdb", *N)["spec"]["minAvailable"] == 1
    assert _get(served, "pc", "proto-pc")["value"] == 100
    assert _get(served, "clusterrole", "proto-cr")["aggregationRule"] == {
        "clusterRoleSelectors": [{"matchLabels": {"a": "b"}}]}
    spec = _get(served, "ingress", "ing", *N)["spec"]
    assert spec["defaultBackend"] == {"service": {"name": "s1", "port": {"name": "http"}}}
    assert spec["rules"][0]["http"]["paths"][0]["backend"]["service"]["port"] == {"number": 8080}
    # debug --copy-to's restricted profile: the container's securityContext (Container field 15)
    copy = _get(served, "pod", "p-copy", *N)["spec"]["containers"]
    assert copy[-1]["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    pods = _get(served, "pods", *N)["items"]
    nodes = [p for p in pods if p["metadata"]["name"].startswith("node-debugger")]
    assert nodes and nodes[0]["spec"]["hostPID"] is True
    assert nodes[0]["spec"]["containers"][0]["securityContext"] == {"privileged": True}


RECONCILED_ROLE = """\
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader, namespace: proto}
rules:
- {apiGroups: [""], resources: [pods], verbs: [VERBS]}
"""


def test_auth_reconcile_puts_back_what_it_read(served: Served) -> None:
    # `auth reconcile` updates with the typed client: the PUT's protobuf body carries what the
    # server returned, creationTimestamp and the managedFields (FieldsV1) of the apply included.
    served.kubectl("apply", "--server-side", "-f", "-", stdin=RECONCILED_ROLE.replace("VERBS", "get"))
    done = served.kubectl("auth", "reconcile", "-f", "-", stdin=RECONCILED_ROLE.replace("VERBS", "get, list"))
    assert done.stdout.strip() == "role.rbac.authorization.k8s.io/reader reconciled"
    role = _get(served, "role", "reader", *N, "--show-managed-fields")
    assert [r["verbs"] for r in role["rules"]] == [["get"], ["list"]]
    assert [m["manager"] for m in role["metadata"]["managedFields"]] == ["kubectl"]


def test_set_and_patch_answer_as_the_real_kubectl(served: Served) -> None:
    """The in-process kubectl (over the served API, as a learner's notebook would reach a real
    cluster) prints what the real one prints for the same commands, each on its own Deployment."""
    from kubelab.client.client import Client
    from kubelab.kubectl import split_command
    from kubelab.kubectl.cmd import kubectl

    client = Client.from_kubeconfig(served.kubeconfig)
    # `(no change)` compares the object read before the patch with the answer: a ConfigMap, which
    # no controller writes meanwhile (a rolling Deployment's status would race with it).
    manifest = DEPLOYMENT.replace("app: web", "app: NAME").replace("name: web", "name: NAME") + \
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: NAME}\ndata: {k: a}\n"
    commands = [  # seven calls of the real kubectl: ~3 s
        "apply -f -", "set image deploy/NAME app=nginx:1.28", "set image deploy/NAME app=nginx:1.28",
        "set env deploy/NAME A=1 B=2", """patch cm NAME -p '{"data":{"k":"b"}}'""",
        """patch cm NAME -p '{"data":{"k":"b"}}'""",
        """patch deploy NAME --type json -p '[{"op":"remove","path":"/spec/nope"}]'""",
    ]
    for name, run in (("real", None), ("inproc", client)):
        outputs = []
        for command in commands:
            stdin = manifest.replace("NAME", name)
            words = split_command(command.replace("NAME", name))
            if run is None:
                done = served.kubectl(*words, stdin=stdin, check=False)
                outputs.append((done.returncode, (done.stderr + done.stdout).rstrip("\n")))
            else:
                out = kubectl(run, " ".join(f"'{w}'" for w in words), stdin=stdin)
                outputs.append((out.exit_code, str(out)))
        if name == "real":
            expected = [(code, text.replace("real", "NAME")) for code, text in outputs]
        else:
            assert [(code, text.replace("inproc", "NAME")) for code, text in outputs] == expected
    assert [text for _, text in expected[1:3]] == ["deployment.apps/NAME image updated", ""]
    assert expected[4:6] == [(0, "configmap/NAME patched"), (0, "configmap/NAME patched (no change)")]


# --- csr ---
def test_csrs_the_kubelets_made_and_one_approved_with_kubectl(served: Served, tmp_path: Path) -> None:
    import base64

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    rows = [r.split() for r in served.kubectl("get", "csr", "--no-headers").stdout.splitlines()]
    kubelets = sorted((r[3], r[5]) for r in rows
                      if r[2] == "kubernetes.io/kube-apiserver-client-kubelet")
    assert kubelets == [("system:bootstrap:abcdef", "Approved,Issued")] * 2 + [
        ("system:node:control-plane", "Approved,Issued")]
    # A user's own request, from a file, approved by hand (kubectl sends /approval as protobuf).
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "devs"),
                         x509.NameAttribute(NameOID.COMMON_NAME, "alice")])
    pem = (x509.CertificateSigningRequestBuilder().subject_name(subject)
           .sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM))
    manifest = tmp_path / "alice.yaml"
    manifest.write_text(f"""apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata:
  name: alice
spec:
  request: {base64.b64encode(pem).decode()}
  signerName: kubernetes.io/kube-apiserver-client
  expirationSeconds: 86400
  usages: [client auth]
""")
    served.kubectl("apply", "-f", str(manifest))
    assert served.kubectl("certificate", "approve", "alice").stdout == \
        "certificatesigningrequest.certificates.k8s.io/alice approved\n"
    data = ""
    for _ in range(50):
        data = served.kubectl("get", "csr", "alice", "-o", "jsonpath={.status.certificate}").stdout
        if data:
            break
        time.sleep(0.1)
    cert = x509.load_pem_x509_certificate(base64.b64decode(data))
    ca_data = next(line.split(":", 1)[1].strip() for line in served.kubeconfig.read_text().splitlines()
                   if "certificate-authority-data" in line)
    ca = x509.load_pem_x509_certificate(base64.b64decode(ca_data))
    cert.verify_directly_issued_by(ca)
    # The kubelets' certificates too: the signer signs with the CA kubectl trusts.
    for item in json.loads(served.kubectl("get", "csr", "-o", "json").stdout)["items"]:
        issued = x509.load_pem_x509_certificate(base64.b64decode(item["status"]["certificate"]))
        issued.verify_directly_issued_by(ca)
    assert cert.subject.rfc4514_string() == "CN=alice,O=devs"
    described = served.kubectl("describe", "csr", "alice").stdout
    assert "Status:              Approved,Issued" in described and "Common Name:    alice" in described
    denied = served.kubectl("certificate", "deny", "alice", check=False)
    assert (denied.returncode, denied.stderr) == (
        1, 'error: certificate signing request "alice" is already Approved\n')
    manifest.write_text(manifest.read_text().replace("name: alice", "name: bob"))
    served.kubectl("create", "-f", str(manifest))
    assert served.kubectl("certificate", "deny", "bob").stdout == \
        "certificatesigningrequest.certificates.k8s.io/bob denied\n"
    assert served.kubectl("get", "csr", "bob", "--no-headers").stdout.split()[-1] == "Denied"
