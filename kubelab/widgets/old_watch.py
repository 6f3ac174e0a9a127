"""What compaction does to a client: a watch from an old resourceVersion, then the relist.

A client that watches from a resourceVersion the API server still has gets every change since
then, in order. After compaction that history is gone: the watch answers with one ERROR event,
410 Gone (`too old resource version: <rv> (<oldest>)`), and the client has no choice but to
list again and watch from the list's resourceVersion, as client-go's reflector does
(k8s.io/client-go/tools/cache/reflector.go: a 410 on watch means relist). ApiServerPanel and
WatchPanel each have a button for it.
"""

from __future__ import annotations

from typing import Any

from kubelab.api.request import WatchEvent

__all__ = ["watch_from"]


def _name(event: WatchEvent) -> str:
    return str(((event.get("object") or {}).get("metadata") or {}).get("name", "?"))


def watch_from(cluster: Any, resource: str, namespace: str, resource_version: str) -> str:
    """Watch `resource` from `resource_version` as a client would, relisting on 410 Gone.

    Returns one line saying what happened. The watches end before this returns, and only the
    clock's zero-delay callbacks (the deliveries) run: no other time passes."""
    client = cluster.client
    heard: list[WatchEvent] = []
    handle = client.watch(resource, heard.append, namespace, resource_version=resource_version)
    cluster.run(0)  # the watch's first delivery is a clock callback away
    handle.stop()
    errors = [e for e in heard if e.get("type") == "ERROR"]
    if not errors:
        changes = ", ".join(f"{e['type']} {_name(e)}" for e in heard[:6]) + (" ..." if len(heard) > 6 else "")
        return (f"the history is still there, {len(heard)} event(s) replayed"
                + (f" ({changes})" if heard else "") + "; no relist needed")
    status = errors[0].get("object") or {}
    listed = client.list(resource, namespace)
    fresh = str(listed["metadata"]["resourceVersion"])
    again: list[WatchEvent] = []
    handle = client.watch(resource, again.append, namespace, resource_version=fresh)
    cluster.run(0)
    handle.stop()
    still = "open" if not any(e.get("type") == "ERROR" for e in again) else "refused again"
    return (f"ERROR event, {status.get('code')} {status.get('reason')}: {status.get('message')}; "
            f"relist: {len(listed['items'])} {resource} at resourceVersion {fresh}; "
            f"watch from {fresh}: {still}")
