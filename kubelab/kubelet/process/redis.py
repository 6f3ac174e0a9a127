"""What the simulated redis-server speaks on its port (6379): RESP2, for a few commands.

A connection (through `kubectl port-forward pod/redis 6379`) is a byte stream: requests come
as RESP arrays (`*1\\r\\n$4\\r\\nPING\\r\\n`, what redis-cli and client libraries send) or inline
commands (`PING\\r\\n`, what `nc` or telnet send), and each is answered as redis 7 answers it
(https://redis.io/docs/latest/develop/reference/protocol-spec/). The keyspace belongs to the
server process: it lives as long as the container, and every connection sees the same one.

Simulated: PING [MSG], ECHO, SET KEY VALUE, GET, DEL, EXISTS, INCR, DECR, KEYS PATTERN, DBSIZE,
FLUSHALL / FLUSHDB, SELECT 0, QUIT, and the handshakes clients send first (COMMAND, CLIENT
SETNAME / SETINFO, HELLO 2). Anything else gets redis's own error, `-ERR unknown command
'foo', with args beginning with: `. No persistence, expiry, other data types or RESP3.
"""

from __future__ import annotations

import fnmatch

__all__ = ["RedisConnection"]

MAX_INLINE = 64 * 1024   # redis: "Protocol error: too big inline request"


