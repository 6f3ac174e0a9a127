"""Exercises for notebook 01 · The store: etcd, the cluster's single source of truth.

Write the code where it says NotImplementedError, then check it, from a terminal in the
repository or from a notebook cell:

    kubelab grade 1.1                                        # or: kubelab grade 1  (both)
    from kubelab.grading import grade; grade("1.1")

The grader runs your code inside a simulated cluster: the ConfigMaps you update are also read
and written through the API server, other clients write at the worst moment, and history gets
compacted while your watcher is away. Each failed check says what it expected, what it got, a
hint, and the command that replays exactly that scenario.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubelab.store import Compare, PutRequest, RangeRequest, Store, WatchResponse


def cas_update(store: Store, key: str, mutate: Callable[[bytes], bytes]) -> int:
    """Exercise 1.1: Compare-and-swap update with retry on conflict.

    Notebook 01_store, section 2 "Two writers, one key: optimistic concurrency". Easy, 10 points.

    Update `key` to mutate(current value) even when other writers change it at the same time,
    as the API server's GuaranteedUpdate does with etcd:

    - Read the key once: store.range(key). If it does not exist, raise LookupError naming the
      key (an update never creates).
    - Write with one txn that only succeeds if nobody wrote the key since you read it:
      compares [Compare.mod_revision(key, "=", <mod_revision you read>)], success branch
      [PutRequest(key, mutate(value))], failure branch [RangeRequest(key)].
    - If TxnResponse.succeeded is False another writer won the race. The failure branch's
      RangeResponse holds the current value: apply mutate to that and try again (one request
      per attempt, no second range). If it is empty, the key was deleted: raise LookupError.
    - Return the revision of your successful write (TxnResponse.revision); it becomes the
      object's metadata.resourceVersion.

    Never call store.put: an unconditional write erases whatever another writer just did.
    """
    ### BEGIN SOLUTION
    kvs = store.range(key).kvs
    while True:
        if not kvs:
            raise LookupError(f'key "{key}" not found')
        current = kvs[0]
        result = store.txn([Compare.mod_revision(key, "=", current.mod_revision)],
                           [PutRequest(key, mutate(current.value))], [RangeRequest(key)])
        if result.succeeded:
            return result.revision
        kvs = result.responses[0].kvs
    ### END SOLUTION


class PrefixMirror:
    """Exercise 1.2: Resume a watch from a revision, relist after compaction.

    Notebook 01_store, sections 3 "Watch" and 4 "Compaction". Medium, 10 points.

    Keep `items` (key -> value bytes) equal to the store's keys under `prefix`, the way an
    informer keeps its cache (notebook 03), here directly on etcd:

    - start(), the first time: list (store.range(prefix, prefix=True)), fill `items`, set
      `revision` to the RangeResponse's revision, then watch the prefix from revision + 1:
      store.watch(prefix, prefix=True, start_revision=revision + 1, callback=...).
    - For each WatchResponse: apply its events in order (PUT sets items[key] = value, DELETE
      removes the key), then set `revision` to its header_revision.
    - stop(): cancel the watch (the connection is lost); keep items and revision.
    - start() again: resume from revision + 1 *without* listing: etcd replays every change
      made while you were away.
    - A WatchResponse with canceled set and compact_revision != 0 means the history you asked
      for was compacted: list again, *replace* items (keys deleted meanwhile must go), take the
      list's revision and watch from revision + 1.
    """

    def __init__(self, store: Store, prefix: str) -> None:
        self.store = store
        self.prefix = prefix
        self.items: dict[str, bytes] = {}
        self.revision = 0         # the last revision this mirror has seen; 0: never listed
        self.watcher: Any = None  # what store.watch returned; cancel() it to stop

    def start(self) -> None:
        """List (the first time) or resume, then watch."""
        ### BEGIN SOLUTION
        if self.revision == 0:
            self._list()
        self._watch()
        ### END SOLUTION

    def stop(self) -> None:
        """Stop watching, keeping items and revision."""
        ### BEGIN SOLUTION
        if self.watcher is not None:
            self.watcher.cancel()
            self.watcher = None
        ### END SOLUTION

    def on_response(self, response: WatchResponse) -> None:
        """The watch callback: apply a batch of events, or relist if the watch was canceled."""
        ### BEGIN SOLUTION
        if response.canceled:
            self.watcher = None
            if response.compact_revision:
                self._list()
                self._watch()
            return
        for event in response.events:
            if event.type == "PUT":
                self.items[event.kv.key] = event.kv.value
            else:
                self.items.pop(event.kv.key, None)
        self.revision = response.header_revision
        ### END SOLUTION

    ### BEGIN SOLUTION
    def _list(self) -> None:
        listing = self.store.range(self.prefix, prefix=True)
        self.items = {kv.key: kv.value for kv in listing.kvs}
        self.revision = listing.revision

    def _watch(self) -> None:
        self.watcher = self.store.watch(self.prefix, prefix=True, start_revision=self.revision + 1,
                                        callback=self.on_response)
    ### END SOLUTION


### BEGIN HIDDEN TESTS
if __name__ == "__main__":  # an instructor's quick look: python solutions/ex01_store.py
    from kubelab.sim import Clock

    clock = Clock()
    etcd = Store(clock)
    etcd.put("/c/n", b"1")
    assert cas_update(etcd, "/c/n", lambda v: str(int(v) + 1).encode()) == etcd.revision
    mirror = PrefixMirror(etcd, "/c/")
    mirror.start()
    etcd.put("/c/m", b"x")
    clock.run(until=1)
    assert mirror.items == {"/c/n": b"2", "/c/m": b"x"}, mirror.items
    print("ok")
### END HIDDEN TESTS
