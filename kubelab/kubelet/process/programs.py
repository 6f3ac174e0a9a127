"""The programs a simulated container can run, and the shell that runs scripts of them.

Each program is a generator over the process driver's waits (process.py). The subset, in the
words busybox 1.36 (and nginx, redis, postgres, curl) print:

    echo [-n] [-e] ARGS   sleep N|Ns|Nm|Nh|infinity   exit [N]   true   false   : (no-op)
    cat [FILE...]         (no FILE: stdin)            env   printenv [NAME]   hostname
    date [+%s]            ls [-1] [-l] [-a] [PATH]    touch FILE   rm [-f] FILE   mkdir [-p] DIR
    uptime                seq [FIRST [INC]] LAST      gzip [-d] / gunzip / zcat (stdin to stdout)
    whoami                tar c|x|t [-f -|FILE] [-C DIR] PATH... (tar.py: what kubectl cp runs)
    test / [ (also as programs, for exec: `kubectl cp` runs `test -d DIR`)
    export / unset / cd   read NAME                   tail [-f] FILE (-f polls it each second)
    sh [-c SCRIPT] / ash / bash   interactive without -c: reads commands from stdin
                          (with a tty: prompt `/ # `); at end of input it exits 0
    wget [-q] [-O -] [-T N] URL   curl [-s] [-f] [-o FILE] URL   nslookup NAME
    yes                   prints y forever (`yes > /dev/null` burns one CPU: Usage)
    stress --vm N --vm-bytes SIZE [--vm-hang S] | --cpu N   (memory grows to SIZE: past the
                          container's memory limit the OOM killer ends it, 137, OOMKilled)
    nginx -g 'daemon off;'  redis-server  postgres  python3 -m http.server [PORT]  /pause
    kubelab-app           long-running servers; nginx serves its welcome page on port 80
                          (or the files of /usr/share/nginx/html), postgres refuses to start
                          without POSTGRES_PASSWORD, as the image's entrypoint does

The shell (sh -c) has `;`, `&&`, `||`, `!`, `|` (the left side runs to its end first), `$VAR`,
`${VAR}`, `$?`, `$$`, `$(...)` (a subshell; unquoted expansions are split into fields),
quoting, redirections to files and /dev/null (`> /dev/termination-log`
writes the termination message), `while`/`until`/`for`/`if` with `[ ... ]`/`test` comparing
strings and integers (each turn of a loop takes at least 10 ms of virtual time, so a loop
without `sleep` cannot stop the clock). Any other command: `sh: foo: not found`, exit 127.

Files are the container's FileSystem (filesystem.py): under a volumeMount a write lands in the
volume, so the pod's other containers read it (an emptyDir shared by an app and its log
shipper); a write under a read-only mount fails with EROFS (`sh: can't create /etc/config/x:
Read-only file system`, exit 1).
"""

from __future__ import annotations

import gzip
import re
import shlex
from collections.abc import Callable, Generator
from datetime import timedelta
from typing import Any

from kubelab.api.meta import epoch
from kubelab.kubelet.process.filesystem import (
    DIRS,
    ReadOnlyFileSystem,
    absolute,
    directories,
    is_dir,
    writable,
)
from kubelab.kubelet.process.process import (
    FOREVER,
    IO,
    OOM,
    HttpAnswer,
    ProcessContext,
    Sleep,
    stdin_lines,
)
from kubelab.kubelet.process.shell import (
    AndOr,
    For,
    If,
    Loop,
    Pipeline,
    Redirect,
    ShellSyntaxError,
    Simple,
    Word,
    parse,
)
from kubelab.kubelet.process.tar import tar

__all__ = ["PROGRAMS", "SERVERS", "Shell", "pid1", "run_argv", "serve_http", "term_exit_code"]

Gen = Generator[Any, Any, int]
IFS_WHITESPACE = re.compile(r"[ \t\n]+")  # field splitting with the default IFS
LOOP_STEP = 0.01   # each turn of a while/until loop takes 10 ms of virtual time at least
MiB = 1024 * 1024
NGINX_WELCOME = (
    b"<!DOCTYPE html>\n<html>\n<head>\n<title>Welcome to nginx!</title>\n<style>\nhtml { "
    b"color-scheme: light dark; }\nbody { width: 35em; margin: 0 auto;\nfont-family: Tahoma, "
    b"Verdana, Arial, sans-serif; }\n</style>\n</head>\n<body>\n<h1>Welcome to nginx!</h1>\n"
    b"<p>If you see this page, the nginx web server is successfully installed and\nworking. "
    b"Further configuration is required.</p>\n\n<p>For online documentation and support please "
    b"refer to\n<a href=\"http://nginx.org/\">nginx.org</a>.<br/>\nCommercial support is "
    b"available at\n<a href=\"http://nginx.com/\">nginx.com</a>.</p>\n\n<p><em>Thank you for "
    b"using nginx.</em></p>\n</body>\n</html>\n")


