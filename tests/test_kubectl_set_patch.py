"""kubectl set image|env|resources, patch, replace, apply's three-way merge and describe service,
printing what kubectl 1.34 prints (the expected texts are the real kubectl's, run against
`kubelab serve`), and each command printing only its own requests' warnings."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubelab.api.strategicpatch import (
    strategic_merge_patch,
    three_way_strategic_patch,
    two_way_strategic_patch,
)
from kubelab.cluster import Cluster
from tests.controllers_helpers import settle

MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web, tier: x}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: nginx:1.27
        env:
        - {name: A, value: "1"}
        - {name: B, value: "2"}
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
  - port: 80
    targetPort: 8080
"""

POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p1}\nspec:\n  containers: [{name: c, image: busybox}]\n"


# CreateThreeWayMergePatch's cases (apimachinery strategicpatch patch_test.go, in kind):
# original (last applied), modified (the file), current (live) -> the patch.
@pytest.mark.parametrize(("original", "modified", "current", "patch"), [
    ({"a": 1}, {"a": 1}, {"a": 1, "status": "x"}, {}),  # what others set stays
    ({"a": 1, "b": 2}, {"a": 1}, {"a": 1, "b": 2}, {"b": None}),  # dropped from the file
    ({}, {"a": 2}, {"a": 1}, {"a": 2}),
    ({"l": {"x": "1", "y": "2"}}, {"l": {"x": "1"}}, {"l": {"x": "1", "y": "2", "z": "3"}},
     {"l": {"y": None}}),
    # a list that merges by key: the dropped item deleted, a changed one patched by its key
    ({"containers": [{"name": "a", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]}]},
     {"containers": [{"name": "a", "env": [{"name": "A", "value": "1"}]}]},
     {"containers": [{"name": "a", "image": "x", "env": [{"name": "A", "value": "1"},
                                                         {"name": "B", "value": "2"}]}]},
     {"containers": [{"name": "a", "env": [{"$patch": "delete", "name": "B"}]}]}),
    ({"containers": [{"name": "a"}, {"name": "b"}]}, {"containers": [{"name": "a"}]},
     {"containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}]},
     {"containers": [{"$patch": "delete", "name": "b"}]}),
    ({}, {"ports": [{"containerPort": 80, "name": "http"}]}, {"ports": [{"containerPort": 80}]},
     {"ports": [{"containerPort": 80, "name": "http"}]}),
    ({"args": ["a"]}, {"args": ["b"]}, {"args": ["a"]}, {"args": ["b"]}),  # atomic: replaced
    ({"finalizers": ["a", "b"]}, {"finalizers": ["a"]}, {"finalizers": ["a", "b", "c"]},
     {"$deleteFromPrimitiveList/finalizers": ["b"]}),
])
def test_three_way_strategic_patch(original: Any, modified: Any, current: Any, patch: Any) -> None:
    assert three_way_strategic_patch(original, modified, current) == patch
    if patch:  # the server's merge of the patch gives what the file says, and keeps the rest
        merged = strategic_merge_patch(current, patch)
        assert three_way_strategic_patch(original, modified, merged) == {}


def test_two_way_strategic_patch_is_what_set_sends() -> None:
    before = {"spec": {"containers": [{"name": "a", "image": "x:1", "env": [{"name": "A", "value": "1"}]}]}}
    after = {"spec": {"containers": [{"name": "a", "image": "x:2"}]}}
    assert two_way_strategic_patch(before, after) == {
        "spec": {"containers": [{"name": "a", "image": "x:2", "env": None}]}}
    assert two_way_strategic_patch(before, before) == {}


@pytest.fixture(scope="module")
def c() -> Cluster:
    c = Cluster(nodes=2, seed=1)
    c.run(2)
    assert c.kubectl("apply -f -", stdin=MANIFEST) == "deployment.apps/web created\nservice/web created"
    settle(c)
    return c


def _pod_template(c: Cluster) -> Any:
    return c.client.get("deployments", "web")["spec"]["template"]["spec"]["containers"][0]


