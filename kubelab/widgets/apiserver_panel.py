"""ApiServerPanel: send requests as different users, grant and revoke a role, compact the
store, slow its disk, and watch the audit log say which stage answered (notebook 02)."""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as W

from kubelab.api.errors import ApiError

__all__ = ["ApiServerPanel"]


class ApiServerPanel:
    def __init__(self, cluster: Any, user: str = "bob", namespace: str = "default") -> None:
        self.cluster, self.user, self.namespace = cluster, user, namespace
        self.as_user = cluster.client_for(user)
        self._pods = 0
        actions = [
            (f"{user}: list pods", self.list_as_user),
            ("admin: create a pod", self.create_pod),
            (f"grant {user} pod reader", self.grant),
            (f"revoke {user}'s role", self.revoke),
            ("compact the store", self.compact),
        ]
        self.buttons: dict[str, W.Button] = {}
        for label, action in actions:
            button = W.Button(description=label, layout=W.Layout(width="auto"))
            button.on_click(lambda _b, action=action: self._do(action))
            self.buttons[label] = button
        self.latency = W.FloatSlider(value=float(cluster.store.latency), min=0, max=2, step=0.1,
                                     description="disk latency (s)", continuous_update=False,
                                     style={"description_width": "initial"})
        self.latency.observe(lambda ch: self._do(lambda: self.set_latency(ch["new"])), names="value")
        self.status = W.HTML()
        self.widget = W.VBox([W.HBox(list(self.buttons.values())), self.latency, self.status])
        self.last = ""
        self.refresh()

    def _do(self, action: Any) -> None:
        try:
            self.last = str(action() or "")
        except ApiError as err:
            self.last = err.kubectl_message()
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
        return f"rolebinding {self.user}-reads-pods deleted"

    def compact(self) -> str:
        return f"compacted at revision {self.cluster.faults.compact()}"

    def set_latency(self, seconds: float) -> str:
        self.cluster.faults.slow_store(seconds)
        return f"every store write now waits {seconds:g}s for the disk"

    def refresh(self) -> None:
        rows = "".join(
            f"<tr><td>{r.time:.1f}</td><td>{html.escape(r.user)}</td><td>{r.verb}</td>"
            f"<td>{html.escape(r.object)}</td><td>{r.code}</td><td>{r.stage or '-'}</td>"
            f"<td>{html.escape(r.message[:90])}</td></tr>"
            for r in self.cluster.apiserver.audit[-8:])
        self.status.value = (
            f"<b>t={self.cluster.clock.now:.1f}s</b> · store revision {self.cluster.store.revision}"
            f" · compacted below {self.cluster.store.compact_revision}<br><i>{html.escape(self.last)}</i>"
            "<table><tr><th>t</th><th>user</th><th>verb</th><th>object</th><th>code</th>"
            f"<th>rejected at</th><th>message</th></tr>{rows}</table>")

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """Shown as its widget when it is the last value of a notebook cell."""
        return self.widget._repr_mimebundle_(**kwargs)