class Shell:
    """The state a shell keeps across commands: variables, $?, the working directory."""

    def __init__(self, ctx: ProcessContext, name: str = "sh") -> None:
        self.ctx, self.name = ctx, name
        self.vars: dict[str, str] = dict(ctx.env)
        self.status = 0
        self.exiting: int | None = None   # `exit N` was run

    # ------------------------------------------------------------------ expansion

    def expand(self, word: Word, io: IO, *, split: bool = True) -> Generator[Any, Any, list[str]]:
        """The fields a word expands to (POSIX 2.6): its parts' text, a $(...) run in a
        subshell; unquoted expansions split at IFS whitespace (not with split=False, as in an
        assignment). A word of only unquoted expansions that are empty is no field at all."""
        fields: list[str] = []
        current: list[str] = []
        started = False   # the current field exists (it has text, or a quoted part)
        for kind, value, quoted in word.parts:
            if kind == "lit":
                current.append(value)
                started = started or bool(value) or quoted
                continue
            text = self.variable(value) if kind == "var" else (yield from self.substitute(value, io))
            if quoted or not split:
                current.append(text)
                started = started or quoted or bool(text)
                continue
            pieces = IFS_WHITESPACE.split(text)
            for piece in pieces[:-1]:
                current.append(piece)
                if started or "".join(current):
                    fields.append("".join(current))
                current, started = [], False
            current.append(pieces[-1])
            started = started or bool(pieces[-1])
        if started or "".join(current):
            fields.append("".join(current))
        return fields

    def expand_one(self, word: Word, io: IO) -> Generator[Any, Any, str]:
        """A word that is one string whatever it holds: an assignment's value, a redirect's
        target."""
        return "".join((yield from self.expand(word, io, split=False)))

    def substitute(self, script: str, io: IO) -> Generator[Any, Any, str]:
        """$(script): a subshell (its variables are its own) whose output, less its trailing
        newlines, is the value; its stderr is the shell's."""
        sub = Shell(self.ctx, self.name)
        sub.vars, sub.status = dict(self.vars), self.status
        captured = bytearray()
        self.status = yield from sub.run_script(script, IO(captured.extend, io.err_bytes, io.stdin))
        return captured.decode(errors="replace").rstrip("\n")

    def variable(self, name: str) -> str:
        if name == "?":
            return str(self.status)
        if name == "$":
            return "1"
        if name == "#":
            return "0"
        if name == "0":
            return self.name
        return self.vars.get(name, "")

    # ------------------------------------------------------------------ running

    def run_script(self, text: str, io: IO) -> Gen:
        try:
            script = parse(text)
        except ShellSyntaxError as err:
            io.err(f"{err}\n")
            return 2
        return (yield from self.run_list(script, io))

    def run_list(self, items: list[AndOr], io: IO) -> Gen:
        for item in items:
            self.status = yield from self.run_and_or(item, io)
            if self.exiting is not None:
                return self.exiting
        return self.status

    def run_and_or(self, node: AndOr, io: IO) -> Gen:
        status = yield from self.run_pipeline(node.first, io)
        for op, pipeline in node.rest:
            if self.exiting is not None:
                break
            if (op == "&&") == (status == 0):
                self.status = status
                status = yield from self.run_pipeline(pipeline, io)
        return status

    def run_pipeline(self, node: Pipeline, io: IO) -> Gen:
        stdin = io.stdin
        status = 0
        for i, command in enumerate(node.commands):
            last = i == len(node.commands) - 1
            captured = bytearray()
            step_io = io if last else IO(captured.extend, io.err_bytes, stdin)
            if i:
                step_io = IO(step_io.out_bytes, step_io.err_bytes, stdin)
            status = yield from self.run_command(command, step_io)
            stdin = stdin_lines(bytes(captured))
            if self.exiting is not None:
                return self.exiting
        return int(not status) if node.negate else status

    def run_command(self, node: Any, io: IO) -> Gen:
        if isinstance(node, Simple):
            return (yield from self.run_simple(node, io))
        if isinstance(node, Loop):
            status = 0
            while self.exiting is None:
                cond = yield from self.run_list(node.condition, io)
                if (cond == 0) == node.until or self.exiting is not None:
                    break
                status = yield from self.run_list(node.body, io)
                yield Sleep(LOOP_STEP)  # a busy loop still lets virtual time (and the rest) go on
            return status
        if isinstance(node, If):
            for condition, body in node.branches:
                if (yield from self.run_list(condition, io)) == 0:
                    return (yield from self.run_list(body, io))
            return (yield from self.run_list(node.otherwise, io)) if node.otherwise else 0
        if isinstance(node, For):
            status = 0
            values: list[str] = []
            for word in node.items:
                values += yield from self.expand(word, io)
            for value in values:
                self.vars[node.name] = value
                status = yield from self.run_list(node.body, io)
                if self.exiting is not None:
                    break
            return status
        raise TypeError(node)

    def run_simple(self, node: Simple, io: IO) -> Gen:
        argv: list[str] = []
        for word in node.words:
            argv += yield from self.expand(word, io)
        values = {}
        for name, word in node.assignments:
            values[name] = yield from self.expand_one(word, io)
        if not argv:
            self.vars.update(values)
            return self.status if any(kind == "cmd" for _, w in node.assignments
                                      for kind, _, _ in w.parts) else 0
        redirected = yield from self.redirect(node.redirects, io)
        if redirected is None:
            return 1
        io = redirected
        saved = self.vars
        if values:
            self.vars = {**self.vars, **values}
        try:
            builtin = BUILTINS.get(argv[0])
            if builtin is not None:
                return (yield from builtin(self, argv, io))
            return (yield from run_argv(self.ctx, argv, io, shell=self))
        finally:
            if values:
                self.vars = saved

    def redirect(self, redirects: list[Redirect], io: IO) -> Generator[Any, Any, IO | None]:
        out, err, stdin = io.out_bytes, io.err_bytes, io.stdin
        for r in redirects:
            if r.op == ">&":
                if r.fd == 2:
                    err = out
                else:
                    out = err
                continue
            path = (yield from self.expand_one(r.target, io)) if isinstance(r.target, Word) \
                else r.target
            path = _absolute(self.ctx.cwd, path)
            if r.op == "<":
                if path not in self.ctx.files:
                    io.err(f"{self.name}: can't open '{path}': No such file or directory\n")
                    return None
                stdin = stdin_lines(self.ctx.files[path])
                continue
            try:
                sink = self.file_writer(path, append=r.op == ">>")
            except ReadOnlyFileSystem:
                io.err(f"{self.name}: can't create {path}: Read-only file system\n")
                return None
            if r.fd == 2:
                err = sink
            else:
                out = sink
        return IO(out, err, stdin)

    def file_writer(self, path: str, *, append: bool) -> Callable[[bytes], None]:
        if path == "/dev/null":
            return lambda data: None
        files = self.ctx.files
        if not writable(self.ctx.files, path):
            raise ReadOnlyFileSystem(path)
        if not append or path not in files:
            files[path] = b""

        def write(data: bytes) -> None:  # an emptyDir's file grows where the pod's others read it
            files[path] = files.get(path, b"") + data
        return write


