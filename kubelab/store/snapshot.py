"""Snapshot files: the store's state in one file that refuses to load when damaged.

Layout (version 1):
    b"kubelab-store-snapshot v1 <payload length>\\n"   header line
    payload                                            JSON, see below
    sha256(header + payload)                           32 bytes
Like `etcdctl snapshot save`, which appends a sha256 to the database file and checks it on
restore (etcdutl/snapshot/v3_snapshot.go), and writes to "<path>.part" before renaming so a
crash never leaves a half-written snapshot under the real name.

The payload holds the revision, the compaction point and every stored version of every key
(etcd's bolt database likewise holds all revisions since the last compaction), so the restored
store answers reads at any non-compacted revision and replays watches from there. Values are
base64 because JSON has no bytes.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kubelab.store.errors import SnapshotError
from kubelab.store.kv import DELETE, PUT, Event, KeyValue

__all__ = ["events_since", "read_snapshot", "write_snapshot"]

_MAGIC = b"kubelab-store-snapshot "
_VERSION = b"v1"
_SHA = hashlib.sha256().digest_size


def write_snapshot(path: str | os.PathLike[str], revision: int, compact_revision: int,
                   kvs: Iterable[KeyValue]) -> int:
    """Write the snapshot file; returns its size in bytes."""
    payload = json.dumps({
        "revision": revision,
        "compact_revision": compact_revision,
        "kvs": [[kv.key, base64.b64encode(kv.value).decode(), kv.create_revision,
                 kv.mod_revision, kv.version, kv.lease] for kv in kvs],
    }, separators=(",", ":")).encode()
    body = _MAGIC + _VERSION + b" %d\n" % len(payload) + payload
    data = body + hashlib.sha256(body).digest()
    part = Path(f"{os.fspath(path)}.part")
    part.write_bytes(data)
    part.replace(path)
    return len(data)


def read_snapshot(path: str | os.PathLike[str]) -> tuple[int, int, list[KeyValue]]:
    """Read and check a snapshot: (revision, compact_revision, versions in key order)."""
    name = os.fspath(path)
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise SnapshotError(f"cannot read snapshot file {name}: {err.strerror}") from err
    newline = data.find(b"\n", 0, 100)
    if newline < 0 and len(data) < 100 and (_MAGIC.startswith(data) or data.startswith(_MAGIC)):
        raise SnapshotError(f"snapshot file {name} is truncated: {len(data)} bytes, "
                            "not even a whole header")
    if not data.startswith(_MAGIC):
        raise SnapshotError(f"{name} is not a kubelab store snapshot (bad magic)")
    fields = data[len(_MAGIC):newline].split() if newline > 0 else []
    if len(fields) != 2 or not fields[1].isdigit():
        raise SnapshotError(f"snapshot file {name} is corrupted: bad header")
    if fields[0] != _VERSION:
        raise SnapshotError(f"snapshot file {name} has unsupported format "
                            f"{fields[0].decode(errors='replace')} (this kubelab reads v1)")
    body_len = newline + 1 + int(fields[1])
    if len(data) < body_len + _SHA:
        raise SnapshotError(f"snapshot file {name} is truncated: expected {body_len + _SHA} "
                            f"bytes, got {len(data)}")
    if len(data) > body_len + _SHA:
        raise SnapshotError(f"snapshot file {name} is corrupted: "
                            f"{len(data) - body_len - _SHA} unexpected trailing bytes")
    want, got = data[body_len:], hashlib.sha256(data[:body_len]).digest()
    if want != got:
        raise SnapshotError(f"snapshot file {name} is corrupted: checksum mismatch "
                            f"(expected sha256 {want.hex()}, got {got.hex()})")
    try:
        return _decode(json.loads(data[newline + 1:body_len]))
    except (ValueError, KeyError, TypeError) as err:
        raise SnapshotError(f"snapshot file {name} is corrupted: bad payload ({err})") from err


def _decode(doc: dict[str, Any]) -> tuple[int, int, list[KeyValue]]:
    kvs = []
    for key, value, create, mod, version, lease in doc["kvs"]:
        fields = (create, mod, version, lease)
        if not isinstance(key, str) or not all(type(n) is int for n in fields):
            raise TypeError(f"bad key-value record for {key!r}")
        kvs.append(KeyValue(key, base64.b64decode(value, validate=True), *fields))
    revision, compact = doc["revision"], doc["compact_revision"]
    if type(revision) is not int or type(compact) is not int or not 0 <= compact <= revision:
        raise ValueError(f"bad revisions {revision!r}, {compact!r}")
    return revision, compact, kvs


def events_since(kvs: list[KeyValue], revision: int) -> list[Event]:
    """Rebuild the event log from versions in key order: every change at or after revision.

    prev_kv is the key's previous version when the snapshot still has it. Events of one txn
    come out in key order (the op order inside a txn is not recorded).
    """
    events = []
    prev: KeyValue | None = None
    for kv in kvs:
        if prev is not None and (prev.key != kv.key or prev.create_revision == 0):
            prev = None
        if kv.mod_revision >= revision:
            events.append(Event(DELETE if kv.create_revision == 0 else PUT, kv, prev))
        prev = kv
    events.sort(key=lambda e: e.kv.mod_revision)
    return events