# Each row runs after the ones before it, on one Deployment, as the real kubectl did.
SET_CASES = [
    ("set image deploy/web app=nginx:1.28", "deployment.apps/web image updated", 0),
    ("set image deploy/web app=nginx:1.28", "", 0),  # no change: nothing sent, nothing printed
    ("set image deploy/web nope=nginx:1", 'error: unable to find container named "nope"', 1),
    ("set image deploy/web", "error: at least one image update is required", 1),
    ("set image deploy web app=nginx:1.29", "deployment.apps/web image updated", 0),
    ("set image deploy/nope app=x", 'Error from server (NotFound): deployments.apps "nope" not found', 1),
    ("set image pod/nope a=b", 'Error from server (NotFound): pods "nope" not found', 1),
    ("set image svc/web a=b", "error: services/web the object is not a pod or does not have a pod "
                              "template: *v1.Service", 1),
    ("set env deploy/web C=3", "deployment.apps/web env updated", 0),
    ("set env deploy/web C=3", "", 0),
    ("set env deploy/web A-", "deployment.apps/web env updated", 0),
    ("set env deploy/web", "", 0),
    ("set env deploy/web --list", "# Deployment web, container app\nB=2\nC=3", 0),
    ("set env deploy/web D=1 D-", "error: can not both modify and remove the same environment "
                                  "variable in the same command", 1),
    ("set resources deploy/web --limits=cpu=200m,memory=512Mi",
     "deployment.apps/web resource requirements updated", 0),
    ("set resources deploy/web --limits=cpu=200m,memory=512Mi", "", 0),
    ("set resources deploy/web", "error: you must specify an update to requests or limits (in the "
                                 "form of --requests/--limits)", 1),
    ("set resources deploy/web --requests=cpu=xx", "error: quantities must match the regular "
     "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'", 1),
    ("set image", "error: one or more resources must be specified as <resource> <name> or "
                  "<resource>/<name>", 1),
    ("set image deploy/web a- b", "error: all resources must be specified before image changes: b", 1),
    ("set image deploy/web a-", "error: invalid image format: a-", 1),
    ("set env deploy/web -c nope Y=2",
     'Warning: Deployment/web does not have any containers matching "nope"', 0),
    ("set env deploy/web C=4 --overwrite=false",
     "error: deployments/web 'C' already has a value (3), and --overwrite is false", 1),
    ("set env deploy/web 1X=2", "error: \"1X\" is not a valid key name: a valid environment variable name "
     "must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit "
     "(e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is "
     "'[-._a-zA-Z][-._a-zA-Z0-9]*')", 1),
    ("set image deploy/web app=", 'error: failed to patch image update to pod template: Deployment.apps '
     '"web" is invalid: spec.template.spec.containers[0].image: Required value', 1),
    ("set nothing", "error: unknown command \"nothing\"\nSee 'kubectl set -h' for help and examples", 1),
]


def test_set_prints_what_kubectl_prints_and_patches_the_template(c: Cluster) -> None:
    for command, text, code in SET_CASES:
        out = c.kubectl(command)
        assert (out, out.exit_code) == (text, code), command
    container = _pod_template(c)
    assert container["image"] == "nginx:1.29"
    assert container["env"] == [{"name": "B", "value": "2"}, {"name": "C", "value": "3"}]
    assert container["resources"]["limits"] == {"cpu": "200m", "memory": "512Mi"}


def test_set_image_rolls_the_deployment_out(c: Cluster) -> None:
    assert c.kubectl("set image deploy/web app=nginx:1.30") == "deployment.apps/web image updated"
    c.run(60)
    assert c.kubectl("rollout status deploy/web") == 'deployment "web" successfully rolled out'
    images = {p["spec"]["containers"][0]["image"] for p in c.client.list("pods", "default")["items"]
              if p["metadata"]["labels"].get("app") == "web"}
    assert images == {"nginx:1.30"}


