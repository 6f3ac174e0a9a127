"""One HTTP watch: a GET with watch=true whose chunked body is a stream of JSON watch events.

client-go reads it with a StreamWatcher over a framed JSON decoder (rest/request.go Watch,
watch/streamwatcher.go): each line is one {"type": ..., "object": ...}. Here an asyncio task
does the same on the running loop, so events reach on_event on the loop's thread, in order,
while the rest of the notebook goes on. The stream is plain HTTP/1.1, read by hand (a status
line, headers, then chunks: RFC 9112 section 7.1), so that nothing is hidden.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

from kubelab.api.errors import ApiError
from kubelab.api.request import Request, WatchEvent
from kubelab.serve.transport.clienterrors import error_from

if TYPE_CHECKING:
    from kubelab.serve.transport.transport import HTTPTransport

__all__ = ["HTTPWatch"]

_MAX_ERROR_BODY = 64 * 1024


class HTTPWatch:
    """An open watch over HTTP; stop() ends it (on_close is then not called)."""

    def __init__(self, transport: HTTPTransport, request: Request,
                 on_event: Callable[[WatchEvent], None], on_close: Callable[[], None] | None) -> None:
        self.transport, self.request = transport, request
        self.on_event, self.on_close = on_event, on_close
        self.stopped = False
        self.events = 0
        self.task: asyncio.Task[None] | None = None

    def stop(self) -> None:
        self.stopped = True
        if self.task is not None:
            self.task.cancel()

    def _emit(self, event: WatchEvent) -> None:
        if not self.stopped:
            self.events += 1
            self.on_event(event)

    async def run(self) -> None:
        writer: asyncio.StreamWriter | None = None
        try:
            reader, writer = await self._open()
            code, headers = await _read_head(reader)
            chunks = _body(reader, headers)
            if code != 200:  # the request itself failed: its Status, as one ERROR event
                data = b""
                async for chunk in chunks:
                    data += chunk
                    if len(data) > _MAX_ERROR_BODY:
                        break
                self._emit({"type": "ERROR", "object": self._error(code, headers, data).status})
                return
            buffer = b""
            async for chunk in chunks:
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    if line.strip():
                        self._emit(json.loads(line))
        except (OSError, ValueError, asyncio.IncompleteReadError):
            pass  # the stream broke (or the server is gone): the watch is over, say so below
        finally:
            if writer is not None:
                writer.close()
            self.transport.watches.discard(self)
            if not self.stopped:
                self.stopped = True
                if self.on_close is not None:
                    self.on_close()

    async def _open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        config, transport = self.transport.config, self.transport
        host, port = config.address
        context = transport.ssl_context
        reader, writer = await asyncio.open_connection(
            host, port, ssl=context, server_hostname=host if context is not None else None)
        headers = [(k, v) for k, v in transport.headers(self.request) if k != "Content-Type"]
        head = [f"GET {transport.url(self.request)} HTTP/1.1", f"Host: {config.host}",
                *(f"{k}: {v}" for k, v in headers)]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("utf-8"))
        await writer.drain()
        return reader, writer

    def _error(self, code: int, headers: dict[str, str], data: bytes) -> ApiError:
        content_type = headers.get("content-type", "")
        obj = None
        if content_type.startswith("application/json"):
            try:
                obj = json.loads(data)
            except ValueError:
                obj = None
        return error_from(code, obj, "GET", self.request, data, content_type)


async def _read_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    """The status code and the headers (names in lower case)."""
    status = (await reader.readline()).split()
    if len(status) < 2 or not status[0].startswith(b"HTTP/"):
        raise ValueError("not an HTTP response")
    headers: dict[str, str] = {}
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b"\n", b""):
            return int(status[1]), headers
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()


async def _body(reader: asyncio.StreamReader, headers: dict[str, str]) -> AsyncIterator[bytes]:
    """The body's bytes as they arrive: chunked, of a Content-Length, or until the close."""
    if "chunked" in headers.get("transfer-encoding", "").lower():
        while True:
            size_line = await reader.readline()
            if not size_line:
                raise asyncio.IncompleteReadError(b"", None)
            size = int(size_line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                return  # the last chunk: the server ended the watch
            data = await reader.readexactly(size)
            await reader.readline()  # the CRLF after each chunk
            yield data
    elif "content-length" in headers:
        yield await reader.readexactly(int(headers["content-length"]))
    else:
        while data := await reader.read(65536):
            yield data
