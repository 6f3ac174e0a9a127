"""kubectl logs reads a container's lines through the API server's pods/log subresource, and
kubectl prints the errors of a real cluster: 401, 422, and a dead API server's refused
connection."""

from __future__ import annotations

from kubelab.api.request import Request
from kubelab.client.client import Client, ConnectionRefused
from kubelab.cluster import Cluster
from kubelab.kubectl import kubectl
from tests.kubelet_helpers import kubelet_cluster, pod

# nginx's entrypoint speaks first (the image's /docker-entrypoint.sh runs nginx's command).
NGINX_FIRST_LINE = ("/docker-entrypoint.sh: /docker-entrypoint.d/ is not empty, will attempt to "
                    "perform configuration")
REFUSED = ("The connection to the server kube-apiserver:6443 was refused - did you specify the "
           "right host or port?")


def test_logs_come_through_the_api_server() -> None:
    c = kubelet_cluster()
    c.apply(pod("web", behavior="crash"))
    c.run(2)
    c.run_until(lambda: (c.get("pods", "web").get("status", {}).get("containerStatuses") or [{}])[0]
                .get("restartCount", 0) >= 1, timeout=60)
    c.run(0.5)
    before = len(c.apiserver.audit)
    out = c.kubectl("logs web")
    assert out == "kubelab: simulated nginx:1.27 started (restart 1)"
    # As the real kubectl: the Builder reads the pod, then the log is read from pods/log.
    assert [(a.resource, a.subresource, a.verb) for a in c.apiserver.audit[before:]] == [
        ("pods", "", "get"), ("pods", "log", "get")]
    previous = c.kubectl("logs web --previous")
    assert previous.splitlines() == ["kubelab: simulated nginx:1.27 started (restart 0)",
                                     "kubelab: exiting with code 1"]
    assert c.kubectl("logs web -p --tail=1") == "kubelab: exiting with code 1"
    assert c.kubectl("logs pod/web -c app").startswith("kubelab: simulated nginx:1.27")


def test_logs_errors_are_the_kubelets_and_the_api_servers() -> None:
    c = kubelet_cluster()
    c.apply(pod("web"))
    out = c.kubectl("logs web")
    assert (out, out.exit_code) == ('Error from server (BadRequest): container "app" in pod "web" '
                                    "is waiting to start: ContainerCreating", 1)
    c.run(10)
    assert c.kubectl("logs web -c nope") == ("Error from server (BadRequest): container nope is not "
                                             "valid for pod web")
    assert c.kubectl("logs web -p") == ('Error from server (BadRequest): previous terminated '
                                        'container "app" in pod "web" not found')
    assert c.kubectl("logs nope") == ('error: error from server (NotFound): pods "nope" not found in '
                                      'namespace "default"')  # logs.go wraps the Builder's NotFound
    c.faults.crash("kubelet/node-1")
    assert c.kubectl("logs web") == ('Error from server: Get "https://node-1:10250/containerLogs/'
                                     'default/web/app": dial tcp node-1:10250: connect: connection '
                                     "refused")
    c.faults.restart("kubelet/node-1")
    assert c.kubectl("logs web").startswith(NGINX_FIRST_LINE)


def test_a_multi_container_pod_needs_a_container_name() -> None:
    c = kubelet_cluster()
    manifest = pod("web")
    manifest["spec"]["containers"].append({"name": "side", "image": "nginx:1.27"})
    c.apply(manifest)
    c.run(10)
    assert c.kubectl("logs web") == ("Error from server (BadRequest): a container name must be "
                                     "specified for pod web, choose one of: [app side]")
    assert c.kubectl("logs web side").startswith(NGINX_FIRST_LINE)


def test_401_and_422_print_as_kubectl_prints_them() -> None:
    c = Cluster(nodes=1, components=[])
    stranger = Client(c.apiserver, "no-such-token", user_agent="kubectl")
    out = kubectl(stranger, "get pods")
    assert (out, out.exit_code) == ("error: You must be logged in to the server (Unauthorized)", 1)
    one = c.kubectl("create configmap Web_1")  # create_configmap.go wraps the server's error
    assert one.startswith('error: failed to create configmap: ConfigMap "Web_1" is invalid: '
                          'metadata.name: Invalid value: "Web_1": a lowercase RFC 1123 subdomain must '
                          "consist of")
    assert one.exit_code == 1
    out = c.kubectl("run Web_1 --image=nginx")  # the container is named after the pod too
    assert out.splitlines()[0] == 'The Pod "Web_1" is invalid: '
    assert out.splitlines()[1].startswith('* metadata.name: Invalid value: "Web_1": a lowercase RFC '
                                          "1123 subdomain")
    assert out.splitlines()[2].startswith('* spec.containers[0].name: Invalid value: "Web_1"')
    two = c.kubectl("apply -f -", stdin="apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"
                                        "spec: {replicas: -1, selector: {matchLabels: {a: b}}, template: "
                                        "{metadata: {labels: {a: b}}, spec: {containers: []}}}\n")
    lines = two.splitlines()
    assert lines[0] == 'The Deployment "web" is invalid: '
    assert all(line.startswith("* spec.") for line in lines[1:]) and len(lines) >= 3


def test_a_dead_api_server_refuses_the_connection() -> None:
    c = Cluster(nodes=1, seed=5)
    c.run(5)
    c.faults.crash("apiserver")
    before = len(c.apiserver.audit)
    out = c.kubectl("get pods")
    assert (out, out.exit_code) == (REFUSED, 1)
    assert c.kubectl("get widgets") == REFUSED  # discovery cannot ask either
    assert len(c.apiserver.audit) == before  # nothing reached the server: no audit record
    try:
        c.client.get("pods", "web")
    except ConnectionRefused as err:
        assert (err.code, err.reason, err.host) == (0, "", "kube-apiserver:6443")
        assert str(err) == ('Get "https://kube-apiserver:6443/api/v1/namespaces/default/pods/web": '
                            "dial tcp 172.18.0.1:6443: connect: connection refused")
    else:
        raise AssertionError("expected ConnectionRefused")
    c.run(30)  # the components retry against the refused connection, and survive it
    c.faults.restart("apiserver")
    # Every reflector's backoff grew while its connects were refused (800 ms doubling to 30 s,
    # jittered up to twice that), and the restarted cache answers their rewatch with 410: the
    # controller manager relists the Leases only after its next backoff, and until then it may
    # see node-1 as silent (Unknown). Give it that backoff, as upstream's would need.
    c.run(90)
    assert c.kubectl("get nodes node-1").splitlines()[1].split()[:2] == ["node-1", "Ready"]
    assert c.api.handle(Request("get", "namespaces", name="default", token="admin-token"))


def test_logs_of_a_deployment_read_its_most_active_pod() -> None:
    c = Cluster(nodes=2, seed=3)
    c.run(2)
    c.kubectl("create deployment web --image=nginx:1.27 --replicas=2")
    c.run(30)
    out = c.kubectl("logs deploy/web")
    first, rest = out.split("\n", 1)
    pods = sorted(p["metadata"]["name"] for p in c.get("pods"))
    assert first.startswith("Found 2 pods, using pod/") and first.split("/")[1] in pods
    assert rest.startswith(NGINX_FIRST_LINE) and rest.endswith("start worker process 29")
    unknown = c.kubectl("logs svc/web")
    assert (unknown, unknown.exit_code) == ('error: error from server (NotFound): services "web" not '
                                            'found in namespace "default"', 1)
    c.apply({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
             "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}})
    assert c.kubectl("logs svc/web").startswith("Found 2 pods, using pod/")
