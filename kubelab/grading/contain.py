"""Containment: a grading process, its zygote and its sandboxes live and die together, alone.

Each grading process starts as PID 1 of its own PID namespace, in its own user, mount and
network namespaces, with a /proc of its own (`unshare --user --map-root-user --pid --fork
--kill-child --mount-proc --net`, util-linux). Why this and not a cgroup: it works the same as
root and as a normal user without any set-up (this machine's cgroup v2 tree is not delegated to
users), and it gives the two properties the grader needs from the kernel itself:

- When PID 1 of a namespace dies, the kernel kills every other process in it, however it was
  started (double fork, setsid, a daemon): killing the grading process ends everything a
  submission started, before the grader writes a single grade.
- A process sees and can signal only the processes of its own namespace, and its /proc lists
  only those: one student's code cannot find another student's grading process, nor the grader.

Inside, the grading process drops every capability for good (secure bits NOROOT, locked; no new
privileges), so the submission, though "root" in its user namespace, can neither ptrace the
grading process (which is non-dumpable from its first instruction) nor gain privileges by
running a program. Where unshare is missing or the kernel refuses unprivileged namespaces, the
grader says so in every report and falls back to a process-group kill and a parent-death
signal, which a double fork escapes.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import shutil
import subprocess

__all__ = ["BOOT", "containment", "drop_privileges", "make_undumpable", "traced"]

_NAMESPACES = ("--user", "--map-root-user", "--pid", "--fork", "--kill-child", "--mount-proc")

# The grading process's first lines (`python -P -c BOOT FD`): non-dumpable before it has read
# anything, and before it imports kubelab. Then runner.main talks over the socket FD.
BOOT = (
    "import sys\n"
    "from ctypes import CDLL\n"
    "CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 0\n"
    "from kubelab.grading.runner import main\n"
    "sys.exit(main(int(sys.argv[1])))\n"
)

_PR_SET_SECUREBITS, _PR_SET_NO_NEW_PRIVS = 28, 38
# SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE(_LOCKED): uid 0 gains no
# capability by exec, and nothing can undo that.
_SECUREBITS = 0x01 | 0x02 | 0x40 | 0x80
_CAP_VERSION_3 = 0x20080522


def make_undumpable() -> None:
    """prctl(PR_SET_DUMPABLE, 0): other processes of this user cannot ptrace us or open our
    /proc/<pid>/fd and /proc/<pid>/mem (Linux; elsewhere a no-op)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)


@functools.cache
def containment() -> tuple[tuple[str, ...], str]:
    """The command prefix that starts a grading process in its own namespaces, and, when there
    is none, the note every report carries (probed once per grader process)."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return (), _degraded("util-linux's unshare is not installed")
    error = ""
    for flags in ((*_NAMESPACES, "--net"), _NAMESPACES):
        try:
            probe = subprocess.run([unshare, *flags, "true"], capture_output=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired) as err:
            return (), _degraded(str(err))
        if probe.returncode == 0:
            return (unshare, *flags, "--"), ""
        error = (probe.stderr.decode("utf-8", "replace").strip().splitlines() or ["failed"])[-1]
    return (), _degraded(f"`unshare --user --pid` failed: {error}")


def _degraded(why: str) -> str:
    return (f"not contained: no PID namespace for the grading processes ({why}); a process a "
            "submission starts in the background can outlive its check. Grade untrusted code "
            "where unprivileged user namespaces are allowed (docs/ARCHITECTURE.md, the grader's "
            "threat model).")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def drop_privileges() -> str:
    """Give up every capability for this process and all it starts; "" or what went wrong
    (then the caller must not run submissions: they could ptrace it)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        if _effective_caps() == 0:
            return ""  # an ordinary user outside a user namespace: nothing to drop
        if libc.prctl(_PR_SET_SECUREBITS, _SECUREBITS, 0, 0, 0) != 0:
            return f"PR_SET_SECUREBITS: {os.strerror(ctypes.get_errno())}"
        data = (_CapData * 2)()
        if libc.capset(ctypes.byref(_CapHeader(_CAP_VERSION_3, 0)), data) != 0:
            return f"capset: {os.strerror(ctypes.get_errno())}"
    except (OSError, AttributeError) as err:
        return str(err)
    return "" if _effective_caps() == 0 else "capabilities are still there after capset"


def _status(field: str) -> str:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return line.split()[1]
    except OSError:  # not Linux
        pass
    return "0"


def _effective_caps() -> int:
    return int(_status("CapEff"), 16)


def traced() -> bool:
    """Whether a debugger got attached before this process became non-dumpable."""
    return _status("TracerPid") != "0"