def test_set_env_from_a_configmap(c: Cluster) -> None:
    c.kubectl("create configmap cfg --from-literal=log.level=debug --from-literal=port=8080")
    assert c.kubectl("set env deploy/web --from=configmap/cfg --prefix=APP_") == \
        "deployment.apps/web env updated"
    env = {e["name"]: e for e in _pod_template(c)["env"]}
    assert env["APP_LOG_LEVEL"]["valueFrom"] == {"configMapKeyRef": {"name": "cfg", "key": "log.level"}}
    assert "APP_PORT" in env


PATCH_CASES = [
    ("""patch deploy web -p '{"spec":{"replicas":3}}'""", "deployment.apps/web patched", 0),
    ("""patch deploy web -p '{"spec":{"replicas":3}}'""", "deployment.apps/web patched (no change)", 0),
    ("""patch deploy web --type merge -p '{"metadata":{"labels":{"x":"y"}}}'""",
     "deployment.apps/web patched", 0),
    ("""patch deploy web --type json -p '[{"op":"replace","path":"/spec/replicas","value":2}]'""",
     "deployment.apps/web patched", 0),
    ("""patch deploy web --type json -p '[{"op":"remove","path":"/spec/nope"}]'""",
     'The request is invalid: remove operation does not apply: doc is missing path: "/spec/nope"', 1),
    ("patch deploy web -p 'spec: {replicas: 2}'", "deployment.apps/web patched (no change)", 0),  # YAML
    ("""patch deploy web -p='{"spec":{"replicas":2}}'""", "deployment.apps/web patched (no change)", 0),
    ("patch deploy web", "error: must specify --patch or --patch-file containing the contents of "
                         "the patch", 1),
    ("patch deploy nope -p {}", 'Error from server (NotFound): deployments.apps "nope" not found', 1),
    ("patch deploy web --type foo -p {}",
     'error: --type must be one of [json merge strategic], not "foo"', 1),
    ("""patch deploy web -p '{"spec":{"replicas":"x"}}'""",
     'Error from server (BadRequest): Deployment in version "v1" cannot be handled as a Deployment: '
     "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32", 1),
    ("""patch deploy/web --subresource scale -p '{"spec":{"replicas":2}}'""",
     "scale.autoscaling/web patched (no change)", 0),
    ("patch deploy/web --subresource foo -p {}",
     "Error from server (NotFound): the server could not find the requested resource", 1),
    ("patch deploy web x -p {}", 'deployment.apps/web patched (no change)\n'
                                 'Error from server (NotFound): deployments.apps "x" not found', 1),
    ("patch deploy -p {}", "error: resource(s) were provided, but no name was specified", 1),
    ("patch svc web --type json -p {}", "Error from server (BadRequest): json: cannot unmarshal "
                                        "object into Go value of type jsonpatch.Patch", 1),
]


def test_patch_prints_what_kubectl_prints(c: Cluster) -> None:
    for command, text, code in PATCH_CASES:
        out = c.kubectl(command)
        assert (out, out.exit_code) == (text, code), command
    assert c.client.get("deployments", "web")["metadata"]["labels"]["x"] == "y"
    # neither JSON nor YAML: refused before it is sent (go-yaml's line numbers differ)
    bad = c.kubectl("patch deploy web -p 'spec: x: y'")
    assert bad.startswith('error: unable to parse "spec: x: y": yaml: ') and bad.exit_code == 1


def test_patch_of_a_custom_resource_names_the_media_type_it_refused() -> None:
    c = Cluster(nodes=1, seed=1)
    c.kubectl("apply -f -", stdin=json.dumps({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "crontabs.stable.example.com"},
        "spec": {"group": "stable.example.com", "scope": "Namespaced",
                 "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab"},
                 "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                     "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}))
    c.kubectl("apply -f -", stdin='{"apiVersion": "stable.example.com/v1", "kind": "CronTab", '
                                  '"metadata": {"name": "t"}, "spec": {"a": 1}}')
    out = c.kubectl("""patch crontab t -p '{"spec":{"a":2}}'""")
    assert out.startswith("error: application/strategic-merge-patch+json is not supported by "
                          "stable.example.com/v1, Kind=CronTab: the body of the request was in an "
                          "unknown format - accepted media types include:"), out
    assert c.kubectl("""patch crontab t --type merge -p '{"spec":{"a":2}}'""") == \
        "crontab.stable.example.com/t patched"
    assert c.kubectl("set image crontab/t a=b") == 'error: no kind "CronTab" is registered for version ' \
        '"stable.example.com/v1" in scheme "pkg/scheme/scheme.go:28"'  # kubectl's scheme decodes it


