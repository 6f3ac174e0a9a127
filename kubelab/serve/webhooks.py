"""Admission webhooks behind a `url`: the real HTTPS POST, made at the edge.

A webhook configuration whose clientConfig has a `url` (kopf's WebhookServer registers
`https://localhost:9443/<handler>`, a learner's own server anything else) names a real
server, which only the edge can reach: the simulation has no sockets. While a cluster is
served (c.serve(), `kubelab serve`), Server.start gives every API server's WebhookClient
this POST as its dial_url (kubelab/apiserver/admission/webhook/client.py).

As kube-apiserver's webhook client does (k8s.io/apiserver pkg/util/webhook/, client-go's
rest), the POST carries the AdmissionReview as JSON to the url with `?timeout=<n>s`, waits
at most timeoutSeconds, and trusts only the configuration's caBundle (base64 PEM), or the
system's roots when it has none; the certificate must name the url's host.

Time: the call blocks the edge's one loop (the pacer does not run meanwhile); its wall time,
times the served cluster's speed, is charged to the request as its latency, and the pacer's
next step then moves the virtual clock over the same wall time, as it does after any slow
handler. A url webhook served on the same asyncio loop as the edge cannot answer (the loop
is busy waiting for it): run it as its own process, as kopf is.
"""

from __future__ import annotations

import base64
import binascii
import http.client
import json
import ssl
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from kubelab.apiserver.admission.webhook import Reply

__all__ = ["url_dialer"]

DEADLINE = "context deadline exceeded"
# Go's crypto/x509 UnknownAuthorityError, for OpenSSL's "no trusted issuer" verify codes
# (and a bad signature: an issuer of the same name that did not sign it).
UNKNOWN_AUTHORITY = "certificate signed by unknown authority"


def url_dialer(speed: float = 1.0) -> Callable[[str, dict[str, Any], float, str], Reply]:
    """The dial_url of a served cluster running at `speed` virtual seconds per real second."""
    def dial(url: str, review: dict[str, Any], timeout: float, ca_bundle: str) -> Reply:
        started = time.monotonic()
        reply = post_review(url, review, timeout, ca_bundle)
        reply.latency = (time.monotonic() - started) * speed
        return reply
    return dial


def _context(ca_bundle: str) -> ssl.SSLContext:
    if not ca_bundle:
        return ssl.create_default_context()
    pem = base64.b64decode(ca_bundle, validate=True).decode()
    return ssl.create_default_context(cadata=pem)


def post_review(url: str, review: dict[str, Any], timeout: float, ca_bundle: str) -> Reply:
    """POST the review to url; the decoded answer, or the error in Go's net/http words."""
    parts = urlsplit(url)
    host, port = parts.hostname or "", parts.port or 443
    try:
        context = _context(ca_bundle)
    except (binascii.Error, ValueError, ssl.SSLError) as err:
        return Reply(error=f"unable to load root certificates: {err}")
    conn = http.client.HTTPSConnection(host, port, timeout=timeout, context=context)
    target = parts.path or "/"
    if parts.query:
        target += f"?{parts.query}"
    try:
        conn.request("POST", target, json.dumps(review).encode(),
                     {"Content-Type": "application/json", "Accept": "application/json",
                      "User-Agent": "kube-apiserver-admission"})
        response = conn.getresponse()
        body = response.read()
    except TimeoutError:
        return Reply(error=DEADLINE)
    except ssl.SSLCertVerificationError as err:
        why = UNKNOWN_AUTHORITY if err.verify_code in (7, 18, 19, 20, 21) else err.verify_message
        return Reply(error=f"tls: failed to verify certificate: x509: {why}")
    except ConnectionRefusedError:
        return Reply(error=f"dial tcp {host}:{port}: connect: connection refused")
    except (OSError, http.client.HTTPException) as err:
        return Reply(error=f"dial tcp {host}:{port}: {err}")
    finally:
        conn.close()
    if response.status != 200:
        text = body.decode(errors="replace").strip()
        return Reply(error=f'an error on the server ("{text}") has prevented the request from '
                           "succeeding" if response.status >= 500 else
                           f"the server responded with the status code {response.status} but "
                           "did not return more information")
    try:
        return Reply(json.loads(body))
    except ValueError as err:
        return Reply(error=f"couldn't get version/kind; json parse error: {err}")