# ---------------------------------------------------------------------- running a program

def run_argv(ctx: ProcessContext, argv: list[str], io: IO, *, shell: Shell | None = None) -> Gen:
    """Run argv as exec would: the program named by its base name, or `not found` (127)."""
    name = argv[0].rsplit("/", 1)[-1]
    program = PROGRAMS.get(name)
    if program is None:
        who = shell.name if shell is not None else "sh"
        io.err(f"{who}: {argv[0]}: not found\n")
        return 127
    return (yield from program(ctx, argv, io))


_absolute = absolute


def _now(ctx: ProcessContext) -> float:
    return ctx.now()


# ---------------------------------------------------------------------- shell builtins

def _exit(sh: Shell, argv: list[str], io: IO) -> Gen:
    code = sh.status
    if len(argv) > 1:
        if not argv[1].lstrip("-").isdigit():
            io.err(f"{sh.name}: exit: Illegal number: {argv[1]}\n")
            code = 2
        else:
            code = int(argv[1]) & 0xFF
    sh.exiting = code
    return code
    yield  # a generator


def _export(sh: Shell, argv: list[str], io: IO) -> Gen:
    for item in argv[1:]:
        name, eq, value = item.partition("=")
        if eq:
            sh.vars[name] = value
        sh.ctx.env[name] = sh.vars.get(name, "")
    return 0
    yield


def _unset(sh: Shell, argv: list[str], io: IO) -> Gen:
    for name in argv[1:]:
        sh.vars.pop(name, None)
        sh.ctx.env.pop(name, None)
    return 0
    yield


def _cd(sh: Shell, argv: list[str], io: IO) -> Gen:
    target = _absolute(sh.ctx.cwd, argv[1] if len(argv) > 1 else sh.vars.get("HOME", "/root"))
    if not _is_dir(sh.ctx, target):
        io.err(f"{sh.name}: cd: can't cd to {argv[1] if len(argv) > 1 else target}: No such file "
               "or directory\n")
        return 2
    sh.ctx.cwd = target
    return 0
    yield


def _read(sh: Shell, argv: list[str], io: IO) -> Gen:
    line = yield from io.read_line()
    if line is None:
        return 1
    names = [a for a in argv[1:] if not a.startswith("-")] or ["REPLY"]
    words = line.split(None, len(names) - 1)
    for i, name in enumerate(names):
        sh.vars[name] = words[i] if i < len(words) else ""
    return 0


def _test(sh: Shell, argv: list[str], io: IO) -> Gen:
    args = argv[1:]
    if argv[0] == "[":
        if not args or args[-1] != "]":
            io.err("sh: [: missing ]\n")
            return 2
        args = args[:-1]
    return _evaluate_test(sh, args, io)
    yield


def _evaluate_test(sh: Shell, args: list[str], io: IO) -> int:
    if args and args[0] == "!":
        return int(_evaluate_test(sh, args[1:], io) == 0) if len(args) > 1 else 1
    if not args:
        return 1
    if len(args) == 1:
        return int(not args[0])
    if len(args) == 2:
        op, value = args
        path = _absolute(sh.ctx.cwd, value)
        tests = {"-n": bool(value), "-z": not value, "-f": path in sh.ctx.files,
                 "-e": path in sh.ctx.files or _is_dir(sh.ctx, path), "-d": _is_dir(sh.ctx, path),
                 "-s": bool(sh.ctx.files.get(path))}
        if op not in tests:
            io.err(f"sh: {op}: unknown operand\n")
            return 2
        return int(not tests[op])
    left, op, right = args[:3]
    if op in ("=", "=="):
        return int(left != right)
    if op == "!=":
        return int(left == right)
    if op in ("-eq", "-ne", "-lt", "-le", "-gt", "-ge"):
        try:
            a, b = int(left), int(right)
        except ValueError:
            io.err(f"sh: {left if not left.lstrip('-').isdigit() else right}: bad number\n")
            return 2
        result = {"-eq": a == b, "-ne": a != b, "-lt": a < b, "-le": a <= b, "-gt": a > b,
                  "-ge": a >= b}[op]
        return int(not result)
    io.err(f"sh: {op}: unknown operand\n")
    return 2


BUILTINS: dict[str, Callable[[Shell, list[str], IO], Gen]] = {
    "exit": _exit, "export": _export, "unset": _unset, "cd": _cd, "read": _read,
    "[": _test, "test": _test,
}


