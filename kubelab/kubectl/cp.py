"""kubectl cp, in the simulation: k8s.io/kubectl pkg/cmd/cp/cp.go (and filespec.go).

`cp [[NAMESPACE/]POD:]PATH [[NAMESPACE/]POD:]PATH [-c CONTAINER] [--no-preserve]`: one side is
a local path, the other a path in a pod's container, and the copy is made with the container's
own tar through pods/exec, as upstream does:

    from the pod:  exec `tar cf - PATH`, then untarAll: each member's name loses the source's
                   path (the prefix) and is written under the local destination; a member
                   outside the destination is skipped with a warning
    into the pod:  exec `test -d DEST` (a directory: the source goes inside it, under its own
                   name), makeTar of the local file or directory (recursiveTar: members named
                   after the destination), exec `tar -xmf - -C DIR` with the archive on stdin

tar's own stderr is printed on kubectl's stdout, as cp.go wires it (`tar: removing leading '/'
from member names`). A tar that fails into the pod ends kubectl with its exit code after
`command terminated with exit code N`.

Where kubelab departs: the local side is the real local file system (this is the one verb
that writes outside the cluster: it is what a learner asks for); the session is driven on the
virtual clock until it ends; `--retries` (which resumes a broken stream with `tail -c+N`) is not
offered, as kubelab's streams do not break.
"""

from __future__ import annotations

import argparse
import glob
import io
import os
import posixpath
import tarfile
from typing import Any

from kubelab.client.client import Client
from kubelab.kubectl.common import KubectlError, Output, Verb
from kubelab.kubectl.exec import WAIT_LIMIT, _container, _pod

__all__ = ["VERBS"]

FILESPEC_FORMAT = "filespec must match the canonical format: [[namespace/]pod:]file/path"


def extract_file_spec(arg: str) -> tuple[str, str, str]:
    """(namespace, pod, path): no pod is a local path."""
    i = arg.find(":")
    if i == 0:
        raise KubectlError(FILESPEC_FORMAT)
    if i < 0:
        return "", "", arg
    pod, path = arg[:i], arg[i + 1:]
    pieces = pod.split("/")
    if len(pieces) == 1:
        return "", pieces[0], path
    if len(pieces) == 2:
        return pieces[0], pieces[1], path
    raise KubectlError(FILESPEC_FORMAT)


def _execute(client: Client, args: argparse.Namespace, namespace: str, pod_name: str,
             command: list[str], stdin: bytes | None) -> tuple[bytes, bytes, int | None, str]:
    """exec the command in the pod's container; (stdout, stderr, exit code, container note)."""
    pod = _pod(client, pod_name, namespace)
    container, note = _container(pod, args.container)
    session: Any = client.exec(pod["metadata"]["name"], command, namespace, container=container,
                               stdin=stdin is not None, tty=False)
    if stdin is not None:
        session.write(stdin)
        session.close_stdin()
    out, err, waited = bytearray(), bytearray(), 0.0
    while True:
        o, e = session.read()
        out += o
        err += e
        code = session.exit_code
        if code is not None or args.wait is None or waited >= WAIT_LIMIT:
            return bytes(out), bytes(err), code, note
        step = 1.0 if waited < 60 else 10.0
        args.wait(step)
        waited += step


def _run(client: Client, args: argparse.Namespace, now: float, stdin: str) -> str:
    if len(args.args) != 2:
        raise KubectlError("source and destination are required")
    src, dest = extract_file_spec(args.args[0]), extract_file_spec(args.args[1])
    if src[1] and dest[1]:
        raise KubectlError("one of src or dest must be a local file specification")
    if not src[2] or not dest[2]:
        raise KubectlError("filepath can not be empty")
    if src[1]:
        return copy_from_pod(client, args, src, dest[2])
    if dest[1]:
        return copy_to_pod(client, args, src[2], dest)
    raise KubectlError("one of src or dest must be a remote file specification")


# ---------------------------------------------------------------------- into the pod

def check_destination_is_dir(client: Client, args: argparse.Namespace,
                             dest: tuple[str, str, str]) -> bool:
    namespace = dest[0] or args.namespace
    _out, _err, code, _note = _execute(client, args, namespace, dest[1], ["test", "-d", dest[2]],
                                       None)
    return code == 0


