"""tar in a simulated container: what `kubectl cp` runs through exec, in the real tar format.

kubectl cp (k8s.io/kubectl pkg/cmd/cp/cp.go) copies with the container's own tar:

    from the pod:  tar cf - /tmp/foo            the archive comes back on stdout
    into the pod:  test -d /tmp/bar             (is the destination a directory?)
                   tar -xmf - -C /tmp           the archive kubectl made goes in on stdin
                   tar --no-same-permissions --no-same-owner -xmf - -C /tmp   (--no-preserve)

so this program supports c (create), x (extract) and t (list), with f (`-` for stdin/stdout or
a file in the container), C DIR, m, v, o, p and those two long options; old-style bundled
letters (`cf`, `xmf`) as GNU and busybox tar take them. Archives are real tar (Python's
tarfile, GNU format): files and directories, owned by root, mode 0644/0755, stamped with the
virtual clock. Extracted files land in the container's file system, so into a volume's files
where a volume is mounted (an emptyDir the pod's other containers read), and a read-only mount
refuses them. Symbolic links, devices, compression (z, j, J) and other options are not
simulated (`tar: unrecognized option`); busybox's wording is used for busybox and alpine-based
images, GNU tar's for the Debian-based ones (nginx, redis, postgres, python), as each image's
tar prints it.
"""

from __future__ import annotations

import io as bytes_io
import tarfile
from collections.abc import Generator
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
from kubelab.kubelet.process.images import os_release
from kubelab.kubelet.process.process import IO, ProcessContext

__all__ = ["tar"]

Gen = Generator[Any, Any, int]
LETTERS = set("cxtfCmvopz")
FAILED_GNU = "tar: Exiting with failure status due to previous errors\n"
FAILED_BUSYBOX = "tar: error exit delayed from previous errors\n"


class _Options:
    def __init__(self) -> None:
        self.mode, self.file, self.directory, self.verbose = "", "", "", False
        self.paths: list[str] = []


def _parse(argv: list[str]) -> _Options | str:
    """The options, or what tar says about the ones it does not know."""
    opts, args = _Options(), argv[1:]
    if args and not args[0].startswith("-"):
        args = ["-" + args[0], *args[1:]]   # old style: `tar cf - x` is `tar -c -f - x`
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a in ("--no-same-permissions", "--no-same-owner"):
            continue
        if a.startswith("--") or not a.startswith("-") or a == "-":
            if a.startswith("--"):
                return f"tar: unrecognized option '{a}'"
            opts.paths.append(a)
            continue
        for j, letter in enumerate(a[1:], 1):
            if letter not in LETTERS or letter == "z":
                return f"tar: invalid option -- '{letter}'"
            if letter in "cxt":
                opts.mode = letter
            elif letter == "v":
                opts.verbose = True
            elif letter in "fC":
                value = a[j + 1:] or (args[i] if i < len(args) else "")
                if not a[j + 1:]:
                    i += 1
                if letter == "f":
                    opts.file = value
                else:
                    opts.directory = value
                break
    if not opts.mode:
        return "tar: must specify one of the -c, -t, -x options"
    return opts


def tar(ctx: ProcessContext, argv: list[str], io: IO) -> Gen:
    gnu = "ID=debian" in os_release(ctx.image)
    opts = _parse(argv)
    if isinstance(opts, str):
        io.err(f"{opts}\n" + ("Try 'tar --help' or 'tar --usage' for more information.\n"
                              if gnu else ""))
        return 2 if gnu else 1
    cwd = absolute(ctx.cwd, opts.directory) if opts.directory else ctx.cwd
    if opts.directory and not is_dir(ctx.files, cwd):
        io.err(f"tar: {opts.directory}: Cannot open: No such file or directory\n{FAILED_GNU}"
               if gnu else f"tar: can't change directory to '{opts.directory}': No such file or "
               "directory\n")
        return 2 if gnu else 1
    if opts.mode == "c":
        return (yield from _create(ctx, opts, cwd, io, gnu))
    if opts.file in ("", "-"):
        data = yield from io.read_all()
    else:
        path = absolute(ctx.cwd, opts.file)
        if path not in ctx.files:
            io.err(f"tar: {opts.file}: Cannot open: No such file or directory\n{FAILED_GNU}" if gnu
                   else f"tar: can't open '{opts.file}': No such file or directory\n")
            return 2 if gnu else 1
        data = ctx.files[path]
    return _extract(ctx, opts, cwd, data, io, gnu)


