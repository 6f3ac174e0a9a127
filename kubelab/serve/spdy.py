"""SPDY/3.1, the server side, as much as kubectl port-forward needs of it.

kubectl 1.34 forwards ports over SPDY (client-go tools/portforward), tunnelled through a
WebSocket whose subprotocol is `SPDY/3.1+portforward.k8s.io` (the PortForwardWebsockets
feature, on by default: tunneling_dialer.go; each binary message carries a slice of the SPDY
byte stream, tunneling_connection.go). On that stream (moby/spdystream over
golang.org/x/net/spdy, the SPDY/3 draft's framing):

- a frame is 8 bytes of header, then its payload. A control frame starts with the control
  bit and version 3, then its type, flags and 24-bit length; a data frame starts with its
  31-bit stream id, then flags (FIN = 1) and length;
- SYN_STREAM opens a stream (stream id, associated id, priority, slot, header block); the
  server answers SYN_REPLY (stream id, header block), which the client waits for;
- header blocks are zlib-compressed, one compressor per direction for the whole connection,
  primed with the SPDY/3 dictionary; a block is a count, then length-prefixed names and values;
- PING is echoed; SETTINGS, WINDOW_UPDATE and HEADERS need no answer; RST_STREAM and
  GOAWAY end a stream or the connection.

Port-forward's part (pkg/kubelet/cri/streaming/portforward/httpstream.go): for each local
connection the client opens an error stream, then a data stream, both with the headers
`streamtype` (error | data), `port` and `requestid`; the server copies the data stream to and
from the port in the pod and writes anything that went wrong on the error stream.

This module is sans-IO: feed() it bytes, it calls send() with bytes and on_stream() with each
new Stream. Flow control windows are not kept (spdystream does not keep them either).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["DICTIONARY", "Session", "Stream"]

VERSION = 3
SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS, PING, GOAWAY, HEADERS, WINDOW_UPDATE = 1, 2, 3, 4, 6, 7, 8, 9
FLAG_FIN = 0x01


# The dictionary's names, in order ("200_OK" is "200 OK").
_NAMES = """options head post put delete trace accept accept-charset accept-encoding accept-language
accept-ranges age allow authorization cache-control connection content-base content-encoding
content-language content-length content-location content-md5 content-range content-type date etag
expect expires from host if-match if-modified-since if-none-match if-range if-unmodified-since
last-modified location max-forwards pragma proxy-authenticate proxy-authorization range referer
retry-after server te trailer transfer-encoding upgrade user-agent vary via warning www-authenticate
method get status 200_OK version HTTP/1.1 url public set-cookie keep-alive origin"""


def _dictionary() -> bytes:
    """The SPDY/3 header dictionary (draft-mbelshe-httpbis-spdy-00 section 2.6.10.1): these
    names, each after its 4-byte length, then a run of common values."""
    words = [w.replace("_", " ") for w in _NAMES.split()]
    tail = ("100101201202205206300302303304305306307402405406407408409410411412413414415416417502"
            "504505203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad "
            "Request401 Unauthorized403 Forbidden404 Not Found500 Internal Server Error501 Not "
            "Implemented503 Service UnavailableJan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec "
            "00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMTchunked,text/html,image/png,image/jpg,"
            "image/gif,application/xml,application/xhtml+xml,text/plain,text/javascript,"
            "publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.")
    return b"".join(struct.pack(">I", len(w)) + w.encode() for w in words) + tail.encode()


DICTIONARY = _dictionary()


@dataclass
class Stream:
    """One SPDY stream: its id and headers (names lower case), what the client sent on it,
    and whether the client half-closed it (FIN) or reset it."""

    id: int
    headers: dict[str, str]
    received: bytearray = field(default_factory=bytearray)
    remote_closed: bool = False
    reset: bool = False


class Session:
    def __init__(self, send: Callable[[bytes], None], on_stream: Callable[[Stream], None]) -> None:
        self._send, self._on_stream = send, on_stream
        self._buffer = bytearray()
        self._inflate = zlib.decompressobj(zdict=DICTIONARY)
        self._deflate = zlib.compressobj(zdict=DICTIONARY)
        self.streams: dict[int, Stream] = {}
        self.gone = False  # GOAWAY received, or a frame that cannot be read

    # ------------------------------------------------------------------ reading

    def feed(self, data: bytes) -> None:
        self._buffer.extend(data)
        while len(self._buffer) >= 8 and not self.gone:
            length = int.from_bytes(self._buffer[5:8], "big")
            if len(self._buffer) < 8 + length:
                return
            head, payload = bytes(self._buffer[:8]), bytes(self._buffer[8:8 + length])
            del self._buffer[:8 + length]
            if head[0] & 0x80:
                self._control(int.from_bytes(head[2:4], "big"), head[4], payload, head)
            else:
                self._data(int.from_bytes(head[:4], "big") & 0x7FFFFFFF, head[4], payload)

    def _control(self, kind: int, flags: int, payload: bytes, head: bytes) -> None:
        if kind == SYN_STREAM:
            stream_id = int.from_bytes(payload[:4], "big") & 0x7FFFFFFF
            try:
                headers = self._read_headers(payload[10:])
            except (zlib.error, struct.error, UnicodeDecodeError):
                self.gone = True
                return
            stream = Stream(stream_id, headers, remote_closed=bool(flags & FLAG_FIN))
            self.streams[stream_id] = stream
            self._on_stream(stream)
        elif kind == RST_STREAM:
            reset = self.streams.get(int.from_bytes(payload[:4], "big") & 0x7FFFFFFF)
            if reset is not None:
                reset.reset = reset.remote_closed = True
        elif kind == PING:
            self._send(head + payload)
        elif kind == GOAWAY:
            self.gone = True
        # SETTINGS, HEADERS, WINDOW_UPDATE: nothing to answer.

    def _data(self, stream_id: int, flags: int, payload: bytes) -> None:
        stream = self.streams.get(stream_id)
        if stream is None:
            return
        stream.received.extend(payload)
        if flags & FLAG_FIN:
            stream.remote_closed = True

    def _read_headers(self, block: bytes) -> dict[str, str]:
        raw = self._inflate.decompress(block)
        (count,), at = struct.unpack_from(">I", raw), 4
        headers: dict[str, str] = {}
        for _ in range(count):
            (size,) = struct.unpack_from(">I", raw, at)
            name = raw[at + 4:at + 4 + size].decode()
            at += 4 + size
            (size,) = struct.unpack_from(">I", raw, at)
            headers[name.lower()] = raw[at + 4:at + 4 + size].decode()
            at += 4 + size
        return headers

    # ------------------------------------------------------------------ writing

    def _control_frame(self, kind: int, flags: int, payload: bytes) -> bytes:
        return struct.pack(">HHB", 0x8000 | VERSION, kind, flags) + len(payload).to_bytes(3, "big") + payload

    def reply(self, stream: Stream) -> None:
        """SYN_REPLY with no headers: the stream is accepted."""
        block = self._deflate.compress(struct.pack(">I", 0)) + self._deflate.flush(zlib.Z_SYNC_FLUSH)
        self._send(self._control_frame(SYN_REPLY, 0, struct.pack(">I", stream.id) + block))

    def data(self, stream: Stream, data: bytes, fin: bool = False) -> None:
        for at in range(0, max(len(data), 1), 0xFFFFFF):
            chunk = data[at:at + 0xFFFFFF]
            last = at + 0xFFFFFF >= len(data)
            flags = FLAG_FIN if fin and last else 0
            self._send(struct.pack(">IB", stream.id, flags) + len(chunk).to_bytes(3, "big") + chunk)
