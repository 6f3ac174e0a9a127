"""One simulated process on the virtual clock: the driver of a program (programs.py).

A program is a generator that yields what it waits for:

    Sleep(seconds)   the clock moves on (`sleep 5` finishes 5 simulated seconds later)
    READ             a line of stdin (the driver sends it back; None at end of input)
    READ_ALL         all of stdin as bytes, at its end (tar's archive: binary, not lines)
    FOREVER          nothing more: a server or `yes` runs until it is killed

and returns its exit code. The driver runs it step by step from clock callbacks, so a process
advances only when the cluster's clock does (serve mode runs that clock in real time), and two
runs with the same seed are the same run.

Process is also what `exec` and `attach` hand back (the ExecSession of the API server's
pods/exec): write() feeds stdin (with a tty the terminal echoes it and `sh` runs it line by
line), read() drains what it printed, exit_code is None while it runs.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, MutableMapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from kubelab.sim.clock import Clock, Timer

__all__ = [
    "FOREVER",
    "IO",
    "OOM",
    "READ",
    "READ_ALL",
    "Attached",
    "ContainerNetwork",
    "HttpAnswer",
    "Process",
    "ProcessContext",
    "ProcessSpec",
    "Sleep",
    "Usage",
    "stdin_lines",
]


@dataclass(frozen=True)
class Sleep:
    seconds: float


READ = "read"
READ_ALL = "read-all"
FOREVER = "forever"
OOM = "oom"          # memory grew past the limit: the kernel's OOM killer ends the process
Wait = Sleep | str
Program = Generator[Wait, Any, int]


@dataclass(frozen=True)
class HttpAnswer:
    """What a GET from inside a pod met: a status and a body, or an error (no such host,
    connection refused, timed out) worded for the client program to print."""

    status: int = 0
    body: bytes = b""
    error: str = ""          # "bad address" | "refused" | "timeout" | "unreachable"
    address: str = ""        # the IP:port connected to


class ContainerNetwork(Protocol):
    """The pod network a container's programs reach (wget, curl, nslookup): the cluster wires
    it to its DNS (cluster/dns.py) and kube-proxy's rules (cluster/network.py), and the pod
    that answers serves the request with its own simulated server."""

    def resolve(self, namespace: str, name: str) -> tuple[str, list[str], str]:
        """(fully qualified name, addresses, error) of name as a pod of namespace resolves it:
        no addresses and no error is NXDOMAIN; error: no DNS server answered."""
        ...

    def http_get(self, source_ip: str, ip: str, port: int, path: str, user_agent: str
                 ) -> HttpAnswer:
        """A GET from the pod at source_ip to ip:port (a ClusterIP goes through kube-proxy's
        rules on the source's node to an endpoint), answered by the pod at the end."""
        ...


@dataclass
class Usage:
    """What the process uses now: what the metrics pipeline would read from its cgroup."""

    cpu_millicores: int = 0
    memory_bytes: int = 0


@dataclass
class ProcessContext:
    """What a process sees: its environment, files, host name and network.

    files maps absolute paths to contents: the image's own files, the ones the kubelet writes
    (/etc/hosts, /etc/hostname, /etc/resolv.conf) and the mounted volumes' files (a FileSystem,
    filesystem.py); a program's writes (`echo x > /tmp/f`) go there too: for this container
    only, or into the volume (an emptyDir the pod's other containers read) under a mount; a
    read-only mount raises ReadOnlyFileSystem."""

    env: dict[str, str]
    files: MutableMapping[str, bytes]
    hostname: str = "localhost"
    pod_uid: str = ""
    namespace: str = "default"
    pod_ip: str = ""
    network: ContainerNetwork | None = None
    cpu_limit_millicores: int | None = None
    memory_limit_bytes: int | None = None
    usage: Usage = field(default_factory=Usage)
    cwd: str = "/"
    now: Callable[[], float] = lambda: 0.0       # the cluster's virtual clock
    tty: bool = False                            # stdin is a terminal (`exec -it`)
    image: str = ""
    restart: int = 0                             # the container's restartCount
    state: dict[str, Any] = field(default_factory=dict)   # a server's memory (redis's keys)


class IO:
    """Where a program's stdin comes from and its output goes."""

    def __init__(self, out: Callable[[bytes], None], err: Callable[[bytes], None],
                 stdin: list[str] | None = None) -> None:
        self.out_bytes, self.err_bytes = out, err
        self.stdin = stdin             # None: the process's own stdin (READ waits for it)

    def out(self, text: str) -> None:
        self.out_bytes(text.encode(errors="surrogateescape"))

    def err(self, text: str) -> None:
        self.err_bytes(text.encode(errors="surrogateescape"))

    def read_line(self) -> Generator[Any, Any, str | None]:
        if self.stdin is not None:
            return self.stdin.pop(0).removesuffix("\n") if self.stdin else None
        line = yield READ
        return line  # type: ignore[no-any-return]

    def read_all(self) -> Generator[Any, Any, bytes]:
        """Everything left on stdin, as bytes, once it is closed (a pipe's or a file's: its
        lines as they were, the last one without a newline if it had none)."""
        if self.stdin is not None:
            lines, self.stdin[:] = list(self.stdin), []
            return "".join(lines).encode(errors="surrogateescape")
        data = yield READ_ALL
        return data  # type: ignore[no-any-return]


def stdin_lines(data: bytes) -> list[str]:
    """A pipe's or a redirected file's data as IO.stdin holds it: lines with their newlines
    (split at "\\n" only), the text after the last newline as a last line without one. Bytes
    that are not UTF-8 are kept (surrogateescape), so binary data (gzip's) goes through a pipe
    unchanged."""
    lines = [line + "\n" for line in data.decode(errors="surrogateescape").split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


@dataclass
class ProcessSpec:
    """What the kubelet gives the runtime to run a container (the CRI's ContainerConfig):
    argv (command and args over the image's defaults), its environment, its files, and the
    resources its cgroup allows."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    files: MutableMapping[str, bytes] = field(default_factory=dict)
    hostname: str = "localhost"
    ports: list[int] = field(default_factory=list)
    cpu_limit_millicores: int | None = None
    memory_limit_bytes: int | None = None
    stdin: bool = False
    tty: bool = False
    termination_message_path: str = "/dev/termination-log"
    termination_message_policy: str = "File"
    scripted: bool = False       # a kubelab.dev/behavior script decides its lifetime instead
    namespace: str = "default"   # the pod's (its resolver searches <namespace>.svc first)


class Process:
    """A running program: stdin in, stdout and stderr out, an exit code at the end."""

    def __init__(self, clock: Clock, program: Callable[[IO], Program], *, stdin: bool = False,
                 tty: bool = False, on_output: Callable[[str, bytes], None] | None = None,
                 on_exit: Callable[[Process], None] | None = None,
                 max_buffer: int = 1 << 20) -> None:
        self.clock, self.tty, self.max_buffer = clock, tty, max_buffer
        self._program = program(IO(lambda d: self.emit("stdout", d),
                                   lambda d: self.emit("stderr", d)))
        self._on_exit = on_exit
        self._listeners: list[Callable[[str, bytes], None]] = [on_output] if on_output else []
        self._stdin_open = stdin
        self._stdin: list[str] = []         # lines written, not yet read
        self._partial = ""                  # an unfinished line of stdin
        self._waiting = False               # blocked on READ
        self._raw: bytearray | None = None  # stdin kept as bytes, for a program on READ_ALL
        self._timer: Timer | None = None
        self._out = bytearray()
        self._err = bytearray()
        self._order: list[list[Any]] | None = []  # [stream, length] as written; None: lost
        self._exit_code: int | None = None
        self.reason = ""                    # why it ended when it did not exit by itself
        self.width, self.height = 80, 24

    # ------------------------------------------------------------------ the ExecSession

    def write(self, data: bytes) -> None:
        """Stdin. With a tty the terminal echoes what is typed (\\r\\n for a newline)."""
        if self._exit_code is not None or not self._stdin_open:
            return
        if self._raw is not None:  # the program reads it all at its end, byte for byte
            self._raw.extend(data)
            return
        text = data.decode(errors="replace")
        if self.tty:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
            self.emit("stdout", text.encode())
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        self._stdin.extend(lines)
        if self._waiting and self._stdin:
            self._resume()

    def close_stdin(self) -> None:
        if not self._stdin_open:
            return
        self._stdin_open = False
        if self._raw is not None:
            self._resume_all()
            return
        if self._partial:
            self._stdin.append(self._partial)
            self._partial = ""
        if self._waiting:
            self._resume()

    def read(self) -> tuple[bytes, bytes]:
        """What it wrote to stdout and stderr since the last read."""
        out, err = bytes(self._out), bytes(self._err)
        self._out.clear()
        self._err.clear()
        self._order = []
        return out, err

    def read_frames(self) -> list[tuple[str, bytes]]:
        """What it wrote since the last read, in the order it wrote it: ("stdout" | "stderr",
        data) pieces, as a runtime's stream delivers them (tar's warning on stderr comes before
        the archive on stdout). When output was dropped (nobody read it): stdout, then stderr."""
        order = self._order
        out, err = self.read()
        if order is None:
            return [(name, data) for name, data in (("stdout", out), ("stderr", err)) if data]
        frames, at = [], {"stdout": 0, "stderr": 0}
        for name, length in order:
            source = out if name == "stdout" else err
            frames.append((name, source[at[name]:at[name] + length]))
            at[name] += length
        return frames

    def resize(self, width: int, height: int) -> None:
        self.width, self.height = width, height

    @property
    def exit_code(self) -> int | None:
        return self._exit_code

    # ------------------------------------------------------------------ driving

    def start(self) -> Process:
        self._advance(None)
        return self

    def emit(self, stream: str, data: bytes) -> None:
        if self.tty:  # the terminal's line discipline: \n goes out as \r\n, on one stream
            data = data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
        name = "stderr" if stream == "stderr" and not self.tty else "stdout"
        buffer = self._err if name == "stderr" else self._out
        buffer.extend(data)
        if self._order is not None and data:
            if self._order and self._order[-1][0] == name:
                self._order[-1][1] += len(data)
            else:
                self._order.append([name, len(data)])
        if len(buffer) > self.max_buffer:  # nobody reads it: keep the newest output only
            del buffer[:len(buffer) - self.max_buffer]
            self._order = None
        for listener in list(self._listeners):
            listener(stream, data)

    def attach(self, *, stdin: bool) -> Attached:
        """A session joined to this process (pods/attach): its output from now on, and its
        stdin if asked for (only if the process was started with stdin open)."""
        return Attached(self, stdin=stdin)

    def kill(self, code: int, reason: str = "") -> None:
        """The process ends now (SIGKILL: 137, the OOM killer, a SIGTERM it obeys)."""
        if self._exit_code is not None:
            return
        self.reason = reason
        self._program.close()
        self._finish(code)

    def _resume_all(self) -> None:
        data, self._raw = bytes(self._raw or b""), None
        self._advance(data)

    def _resume(self) -> None:
        self._waiting = False
        line = self._stdin.pop(0) if self._stdin else None
        self._advance(line)

    def _advance(self, value: Any) -> None:
        self._timer = None
        while self._exit_code is None:
            try:
                wait = self._program.send(value)
            except StopIteration as stop:
                self._finish(int(stop.value or 0))
                return
            value = None
            if isinstance(wait, Sleep):
                self._timer = self.clock.call_later(max(wait.seconds, 0.0), self._advance, None,
                                                    background=True)
                return
            if wait == READ:
                if self._stdin:
                    value = self._stdin.pop(0)
                    continue
                if not self._stdin_open:
                    continue  # end of input: the program gets None
                self._waiting = True
                return
            if wait == READ_ALL:  # what came as lines before is kept, then the rest as bytes
                pending = "".join(f"{line}\n" for line in self._stdin) + self._partial
                self._stdin, self._partial = [], ""
                self._raw = bytearray(pending.encode())
                if not self._stdin_open:
                    value, self._raw = bytes(self._raw), None
                    continue
                return
            if wait == OOM:
                self.kill(137, "OOMKilled")
            return  # FOREVER

    def _finish(self, code: int) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._exit_code = code
        self._waiting = False
        if self._on_exit is not None:
            self._on_exit(self)


class Attached:
    """pods/attach: a view of a running process; many can attach, each reads what it missed."""

    def __init__(self, process: Process, *, stdin: bool) -> None:
        self.process, self._stdin = process, stdin
        self._out, self._err = bytearray(), bytearray()
        process._listeners.append(self._collect)

    def _collect(self, stream: str, data: bytes) -> None:
        (self._err if stream == "stderr" and not self.process.tty else self._out).extend(data)

    def write(self, data: bytes) -> None:
        if self._stdin:
            self.process.write(data)

    def close_stdin(self) -> None:
        if self._stdin:
            self.process.close_stdin()

    def read(self) -> tuple[bytes, bytes]:
        out, err = bytes(self._out), bytes(self._err)
        self._out.clear()
        self._err.clear()
        return out, err

    def resize(self, width: int, height: int) -> None:
        self.process.resize(width, height)

    @property
    def exit_code(self) -> int | None:
        return self.process.exit_code
