"""The image manager: make sure a container's image is on the node, with back-off.

Follows pkg/kubelet/images/image_manager.go (EnsureImageExists, pullImage) and puller.go:
- imagePullPolicy decides: Never uses what is there, IfNotPresent pulls only when missing,
  Always resolves with the registry every time (so an expired credential breaks even cached
  images). Already there: event Pulled `Container image "nginx:1.27" already present on machine`.
- a pull that failed opens a back-off window per (pod uid, image): 10 s doubling to 300 s. Inside
  the window the kubelet does not even try: event BackOff `Back-off pulling image "x"` and the
  container waits with reason ImagePullBackOff; the first sync after the window pulls again. A
  pull that fails: events Failed `Failed to pull image "x": <containerd's error>` and
  `Error: ErrImagePull` (kuberuntime_container.go), reason ErrImagePull.
- pulls on a node go one at a time (serializeImagePulls: true by default), so the Pulled event
  tells both durations: `Successfully pulled image "x" in 1.2s (3.4s including waiting). Image
  size: 72099410 bytes.`
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubelab.client.events import NORMAL, WARNING
from kubelab.kubelet.backoff import Backoff
from kubelab.kubelet.runtime import ContainerRuntime, PullResult
from kubelab.sim.clock import Clock
from kubelab.sim.tasks import Future, Step
from kubelab.sim.trace import Trace

__all__ = ["ERR_IMAGE_NEVER_PULL", "ERR_IMAGE_PULL", "IMAGE_PULL_BACKOFF", "ImageManager",
           "PullOutcome", "go_duration"]

ERR_IMAGE_PULL = "ErrImagePull"
IMAGE_PULL_BACKOFF = "ImagePullBackOff"
ERR_IMAGE_NEVER_PULL = "ErrImageNeverPull"

Recorder = Callable[[dict[str, Any], str, str, str], None]  # (pod, type, reason, message)


@dataclass(frozen=True)
class PullOutcome:
    image_ref: str = ""
    reason: str = ""       # "" on success, else ErrImagePull / ImagePullBackOff / ...
    message: str = ""
    retry_at: float | None = None  # for ImagePullBackOff: when the window closes

    @property
    def ok(self) -> bool:
        return not self.reason


def go_duration(seconds: float) -> str:
    """Go's time.Duration.String for a duration truncated to milliseconds: 561ms, 1.2s, 5m0s."""
    ms = int(seconds * 1000 + 1e-6)  # Duration.Truncate(time.Millisecond)
    if ms == 0:
        return "0s"
    if ms < 1000:
        return f"{ms}ms"
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    secs = f"{rest // 1000}.{rest % 1000:03d}".rstrip("0").rstrip(".")
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    if minutes:
        return f"{minutes}m{secs}s"
    return f"{secs}s"


class ImageManager:
    def __init__(self, runtime: ContainerRuntime, clock: Clock, record: Recorder, *,
                 backoff: Backoff | None = None, serialize: bool = True, trace: Trace | None = None,
                 name: str = "kubelet") -> None:
        self.runtime, self.clock, self.record = runtime, clock, record
        self.trace, self.name = trace, name
        self.backoff = backoff or Backoff(clock, 10.0, 300.0)
        self.serialize = serialize
        self.pull_attempts = 0                       # pulls actually sent to the runtime
        self._queue: deque[tuple[str, Future[tuple[PullResult | None, str, float]]]] = deque()
        self._busy = False
        self._prev_error: dict[str, str] = {}
        self._failed_at: dict[str, float] = {}  # key -> when its last pull failed

    def ensure_image_exists(self, pod: dict[str, Any], container: dict[str, Any]) -> Step:
        """A task step: yields until the image is there (or not); returns a PullOutcome."""
        image = str(container.get("image") or "")
        policy = container.get("imagePullPolicy") or "IfNotPresent"
        present = self.runtime.image_status(image)
        if policy == "Never" or (policy == "IfNotPresent" and present is not None):
            if present is not None:
                self.record(pod, NORMAL, "Pulled", f'Container image "{image}" already present on machine')
                return PullOutcome(present.image_ref)
            message = f'Container image "{image}" is not present with pull policy of Never'
            self.record(pod, WARNING, ERR_IMAGE_NEVER_PULL, message)
            return PullOutcome(reason=ERR_IMAGE_NEVER_PULL, message=message)
        key = f"{pod['metadata'].get('uid', '')}_{image}"
        if self.backoff.is_in_back_off_since_update(key, self.clock.now):
            message = f'Back-off pulling image "{image}"'
            self.record(pod, NORMAL, "BackOff", message)
            if key in self._prev_error:  # newer kubelets say why the last pull failed
                message = f"{message}: {self._prev_error[key]}"
            return PullOutcome(reason=IMAGE_PULL_BACKOFF, message=message,
                               retry_at=self._failed_at.get(key, self.clock.now) + self.backoff.get(key))
        self._prev_error.pop(key, None)
        self.record(pod, NORMAL, "Pulling", f'Pulling image "{image}"')
        self._trace("pull", pod, image=image)
        started = self.clock.now
        result, error, pull_seconds = yield self._pull(image)
        if result is None:
            self.record(pod, WARNING, "Failed", f'Failed to pull image "{image}": {error}')
            self.backoff.next(key, self.clock.now)
            self._failed_at[key] = self.clock.now
            self._trace("pull-failed", pod, image=image, backoff=self.backoff.get(key))
            self._prev_error[key] = f"{ERR_IMAGE_PULL}: {error}"
            return PullOutcome(reason=ERR_IMAGE_PULL, message=error)
        self.record(pod, NORMAL, "Pulled",
                    f'Successfully pulled image "{image}" in {go_duration(pull_seconds)} '
                    f"({go_duration(self.clock.now - started)} including waiting). "
                    f"Image size: {result.size} bytes.")
        self._trace("pulled", pod, image=image)
        self.backoff.gc()
        return PullOutcome(result.image_ref)

    def _trace(self, verb: str, pod: dict[str, Any], **detail: Any) -> None:
        if self.trace is not None:
            meta = pod.get("metadata") or {}
            self.trace.record(self.name, verb, f"pods/{meta.get('namespace', 'default')}/{meta.get('name')}",
                              **detail)

    # ------------------------------------------------------------------ the serial puller

    def _pull(self, image: str) -> Future[tuple[PullResult | None, str, float]]:
        future: Future[tuple[PullResult | None, str, float]] = Future()
        self._queue.append((image, future))
        self._next()
        return future

    def _next(self) -> None:
        if (self._busy and self.serialize) or not self._queue:
            return
        image, future = self._queue.popleft()
        self._busy = True
        self.pull_attempts += 1
        started = self.clock.now

        def finished(f: Future[PullResult]) -> None:
            self._busy = False
            seconds = self.clock.now - started
            if f.error is not None:
                future.set_result((None, str(f.error), seconds))
            else:
                future.set_result((f.result, "", seconds))
            self._next()
        self.runtime.pull_image(image).add_done_callback(finished)
        if not self.serialize:
            self._next()
