"""kubelab's HTTP transport on the wire, against small servers written here: how a watch stream
is read, how a closed keep-alive connection is dialled again, and the words for answers that
are not a Status or for no answer at all."""

from __future__ import annotations

import asyncio
import socket
import socketserver
import subprocess
import sys
import threading
from typing import Any

import pytest
from transport_helpers import error, run, until

from kubelab.api.request import Request
from kubelab.client import Client
from kubelab.serve.transport.clienterrors import ConnectionFailed, error_from
from kubelab.serve.transport.restconfig import RestConfig
from kubelab.serve.transport.transport import HTTPTransport


class _OneShot(socketserver.BaseRequestHandler):
    """Answers one request per connection (or none), then closes it: an idle keep-alive
    connection the server gave up on."""

    answer = True

    def handle(self) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            data += self.request.recv(65536)
        self.server.connections += 1  # type: ignore[attr-defined]
        if self.answer:
            body = b'{"kind":"Namespace","metadata":{"name":"default"}}'
            self.request.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                 b"Content-Length: %d\r\n\r\n%s" % (len(body), body))


def _one_shot_server(answer: bool) -> tuple[socketserver.ThreadingTCPServer, HTTPTransport]:
    handler = type("Handler", (_OneShot,), {"answer": answer})
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
    server.connections = 0  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    return server, HTTPTransport(RestConfig(server=f"http://127.0.0.1:{port}"))


def test_a_keep_alive_connection_the_server_closed_is_dialled_again_once() -> None:
    server, transport = _one_shot_server(answer=True)
    try:
        client = Client(transport)
        assert client.get("namespaces", "default")["metadata"]["name"] == "default"
        assert client.get("namespaces", "default")["metadata"]["name"] == "default"
        assert server.connections == 2  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()
    silent, transport = _one_shot_server(answer=False)
    try:
        err = error(lambda: Client(transport).list("namespaces"))
        port = silent.server_address[1]
        assert err.message == f'Get "http://127.0.0.1:{port}/api/v1/namespaces": EOF'
        assert silent.connections == 1  # type: ignore[attr-defined]  # a fresh connection: no retry
    finally:
        silent.shutdown()
        silent.server_close()


def test_refused_connection_and_bodies_that_are_not_a_status() -> None:
    with socket.socket() as s:  # a port nothing listens on once this is closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    down = Client(HTTPTransport(RestConfig(server=f"https://127.0.0.1:{port}", token="t")))
    refused = error(lambda: down.get("configmaps", "x"))
    assert isinstance(refused, ConnectionFailed) and refused.code == 0
    assert refused.message == (f'Get "https://127.0.0.1:{port}/api/v1/namespaces/default/configmaps/x": '
                               f"dial tcp 127.0.0.1:{port}: connect: connection refused")
    assert refused.kubectl_message() == (f"The connection to the server 127.0.0.1:{port} was refused "
                                         "- did you specify the right host or port?")
    # Discovery (a kind kubelab.client does not know yet) does not hide it either.
    assert isinstance(error(lambda: down.get("widgets", "w")), ConnectionFailed)
    request = Request("get", "widgets", namespace="default", name="w", group="example.com")
    plain = error_from(404, None, "GET", request, b"404 page not found\n", "text/plain; charset=utf-8")
    assert (plain.code, plain.reason) == (404, "NotFound")
    assert plain.message == "the server could not find the requested resource (get widgets.example.com w)"
    assert plain.details["causes"] == [{"reason": "UnexpectedServerResponse",
                                        "message": "404 page not found"}]
    html = error_from(502, None, "POST", Request("create", "pods"), b"<html>", "text/html")
    assert html.message == ('an error on the server ("<html>") has prevented the request from '
                            "succeeding (post pods)")
    binary = error_from(409, None, "POST", Request("create", "pods"), b"\x00", "application/octet-stream")
    assert (binary.reason, binary.details["causes"][0]["message"]) == ("AlreadyExists", "unknown")


def _event(name: str, kind: str = "ADDED") -> bytes:
    return b'{"type":"%s","object":{"metadata":{"name":"%s"}}}\n' % (kind.encode(), name.encode())


async def _stream(chunks: list[bytes]) -> tuple[asyncio.Server, HTTPTransport, list[bytes]]:
    """A plain-HTTP server that answers one watch with these chunks, then ends the stream."""
    asked: list[bytes] = []

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        asked.append(await reader.readuntil(b"\r\n\r\n"))
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n")
        for chunk in chunks:
            writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    return server, HTTPTransport(RestConfig(server=f"http://127.0.0.1:{port}", token="tok")), asked


def test_a_watch_outside_a_running_loop_says_what_it_needs() -> None:
    client = Client(HTTPTransport(RestConfig(server="https://127.0.0.1:1")))
    with pytest.raises(RuntimeError, match=r"^an HTTP watch needs a running asyncio loop \(a Jupyter"):
        client.watch("configmaps", lambda e: None)


def test_a_watch_stream_is_read_line_by_line_across_chunks_until_it_ends() -> None:
    async def main() -> None:
        first, second = _event("a"), _event("b", "MODIFIED")
        server, transport, asked = await _stream([first[:10], first[10:] + second[:5], second[5:]])
        events: list[tuple[str, str]] = []
        closed: list[bool] = []
        transport.watch(Request("watch", "configmaps", namespace="ns", resource_version="5"),
                        lambda e: events.append((e["type"], e["object"]["metadata"]["name"])),
                        lambda: closed.append(True))
        await until(lambda: bool(closed))
        assert events == [("ADDED", "a"), ("MODIFIED", "b")] and closed == [True]
        head = asked[0].decode()
        assert head.startswith("GET /api/v1/namespaces/ns/configmaps?resourceVersion=5&watch=true HTTP/1.1")
        assert "Authorization: Bearer tok" in head and not transport.watches
        server.close()

    run(main)


def test_a_watch_stopped_from_its_handler_delivers_nothing_more() -> None:
    async def main() -> None:
        server, transport, _ = await _stream([_event("a") + _event("b") + _event("c")])
        events: list[str] = []
        closed: list[bool] = []

        def on_event(event: dict[str, Any]) -> None:
            events.append(event["object"]["metadata"]["name"])
            handle.stop()  # the informer does this on an ERROR event

        handle = transport.watch(Request("watch", "configmaps"), on_event, lambda: closed.append(True))
        await until(lambda: not transport.watches)
        await asyncio.sleep(0.05)
        assert events == ["a"] and closed == []
        server.close()

    run(main)


def test_importing_the_client_loads_no_http_edge() -> None:
    code = ("import sys, kubelab.client, kubelab.controllers; "
            "print(sorted(m for m in sys.modules if m.startswith(('kubelab.serve', 'tornado'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stderr
