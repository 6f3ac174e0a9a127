"""A container's file system: its own files, with the pod's volumes mounted over them.

Upstream the kubelet turns each volumeMount into a CRI Mount (kubernetes pkg/kubelet/
kubelet_pods.go makeMounts; pkg/kubelet/container/runtime.go `Mount`: ContainerPath, HostPath,
ReadOnly, SubPath) and the runtime bind-mounts the volume's directory on the host into the
container's root file system. Two containers that mount the same emptyDir therefore see one
directory: what one writes, the other reads at once (the sidecar / log-shipper pattern). A
read-only mount (`readOnly: true`, and configMap, secret, downwardAPI and projected volumes,
which the kubelet always mounts read-only) refuses writes with EROFS, which busybox prints as
`sh: can't create /etc/config/x: Read-only file system`.

Here a volume is the volume manager's mapping of relative path -> content (kubelab/kubelet/
volumemanager), and FileSystem is the mapping of absolute path -> content a program reads
(ProcessContext.files): a path under a mount is the volume's file, live, any other path is the
container's own (the image's files and what the kubelet wrote: /etc/hosts, ...), gone when the
container is. Directories are implied by the files under them (and the container's own
/.kubelab/dirs list that mkdir keeps), so an empty directory made in an emptyDir is not shared.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass

__all__ = ["DIRS", "FileSystem", "Mount", "ReadOnlyFileSystem", "absolute", "directories",
           "is_dir", "writable"]

DIRS = "/.kubelab/dirs"   # the container's own list of directories mkdir made (space-separated)


class ReadOnlyFileSystem(OSError):
    """EROFS: a write to a read-only mount."""

    def __init__(self, path: str) -> None:
        super().__init__(errno.EROFS, "Read-only file system", path)


@dataclass(frozen=True, eq=False)
class Mount:
    """One volumeMount as the runtime gets it: the volume's files (shared with every other
    container that mounts it, and with the volume manager) appear at container_path."""

    container_path: str
    volume: dict[str, bytes]      # the volume's files: relative path -> content (live)
    read_only: bool = False
    sub_path: str = ""            # only this file or directory of the volume

    def key(self, path: str) -> str | None:
        """The volume's key for an absolute path under this mount; None: not under it."""
        at = self.container_path.rstrip("/")
        if path != at and not path.startswith(at + "/"):
            return None
        rel = path[len(at):].strip("/")
        return "/".join(p for p in (self.sub_path.strip("/"), rel) if p)

    def paths(self) -> Iterator[tuple[str, str]]:
        """(absolute path, volume key) of every file the mount shows."""
        at, sub = self.container_path.rstrip("/"), self.sub_path.strip("/")
        for rel in list(self.volume):
            if not sub:
                yield f"{at}/{rel}", rel
            elif rel == sub:
                yield at, rel
            elif rel.startswith(sub + "/"):
                yield f"{at}/{rel[len(sub) + 1:]}", rel


class FileSystem(MutableMapping[str, bytes]):
    """Absolute path -> content: the mounts (the deepest one that holds a path wins) over the
    container's own files. Writing under a read-only mount raises ReadOnlyFileSystem."""

    def __init__(self, own: dict[str, bytes] | None = None, mounts: list[Mount] | None = None
                 ) -> None:
        self.own: dict[str, bytes] = {} if own is None else own
        self.mounts = sorted(mounts or [], key=lambda m: -len(m.container_path.rstrip("/")))

    def mount_of(self, path: str) -> tuple[Mount, str] | None:
        """The mount path is on and its key in the volume; None: the container's own file."""
        for mount in self.mounts:
            key = mount.key(path)
            if key is not None:
                return mount, key
        return None

    def writable(self, path: str) -> bool:
        found = self.mount_of(path)
        return found is None or not found[0].read_only

    def __getitem__(self, path: str) -> bytes:
        found = self.mount_of(path)
        if found is None:
            return self.own[path]
        return found[0].volume[found[1]]

    def __setitem__(self, path: str, data: bytes) -> None:
        found = self.mount_of(path)
        if found is None:
            self.own[path] = data
        elif found[0].read_only:
            raise ReadOnlyFileSystem(path)
        else:
            found[0].volume[found[1]] = data

    def __delitem__(self, path: str) -> None:
        found = self.mount_of(path)
        if found is None:
            del self.own[path]
        elif found[0].read_only:
            if found[1] not in found[0].volume:
                raise KeyError(path)
            raise ReadOnlyFileSystem(path)
        else:
            del found[0].volume[found[1]]

    def __iter__(self) -> Iterator[str]:
        seen: set[str] = set()
        for path in list(self.own):
            if self.mount_of(path) is None:
                seen.add(path)
                yield path
        for mount in self.mounts:
            for path, _key in mount.paths():
                if path not in seen and self.mount_of(path) == (mount, _key):
                    seen.add(path)
                    yield path

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, path: object) -> bool:
        if not isinstance(path, str):
            return False
        found = self.mount_of(path)
        return path in self.own if found is None else found[1] in found[0].volume


# ---------------------------------------------------------------------- paths and directories

def absolute(cwd: str, path: str) -> str:
    """path made absolute against cwd, with `.` and `..` resolved (`..` of / is /)."""
    if not path.startswith("/"):
        path = f"{cwd.rstrip('/')}/{path}"
    parts: list[str] = []
    for part in path.split("/"):
        if part == "..":
            if parts:
                parts.pop()
        elif part and part != ".":
            parts.append(part)
    return "/" + "/".join(parts)


def directories(files: MutableMapping[str, bytes]) -> set[str]:
    """The directories that exist without a file in them: the image's and mkdir's."""
    made = files.get(DIRS, b"").decode().split()
    found = {"/", "/tmp", "/root", "/proc", "/dev", *made}
    if isinstance(files, FileSystem):  # a mount point is a directory, and so is its parent
        for mount in files.mounts:
            if mount.sub_path.strip("/") in mount.volume:
                continue   # a subPath file mounted as a file
            parts = mount.container_path.strip("/").split("/")
            found.update("/" + "/".join(parts[:depth]) for depth in range(1, len(parts) + 1))
    return found


def is_dir(files: MutableMapping[str, bytes], path: str) -> bool:
    prefix = path.rstrip("/") + "/"
    return path == "/" or any(p.startswith(prefix) for p in files) or path in directories(files)


def writable(files: MutableMapping[str, bytes], path: str) -> bool:
    """Is path on a writable part of the file system (not under a read-only mount)?"""
    return not isinstance(files, FileSystem) or files.writable(path)
