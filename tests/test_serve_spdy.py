"""kubelab/serve/spdy.py, the SPDY/3.1 server kubectl port-forward talks to, frame by frame.

The client side here is written from the SPDY/3 draft (section 2.6), as spdystream frames
it; the end-to-end check is tests/test_serve_streams.py, with the real kubectl."""

from __future__ import annotations

import struct
import zlib

from kubelab.serve import spdy


def control(kind: int, flags: int, payload: bytes) -> bytes:
    return struct.pack(">HHB", 0x8003, kind, flags) + len(payload).to_bytes(3, "big") + payload


def header_block(deflate: zlib._Compress, headers: dict[str, str]) -> bytes:
    raw = struct.pack(">I", len(headers))
    for name, value in headers.items():
        raw += struct.pack(">I", len(name)) + name.encode() + struct.pack(">I", len(value)) + value.encode()
    return deflate.compress(raw) + deflate.flush(zlib.Z_SYNC_FLUSH)


def syn_stream(deflate: zlib._Compress, stream_id: int, headers: dict[str, str], fin: bool = False) -> bytes:
    payload = struct.pack(">IIBB", stream_id, 0, 0, 0) + header_block(deflate, headers)
    return control(spdy.SYN_STREAM, spdy.FLAG_FIN if fin else 0, payload)


def data(stream_id: int, body: bytes, fin: bool = False) -> bytes:
    return struct.pack(">IB", stream_id, 1 if fin else 0) + len(body).to_bytes(3, "big") + body


def frames(buf: bytes) -> list[tuple[bytes, bytes]]:
    out = []
    while buf:
        length = int.from_bytes(buf[5:8], "big")
        out.append((buf[:8], buf[8:8 + length]))
        buf = buf[8 + length:]
    return out


def test_the_dictionary_is_the_drafts() -> None:
    # 1423 bytes, the names length-prefixed, the values run together (adler32 as zlib checks it).
    assert len(spdy.DICTIONARY) == 1423
    assert zlib.adler32(spdy.DICTIONARY) == 0xE3C6A7C2
    assert spdy.DICTIONARY.startswith(b"\x00\x00\x00\x07options\x00\x00\x00\x04head")
    assert spdy.DICTIONARY.endswith(b",utf-,*,enq=0.")


def test_streams_headers_data_and_their_end() -> None:
    sent: list[bytes] = []
    opened: list[spdy.Stream] = []
    session = spdy.Session(sent.append, opened.append)
    deflate = zlib.compressobj(zdict=spdy.DICTIONARY)
    wire = syn_stream(deflate, 1, {"streamType": "error", "port": "80", "requestID": "0"}, fin=True)
    wire += syn_stream(deflate, 3, {"streamType": "data", "port": "80", "requestID": "0"})
    session.feed(wire[:5])  # a frame split anywhere waits for the rest
    assert opened == []
    session.feed(wire[5:] + data(3, b"GET / HTTP/1.1\r\n"))
    errors, stream = opened
    assert errors.headers == {"streamtype": "error", "port": "80", "requestid": "0"}  # lower case
    assert errors.remote_closed and not stream.remote_closed
    assert bytes(stream.received) == b"GET / HTTP/1.1\r\n"
    session.feed(data(3, b"\r\n", fin=True))
    assert stream.remote_closed and bytes(stream.received).endswith(b"\r\n\r\n")
    # The answers: SYN_REPLY with an empty header block the client can inflate, data, FIN.
    session.reply(stream)
    session.data(stream, b"hello", fin=True)
    (reply_head, reply), (data_head, body) = frames(b"".join(sent))
    assert reply_head[:4] == b"\x80\x03\x00\x02" and struct.unpack(">I", reply[:4]) == (3,)
    assert zlib.decompressobj(zdict=spdy.DICTIONARY).decompress(reply[4:]) == b"\x00\x00\x00\x00"
    assert data_head == b"\x00\x00\x00\x03\x01\x00\x00\x05" and body == b"hello"


def test_ping_is_echoed_reset_and_goaway_end() -> None:
    sent: list[bytes] = []
    opened: list[spdy.Stream] = []
    session = spdy.Session(sent.append, opened.append)
    ping = control(spdy.PING, 0, struct.pack(">I", 7))
    session.feed(ping + control(spdy.SETTINGS, 0, struct.pack(">I", 0)))
    assert sent == [ping]  # SETTINGS needs no answer
    session.feed(syn_stream(zlib.compressobj(zdict=spdy.DICTIONARY), 1, {"streamtype": "data"}))
    session.feed(control(spdy.RST_STREAM, 0, struct.pack(">II", 1, 5)))
    assert opened[0].reset and opened[0].remote_closed
    session.feed(control(spdy.GOAWAY, 0, struct.pack(">II", 1, 0)))
    assert session.gone


def test_a_header_block_that_cannot_be_read_ends_the_session() -> None:
    session = spdy.Session(lambda b: None, lambda s: None)
    session.feed(control(spdy.SYN_STREAM, 0, struct.pack(">IIBB", 1, 0, 0, 0) + b"not zlib"))
    assert session.gone and session.streams == {}
