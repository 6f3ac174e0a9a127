"""Watches on a real etcd: one reader thread per watch, events handed to the simulation's thread.

The gateway serves Watch as one streaming POST to /v3/watch: the body is a WatchCreateRequest,
the answer a chunked stream of `{"result": WatchResponse}` lines (api/etcdserverpb/rpc.proto).
A reader thread reads the stream and puts each response in the backend's inbox, a
queue.SimpleQueue; the simulation's thread drains the inbox from a clock timer
(kubelab/etcd/backend.py) and only there calls the watch's callback. So, as with the embedded
store, a callback never runs inside a writer's call, never on another thread, and an event
reaches the API server's watch cache after the write that made it has returned.

When the stream breaks (the member died), the reader reconnects to the next endpoint and resumes
from the revision after the last one it was sent, as clientv3's watcher does
(client/v3/watch.go: resuming substreams); if that revision has been compacted meanwhile, etcd
cancels the watch with compact_revision set, and the callback hears it as from the embedded store.
"""

from __future__ import annotations

import contextlib
import json
import queue
import threading
import time
from typing import TYPE_CHECKING, Any

from kubelab.etcd import wire
from kubelab.store.kv import WatchResponse
from kubelab.store.watch import WatchCallback

if TYPE_CHECKING:
    import http.client

    from kubelab.etcd.client import GatewayClient

__all__ = ["EtcdWatch", "Inbox"]

Inbox = queue.SimpleQueue[tuple["EtcdWatch", WatchResponse]]
_RETRY_SECONDS = (0.05, 0.1, 0.2, 0.5, 1.0)  # waits between reconnects, then 1 s each


class EtcdWatch:
    """One open watch (clientv3.WatchChan); `cancel()` stops it, no response arrives after."""

    def __init__(self, gateway: GatewayClient, inbox: Inbox, create: dict[str, Any],
                 callback: WatchCallback, start_revision: int, caught_up_to: int) -> None:
        self.callback = callback
        self.stopped = False             # cancel() was called: deliver nothing more
        self.canceled = False            # stopped, or canceled by etcd (compaction)
        self.next_rev = start_revision   # first revision not yet received (reader's view)
        self.delivered = caught_up_to    # newest header revision handed to the callback
        self._gateway = gateway
        self._inbox = inbox
        self._create = create
        self._lock = threading.Lock()    # guards _conn between the reader and cancel()
        self._conn: http.client.HTTPConnection | None = None
        self._created = threading.Event()
        self._thread = threading.Thread(target=self._read, name=f"etcd-watch {create['key']}",
                                         daemon=True)
        self._thread.start()

    def wait_created(self, timeout: float) -> bool:
        """Has etcd confirmed the watch (its `created` response)?"""
        return self._created.wait(timeout)

    def cancel(self) -> None:
        self.stopped = self.canceled = True
        with self._lock:
            conn, self._conn = self._conn, None
        if conn is not None and conn.sock is not None:
            with contextlib.suppress(OSError):
                conn.sock.shutdown(2)  # unblocks the reader's readline()

    def caught_up(self) -> bool:
        """Has the callback been handed everything up to the newest revision this client has
        seen? etcd's progress notifications (kubelab starts its members with
        --experimental-watch-progress-notify-interval) move a quiet watch's header forward."""
        return not self.canceled and self.delivered >= self._gateway.revision

    # -- the reader thread -----------------------------------------------------------------

    def _read(self) -> None:
        failures = 0
        gateway = self._gateway
        while not self.canceled:
            endpoint = gateway.endpoints[(gateway.current + failures) % len(gateway.endpoints)]
            try:
                self._stream(endpoint)
                failures = 0
            except (OSError, ValueError):
                pass
            if self.canceled:
                return
            time.sleep(_RETRY_SECONDS[min(failures, len(_RETRY_SECONDS) - 1)])
            failures += 1

    def _stream(self, endpoint: str) -> None:
        conn = self._gateway.connection(endpoint, None)
        with self._lock:
            if self.canceled:
                return
            self._conn = conn
        create = dict(self._create)
        if self.next_rev:
            create["start_revision"] = str(self.next_rev)
        try:
            conn.request("POST", "/v3/watch", json.dumps({"create_request": create}),
                         {"Content-Type": "application/json"})
            reply = conn.getresponse()
            while not self.canceled:
                line = reply.readline()
                if not line:
                    return  # the member closed the stream
                body = json.loads(line)
                if "result" not in body:
                    raise ValueError(f"watch stream error: {body}")
                if self._on_result(body["result"]):
                    return
        finally:
            conn.close()

    def _on_result(self, result: dict[str, Any]) -> bool:
        """Queue one WatchResponse; True when the watch is over (canceled by etcd)."""
        revision = wire.header_revision(result) or self._gateway.revision
        if result.get("created"):
            self._created.set()
        compact = int(result.get("compact_revision", 0))
        if result.get("canceled") or compact:
            self.canceled = True
            reason = str(result.get("cancel_reason") or
                         "etcdserver: mvcc: required revision has been compacted")
            self._inbox.put((self, WatchResponse((), revision, compact, True, reason)))
            return True
        events = tuple(wire.event(e) for e in result.get("events") or ())
        if events:
            self.next_rev = events[-1].kv.mod_revision + 1
            self._inbox.put((self, WatchResponse(events, revision)))
        elif not result.get("created"):
            # A progress notification: etcd sends one only to a watcher that has been sent
            # everything up to `revision` (mvcc/watchable_store.go progressIfSync).
            self.next_rev = max(self.next_rev, revision + 1)
            self._inbox.put((self, WatchResponse((), revision)))
        return False

    def deliver(self, response: WatchResponse) -> None:
        """On the simulation's thread: hand one response to the callback."""
        if response.canceled:
            self.callback(response)
            return
        # During a replay etcd's header is ahead of the batch; the events say how far we are.
        seen = response.events[-1].kv.mod_revision if response.events else \
            response.header_revision
        self.delivered = max(self.delivered, seen)
        if response.events:
            self.callback(response)
