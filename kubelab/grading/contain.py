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

Inside, the grading process first seals the filesystem: every mount read-only (recursively,
mount_setattr), and a private tmpfs on /dev/shm (SCRATCH) for the sandboxes' working
directories and output files (not on /tmp: submissions and hidden checks often live there).
A submission can then write nothing on disk: not another student's files, not the gradebook,
not the course. Then it drops every capability for good (secure bits NOROOT, locked; no new
privileges), so the submission, though "root" in its user namespace, can neither ptrace the
grading process (which is non-dumpable from its first instruction) nor gain privileges by
running a program.

Before it drops them, the grading process starts its zygote (zygote.py), which confines itself
(confine): a mount namespace of its own whose root is a tmpfs holding only read-only binds of
the Python runtime, the sandbox's kubelab (prune.py) and the submission's folder, plus the
sandboxes' working directories, each at its own path; pivot_root, the old root detached. The
repository, solutions/, an instructor's checks, other students and /proc do not exist there.
Where unshare is missing or the kernel refuses unprivileged namespaces, the
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
import sys

__all__ = ["BOOT", "SCRATCH", "confine", "containment", "drop_privileges", "make_undumpable",
           "runtime_paths", "seal_filesystem", "sealing", "traced"]

_NAMESPACES = ("--user", "--map-root-user", "--pid", "--fork", "--kill-child", "--mount-proc")

# The grading process's first lines (`python -P -c BOOT FD HOME [contained]`): non-dumpable
# before it has read anything, and before it imports kubelab, which it imports from HOME (the
# folder holding the grader's own kubelab package: the same code as the grader's, whatever an
# editable install elsewhere says). Then runner.main talks over the socket FD.
BOOT = (
    "import sys\n"
    "from ctypes import CDLL\n"
    "CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 0\n"
    "sys.path.insert(0, sys.argv[2])\n"
    "from kubelab.grading.runner import main\n"
    "sys.exit(main(int(sys.argv[1]), contained=sys.argv[3:] == ['contained']))\n"
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


@functools.cache
def sealing() -> str:
    """Whether a contained grading process can seal its filesystem (mount_setattr needs Linux
    5.12): "" when it can, else the note every report carries (probed once per grader)."""
    prefix, note = containment()
    if note:
        return ""  # not contained at all: containment()'s note says it
    # This file alone (it needs nothing but the standard library): no import of kubelab.
    code = ("import importlib.util, sys\n"
            "spec = importlib.util.spec_from_file_location('contain', sys.argv[1])\n"
            "contain = importlib.util.module_from_spec(spec)\n"
            "spec.loader.exec_module(contain)\n"
            "problem = contain.seal_filesystem() or contain.probe_confine()\n"
            "print(problem, file=sys.stderr)\n"
            "sys.exit(1 if problem else 0)\n")
    try:
        probe = subprocess.run([*prefix, sys.executable, "-P", "-S", "-c", code, __file__],
                               capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as err:
        return _unsealed(str(err))
    if probe.returncode == 0:
        return ""
    return _unsealed((probe.stderr.decode("utf-8", "replace").strip().splitlines() or ["failed"])[-1])


def _unsealed(why: str) -> str:
    return (f"filesystem not sealed for submissions ({why}): a submission sees the grading "
            "user's files while it runs, and can read the reference solutions and hidden checks "
            "and write another student's files.")


def _degraded(why: str) -> str:
    return (f"not contained: no PID namespace for the grading processes ({why}); a process a "
            "submission starts in the background can outlive its check, and a submission sees "
            "every file the grading user can read (the reference solutions and hidden checks "
            "among them). Grade untrusted code where unprivileged user namespaces are allowed "
            "(docs/ARCHITECTURE.md, the grader's threat model).")


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]


_SYS_MOUNT_SETATTR = 442  # the same number on every architecture (a "new" syscall)
_AT_FDCWD, _AT_RECURSIVE, _MOUNT_ATTR_RDONLY = -100, 0x8000, 0x1
SCRATCH = "/dev/shm"  # the one writable place of a sealed namespace: a private tmpfs
TMPFS_SIZE = "256m"  # what all sandboxes of one grading process may keep there at once


def seal_filesystem() -> str:
    """Make every mount of this (private) mount namespace read-only and give it a fresh SCRATCH;
    "" or what went wrong. Only for PID 1 of a namespace that contain.containment() made:
    elsewhere it would change the host's mounts."""
    if os.getpid() != 1:
        return "not PID 1 of its own namespace"
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        attr = _MountAttr(_MOUNT_ATTR_RDONLY, 0, 0, 0)
        if libc.syscall(_SYS_MOUNT_SETATTR, _AT_FDCWD, b"/", _AT_RECURSIVE, ctypes.byref(attr),
                        ctypes.sizeof(attr)) != 0:
            return f"mount_setattr: {os.strerror(ctypes.get_errno())}"
        if libc.mount(b"tmpfs", SCRATCH.encode(), b"tmpfs", 0, f"size={TMPFS_SIZE},mode=700".encode()) != 0:
            return f"mount tmpfs {SCRATCH}: {os.strerror(ctypes.get_errno())}"
    except (OSError, AttributeError) as err:
        return str(err)
    return ""


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


# The sandbox's own filesystem (confine): a tmpfs root holding the Python runtime, the
# sandbox's kubelab and the submission's folder, bound read-only at their own paths.
_CLONE_NEWNS = 0x00020000
_MS_RDONLY, _MS_BIND, _MS_REC, _MS_PRIVATE = 0x1, 0x1000, 0x4000, 0x40000
_MNT_DETACH = 0x2
# pivot_root has no libc wrapper: its number per architecture (asm/unistd.h).
_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "loongarch64": 41,
                   "ppc64le": 203, "ppc64": 203, "s390x": 217, "i686": 217, "armv7l": 218}
