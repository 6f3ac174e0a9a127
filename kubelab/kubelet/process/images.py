"""What a container runs: Kubernetes' command/args over the image's ENTRYPOINT and CMD.

The rule (pkg/kubelet/kuberuntime/kuberuntime_container.go, generateContainerConfig, and the
"Define a Command and Arguments" task page): `command` replaces the image's ENTRYPOINT, `args`
replaces its CMD; `command` without `args` drops the CMD too; `args` alone runs with the
image's ENTRYPOINT. The defaults below are the images' own (their Dockerfiles on Docker Hub
and registry.k8s.io, at the tags the course uses):

    nginx                ENTRYPOINT ["/docker-entrypoint.sh"]  CMD ["nginx", "-g", "daemon off;"]
    busybox              CMD ["sh"]
    alpine               CMD ["/bin/sh"]
    redis                ENTRYPOINT ["docker-entrypoint.sh"]   CMD ["redis-server"]
    postgres             ENTRYPOINT ["docker-entrypoint.sh"]   CMD ["postgres"]
    python               CMD ["python3"]
    curlimages/curl      ENTRYPOINT ["/entrypoint.sh"]         CMD ["curl"]
    registry.k8s.io/pause  ENTRYPOINT ["/pause"]
    registry.k8s.io/busybox, registry.k8s.io/e2e-test-images/busybox   CMD ["sh"]

Any other image (an application image such as `registry.example.com/shop/api:2.3`, or the
control plane's own) gets kubelab's documented default: no ENTRYPOINT and CMD `kubelab-app`, a
long-running server that answers HTTP on every port and logs `kubelab: simulated <image>
started (restart N)`; its `args` alone are then the command it runs, and a command that is no
program kubelab knows is the image's own binary, run as `kubelab-app` too (so the control
plane's `kube-apiserver --advertise-address=...` runs until stopped).
"""

from __future__ import annotations

from typing import Any

from kubelab.kubelet.registry import normalize_image, repository

__all__ = ["DEFAULT_APP", "IMAGE_DEFAULTS", "IMAGE_DIRS", "OS_RELEASE", "command_line",
           "image_defaults", "image_dirs", "image_is_known", "os_release"]

DEFAULT_APP = "kubelab-app"

# repository -> (ENTRYPOINT, CMD)
IMAGE_DEFAULTS: dict[str, tuple[list[str], list[str]]] = {
    "docker.io/library/nginx": (["/docker-entrypoint.sh"], ["nginx", "-g", "daemon off;"]),
    "docker.io/library/busybox": ([], ["sh"]),
    "registry.k8s.io/busybox": ([], ["sh"]),
    "registry.k8s.io/e2e-test-images/busybox": ([], ["sh"]),
    "docker.io/library/alpine": ([], ["/bin/sh"]),
    "docker.io/library/redis": (["docker-entrypoint.sh"], ["redis-server"]),
    "docker.io/library/postgres": (["docker-entrypoint.sh"], ["postgres"]),
    "docker.io/library/python": ([], ["python3"]),
    "docker.io/curlimages/curl": (["/entrypoint.sh"], ["curl"]),
    "docker.io/library/curl": (["/entrypoint.sh"], ["curl"]),
    "registry.k8s.io/pause": (["/pause"], []),
}


# /etc/os-release of each image's base (what `cat /etc/os-release` shows).
_ALPINE = ('NAME="Alpine Linux"\nID=alpine\nVERSION_ID=3.21.3\nPRETTY_NAME="Alpine Linux v3.21"\n'
           'HOME_URL="https://alpinelinux.org/"\nBUG_REPORT_URL="https://gitlab.alpinelinux.org/'
           'alpine/aports/-/issues"\n')
_DEBIAN = ('PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\n'
           'VERSION_ID="12"\nVERSION="12 (bookworm)"\nVERSION_CODENAME=bookworm\nID=debian\n'
           'HOME_URL="https://www.debian.org/"\nSUPPORT_URL="https://www.debian.org/support"\n'
           'BUG_REPORT_URL="https://bugs.debian.org/"\n')
OS_RELEASE = {"docker.io/library/alpine": _ALPINE, "docker.io/curlimages/curl": _ALPINE,
              "docker.io/library/nginx": _DEBIAN, "docker.io/library/redis": _DEBIAN,
              "docker.io/library/postgres": _DEBIAN, "docker.io/library/python": _DEBIAN}


# Directories an image has where a learner puts or fetches files (`kubectl cp` checks them with
# `test -d` and extracts into them), beyond /, /tmp, /root, /proc and /dev.
IMAGE_DIRS = {"docker.io/library/nginx": ["/usr/share/nginx/html", "/etc/nginx/conf.d"],
              "docker.io/library/redis": ["/data"],
              "docker.io/library/postgres": ["/var/lib/postgresql/data"]}


def image_dirs(image: str) -> list[str]:
    return IMAGE_DIRS.get(repository(normalize_image(image)), [])


def os_release(image: str) -> str:
    """busybox and pause have no /etc/os-release; other images are Debian-based by default."""
    repo = repository(normalize_image(image))
    if repo in ("docker.io/library/busybox", "registry.k8s.io/pause"):
        return ""
    return OS_RELEASE.get(repo, _DEBIAN)


def image_is_known(image: str) -> bool:
    """Is the image one of the table's (whose programs are known)?"""
    return repository(normalize_image(image)) in IMAGE_DEFAULTS


def image_defaults(image: str) -> tuple[list[str], list[str]]:
    """The image's (ENTRYPOINT, CMD); kubelab's default app for images not in the table."""
    return IMAGE_DEFAULTS.get(repository(normalize_image(image)), ([], [DEFAULT_APP]))


def command_line(image: str, container: dict[str, Any]) -> list[str]:
    """The argv the container runs (before $(VAR) expansion)."""
    entrypoint, cmd = image_defaults(image)
    command = [str(w) for w in container.get("command") or ()]
    args = [str(w) for w in container.get("args") or ()]
    if command:
        return [*command, *args]
    return [*entrypoint, *(args or cmd)]
