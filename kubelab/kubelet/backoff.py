"""Backoff: per-key exponential back-off, as client-go's util/flowcontrol/backoff.go.

The kubelet keeps two of these: one for image pulls (key `<pod uid>_<image>`) and one for
restarting crashed containers (key `<pod>_<namespace>_<uid>_<container>`). Both start at 10 s,
double on every failure and stop growing at 300 s (pkg/kubelet/kubelet.go: backOffPeriod and
MaxContainerBackOff).

Two details make the familiar timelines:
- the window is measured from the last failure (`last_update`), and an entry that has been
  quiet for twice the maximum (10 minutes) has expired: the next failure starts again at 10 s.
  That is why a container that ran for ten minutes before crashing restarts after 10 s, not 5 min;
- upstream can add jitter; the kubelet uses none, and neither do we.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubelab.sim.clock import Clock

__all__ = ["Backoff"]

# Virtual times are floats: a timer set for `finished + window` may see `now - finished` a hair
# below `window`. Comparisons forgive that much, or a retry would find itself still too early.
EPSILON = 1e-6


@dataclass
class _Entry:
    backoff: float      # the current window, seconds
    last_update: float  # virtual time of the last Next()


class Backoff:
    def __init__(self, clock: Clock, initial: float = 10.0, maximum: float = 300.0) -> None:
        if initial <= 0 or maximum < initial:
            raise ValueError(f"backoff needs 0 < initial <= maximum, got {initial} and {maximum}")
        self.clock = clock
        self.initial = initial
        self.maximum = maximum
        self._entries: dict[str, _Entry] = {}

    def get(self, key: str) -> float:
        """The current window for key (0 when there is none)."""
        entry = self._entries.get(key)
        return entry.backoff if entry else 0.0

    def next(self, key: str, event_time: float) -> None:
        """A failure at event_time: start at `initial`, or double up to `maximum`."""
        entry = self._entries.get(key)
        if entry is None or self._has_expired(event_time, entry.last_update):
            entry = self._entries[key] = _Entry(self.initial, 0.0)
        else:
            entry.backoff = min(entry.backoff * 2, self.maximum)
        entry.last_update = self.clock.now

    def is_in_back_off_since(self, key: str, event_time: float) -> bool:
        """IsInBackOffSince: is `now - event_time` still inside the window? (crash loops:
        event_time is when the container last finished)."""
        entry = self._entries.get(key)
        if entry is None or self._has_expired(event_time, entry.last_update):
            return False
        return self.clock.now - event_time < entry.backoff - EPSILON

    def is_in_back_off_since_update(self, key: str, event_time: float) -> bool:
        """IsInBackOffSinceUpdate: is event_time inside the window opened by the last failure?
        (image pulls: event_time is now)."""
        entry = self._entries.get(key)
        if entry is None or self._has_expired(event_time, entry.last_update):
            return False
        return event_time - entry.last_update < entry.backoff - EPSILON

    def expiry(self, key: str) -> float | None:
        """When the window opened by the last failure closes (None without an entry)."""
        entry = self._entries.get(key)
        return entry.last_update + entry.backoff if entry else None

    def reset(self, key: str) -> None:
        self._entries.pop(key, None)

    def gc(self) -> None:
        """Forget entries quiet for longer than twice the maximum."""
        now = self.clock.now
        for key in [k for k, e in self._entries.items() if self._has_expired(now, e.last_update)]:
            del self._entries[key]

    def _has_expired(self, event_time: float, last_update: float) -> bool:
        return event_time - last_update > self.maximum * 2

    def __len__(self) -> int:
        return len(self._entries)
