"""ControllerRevisions: a controller's history of templates (kubernetes/kubernetes
pkg/controller/history/controller_history.go).

A revision holds one version of its parent's template as `data` and a `revision` number that
grows with each new template. It is named `<parent>-<hash>`, the hash being FNV-1 (32 bit) of
its data, then of the collision count, each digit of the sum mapped onto utilrand's alphabet
(HashControllerRevision, SafeEncodeString). The data is hashed as canonical JSON where upstream
hashes the raw bytes Go's encoder wrote, so the hashes are kubelab's own (as for the
pod-template-hash, docs/ARCHITECTURE.md).

The StatefulSet controller uses this package as upstream's does: ListControllerRevisions,
CreateControllerRevision (trying the next collision count on a name taken by other data),
UpdateControllerRevision (a new revision number for old data), DeleteControllerRevision and
AdoptControllerRevision. The DaemonSet controller keeps its own copy of the same steps
(daemon/update.py).
"""

from __future__ import annotations

import json

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.labels import Selector
from kubelab.api.meta import deep_copy, get_controller_of_no_copy
from kubelab.client.client import Client
from kubelab.client.indexer import Indexer
from kubelab.controllers.controller_utils import new_controller_ref, seconds

__all__ = ["CONTROLLER_REVISION_HASH_LABEL", "History", "controller_revision_name",
           "equal_revision", "find_equal_revisions", "hash_controller_revision",
           "new_controller_revision", "sort_controller_revisions"]

CONTROLLER_REVISION_HASH_LABEL = "controller.kubernetes.io/hash"
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"  # utilrand's alphabet


def canonical(data: Object) -> bytes:
    """The bytes a revision's hash is taken over: its data as canonical JSON."""
    return json.dumps(data, sort_keys=True, separators=(",", ":")).encode()


def _fnv32(data: bytes, h: int = 0x811C9DC5) -> int:
    """FNV-1 (multiply, then xor), as Go's fnv.New32."""
    for byte in data:
        h = ((h * 0x01000193) & 0xFFFFFFFF) ^ byte
    return h


def hash_controller_revision(revision: Object, probe: int | None) -> str:
    """HashControllerRevision."""
    h = _fnv32(canonical(revision.get("data") or {}))
    if probe is not None:
        h = _fnv32(str(probe).encode(), h)
    return "".join(_ALPHANUMS[ord(c) % len(_ALPHANUMS)] for c in str(h))


def controller_revision_name(prefix: str, hash_: str) -> str:
    """ControllerRevisionName: the parent's name cut to 223 characters, a dash, the hash."""
    return f"{prefix[:223]}-{hash_}"


def new_controller_revision(parent: Object, template_labels: dict[str, str], data: Object,
                            revision: int, collision_count: int | None) -> Object:
    """NewControllerRevision: owned by parent, labelled with its template's labels and the hash."""
    meta = parent["metadata"]
    cr: Object = {"apiVersion": "apps/v1", "kind": "ControllerRevision",
                  "metadata": {"namespace": meta.get("namespace", "default"),
                               "labels": dict(template_labels),
                               "ownerReferences": [new_controller_ref(parent)]},
                  "data": data, "revision": revision}
    hash_ = hash_controller_revision(cr, collision_count)
    cr["metadata"]["name"] = controller_revision_name(meta["name"], hash_)
    cr["metadata"]["labels"][CONTROLLER_REVISION_HASH_LABEL] = hash_
    return cr


def sort_controller_revisions(revisions: list[Object]) -> list[Object]:
    """SortControllerRevisions: by revision, then creation time, then name."""
    return sorted(revisions, key=lambda r: (
        r.get("revision", 0), seconds(r["metadata"].get("creationTimestamp") or "1970-01-01T00:00:00Z"),
        r["metadata"]["name"]))


def equal_revision(lhs: Object | None, rhs: Object | None) -> bool:
    """EqualRevision: the same data (the hash labels, when both parse as numbers, first;
    kubelab's encoded hashes never do, as upstream's)."""
    if lhs is None or rhs is None:
        return lhs is rhs
    return bool(lhs.get("data") == rhs.get("data"))


def find_equal_revisions(revisions: list[Object], needle: Object) -> list[Object]:
    return [r for r in revisions if equal_revision(r, needle)]


class History:
    """realHistory: the revisions through a client, read from the revisions informer."""

    def __init__(self, client: Client, indexer: Indexer) -> None:
        self.client, self.indexer = client, indexer

    def list_controller_revisions(self, parent: Object, selector: Selector) -> list[Object]:
        """The revisions of parent's namespace that its selector matches and that it controls
        or nobody does (orphans, to be adopted)."""
        namespace, uid = parent["metadata"].get("namespace"), parent["metadata"]["uid"]
        owned = []
        for history in self.indexer.list():
            if history["metadata"].get("namespace") != namespace or \
                    not selector.matches(history["metadata"].get("labels") or {}):
                continue
            ref = get_controller_of_no_copy(history)
            if ref is None or ref.get("uid") == uid:
                owned.append(history)
        return owned

    def create_controller_revision(self, parent: Object, revision: Object,
                                   collision_count: list[int]) -> Object:
        """CreateControllerRevision: on a name taken by other data, count the collision and try
        the next name (collision_count is a one-item list, Go's *int32)."""
        clone = deep_copy(revision)
        while True:
            hash_ = hash_controller_revision(revision, collision_count[0])
            clone["metadata"]["name"] = controller_revision_name(parent["metadata"]["name"], hash_)
            namespace = parent["metadata"].get("namespace", "default")
            try:
                return self.client.create(clone, namespace)
            except ApiError as err:
                if err.code != 409 or err.reason != "AlreadyExists":
                    raise
            exists = self.client.get("controllerrevisions", clone["metadata"]["name"], namespace)
            if exists.get("data") == clone.get("data"):
                return exists
            collision_count[0] += 1

    def update_controller_revision(self, revision: Object, new_revision: int) -> Object:
        """UpdateControllerRevision: the same data under a new revision number."""
        clone = deep_copy(revision)
        if clone.get("revision") == new_revision:
            return clone
        clone["revision"] = new_revision
        return self.client.update(clone)

    def delete_controller_revision(self, revision: Object) -> None:
        meta = revision["metadata"]
        try:
            self.client.delete("controllerrevisions", meta["name"], meta.get("namespace", "default"))
        except ApiError as err:
            if err.code != 404:
                raise

    def adopt_controller_revision(self, parent: Object, revision: Object) -> Object:
        """AdoptControllerRevision: make parent the revision's controller (a patch that checks
        the revision's uid)."""
        meta = revision["metadata"]
        refs = [*(meta.get("ownerReferences") or []), new_controller_ref(parent)]
        return self.client.patch("controllerrevisions", meta["name"],
                                 {"metadata": {"ownerReferences": refs, "uid": meta["uid"]}},
                                 meta.get("namespace", "default"))