# Shared libraries the interpreter and its extension modules load, and the devices Python uses.
# (The multiarch folder, not all of /usr/lib: that holds whole other programs.)
_SYSTEM = ("/lib", "/lib64", "/lib32", "/usr/lib64", "/usr/lib32", "/etc/ld.so.cache",
           "/usr/lib/locale/C.utf8", "/dev/null", "/dev/zero", "/dev/urandom", "/dev/random")


def runtime_paths() -> tuple[list[str], list[str]]:
    """(what a sandbox's root binds for Python to run: the interpreter's prefix, the
    site-packages, the system's shared libraries; the search path under it). The grader's own
    sys.path entries outside the runtime (the repository, PYTHONPATH) are not part of it. Other
    site-packages folders on sys.path are: a workshop's learners run a bridge venv whose .pth
    adds the instructor's venv's packages (kubelab/workshop/hub.py runtime)."""
    import sysconfig

    paths = sysconfig.get_paths()
    sites = {p for p in sys.path if os.path.basename(p.rstrip(os.sep)) in ("site-packages", "dist-packages")}
    prefixes = {sys.base_prefix, sys.base_exec_prefix, paths["purelib"], paths["platlib"], *sites}
    search = [p for p in sys.path if p and os.path.exists(p)
              and any(p == q or p.startswith(q.rstrip(os.sep) + os.sep) for q in prefixes)]
    multiarch = sysconfig.get_config_var("MULTIARCH")
    libs = [f"/usr/lib/{multiarch}", f"/lib/{multiarch}"] if multiarch else ["/usr/lib"]
    return sorted({*prefixes, *_SYSTEM, *libs}), search


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    if _libc().mount(None if source is None else source.encode(), target.encode(),
                     None if fstype is None else fstype.encode(), flags,
                     None if data is None else data.encode()) != 0:
        raise OSError(ctypes.get_errno(), f"mount {source or fstype} on {target}: "
                      f"{os.strerror(ctypes.get_errno())}")


def _inside(path: str, folders: list[str]) -> bool:
    return any(path == f or path.startswith(f.rstrip(os.sep) + os.sep) for f in folders)