# ---------------------------------------------------------------------- programs

def _test_program(ctx: ProcessContext, argv: list[str], io: IO) -> Gen:
    """/usr/bin/test and /usr/bin/[ (what `kubectl cp` runs: `test -d DIR`), as the builtin."""
    return (yield from _test(Shell(ctx), argv, io))


def sh(ctx: ProcessContext, argv: list[str], io: IO) -> Gen:
    """sh -c SCRIPT [NAME ARGS...], sh SCRIPT-FILE, or an interactive sh reading stdin."""
    shell = Shell(ctx, argv[0].rsplit("/", 1)[-1])
    args = argv[1:]
    while args and args[0] in ("-e", "-x", "-eu", "-ex", "-l", "-i", "--login"):
        args = args[1:]
    if args and args[0] == "-c":
        if len(args) < 2:
            io.err(f"{shell.name}: -c requires an argument\n")
            return 2
        return (yield from shell.run_script(args[1], io))
    if args:
        path = _absolute(ctx.cwd, args[0])
        if path not in ctx.files:
            io.err(f"{shell.name}: can't open '{args[0]}': No such file or directory\n")
            return 2
        return (yield from shell.run_script(ctx.files[path].decode(errors="replace"), io))
    prompt = ctx.env.get("PS1", "/ # " if ctx.cwd == "/" else f"{ctx.cwd} # ")
    interactive = ctx.tty
    while True:
        if interactive:
            io.out(prompt)
        line = yield from io.read_line()
        if line is None:
            if interactive:
                io.out("exit\n")
            return shell.status
        yield from shell.run_script(line, io)
        if shell.exiting is not None:
            return shell.exiting


def echo(ctx: ProcessContext, argv: list[str], io: IO) -> Gen:
    args, newline, escapes = argv[1:], True, False
    while args and args[0] in ("-n", "-e", "-ne", "-en", "-E"):
        newline = newline and "n" not in args[0]
        escapes = escapes or "e" in args[0]
        args = args[1:]
    text = " ".join(args)
    if escapes:
        text = text.encode().decode("unicode_escape", errors="replace")
    io.out(text + ("\n" if newline else ""))
    return 0
    yield


def _duration(text: str) -> float | None:
    if text == "infinity":
        return float("inf")
    unit = {"s": 1, "m": 60, "h": 3600, "d": 86400}.get(text[-1:], 0)
    number = text[:-1] if unit else text
    try:
        value = float(number)
    except ValueError:
        return None
    return value * (unit or 1) if value >= 0 else None


def sleep(ctx: ProcessContext, argv: list[str], io: IO) -> Gen:
    if len(argv) < 2:
        io.err("Usage: sleep [N]...\n")
        return 1
    total = 0.0
    for word in argv[1:]:
        seconds = _duration(word)
        if seconds is None:
            io.err(f"sleep: invalid number '{word}'\n")
            return 1
        total += seconds
    if total == float("inf"):
        yield FOREVER
        return 0
    yield Sleep(total)
    return 0


def true(ctx: ProcessContext, argv: list[str], io: IO) -> Gen:
    return 0
    yield


def false(ctx: ProcessContext, argv: list[str], io: IO) -> Gen:
    return 1
    yield


def cat(ctx: ProcessContext, argv: list[str], io: IO) -> Gen:
    status = 0
    paths = [a for a in argv[1:] if a != "-"] if len(argv) > 1 else []
    if not paths:
        while (line := (yield from io.read_line())) is not None:
            io.out(line + "\n")
        return 0
    for path in paths:
        full = _absolute(ctx.cwd, path)
        if full in ctx.files:
            io.out_bytes(ctx.files[full])
        elif _is_dir(ctx, full):
            io.err("cat: read error: Is a directory\n")
            status = 1
        else:
            io.err(f"cat: can't open '{path}': No such file or directory\n")
            status = 1
    return status


def env(ctx: ProcessContext, argv: list[str], io: IO) -> Gen:
    if len(argv) > 1:  # env CMD...: run it with the same environment
        return (yield from run_argv(ctx, argv[1:], io))
    io.out("".join(f"{k}={v}\n" for k, v in ctx.env.items()))
    return 0


def printenv(ctx: ProcessContext, argv: list[str], io: IO) -> Gen:
    if len(argv) == 1:
        return (yield from env(ctx, argv, io))
    status = 0
    for name in argv[1:]:
        if name in ctx.env:
            io.out(ctx.env[name] + "\n")
        else:
            status = 1
    return status


def hostname(ctx: ProcessContext, argv: list[str], io: IO) -> Gen:
    io.out(ctx.hostname + "\n")
    return 0
    yield


def whoami(ctx: ProcessContext, argv: list[str], io: IO) -> Gen:
    io.out("root\n")
    return 0
    yield


def date(ctx: ProcessContext, argv: list[str], io: IO) -> Gen:
    now = _now(ctx)
    if len(argv) > 1 and argv[1] == "+%s":
        io.out(f"{int(epoch().timestamp() + now)}\n")
        return 0
    t = epoch() + timedelta(seconds=now)
    io.out(f"{t:%a %b} {t.day:2d} {t:%H:%M:%S} UTC {t.year}\n")
    return 0
    yield


