"""A `url` webhook's call from the HTTPS edge (kubelab/serve/webhooks.py): a real POST to a
real HTTPS server, its certificate checked against the caBundle, its timeout kept, and each
failure in the words kube-apiserver's client uses."""

from __future__ import annotations

import base64
import http.server
import json
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest

from kubelab.serve.certs import make_serving_certs
from kubelab.serve.webhooks import post_review

REVIEW = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
          "request": {"uid": "u-1", "operation": "CREATE"}}


class _Handler(http.server.BaseHTTPRequestHandler):
    delay = 0.0
    seen: ClassVar[list[tuple[str, dict[str, Any]]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append((self.path, body))
        time.sleep(type(self).delay)
        answer = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                             "response": {"uid": body["request"]["uid"], "allowed": True}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    certs = make_serving_certs()
    folder = tmp_path_factory.mktemp("webhook-certs")
    (folder / "cert.pem").write_bytes(certs.cert_pem)
    (folder / "key.pem").write_bytes(certs.key_pem)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(folder / "cert.pem", folder / "key.pem")
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"https://127.0.0.1:{httpd.server_address[1]}", base64.b64encode(certs.ca_pem).decode()
    httpd.shutdown()
    httpd.server_close()


def test_the_review_is_posted_and_the_answer_read(server: tuple[str, str]) -> None:
    url, ca = server
    _Handler.delay = 0.0
    reply = post_review(f"{url}/validate?timeout=10s", REVIEW, 10, ca)
    assert reply.error == "" and reply.review["response"] == {"uid": "u-1", "allowed": True}
    assert _Handler.seen[-1] == ("/validate?timeout=10s", REVIEW)


def test_a_server_the_ca_bundle_does_not_sign_is_refused(server: tuple[str, str]) -> None:
    url, _ = server
    other = base64.b64encode(make_serving_certs().ca_pem).decode()
    reply = post_review(f"{url}/validate?timeout=10s", REVIEW, 10, other)
    assert reply.error == "tls: failed to verify certificate: x509: certificate signed by unknown authority"


def test_a_slow_server_times_out(server: tuple[str, str]) -> None:
    url, ca = server
    _Handler.delay = 1.5
    try:
        reply = post_review(f"{url}/slow?timeout=1s", REVIEW, 1, ca)
    finally:
        _Handler.delay = 0.0
    assert reply.error == "context deadline exceeded"


def test_nothing_listening_is_a_refused_connection() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    reply = post_review(f"https://127.0.0.1:{port}/x?timeout=10s", REVIEW, 10, "")
    assert reply.error == f"dial tcp 127.0.0.1:{port}: connect: connection refused"