class RedisConnection:
    """One client connection: write() takes what the client sent, read() what the server
    answered since; closed after QUIT or a protocol error."""

    def __init__(self, keyspace: dict[bytes, bytes]) -> None:
        self.keyspace = keyspace
        self.closed = False
        self._in, self._out = b"", b""

    def write(self, data: bytes) -> None:
        if self.closed:
            return
        self._in += data
        while not self.closed:
            parsed = self._parse()
            if parsed is None:
                return
            if parsed:
                self._out += self.dispatch(parsed)

    def read(self) -> bytes:
        data, self._out = self._out, b""
        return data

    def close_write(self) -> None:
        self.closed = True

    # ------------------------------------------------------------------ the protocol

    def _protocol_error(self, message: str) -> None:
        self._out += f"-ERR Protocol error: {message}\r\n".encode()
        self.closed = True

    def _parse(self) -> list[bytes] | None:
        """The next command's arguments; [] for an empty line; None: not all here yet."""
        if not self._in:
            return None
        if self._in[:1] != b"*":  # an inline command: words up to the end of the line
            line, sep, rest = self._in.partition(b"\n")
            if not sep:
                if len(self._in) > MAX_INLINE:
                    self._protocol_error("too big inline request")
                return None
            self._in = rest
            return line.rstrip(b"\r").split()
        head, sep, rest = self._in.partition(b"\r\n")
        if not sep:
            return None
        try:
            count = int(head[1:])
        except ValueError:
            self._protocol_error("invalid multibulk length")
            return None
        args: list[bytes] = []
        for _ in range(max(count, 0)):
            size_line, sep, after = rest.partition(b"\r\n")
            if not sep:
                return None
            if size_line[:1] != b"$":
                self._protocol_error(f"expected '$', got '{size_line[:1].decode(errors='replace')}'")
                return None
            try:
                size = int(size_line[1:])
            except ValueError:
                self._protocol_error("invalid bulk length")
                return None
            if len(after) < size + 2:
                return None
            args.append(after[:size])
            rest = after[size + 2:]
        self._in = rest
        return args

    # ------------------------------------------------------------------ the commands

    def dispatch(self, args: list[bytes]) -> bytes:
        name, rest = args[0].decode(errors="replace").lower(), args[1:]
        arity = ARITY.get(name)
        if arity is None:
            shown = " ".join(f"'{a.decode(errors='replace')}'" for a in rest)
            return (f"-ERR unknown command '{args[0].decode(errors='replace')}', with args "
                    f"beginning with: {shown}\r\n").encode()
        if (arity >= 0 and len(args) != arity) or (arity < 0 and len(args) < -arity):
            return f"-ERR wrong number of arguments for '{name}' command\r\n".encode()
        handler = getattr(self, f"cmd_{name}")
        reply: bytes = handler(rest)
        return reply

    def cmd_ping(self, rest: list[bytes]) -> bytes:
        if len(rest) > 1:
            return b"-ERR wrong number of arguments for 'ping' command\r\n"
        return bulk(rest[0]) if rest else b"+PONG\r\n"

    def cmd_echo(self, rest: list[bytes]) -> bytes:
        return bulk(rest[0])

    def cmd_set(self, rest: list[bytes]) -> bytes:
        if len(rest) != 2:
            return b"-ERR syntax error\r\n"
        self.keyspace[rest[0]] = rest[1]
        return b"+OK\r\n"

    def cmd_get(self, rest: list[bytes]) -> bytes:
        value = self.keyspace.get(rest[0])
        return b"$-1\r\n" if value is None else bulk(value)

    def cmd_del(self, rest: list[bytes]) -> bytes:
        return integer(sum(self.keyspace.pop(k, None) is not None for k in rest))

    def cmd_exists(self, rest: list[bytes]) -> bytes:
        return integer(sum(k in self.keyspace for k in rest))

    def _add(self, key: bytes, by: int) -> bytes:
        try:
            value = int(self.keyspace.get(key, b"0")) + by
        except ValueError:
            return b"-ERR value is not an integer or out of range\r\n"
        self.keyspace[key] = str(value).encode()
        return integer(value)

    def cmd_incr(self, rest: list[bytes]) -> bytes:
        return self._add(rest[0], 1)

    def cmd_decr(self, rest: list[bytes]) -> bytes:
        return self._add(rest[0], -1)

    def cmd_keys(self, rest: list[bytes]) -> bytes:
        pattern = rest[0].decode(errors="replace")
        keys = sorted(k for k in self.keyspace if fnmatch.fnmatchcase(k.decode(errors="replace"), pattern))
        return b"*%d\r\n" % len(keys) + b"".join(bulk(k) for k in keys)

    def cmd_dbsize(self, rest: list[bytes]) -> bytes:
        return integer(len(self.keyspace))

    def cmd_flushall(self, rest: list[bytes]) -> bytes:
        self.keyspace.clear()
        return b"+OK\r\n"

    cmd_flushdb = cmd_flushall

    def cmd_select(self, rest: list[bytes]) -> bytes:
        return b"+OK\r\n" if rest[0] == b"0" else b"-ERR DB index is out of range\r\n"

    def cmd_quit(self, rest: list[bytes]) -> bytes:
        self.closed = True
        return b"+OK\r\n"

    def cmd_command(self, rest: list[bytes]) -> bytes:
        return b"*0\r\n"    # redis-cli asks for the command docs: none to give

    def cmd_client(self, rest: list[bytes]) -> bytes:
        return b"+OK\r\n"

    def cmd_hello(self, rest: list[bytes]) -> bytes:
        if rest and rest[0] not in (b"2",):
            return b"-NOPROTO unsupported protocol version\r\n"
        fields = [(b"server", bulk(b"redis")), (b"version", bulk(b"7.4.2")),
                  (b"proto", integer(2)), (b"mode", bulk(b"standalone")),
                  (b"role", bulk(b"master"))]
        return b"*%d\r\n" % (2 * len(fields)) + b"".join(bulk(k) + v for k, v in fields)


def bulk(data: bytes) -> bytes:
    return b"$%d\r\n%s\r\n" % (len(data), data)


def integer(n: int) -> bytes:
    return b":%d\r\n" % n


# redis's arity: N exactly, -N at least N (the command's name counts)
ARITY = {"ping": -1, "echo": 2, "set": -3, "get": 2, "del": -2, "exists": -2, "incr": 2,
         "decr": 2, "keys": 2, "dbsize": 1, "flushall": -1, "flushdb": -1, "select": 2,
         "quit": -1, "command": -1, "client": -2, "hello": -1}
