"""Metadata helpers: keys, uids and timestamps taken from the cluster's seed and clock.

Objects are plain JSON-compatible dicts with Kubernetes' field names. Nothing here reads the wall
clock or the global random generator: uids come from the cluster's random.Random, timestamps
from virtual seconds since the epoch (epoch(): EPOCH, unless `kubelab serve` set it).
"""

from __future__ import annotations

import copy
import functools
import random
import re
from datetime import UTC, datetime, timedelta
from typing import Any

__all__ = [
    "EPOCH",
    "Object",
    "deep_copy",
    "epoch",
    "get_controller_of",
    "get_controller_of_no_copy",
    "micro_time",
    "namespace_key",
    "new_uid",
    "object_ref",
    "parse_time",
    "random_suffix",
    "rfc3339",
    "set_epoch",
    "split_key",
]

Object = dict[str, Any]

# Virtual time 0.0 is this instant. Timestamps in objects are epoch() + clock.now.
EPOCH = datetime(2025, 1, 1, tzinfo=UTC)
_epoch = EPOCH


def epoch() -> datetime:
    """The instant virtual time 0.0 stands for: EPOCH (2025-01-01), the same in every run, so
    traces and timestamps repeat; `kubelab serve` moves it to the second it starts
    (set_epoch), so that a real client, which computes ages from its own clock (`kubectl
    events`, `describe`), reads seconds and not years."""
    return _epoch


def set_epoch(when: datetime) -> None:
    """Make virtual time 0.0 stand for `when` (an aware datetime, cut to the second), for every
    timestamp written or read from now on. Only an edge that meets the wall clock calls it
    (kubelab/serve), once, before it builds its cluster."""
    global _epoch
    if when.tzinfo is None:
        raise ValueError("set_epoch needs an aware datetime (tzinfo=UTC)")
    _epoch = when.astimezone(UTC).replace(microsecond=0)
    _rfc3339.cache_clear()
_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z", re.ASCII)

# utilrand.String's alphabet: no vowels and no digits that look like letters, so generated
# names never spell words (k8s.io/apimachinery/pkg/util/rand/rand.go).
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"


def namespace_key(obj: Object) -> str:
    """MetaNamespaceKeyFunc: `namespace/name`, or `name` for cluster-scoped objects."""
    meta = obj.get("metadata") or {}
    ns, name = meta.get("namespace") or "", meta.get("name") or ""
    return f"{ns}/{name}" if ns else str(name)


def split_key(key: str) -> tuple[str, str]:
    """SplitMetaNamespaceKey: `ns/name` -> (ns, name); `name` -> ("", name)."""
    parts = key.split("/")
    if len(parts) == 1:
        return "", parts[0]
    if len(parts) == 2:
        return parts[0], parts[1]
    raise ValueError(f'unexpected key format: "{key}"')


def new_uid(rand: random.Random) -> str:
    """A version-4 UUID drawn from the cluster's seeded generator (what uuid.UUID(int=...,
    version=4) gives, without its cost: this runs on every create)."""
    value = rand.getrandbits(128)
    value = (value & ~(0xF000 << 64) & ~(0xC000 << 48)) | (4 << 76) | (0x8000 << 48)
    h = value.to_bytes(16).hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def random_suffix(rand: random.Random, n: int = 5) -> str:
    """The suffix generateName and ReplicaSets give pod names: `web-7d4f8-x2k9q`."""
    return "".join(rand.choice(_ALPHANUMS) for _ in range(n))


def rfc3339(seconds: float) -> str:
    """metav1.Time: whole seconds, e.g. `2025-01-01T00:00:30Z`."""
    return _rfc3339(int(seconds))


@functools.lru_cache(maxsize=1024)
def _rfc3339(seconds: int) -> str:
    # Every write stamps a time, and virtual time has few distinct seconds: format each once.
    t = _epoch + timedelta(seconds=seconds)  # (an f-string: strftime is several times slower)
    return f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}Z"


def micro_time(seconds: float) -> str:
    """metav1.MicroTime (leases, events): `2025-01-01T00:00:30.250000Z`."""
    # The whole seconds come from rfc3339's cache; only the microseconds are new each time.
    delta = timedelta(seconds=seconds)  # rounds to the microsecond, as the datetime would
    return f"{_rfc3339(delta.days * 86400 + delta.seconds)[:-1]}.{delta.microseconds:06d}Z"


def parse_time(text: str) -> float:
    """Virtual seconds for a timestamp written by rfc3339 or micro_time."""
    # The pattern says which texts are timestamps; fromisoformat, which is ten times faster
    # than strptime, reads them (the node lifecycle controller reads every lease every 5 s).
    try:
        if not _TIMESTAMP.fullmatch(text):
            raise ValueError(text)
        when = datetime.fromisoformat(text[:-1]).replace(tzinfo=UTC)  # February 30th raises
    except (TypeError, ValueError):
        raise ValueError(f'parsing time "{text}" as RFC 3339 failed') from None
    return (when - _epoch).total_seconds()


def deep_copy(obj: Object) -> Object:
    """DeepCopy: objects from an informer cache are shared and read-only; copy before changing."""
    return _copy_json(obj)  # type: ignore[no-any-return]


_ATOMS = (str, int, float, bool, type(None))


def _copy_json(value: Any) -> Any:
    """A JSON tree copied node by node: a third of copy.deepcopy's time, which pays for a memo
    of shared nodes and cycles that JSON cannot have. Anything else goes to copy.deepcopy."""
    kind = type(value)
    if kind is dict:
        return {k: _copy_json(v) for k, v in value.items()}
    if kind is list:
        return [_copy_json(v) for v in value]
    if kind in _ATOMS:
        return value
    return copy.deepcopy(value)


def get_controller_of(obj: Object) -> dict[str, Any] | None:
    """metav1.GetControllerOf: the ownerReference with controller: true, if any (a copy)."""
    ref = get_controller_of_no_copy(obj)
    return dict(ref) if ref is not None else None


def get_controller_of_no_copy(obj: Object) -> dict[str, Any] | None:
    """metav1.GetControllerOfNoCopy: the same reference itself, read-only. The hot paths (a
    ReplicaSet claims every pod it has on every sync) take this one."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller"):
            return ref  # type: ignore[no-any-return]
    return None


def object_ref(obj: Object) -> dict[str, Any]:
    """A core/v1 ObjectReference (events use it as involvedObject)."""
    meta = obj.get("metadata") or {}
    ref = {
        "kind": obj.get("kind", ""),
        "apiVersion": obj.get("apiVersion", ""),
        "name": meta.get("name", ""),
        "uid": meta.get("uid", ""),
        "resourceVersion": meta.get("resourceVersion", ""),
    }
    if meta.get("namespace"):
        ref["namespace"] = meta["namespace"]
    return ref