def test_replace_puts_the_file_and_force_recreates() -> None:
    c = Cluster(nodes=1, seed=1)
    c.run(1)
    c.kubectl("apply -f -", stdin=MANIFEST)
    live = c.kubectl("get deploy web -o yaml").replace("replicas: 2", "replicas: 1")
    assert c.kubectl("replace -f -", stdin=live) == "deployment.apps/web replaced"
    stale = c.kubectl("replace -f -", stdin=live)
    assert (stale, stale.exit_code) == (
        'Error from server (Conflict): error when replacing "STDIN": Operation cannot be fulfilled '
        'on deployments.apps "web": the object has been modified; please apply your changes to the '
        "latest version and try again", 1)
    assert c.kubectl("replace -f -", stdin=POD) == \
        'Error from server (NotFound): error when replacing "STDIN": pods "p1" not found'
    assert c.kubectl("replace -f -", stdin=MANIFEST) == \
        "deployment.apps/web replaced\nservice/web replaced"  # no resourceVersion: the live one's
    assert c.client.get("deployments", "web")["spec"]["replicas"] == 2
    c.kubectl("create -f -", stdin=POD)
    uid = c.client.get("pods", "p1")["metadata"]["uid"]
    assert c.kubectl("replace --force -f -", stdin=POD) == \
        'pod "p1" deleted from default namespace\npod/p1 replaced'
    assert c.client.get("pods", "p1")["metadata"]["uid"] != uid
    assert c.kubectl("replace deploy web") == "error: must specify one of -f and -k"


def test_apply_removes_what_the_manifest_dropped() -> None:
    c = Cluster(nodes=1, seed=1)
    assert c.kubectl("apply -f -", stdin=MANIFEST) == "deployment.apps/web created\nservice/web created"
    c.kubectl("label deploy web owner=ops")  # set by someone else: apply leaves it
    dropped = MANIFEST.replace(", tier: x", "").replace('        - {name: B, value: "2"}\n', "")
    assert c.kubectl("apply -f -", stdin=dropped) == "deployment.apps/web configured\nservice/web unchanged"
    assert c.kubectl("apply -f -", stdin=dropped) == "deployment.apps/web unchanged\nservice/web unchanged"
    d = c.client.get("deployments", "web")
    assert d["metadata"]["labels"] == {"app": "web", "owner": "ops"}
    assert d["spec"]["template"]["spec"]["containers"][0]["env"] == [{"name": "A", "value": "1"}]


def test_apply_warns_about_an_object_it_never_applied() -> None:
    c = Cluster(nodes=1, seed=1)
    c.kubectl("create -f -", stdin=POD)
    assert c.kubectl("apply -f -", stdin=POD).splitlines() == [
        "Warning: resource pods/p1 is missing the kubectl.kubernetes.io/last-applied-configuration "
        "annotation which is required by kubectl apply. kubectl apply should only be used on "
        "resources created declaratively by either kubectl create --save-config or kubectl apply. "
        "The missing annotation will be patched automatically.", "pod/p1 configured"]