def _members(ctx: ProcessContext, full: str) -> list[tuple[str, bytes | None]]:
    """(absolute path, content or None for a directory) of full and everything under it."""
    if full in ctx.files and not full.startswith("/.kubelab"):
        return [(full, ctx.files[full])]
    prefix = full.rstrip("/") + "/"
    found: dict[str, bytes | None] = {full: None}
    for path in [*ctx.files, *directories(ctx.files)]:
        if not path.startswith(prefix) or path.startswith("/.kubelab"):
            continue
        parts = path[len(prefix):].split("/")
        for depth in range(1, len(parts)):       # the directories on the way
            found.setdefault(prefix + "/".join(parts[:depth]), None)
        found[path] = ctx.files.get(path)   # None: a directory
    return sorted(found.items())


def _create(ctx: ProcessContext, opts: _Options, cwd: str, io: IO, gnu: bool) -> Gen:
    if not opts.paths:
        io.err("tar: Cowardly refusing to create an empty archive\nTry 'tar --help' or 'tar "
               "--usage' for more information.\n" if gnu else "tar: empty archive\n")
        return 2 if gnu else 1
    out = bytes_io.BytesIO()
    mtime = int(epoch().timestamp() + ctx.now())
    failed, warned = False, False
    with tarfile.open(fileobj=out, mode="w", format=tarfile.GNU_FORMAT) as archive:
        for path in opts.paths:
            full = absolute(cwd, path)
            if full not in ctx.files and not is_dir(ctx.files, full):
                io.err(f"tar: {path}: Cannot stat: No such file or directory\n" if gnu
                       else f"tar: {path}: No such file or directory\n")
                failed = True
                continue
            if path.startswith("/") and not warned:
                io.err("tar: Removing leading `/' from member names\n" if gnu
                       else "tar: removing leading '/' from member names\n")
                warned = True
            base = path.lstrip("/").rstrip("/") or "."
            for member, content in _members(ctx, full):
                name = base + member[len(full.rstrip("/")):] if member != full else base
                info = tarfile.TarInfo(name + ("/" if content is None else ""))
                info.mtime, info.uname, info.gname = mtime, "root", "root"
                if content is None:
                    info.type, info.mode = tarfile.DIRTYPE, 0o755
                    archive.addfile(info)
                else:
                    info.size, info.mode = len(content), 0o644
                    archive.addfile(info, bytes_io.BytesIO(content))
                if opts.verbose:
                    io.err(f"{info.name}\n")
    if opts.file in ("", "-"):
        io.out_bytes(out.getvalue())
    else:
        try:
            ctx.files[absolute(ctx.cwd, opts.file)] = out.getvalue()
        except ReadOnlyFileSystem:
            io.err(f"tar: {opts.file}: Cannot open: Read-only file system\n" if gnu
                   else f"tar: can't open '{opts.file}': Read-only file system\n")
            return 2 if gnu else 1
    if failed:
        io.err(FAILED_GNU if gnu else FAILED_BUSYBOX)
        return 2 if gnu else 1
    return 0
    yield


def _extract(ctx: ProcessContext, opts: _Options, cwd: str, data: bytes, io: IO, gnu: bool) -> int:
    if not data:
        return 0
    try:
        with tarfile.open(fileobj=bytes_io.BytesIO(data), mode="r:") as archive:
            return _extract_members(ctx, opts, cwd, archive, io, gnu)
    except tarfile.TarError:
        io.err(f"tar: This does not look like a tar archive\n{FAILED_GNU}" if gnu
               else "tar: invalid tar magic\n")
        return 2 if gnu else 1


def _extract_members(ctx: ProcessContext, opts: _Options, cwd: str, archive: tarfile.TarFile,
                     io: IO, gnu: bool) -> int:
    members = archive.getmembers()
    made = directories(ctx.files)
    failed = False
    for member in members:
        if opts.verbose or opts.mode == "t":
            (io.out if opts.mode == "t" else io.err)(f"{member.name}\n")
        if opts.mode == "t" or not (member.isfile() or member.isdir()):
            continue   # a link or a device: not simulated
        path = absolute(cwd, member.name)
        if not writable(ctx.files, path):
            io.err(f"tar: {member.name}: Cannot open: Read-only file system\n" if gnu
                   else f"tar: can't open '{member.name}': Read-only file system\n")
            failed = True
            continue
        if member.isdir():
            made.add(path)
            continue
        extracted = archive.extractfile(member)
        ctx.files[path] = extracted.read() if extracted is not None else b""
    ctx.files[DIRS] = " ".join(sorted(made)).encode()
    if failed:
        if gnu:
            io.err(FAILED_GNU)
        return 2 if gnu else 1
    return 0
