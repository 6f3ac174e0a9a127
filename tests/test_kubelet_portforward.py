"""The CRI's PortForward (kubelab/kubelet/portforward.py): bytes into the pod's server.

A connection is made only where a running container listens (containerd's dial); the pod's
simulated server answers each HTTP/1.x request on it, keep-alive or closing as the request
asks, and what is not HTTP gets a 400 and a closed connection."""

from __future__ import annotations

import pytest

from kubelab import Cluster
from kubelab.kubelet.portforward import PortConnection

WEB = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
       "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}}
BOX = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "box"},
       "spec": {"containers": [{"name": "box", "image": "busybox", "command": ["sleep", "3600"]}]}}


@pytest.fixture(scope="module")
def cluster() -> Cluster:
    c = Cluster(nodes=1, seed=0)
    c.apply(WEB)
    c.apply(BOX)
    c.run(20)
    return c


def _forward(c: Cluster, pod: str, port: int) -> PortConnection | str:
    uid = c.client.get("pods", pod, namespace="default")["metadata"]["uid"]
    return c.runtimes["node-1"].port_forward(uid, port)


def test_keep_alive_then_close(cluster: Cluster) -> None:
    conn = _forward(cluster, "web", 80)
    assert isinstance(conn, PortConnection)
    conn.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\nHEAD /missing HTTP/1.1\r\nHost: x\r\n")
    first = conn.read()
    assert first.startswith(b"HTTP/1.1 200 OK\r\n") and b"Connection: keep-alive\r\n" in first
    assert first.endswith(b"</html>\n") and b"Welcome to nginx!" in first
    assert not conn.closed  # the second request's head is not complete yet
    conn.write(b"Connection: close\r\n\r\n")
    second = conn.read()
    assert second.startswith(b"HTTP/1.1 404 Not Found\r\n") and second.endswith(b"\r\n\r\n")  # HEAD: no body
    assert b"Connection: close\r\n" in second and conn.closed and conn.error == ""
    length = int(second.split(b"Content-Length: ")[1].split(b"\r\n")[0])
    assert length > 0  # HEAD says how long the body would be


def test_a_body_is_read_before_the_next_request(cluster: Cluster) -> None:
    conn = _forward(cluster, "web", 80)
    assert isinstance(conn, PortConnection)
    conn.write(b"POST / HTTP/1.0\r\nContent-Length: 5\r\n\r\nhel")
    assert conn.read() == b""  # two bytes of the body are still coming
    conn.write(b"lo")
    answer = conn.read()
    assert answer.startswith(b"HTTP/1.0 ") and conn.closed  # HTTP/1.0 closes after the answer


def test_what_is_not_http_is_refused(cluster: Cluster) -> None:
    conn = _forward(cluster, "web", 80)
    assert isinstance(conn, PortConnection)
    conn.write(b"PING\r\n\r\n")
    assert conn.read().startswith(b"HTTP/1.1 400 Bad Request\r\n") and conn.closed


def test_nothing_listens_is_containerds_refusal(cluster: Cluster) -> None:
    refused = _forward(cluster, "box", 80)
    assert isinstance(refused, str)
    assert refused.startswith("error forwarding port 80 to pod ") and ", uid : failed to execute " \
        "portforward in network namespace \"/var/run/netns/cni-" in refused
    assert refused.endswith("IPv4: dial tcp4 127.0.0.1:80: connect: connection refused IPv6 dial "
                            "tcp6 [::1]:80: connect: connection refused ")
    assert isinstance(_forward(cluster, "web", 8080), str)  # nginx listens on 80 only