def copy_to_pod(client: Client, args: argparse.Namespace, src: str,
                dest: tuple[str, str, str]) -> str:
    if not os.path.exists(src):
        raise KubectlError(f"{src} doesn't exist in local filesystem")
    namespace, dest_file = dest[0] or args.namespace, dest[2]
    if check_destination_is_dir(client, args, dest):
        dest_file = posixpath.join(dest_file, os.path.basename(os.path.normpath(src)))
    archive = make_tar(src, dest_file)
    if args.no_preserve:
        command = ["tar", "--no-same-permissions", "--no-same-owner", "-xmf", "-"]
    else:
        command = ["tar", "-xmf", "-"]
    dest_dir = posixpath.dirname(dest_file)
    if dest_dir:
        command += ["-C", dest_dir]
    out, err, code, note = _execute(client, args, namespace, dest[1], command, archive)
    text = note + (out + err).decode(errors="replace")
    if code:
        return Output(f"{text}command terminated with exit code {code}", code)
    return text


def make_tar(src: str, dest: str) -> bytes:
    """The archive kubectl sends: src's files, named after dest (recursiveTar)."""
    buffer = io.BytesIO()
    src_path, dest_path = os.path.normpath(src), posixpath.normpath(dest)
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as tw:
        recursive_tar(os.path.dirname(src_path), os.path.basename(src_path),
                      posixpath.dirname(dest_path), posixpath.basename(dest_path), tw)
    return buffer.getvalue()


def recursive_tar(src_dir: str, src_file: str, dest_dir: str, dest_file: str,
                  tw: tarfile.TarFile) -> None:
    for fpath in sorted(glob.glob(os.path.join(src_dir, src_file))):
        if os.path.isdir(fpath) and not os.path.islink(fpath):
            files = sorted(os.listdir(fpath))
            if not files:  # an empty directory
                info = tw.gettarinfo(fpath, arcname=dest_file)
                tw.addfile(info)
            for f in files:
                recursive_tar(src_dir, os.path.join(src_file, f), dest_dir,
                              posixpath.join(dest_file, f), tw)
            return
        info = tw.gettarinfo(fpath, arcname=dest_file)
        if info.issym():
            tw.addfile(info)
        else:
            with open(fpath, "rb") as content:
                tw.addfile(info, content)
            return


# ---------------------------------------------------------------------- out of the pod

def copy_from_pod(client: Client, args: argparse.Namespace, src: tuple[str, str, str],
                  dest: str) -> str:
    namespace = src[0] or args.namespace
    out, err, code, note = _execute(client, args, namespace, src[1], ["tar", "cf", "-", src[2]],
                                    None)
    text = note + err.decode(errors="replace")   # tar's stderr: kubectl's stdout
    if code and not out:
        return Output(f"{text}command terminated with exit code {code}", code)
    prefix = strip_path_shortcuts(posixpath.normpath(src[2].strip("/")))
    return text + untar_all(namespace, src[1], prefix, src[2], dest, out)


def strip_path_shortcuts(p: str) -> str:
    """Remove the leading `../` pieces (and a lone `..` or `.`)."""
    new = posixpath.normpath(p)
    trimmed = new
    while trimmed.startswith("../"):
        trimmed = trimmed[3:]
    return "" if trimmed in ("..", ".") else trimmed


def _is_relative(base: str, target: str) -> bool:
    relative = os.path.relpath(target, base)
    return relative == "." or relative == strip_path_shortcuts(relative)


def untar_all(namespace: str, pod: str, prefix: str, src: str, dest: str, data: bytes) -> str:
    warnings, symlink_warned = "", False
    if not data:
        return warnings
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
        for header in archive:
            if not header.name.startswith(prefix):
                raise KubectlError("tar contents corrupted")
            rest = header.name[len(prefix):].strip("/")
            dest_name = os.path.join(dest, *[p for p in rest.split("/") if p]) if rest else dest
            if not _is_relative(dest, dest_name):
                warnings += f'warning: file "{dest_name}" is outside target destination, skipping\n'
                continue
            os.makedirs(os.path.dirname(dest_name) or ".", mode=0o755, exist_ok=True)
            if header.isdir():
                os.makedirs(dest_name, mode=0o755, exist_ok=True)
                continue
            if header.issym():
                if not symlink_warned:
                    warnings += (f'warning: skipping symlink: "{dest_name}" -> "{header.linkname}" '
                                 f'(consider using "kubectl exec -n "{namespace}" "{pod}" -- tar cf - '
                                 f'"{src}" | tar xf -")\n')
                    symlink_warned = True
                continue
            extracted = archive.extractfile(header)
            if os.path.isdir(dest_name):
                raise KubectlError(f"open {dest_name}: is a directory")
            with open(dest_name, "wb") as f:
                f.write(extracted.read() if extracted is not None else b"")
            os.chmod(dest_name, header.mode & 0o777)
    return warnings


VERBS: dict[str, Verb] = {"cp": _run}
