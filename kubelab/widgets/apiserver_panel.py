"""ApiServerPanel: send requests as different users, grant and revoke a role, compact the
store and watch from before the compaction, slow the disk, and read the audit log say which
stage answered (notebook 02).

The panel starts from a state it states: `user` has no RoleBinding in the namespace (the panel
deletes the ones an earlier cell made), so "list pods" is refused until "grant". It remembers
the resourceVersion it started at: "watch from it" replays the changes since then while the
store still has them, and after "compact the store" answers 410 and relists
(kubelab/widgets/old_watch.py). Every control calls a plain method, and each lands in the
panel's action log.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ipywidgets as W

from kubelab.widgets.action_log import ActionLog, html_table
from kubelab.widgets.old_watch import watch_from

__all__ = ["ApiServerPanel"]


class ApiServerPanel:
    def __init__(self, cluster: Any, user: str = "bob", namespace: str = "default") -> None:
        self.cluster, self.user, self.namespace = cluster, user, namespace
        self.as_user = cluster.client_for(user)
        self._pods = 0
        self.actions = ActionLog(cluster.clock)
        removed = self._unbind_user()
        self.start_version = str(cluster.client.list("pods", namespace)["metadata"]["resourceVersion"])
        actions: list[tuple[str, Callable[[], str]]] = [
            (f"{user}: list pods", self.list_as_user),
            ("admin: create a pod", self.create_pod),
            (f"grant {user} pod reader", self.grant),
            (f"revoke {user}'s role", self.revoke),
            ("compact the store", self.compact),
            (f"watch pods from rv {self.start_version}", self.watch_from_start),
        ]
        self.buttons: dict[str, W.Button] = {}
        for label, action in actions:
            button = W.Button(description=label, layout=W.Layout(width="auto"))
            button.on_click(lambda _b, label=label, action=action: self._do(label, action))
            self.buttons[label] = button
        self.latency = W.FloatSlider(value=float(cluster.store.latency), min=0, max=2, step=0.1,
                                     description="disk latency (s)", continuous_update=False,
                                     style={"description_width": "initial"})
        self.latency.observe(lambda ch: self._do(f"disk latency {ch['new']:g}s",
                                                 lambda: self.set_latency(ch["new"])), names="value")
        self.status = W.HTML()
        self.widget = W.VBox([W.HBox(list(self.buttons.values()), layout=W.Layout(flex_flow="row wrap")),
                              self.latency, self.actions.widget, self.status])
        self.actions.starting_state(
            f"{user} has no RoleBinding in {namespace}"
            + (f" (the panel deleted {', '.join(removed)}, made earlier)" if removed else "")
            + f", so listing pods is refused until grant; the store is at revision "
            f"{cluster.store.revision}, compacted below {cluster.store.compact_revision}")
        self.refresh()

    def _unbind_user(self) -> list[str]:
        """Delete the RoleBindings that name the user in the namespace: the panel's start."""
        removed = []
        for rb in self.cluster.client.list("rolebindings", self.namespace)["items"]:
            if any(s.get("kind") == "User" and s.get("name") == self.user for s in rb.get("subjects") or ()):
                self.cluster.client.delete("rolebindings", rb["metadata"]["name"], self.namespace)
                removed.append(f"rolebinding {rb['metadata']['name']}")
        return removed

    @property
    def last(self) -> str:
        """The result of the latest action, as the action log shows it."""
        return self.actions.last

    def _do(self, label: str, action: Callable[[], str]) -> None:
        self.actions.run(label, action)
        self.refresh()

    def list_as_user(self) -> str:
        items = self.as_user.list("pods", self.namespace)["items"]
        return f"{self.user} sees {len(items)} pod(s)"

    def create_pod(self) -> str:
        self._pods += 1
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": f"panel-{self._pods}", "namespace": self.namespace},
               "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}
        created = self.cluster.client.create(pod)
        latency = self.cluster.apiserver.audit[-1].latency
        return (f"created {created['metadata']['name']} at resourceVersion "
                f"{created['metadata']['resourceVersion']} (the store made it wait {latency:g}s)")

    def grant(self) -> str:
        role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                "metadata": {"name": "pod-reader", "namespace": self.namespace},
                "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}]}
        binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                   "metadata": {"name": f"{self.user}-reads-pods", "namespace": self.namespace},
                   "subjects": [{"kind": "User", "name": self.user,
                                 "apiGroup": "rbac.authorization.k8s.io"}],
                   "roleRef": {"kind": "Role", "name": "pod-reader",
                               "apiGroup": "rbac.authorization.k8s.io"}}
        lines = self.cluster.apply([role, binding])
        return "; ".join(lines)

    def revoke(self) -> str:
        self.cluster.client.delete("rolebindings", f"{self.user}-reads-pods", self.namespace)
        return (f'rolebinding.rbac.authorization.k8s.io "{self.user}-reads-pods" deleted'
                f" from {self.namespace} namespace")

    def compact(self) -> str:
        return (f"compacted at revision {self.cluster.faults.compact()}: a watch from an older "
                "resourceVersion now gets 410")

    def watch_from_start(self) -> str:
        """Watch pods from the resourceVersion the panel started at (see old_watch)."""
        return watch_from(self.cluster, "pods", self.namespace, self.start_version)

    def set_latency(self, seconds: float) -> str:
        self.cluster.faults.slow_store(seconds)
        return f"every store write now waits {seconds:g}s for the disk"

    def refresh(self) -> None:
        rows = [[f"{r.time:.1f}", r.user, r.verb, r.object, str(r.code), r.stage or "-", r.message[:90]]
                for r in self.cluster.apiserver.audit[-8:]]
        self.status.value = (
            f"<b>t={self.cluster.clock.now:.1f}s</b> · store revision {self.cluster.store.revision}"
            f" · compacted below {self.cluster.store.compact_revision}<br>"
            f"<small>the audit log, newest last</small>"
            + html_table(["t", "user", "verb", "object", "code", "rejected at", "message"], rows))

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """Shown as its widget when it is the last value of a notebook cell."""
        return self.widget._repr_mimebundle_(**kwargs)
