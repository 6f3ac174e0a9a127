"""The image registry every node pulls from: the outside world, shared by the whole cluster.

It knows each image's size (a small table of familiar images; any other name gets a stable
made-up size) and how it behaves right now. `Cluster.faults.break_registry(image, mode)` changes
that, for one image, one repository (every tag) or all of them:

    ok            pulls succeed, at the registry's bandwidth
    slow          pulls succeed, twenty times slower
    unauthorized  401: the credential is missing or expired (the 15-hour story)
    notfound      the tag or repository does not exist
    flaky         half of the pulls fail with 503, at random (the cluster's seeded generator)

Error texts are containerd's, as the kubelet passes them on: `rpc error: code = NotFound desc =
failed to pull and unpack image "docker.io/library/nginx:1.99": failed to resolve reference ...`.
"""

from __future__ import annotations

import random
import zlib
from dataclasses import dataclass

__all__ = ["MODES", "ImageInfo", "ImageRegistry", "PullError", "normalize_image", "repository"]

MODES = ("ok", "slow", "unauthorized", "notfound", "flaky")
SLOW_FACTOR = 20.0

# Sizes in bytes (as containerd reports them) of a few images the course uses.
KNOWN_IMAGES = {
    "docker.io/library/nginx": 72_099_410,
    "docker.io/library/busybox": 4_269_250,
    "docker.io/library/redis": 117_354_832,
    "docker.io/library/postgres": 438_594_322,
    "docker.io/library/python": 1_018_455_603,
    "registry.k8s.io/pause": 320_368,
    "registry.k8s.io/etcd": 57_680_541,
    "registry.k8s.io/kube-apiserver": 28_079_108,
    "registry.k8s.io/kube-controller-manager": 26_266_112,
    "registry.k8s.io/kube-scheduler": 20_575_864,
}


class PullError(Exception):
    """A failed pull, worded as containerd words it."""


@dataclass(frozen=True)
class ImageInfo:
    size: int
    behavior: str = ""   # the workload a container of this image follows unless told otherwise


def normalize_image(image: str) -> str:
    """docker's ParseNormalizedNamed, for the names the course uses: `nginx:1.27` is
    `docker.io/library/nginx:1.27`, no tag means `:latest`."""
    name, digest = ([*image.split("@", 1), ""])[:2]
    first, _, rest = name.partition("/")
    if not rest:
        name = f"docker.io/library/{name}"
    elif "." not in first and ":" not in first and first != "localhost":
        name = f"docker.io/{name}"
    if digest:
        return f"{name}@{digest}"
    last = name.rsplit("/", 1)[-1]
    return name if ":" in last else f"{name}:latest"


def repository(ref: str) -> str:
    """`docker.io/library/nginx` of `docker.io/library/nginx:1.27`."""
    if "@" in ref:
        return ref.split("@", 1)[0]
    head, _, last = ref.rpartition("/")
    return f"{head}/{last.split(':', 1)[0]}"


class ImageRegistry:
    """Sizes, per-image behaviour and the registry's bandwidth. Shared by every node."""

    def __init__(self, bandwidth: float = 50e6) -> None:
        self.bandwidth = bandwidth           # bytes per second for a normal pull
        self._images: dict[str, ImageInfo] = {}
        self._modes: dict[str, str] = {}     # normalized ref or repository or "*" -> mode
        self.pulls = 0                       # manifest requests served (successful or not)

    # ------------------------------------------------------------------ what is in it

    def info(self, image: str) -> ImageInfo:
        ref = normalize_image(image)
        known = self._images.get(ref)
        if known is not None:
            return known
        size = KNOWN_IMAGES.get(repository(ref))
        if size is None:  # a stable size between 20 and 250 MB, the same on every run
            size = 20_000_000 + zlib.crc32(ref.encode()) % 230_000_000
        return ImageInfo(size)

    # ------------------------------------------------------------------ how it behaves

    def set_mode(self, image: str | None, mode: str) -> None:
        """Mode for one image (`nginx:1.27`), one repository (`nginx`: every tag) or all (None)."""
        if mode not in MODES:
            raise ValueError(f'unknown registry mode "{mode}"; known: {", ".join(MODES)}')
        key = "*" if image in (None, "", "*") else self._key(str(image))
        if mode == "ok":
            self._modes.pop(key, None)
        else:
            self._modes[key] = mode

    def clear(self, image: str | None = None) -> None:
        """Back to normal: for one image or repository, or everything (None)."""
        if image in (None, "", "*"):
            self._modes.clear()
        else:
            self._modes.pop(self._key(str(image)), None)

    def mode(self, image: str) -> str:
        ref = normalize_image(image)
        for key in (ref, repository(ref), "*"):
            if key in self._modes:
                return self._modes[key]
        return "ok"

    @property
    def broken(self) -> dict[str, str]:
        return dict(self._modes)

    @staticmethod
    def _key(image: str) -> str:
        has_tag = "@" in image or ":" in image.rsplit("/", 1)[-1]
        ref = normalize_image(image)
        return ref if has_tag else repository(ref)

    # ------------------------------------------------------------------ a pull

    def resolve(self, image: str, rand: random.Random) -> float:
        """Resolve the manifest (every pull does, even of a cached image). Returns the seconds
        it took; raises PullError when the registry refuses."""
        self.pulls += 1
        ref = normalize_image(image)
        mode = self.mode(image)
        latency = 0.1 + 0.3 * rand.random()
        prefix = f'failed to pull and unpack image "{ref}": failed to resolve reference "{ref}"'
        host, _, path = ref.partition("/")
        repo, _, tag = path.rpartition(":") if "@" not in path else (path.partition("@")[0], "", "")
        url = f"https://{'registry-1.docker.io' if host == 'docker.io' else host}/v2/{repo}" \
              f"/manifests/{tag or 'latest'}"
        if mode == "unauthorized":
            raise PullError(f"rpc error: code = Unknown desc = {prefix}: unexpected status from "
                            f"HEAD request to {url}: 401 Unauthorized")
        if mode == "notfound":
            raise PullError(f"rpc error: code = NotFound desc = {prefix}: {ref}: not found")
        if mode == "flaky" and rand.random() < 0.5:
            raise PullError(f"rpc error: code = Unknown desc = {prefix}: unexpected status from "
                            f"HEAD request to {url}: 503 Service Unavailable")
        return latency * (SLOW_FACTOR if mode == "slow" else 1.0)

    def download_seconds(self, image: str, rand: random.Random) -> float:
        """How long the layers take to arrive (bandwidth varies by +-20 % per pull)."""
        speed = self.bandwidth * (0.8 + 0.4 * rand.random())
        if self.mode(image) == "slow":
            speed /= SLOW_FACTOR
        return self.info(image).size / speed