def uptime(ctx: ProcessContext, argv: list[str], io: IO) -> Gen:
    """busybox uptime: the time, how long the node has been up (since the cluster's time began:
    its nodes boot with it), the users and load averages (not modelled: 0)."""
    now = _now(ctx)
    t = epoch() + timedelta(seconds=now)
    days, minutes = divmod(int(now) // 60, 24 * 60)
    up = f"{days} day{'s' if days != 1 else ''}, " if days else ""
    up += f"{minutes // 60:2d}:{minutes % 60:02d}" if minutes // 60 else f"{minutes % 60} min"
    io.out(f" {t:%H:%M:%S} up {up},  0 users,  load average: 0.00, 0.00, 0.00\n")
    return 0
    yield


def seq(ctx: ProcessContext, argv: list[str], io: IO) -> Gen:
    """seq [FIRST [INC]] LAST, integers: each number on its own line."""
    try:
        numbers = [int(a) for a in argv[1:]]
    except ValueError:
        bad = next(a for a in argv[1:] if not a.lstrip("-").isdigit())
        io.err(f"seq: invalid number '{bad}'\n")
        return 1
    if not 1 <= len(numbers) <= 3:
        io.err("Usage: seq [-w] [-s SEP] [FIRST [INC]] LAST\n")
        return 1
    first, inc, last = (1, 1, numbers[0]) if len(numbers) == 1 else (
        (numbers[0], 1, numbers[1]) if len(numbers) == 2 else tuple(numbers))
    if inc:
        io.out("".join(f"{n}\n" for n in range(first, last + (1 if inc > 0 else -1), inc)))
    return 0
    yield


def gzip_program(ctx: ProcessContext, argv: list[str], io: IO) -> Gen:
    """gzip [-c] [-d] / gunzip / zcat, from stdin to stdout (files are not simulated). The
    header's time is 0, as for data from a pipe."""
    flags = {f for a in argv[1:] if a.startswith("-") for f in a[1:]}
    if any(not a.startswith("-") for a in argv[1:]):
        io.err("kubelab: gzip of files is not simulated (use a pipe: cat f | gzip)\n")
        return 1
    data = yield from io.read_all()
    if "d" in flags or argv[0].rsplit("/", 1)[-1] in ("gunzip", "zcat"):
        try:
            io.out_bytes(gzip.decompress(data))
        except (OSError, EOFError):
            io.err("gzip: invalid magic\n")
            return 1
        return 0
    io.out_bytes(gzip.compress(data, mtime=0))
    return 0


def _is_dir(ctx: ProcessContext, path: str) -> bool:
    return is_dir(ctx.files, path)


def ctx_dirs(ctx: ProcessContext) -> set[str]:
    return directories(ctx.files)


def ls(ctx: ProcessContext, argv: list[str], io: IO) -> Gen:
    flags = "".join(a[1:] for a in argv[1:] if a.startswith("-"))
    targets = [a for a in argv[1:] if not a.startswith("-")] or ["."]
    status = 0
    for target in targets:
        path = _absolute(ctx.cwd, target)
        if path in ctx.files:
            io.out(f"{target}\n")
            continue
        if not _is_dir(ctx, path):
            io.err(f"ls: {target}: No such file or directory\n")
            status = 1
            continue
        prefix = path.rstrip("/") + "/"
        names = sorted({p[len(prefix):].split("/", 1)[0] for p in [*ctx.files, *ctx_dirs(ctx)]
                        if p.startswith(prefix) and p != prefix and not p.startswith("/.kubelab")})
        if "a" not in flags:
            names = [n for n in names if not n.startswith(".")]
        if len(targets) > 1:
            io.out(f"{target}:\n")
        if "l" in flags:
            for n in names:
                data = ctx.files.get(prefix + n)
                kind = "-rw-r--r--" if data is not None else "drwxr-xr-x"
                io.out(f"{kind}    1 root     root      {len(data or b''):>8} Jan  1 00:00 {n}\n")
        elif names:
            io.out(("\n" if "1" in flags else "  ").join(names) + "\n")
    return status
    yield


def touch(ctx: ProcessContext, argv: list[str], io: IO) -> Gen:
    status = 0
    for path in argv[1:]:
        try:
            ctx.files.setdefault(_absolute(ctx.cwd, path), b"")
        except ReadOnlyFileSystem:
            io.err(f"touch: {path}: Read-only file system\n")
            status = 1
    return status
    yield


def mkdir(ctx: ProcessContext, argv: list[str], io: IO) -> Gen:
    dirs, status = ctx_dirs(ctx), 0
    for path in (a for a in argv[1:] if not a.startswith("-")):
        full = _absolute(ctx.cwd, path)
        if not writable(ctx.files, full):
            io.err(f"mkdir: can't create directory '{path}': Read-only file system\n")
            status = 1
            continue
        dirs.add(full)
    ctx.files[DIRS] = " ".join(sorted(dirs)).encode()
    return status
    yield


def rm(ctx: ProcessContext, argv: list[str], io: IO) -> Gen:
    force = any(a.startswith("-") and "f" in a for a in argv[1:])
    status = 0
    for path in (a for a in argv[1:] if not a.startswith("-")):
        full = _absolute(ctx.cwd, path)
        try:
            removed = ctx.files.pop(full, None)
        except ReadOnlyFileSystem:
            io.err(f"rm: can't remove '{path}': Read-only file system\n")
            status = 1
            continue
        if removed is None and not force:
            io.err(f"rm: can't remove '{path}': No such file or directory\n")
            status = 1
    return status
    yield


def tail(ctx: ProcessContext, argv: list[str], io: IO) -> Gen:
    """tail [-f] FILE...: the last 10 lines; -f then polls each file once a second, as busybox
    does, and prints what was appended (another container writing into a shared emptyDir)."""
    paths = [a for a in argv[1:] if not a.startswith("-")]
    sizes: dict[str, int] = {}
    for path in paths:
        data = ctx.files.get(_absolute(ctx.cwd, path))
        if data is None and path != "/dev/null":
            io.err(f"tail: can't open '{path}': No such file or directory\n")
            return 1
        io.out_bytes(b"\n".join((data or b"").splitlines()[-10:]) + (b"\n" if data else b""))
        sizes[path] = len(data or b"")
    if "-f" not in argv:
        return 0
    if not paths or paths == ["/dev/null"]:
        yield FOREVER
    while True:
        yield Sleep(1.0)
        for path, size in sizes.items():
            data = ctx.files.get(_absolute(ctx.cwd, path), b"")
            if len(data) < size:
                io.err(f"tail: {path}: file truncated\n")
                size = 0
            if len(data) > size:
                io.out_bytes(data[size:])
            sizes[path] = len(data)


def yes(ctx: ProcessContext, argv: list[str], io: IO) -> Gen:
    """Prints `y` as fast as it can: one whole CPU (or the limit's share), forever."""
    word = " ".join(argv[1:]) or "y"
    io.out(f"{word}\n" * 3)   # a taste: the rest is the same, and goes nowhere useful
    limit = ctx.cpu_limit_millicores
    ctx.usage.cpu_millicores += min(1000, limit) if limit else 1000
    yield FOREVER
    return 0


def _size(text: str) -> int | None:
    units = {"B": 1, "K": 1024, "M": MiB, "G": 1024 * MiB}
    unit = units.get(text[-1:].upper())
    try:
        return int(float(text[:-1] if unit else text) * (unit or 1))
    except ValueError:
        return None


def stress(ctx: ProcessContext, argv: list[str], io: IO) -> Gen:
    """stress (the polinux/stress image of the Kubernetes memory task page): --vm workers
    allocate --vm-bytes each within a second; past the memory limit the OOM killer ends it."""
    opts = dict(zip(argv[1::2], argv[2::2], strict=False))
    workers, cpu = int(opts.get("--vm", "0") or 0), int(opts.get("--cpu", "0") or 0)
    size = _size(opts.get("--vm-bytes", "256M"))
    if size is None:
        io.err(f"stress: FAIL: [1] (492) invalid --vm-bytes {opts.get('--vm-bytes')}\n")
        return 1
    io.out(f"stress: info: [1] dispatching hogs: {cpu} cpu, 0 io, {workers} vm, 0 hdd\n")
    ctx.usage.cpu_millicores += 1000 * (cpu + workers)
    for _ in range(10):               # the workers touch their pages over a second
        yield Sleep(0.1)
        ctx.usage.memory_bytes += workers * size // 10
        limit = ctx.memory_limit_bytes
        if limit is not None and ctx.usage.memory_bytes > limit:
            yield OOM                 # the kernel's OOM killer: 137, OOMKilled
    yield FOREVER
    return 0


# ---------------------------------------------------------------------- the network

def _split_url(url: str) -> tuple[str, str, int, str]:
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "http", url
    hostport, _, path = rest.partition("/")
    host, _, port = hostport.partition(":")
    return scheme, host, int(port) if port.isdigit() else (443 if scheme == "https" else 80), \
        "/" + path


def _get(ctx: ProcessContext, url: str, agent: str) -> tuple[HttpAnswer, str, str]:
    """(answer, host, address) of one GET; answer.error "bad address" when the name is unknown."""
    _scheme, host, port, path = _split_url(url)
    if ctx.network is None:
        return HttpAnswer(error="bad address"), host, ""
    address = host
    if not all(p.isdigit() for p in host.split(".")) or host.count(".") != 3:
        if host == "localhost":
            address = "127.0.0.1"
        else:
            _name, addresses, error = ctx.network.resolve(ctx.namespace, host)
            if error or not addresses:
                return HttpAnswer(error="bad address"), host, ""
            address = addresses[0]
    answer = ctx.network.http_get(ctx.pod_ip, address, port, path, agent)
    return answer, host, f"{address}:{port}"


def wget(ctx: ProcessContext, argv: list[str], io: IO) -> Gen:
    quiet, output, url = False, "", ""
    args = argv[1:]
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a.startswith("--"):
            quiet = quiet or a == "--quiet"
            if a.startswith("--output-document="):
                output = a.split("=", 1)[1]
            continue
        if not a.startswith("-") or a == "-":
            url = a
            continue
        for j, flag in enumerate(a[1:], 1):  # busybox getopt: -qO- is -q -O -
            if flag == "q":
                quiet = True
            elif flag in "OTUY":
                value = a[j + 1:] or (args[i] if i < len(args) else "")
                if not a[j + 1:]:
                    i += 1
                if flag == "O":
                    output = value
                break
    if not url:
        io.err("BusyBox v1.36.1 (2023-05-18 22:34:17 UTC) multi-call binary.\n\nUsage: wget "
               "[-cqS] [--spider] [-O FILE] [-o LOGFILE] [--header STR]\n")
        return 1
    answer, host, address = _get(ctx, url, "Wget")
    if answer.error == "bad address":
        io.err(f"wget: bad address '{host}'\n")
        return 1
    if not quiet:
        io.err(f"Connecting to {host} ({address})\n")
    if answer.error == "refused":
        io.err(f"wget: can't connect to remote host ({address.rsplit(':', 1)[0]}): Connection "
               "refused\n")
        return 1
    if answer.error:
        yield Sleep(10)   # the packet went nowhere: busybox gives up on its read timeout
        io.err("wget: download timed out\n")
        return 1
    if answer.status >= 400:
        io.err(f"wget: server returned error: HTTP/1.1 {answer.status} {_REASONS.get(answer.status, '')}\n")
        return 1
    target = output or (url.rstrip("/").rsplit("/", 1)[-1] if url.count("/") > 2 else "index.html")
    if target == "-":
        io.out_bytes(answer.body)
        if not quiet:
            io.err(f"writing to stdout\n-                    100% |********************************|"
                   f"   {len(answer.body)}  0:00:00 ETA\nwritten to stdout\n")
    else:
        try:
            ctx.files[_absolute(ctx.cwd, target)] = answer.body
        except ReadOnlyFileSystem:
            io.err(f"wget: can't open '{target}': Read-only file system\n")
            return 1
        if not quiet:
            io.err(f"saving to '{target}'\n{target}           100% |********************************|"
                   f"   {len(answer.body)}  0:00:00 ETA\n'{target}' saved\n")
    return 0


def curl(ctx: ProcessContext, argv: list[str], io: IO) -> Gen:
    args, fail, output, url = argv[1:], False, "", ""
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-o", "--output", "-m", "--max-time", "-H", "-A", "-w", "-X", "--connect-timeout"):
            if a in ("-o", "--output"):
                output = args[i + 1] if i + 1 < len(args) else ""
            i += 2
            continue
        if a.startswith("-"):
            fail = fail or (not a.startswith("--") and "f" in a) or a == "--fail"
            i += 1
            continue
        url = a
        i += 1
    if not url:
        io.err("curl: try 'curl --help' or 'curl --manual' for more information\n")
        return 2
    answer, host, address = _get(ctx, url, "curl/8.11.0")
    port = address.rsplit(":", 1)[-1] if address else str(_split_url(url)[2])
    if answer.error == "bad address":
        io.err(f"curl: (6) Could not resolve host: {host}\n")
        return 6
    if answer.error == "refused":
        io.err(f"curl: (7) Failed to connect to {host} port {port} after 0 ms: Could not connect "
               "to server\n")
        return 7
    if answer.error:
        yield Sleep(130)   # the kernel's SYN retries before curl gives up
        io.err(f"curl: (28) Failed to connect to {host} port {port} after 130000 ms: Could not "
               "connect to server\n")
        return 28
    if fail and answer.status >= 400:
        io.err(f"curl: (22) The requested URL returned error: {answer.status}\n")
        return 22
    if output and output != "-":
        try:
            ctx.files[_absolute(ctx.cwd, output)] = answer.body
        except ReadOnlyFileSystem:
            io.err(f"Warning: Failed to open the file {output}: Read-only file system\n"
                   "curl: (23) Failure writing output to destination\n")
            return 23
    else:
        io.out_bytes(answer.body)
    return 0


def nslookup(ctx: ProcessContext, argv: list[str], io: IO) -> Gen:
    names = [a for a in argv[1:] if not a.startswith("-")]
    if not names:
        io.err("BusyBox v1.36.1 (2023-05-18 22:34:17 UTC) multi-call binary.\n\nUsage: nslookup "
               "[-type=QUERY_TYPE] [-debug] HOST [DNS_SERVER]\n")
        return 1
    server = "10.96.0.10"
    io.out(f"Server:\t\t{server}\nAddress:\t{server}:53\n\n")
    if ctx.network is None:
        io.out(";; connection timed out; no servers could be reached\n\n")
        return 1
    fqdn, addresses, error = ctx.network.resolve(ctx.namespace, names[0])
    if error:
        yield Sleep(15)
        io.out(f"{error}\n\n")
        return 1
    if not addresses:
        io.out(f"** server can't find {names[0]}: NXDOMAIN\n\n")
        return 1
    io.out("".join(f"Name:\t{fqdn}\nAddress: {ip}\n" for ip in addresses) + "\n")
    return 0


_REASONS = {200: "OK", 403: "Forbidden", 404: "Not Found", 500: "Internal Server Error",
            502: "Bad Gateway", 503: "Service Unavailable"}


# ---------------------------------------------------------------------- servers

def docker_entrypoint(ctx: ProcessContext, argv: list[str], io: IO) -> Gen:
    """The official images' entrypoint scripts: set up, then exec "$@"."""
    rest = argv[1:]
    if argv[0].endswith("/docker-entrypoint.sh") and rest[:1] == ["nginx"]:
        io.out("/docker-entrypoint.sh: /docker-entrypoint.d/ is not empty, will attempt to "
               "perform configuration\n/docker-entrypoint.sh: Looking for shell scripts in "
               "/docker-entrypoint.d/\n/docker-entrypoint.sh: Configuration complete; ready for "
               "start up\n")
    if rest[:1] == ["postgres"] and not ctx.env.get("POSTGRES_PASSWORD") and \
            ctx.env.get("POSTGRES_HOST_AUTH_METHOD") != "trust":
        io.err("Error: Database is uninitialized and superuser password is not specified.\n"
               "       You must specify POSTGRES_PASSWORD to a non-empty value for the\n"
               "       superuser. For example, \"-e POSTGRES_PASSWORD=password\" on \"docker "
               "run\".\n")
        return 1
    if not rest:
        return 0
    return (yield from run_argv(ctx, rest, io))


def server(banner: Callable[[ProcessContext, list[str]], str]) -> Callable[..., Gen]:
    def run(ctx: ProcessContext, argv: list[str], io: IO) -> Gen:
        text = banner(ctx, argv)
        if text:
            io.out(text)
        ctx.usage.memory_bytes += 8 * MiB
        yield FOREVER
        return 0
    return run


def _nginx_banner(ctx: ProcessContext, argv: list[str]) -> str:
    t = epoch() + timedelta(seconds=_now(ctx))
    stamp = f"{t:%Y/%m/%d %H:%M:%S}"
    return (f"{stamp} [notice] 1#1: nginx/1.27.5\n{stamp} [notice] 1#1: start worker processes\n"
            f"{stamp} [notice] 1#1: start worker process 29\n")


def _redis_banner(ctx: ProcessContext, argv: list[str]) -> str:
    return "1:M 01 Jan 2025 00:00:00.000 * Ready to accept connections tcp\n"


def _postgres_banner(ctx: ProcessContext, argv: list[str]) -> str:
    return "LOG:  database system is ready to accept connections\n"


def _python(ctx: ProcessContext, argv: list[str], io: IO) -> Gen:
    if argv[1:3] == ["-m", "http.server"]:
        port = argv[3] if len(argv) > 3 else "8000"
        io.out(f"Serving HTTP on 0.0.0.0 port {port} (http://0.0.0.0:{port}/) ...\n")
        yield FOREVER
        return 0
    if len(argv) > 2 and argv[1] == "-c":
        io.err("kubelab: python -c is not simulated\n")
        return 1
    if len(argv) == 1:  # the REPL: reads stdin, and ends at its end
        while (yield from io.read_line()) is not None:
            pass
        return 0
    io.err(f"python3: can't open file '{argv[1]}': [Errno 2] No such file or directory\n")
    return 2


def _app(ctx: ProcessContext, argv: list[str], io: IO) -> Gen:
    io.out(f"kubelab: simulated {ctx.image} started (restart {ctx.restart})\n")
    yield FOREVER
    return 0


PROGRAMS: dict[str, Callable[[ProcessContext, list[str], IO], Gen]] = {
    "sh": sh, "ash": sh, "bash": sh, "echo": echo, "sleep": sleep, "true": true, "false": false,
    ":": true, "cat": cat, "env": env, "printenv": printenv, "hostname": hostname,
    "whoami": whoami, "date": date, "ls": ls, "touch": touch, "rm": rm, "mkdir": mkdir, "tail": tail,
    "yes": yes, "stress": stress, "wget": wget, "curl": curl, "nslookup": nslookup,
    "docker-entrypoint.sh": docker_entrypoint, "entrypoint.sh": docker_entrypoint,
    "nginx": server(_nginx_banner), "redis-server": server(_redis_banner),
    "postgres": server(_postgres_banner), "pause": server(lambda ctx, argv: ""),
    "python": _python, "python3": _python, "kubelab-app": _app,
    "tar": tar, "test": _test_program, "[": _test_program,
    "uptime": uptime, "seq": seq, "gzip": gzip_program, "gunzip": gzip_program,
    "zcat": gzip_program,
}

# Programs that serve HTTP, and their port (None: kubelab-app answers on every port); a request
# to another port of the pod is refused.
SERVERS: dict[str, int | None] = {"nginx": 80, "python3": 8000, "python": 8000, "kubelab-app": None}
# What PID 1 does with SIGTERM: exits at once with this code; programs not listed ignore it (a
# process with PID 1 gets no default action), so the kubelet's SIGKILL ends them: 137.
TERM_EXIT = {"nginx": 0, "redis-server": 0, "postgres": 0, "pause": 0, "kubelab-app": 143}
ENTRYPOINTS = {"docker-entrypoint.sh", "entrypoint.sh"}


def pid1(argv: list[str]) -> str:
    """The program that ends up as the container's PID 1 (entrypoint scripts exec "$@")."""
    names = [a.rsplit("/", 1)[-1] for a in argv]
    while len(names) > 1 and names[0] in ENTRYPOINTS:
        names = names[1:]
    return names[0] if names else ""


def term_exit_code(argv: list[str]) -> int | None:
    return TERM_EXIT.get(pid1(argv))


def serve_http(program: str, ports: list[int], ctx: ProcessContext, port: int, path: str
               ) -> HttpAnswer | None:
    """The answer of the server `program` runs to a GET on port; None: it does not serve."""
    if program not in SERVERS:
        return None
    own = SERVERS[program]
    if own is not None and port != own:
        return HttpAnswer(error="refused")
    if program == "nginx" or program.startswith("python"):
        root = "/usr/share/nginx/html" if program == "nginx" else ctx.cwd.rstrip("/")
        file = root + (path.split("?", 1)[0].rstrip("/") + "/index.html"
                       if path.split("?", 1)[0].endswith("/") else path.split("?", 1)[0])
        if file in ctx.files:
            return HttpAnswer(200, ctx.files[file], address=f":{port}")
        if program == "nginx" and path.split("?", 1)[0] in ("/", "/index.html"):
            return HttpAnswer(200, NGINX_WELCOME, address=f":{port}")
        return HttpAnswer(404, b"<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n"
                          b"<center><h1>404 Not Found</h1></center>\r\n<hr><center>nginx/1.27.5"
                          b"</center>\r\n</body>\r\n</html>\r\n", address=f":{port}")
    return HttpAnswer(200, f"kubelab: {ctx.image}\n".encode(), address=f":{port}")


def quote(argv: list[str]) -> str:
    return " ".join(shlex.quote(a) for a in argv)