def test_describe_service_prints_describe_gos_fields(c: Cluster) -> None:
    c.kubectl("apply -f -", stdin="""\
apiVersion: v1
kind: Service
metadata: {name: np, labels: {a: b}, annotations: {x: "y"}}
spec:
  type: NodePort
  selector: {app: none}
  sessionAffinity: ClientIP
  ports:
  - {name: http, port: 80, targetPort: http, protocol: TCP}
  - {name: dns, port: 53, protocol: UDP}
""")
    c.run(2)
    lines = [line.split() for line in c.kubectl("describe svc web np").splitlines()]
    web = lines[:lines.index([])] if [] in lines else lines
    ip = web[8][1]
    assert [w[0] for w in web] == ["Name:", "Namespace:", "Labels:", "Annotations:", "Selector:", "Type:",
                                   "IP", "IP", "IP:", "IPs:", "Port:", "TargetPort:", "Endpoints:",
                                   "Session", "Internal", "Events:"]
    assert web[4:8] == [["Selector:", "app=web"], ["Type:", "ClusterIP"],
                        ["IP", "Family", "Policy:", "SingleStack"], ["IP", "Families:", "IPv4"]]
    assert web[9:12] == [["IPs:", ip], ["Port:", "<unset>", "80/TCP"], ["TargetPort:", "8080/TCP"]]
    endpoints = web[12][1].split(",")
    assert len(endpoints) == 2 and all(e.endswith(":8080") for e in endpoints)
    assert web[13:] == [["Session", "Affinity:", "None"], ["Internal", "Traffic", "Policy:", "Cluster"],
                        ["Events:", "<none>"]]
    np = lines[lines.index([]) + 2:]  # describe parts two objects with two blank lines
    assert np[2:4] == [["Labels:", "a=b"], ["Annotations:", "x:", "y"]]
    assert np[10:21] == [["Port:", "http", "80/TCP"], ["TargetPort:", "http/TCP"],
                         ["NodePort:", "http", np[12][2]], ["Endpoints:"],
                         ["Port:", "dns", "53/UDP"], ["TargetPort:", "53/UDP"],
                         ["NodePort:", "dns", np[16][2]], ["Endpoints:"],
                         ["Session", "Affinity:", "ClientIP"],
                         ["External", "Traffic", "Policy:", "Cluster"],
                         ["Internal", "Traffic", "Policy:", "Cluster"]]


def test_a_command_prints_only_its_own_requests_warnings() -> None:
    c = Cluster(nodes=1, seed=1)
    c.client.list("componentstatuses")  # a deprecated kind: a warning kubectl never asked for
    assert c.client.warnings == ["v1 ComponentStatus is deprecated in v1.19+"]
    assert c.kubectl("get ns default --no-headers").split()[:2] == ["default", "Active"]
    assert c.client.warnings == ["v1 ComponentStatus is deprecated in v1.19+"]  # still the caller's
    assert c.kubectl("get cs").splitlines()[0] == "Warning: v1 ComponentStatus is deprecated in v1.19+"
    assert c.kubectl("get cs nope").splitlines() == [  # the error after this command's warning
        "Warning: v1 ComponentStatus is deprecated in v1.19+", "Error from server: Component not found: nope"]


def test_apply_server_side_keeps_its_semantics() -> None:
    c = Cluster(nodes=1, seed=1)
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ss}\ndata: {k: a}\n"
    assert c.kubectl("apply --server-side -f -", stdin=cm) == "configmap/ss serverside-applied"
    conflict = c.kubectl("apply --server-side --field-manager=rival -f -", stdin=cm.replace("k: a", "k: b"))
    assert conflict.exit_code == 1 and conflict.splitlines()[:2] == [
        'error: Apply failed with 1 conflict: conflict with "kubectl" using v1: .data.k',
        "Please review the fields above--they currently have other managers. Here"]
    assert conflict.endswith("See https://kubernetes.io/docs/reference/using-api/server-side-apply/#conflicts")
    assert c.kubectl("apply --server-side --field-manager=rival --force-conflicts -f -",
                     stdin=cm.replace("k: a", "k: b")) == "configmap/ss serverside-applied"
    managed = c.client.get("configmaps", "ss")["metadata"]["managedFields"]
    assert [(m["manager"], m["operation"]) for m in managed] == [("rival", "Apply")]
    assert c.kubectl("apply --force-conflicts -f -", stdin=cm) == \
        "error: --force-conflicts only works with --server-side"