def confine(root: str, binds: list[str], writable: list[str], hide: list[str]) -> str:
    """Give this process (a fork of a contained grading process, before it drops its
    privileges) a mount namespace of its own whose whole filesystem is `binds` (read-only) and
    `writable`, each at its own path, with `hide` (folders and files under them) covered by
    empty ones; "" or what went wrong. Nothing else exists in it: not the repository, not
    solutions/, not an instructor's checks, not /proc. `root` is an empty folder on SCRATCH."""
    try:
        if _libc().unshare(_CLONE_NEWNS) != 0:
            return f"unshare(CLONE_NEWNS): {os.strerror(ctypes.get_errno())}"
        _mount(None, "/", None, _MS_REC | _MS_PRIVATE)
        os.makedirs(root, exist_ok=True)
        _mount("tmpfs", root, "tmpfs", 0, "size=1m,mode=755")
        bound: list[str] = []
        # Each at its real place (/lib/x86_64-linux-gnu is /usr/lib/x86_64-linux-gnu here), and
        # the top-level links (/lib -> usr/lib) as links.
        places = {p if os.path.dirname(p) == "/" else
                  os.path.join(os.path.realpath(os.path.dirname(p)), os.path.basename(p))
                  for p in map(os.path.abspath, binds)}
        for path in sorted(places):
            if not os.path.lexists(path) or _inside(path, bound):
                continue
            target = root + path
            os.makedirs(os.path.dirname(target), exist_ok=True)
            if os.path.islink(path) and os.path.dirname(path) == "/":  # /lib -> usr/lib
                os.symlink(os.readlink(path), target)
                continue
            if os.path.isdir(path):
                os.makedirs(target, exist_ok=True)
            else:
                open(target, "wb").close()
            _mount(path, target, None, _MS_BIND | _MS_REC)
            bound.append(path)
        for path in hide:
            if not _inside(path, bound) or not os.path.lexists(root + path):
                continue
            if os.path.isdir(root + path):
                _mount("tmpfs", root + path, "tmpfs", _MS_RDONLY, "size=4k,mode=555")
            else:
                _mount("/dev/null", root + path, None, _MS_BIND)
        for path in writable:
            os.makedirs(root + path, exist_ok=True)
        attr = _MountAttr(_MOUNT_ATTR_RDONLY, 0, 0, 0)
        if _libc().syscall(_SYS_MOUNT_SETATTR, _AT_FDCWD, root.encode(), _AT_RECURSIVE,
                           ctypes.byref(attr), ctypes.sizeof(attr)) != 0:
            return f"mount_setattr: {os.strerror(ctypes.get_errno())}"
        for path in writable:  # after the read-only pass: these keep their own (writable) flags
            _mount(path, root + path, None, _MS_BIND | _MS_REC)
        number = _SYS_PIVOT_ROOT.get(os.uname().machine)
        if number is None:
            return f"pivot_root: no syscall number known for {os.uname().machine}"
        os.chdir(root)
        if _libc().syscall(number, b".", b".") != 0:
            return f"pivot_root: {os.strerror(ctypes.get_errno())}"
        if _libc().umount2(b".", _MNT_DETACH) != 0:  # the old root, with everything in it
            return f"umount the old root: {os.strerror(ctypes.get_errno())}"
        os.chdir("/")
    except OSError as err:
        return str(err)
    return ""


def probe_confine() -> str:
    """Whether confine() works here (run by sealing()'s probe, as PID 1 of a sealed namespace):
    a child confines itself to the Python runtime and starts Python there."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            binds, _ = runtime_paths()
            python = os.path.realpath(sys.executable)
            problem = confine(SCRATCH + "/probe-root", binds, [], [])
            if problem:
                print(problem, file=sys.stderr)
            else:
                code = subprocess.run([python, "-I", "-S", "-c", "pass"], timeout=60).returncode
                if code:
                    print("Python does not start in the sandbox's filesystem", file=sys.stderr)
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return "" if os.waitstatus_to_exitcode(status) == 0 else "the sandbox's filesystem cannot be made"
