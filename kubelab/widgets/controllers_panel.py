"""ControllersPanel: drive a Deployment and break its controllers (notebook 05).

Scale it, change its image (a rollout), roll it back, delete one of its pods, crash and
restart the controller manager in the middle of it all, and let virtual time pass. The panel
shows the ReplicaSets (revision, desired, current, ready, available), the object graph and
the controllers' latest events, and each controller's work: its workers, syncs, the keys queued,
its client's rate limit (qps/burst), how many requests waited for a token and for how long, and
the manager's latest client-side throttling message, in client-go's words. Every control calls
a plain method, so tests and learners can drive it without a browser; each action goes through
kubectl or kubelab.cluster.faults, as a person at a terminal would.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

import ipywidgets as W

from kubelab.viz import GraphvizMissing, mark_pods_ready, object_graph, render_svg, to_dot
from kubelab.widgets.action_log import ActionLog, html_table

__all__ = ["ControllersPanel"]

COMPONENT = "controller-manager"
REVISION = "deployment.kubernetes.io/revision"
CONTROLLERS = ("deployment-controller", "replicaset-controller")


class ControllersPanel:
    """cluster: a Cluster running the controller manager. hollow=True plays the kubelets'
    part after each step (mark_pods_ready), for clusters whose nodes are hollow."""

    def __init__(self, cluster: Any, deployment: str = "web", namespace: str = "default", *,
                 hollow: bool = False, step: float = 2.0, graph: bool = True) -> None:
        self.cluster, self.name, self.namespace = cluster, deployment, namespace
        self.hollow, self.step, self.show_graph = hollow, step, graph
        self.log: list[str] = []  # the kubectl command lines the panel ran, with their output
        self.actions = ActionLog(cluster.clock)
        d = cluster.get("deployments", deployment, namespace=namespace)
        self.replicas = W.BoundedIntText(value=int(d["spec"].get("replicas", 1)), min=0, max=50,
                                         description="replicas", layout=W.Layout(width="160px"))
        self.image = W.Text(value=d["spec"]["template"]["spec"]["containers"][0]["image"],
                            description="image", layout=W.Layout(width="260px"))
        controls: list[tuple[str, str, Callable[[], Any]]] = [
            ("scale", "arrows-v", lambda: self.scale(int(self.replicas.value))),
            ("update image", "refresh", lambda: self.set_image(str(self.image.value))),
            ("roll back", "undo", self.rollback),
            ("delete a pod", "trash", self.delete_pod),
            ("crash controller-manager", "bolt", self.crash),
            ("restart controller-manager", "play-circle", self.restart),
            (f"run {step:g} s", "play", lambda: self.run(self.step)),
        ]
        self.buttons: dict[str, W.Button] = {}
        for label, icon, action in controls:
            button = W.Button(description=label, icon=icon, layout=W.Layout(width="auto"))
            button.on_click(lambda _b, label=label, action=action: self._do(label, action))
            self.buttons[label] = button
        self.status, self.picture = W.HTML(), W.HTML()
        names = list(self.buttons)
        self.widget = W.VBox([
            W.HBox([self.replicas, self.buttons[names[0]], self.image, self.buttons[names[1]]]),
            W.HBox([self.buttons[n] for n in names[2:]], layout=W.Layout(flex_flow="row wrap")),
            self.actions.widget, self.status, self.picture])
        rows = self.replica_set_rows()
        self.actions.starting_state(
            f"deployment/{deployment} wants {d['spec'].get('replicas', 1)} replica(s) of "
            f"{self.image.value}; {len(rows)} ReplicaSet(s), {sum(r[4] for r in rows)} pod(s) ready; "
            f"controller-manager {'running' if COMPONENT in cluster.components else 'down'}")
        self.refresh()

    # Each control calls one of these.

    def _kubectl(self, command: str) -> str:
        out = str(self.cluster.kubectl(f"{command} -n {self.namespace}"))
        self.log.append(f"$ kubectl {command}\n{out}")
        return out

    def scale(self, replicas: int) -> str:
        return self._kubectl(f"scale deployment {self.name} --replicas={replicas}")

    def set_image(self, image: str) -> str:
        d = self.cluster.get("deployments", self.name, namespace=self.namespace)
        container = d["spec"]["template"]["spec"]["containers"][0]["name"]
        self.cluster.client.patch("deployments", self.name, {"spec": {"template": {"spec": {
            "containers": [{"name": container, "image": image}]}}}}, self.namespace,
            patch_type="strategic")
        self.log.append(f"$ kubectl set image deployment/{self.name} {container}={image}")
        return f"deployment.apps/{self.name} image updated"

    def rollback(self) -> str:
        return self._kubectl(f"rollout undo deployment/{self.name}")

    def delete_pod(self) -> str:
        pods = [p for p in self.cluster.get("pods", namespace=self.namespace)
                if not p["metadata"].get("deletionTimestamp")]
        if not pods:
            return "no pod to delete"
        return self._kubectl(f"delete pod {sorted(p['metadata']['name'] for p in pods)[0]}")

    def crash(self) -> str:
        if COMPONENT in self.cluster.components:
            self.cluster.faults.crash(COMPONENT)
        return "controller-manager crashed: its caches, queues and expectations are gone"

    def restart(self) -> str:
        if COMPONENT not in self.cluster.components:
            self.cluster.faults.restart(COMPONENT)
        return ("controller-manager restarted: it relists everything and acts only as virtual "
                f"time runs (run {self.step:g} s)")

    def run(self, seconds: float) -> str:
        """Let `seconds` pass, in steps of one second (the hollow kubelets report after each)."""
        remaining = seconds
        while remaining > 0:
            chunk = min(1.0, remaining)
            self.cluster.run(chunk)
            if self.hollow:
                mark_pods_ready(self.cluster, self.namespace)
            remaining -= chunk
        return f"ran {seconds:g} virtual second(s)"

    # ------------------------------------------------------------------ the view

    def _do(self, label: str, action: Callable[[], Any]) -> None:
        self.actions.run(label, action, lambda r: r if isinstance(r, str) else "done")
        self.refresh()

    def replica_set_rows(self) -> list[tuple[str, str, int, int, int, int]]:
        """(name, revision, desired, current, ready, available) of each ReplicaSet, oldest first."""
        rows = []
        rss = sorted(self.cluster.get("replicasets", namespace=self.namespace),
                     key=lambda r: (r["metadata"]["creationTimestamp"], r["metadata"]["name"]))
        for rs in rss:
            st = rs.get("status") or {}
            revision = (rs["metadata"].get("annotations") or {}).get(REVISION, "")
            rows.append((rs["metadata"]["name"], revision,
                         int(rs["spec"].get("replicas", 1)), int(st.get("replicas", 0)),
                         int(st.get("readyReplicas", 0)), int(st.get("availableReplicas", 0))))
        return rows

    def controller_rows(self) -> list[tuple[str, int, int, int, str, int, float]]:
        """(controller, workers, syncs, queued, qps/burst, throttled requests, seconds waited)
        for the Deployment and ReplicaSet controllers of the running manager."""
        manager = self.cluster.components.get(COMPONENT)
        rows: list[tuple[str, int, int, int, str, int, float]] = []
        for name in CONTROLLERS:
            controller = manager.controllers.get(name) if manager is not None else None
            loop = getattr(controller, "controller", None)
            if loop is None:
                continue
            limiter = loop.client.rate_limiter if loop.client is not None else None
            limit = f"{limiter.qps:g}/{limiter.burst}" if limiter is not None else "none"
            rows.append((name, loop.workers, loop.syncs, len(loop.queue), limit,
                         limiter.waits if limiter is not None else 0,
                         round(limiter.waited, 3) if limiter is not None else 0.0))
        return rows

    def throttling(self) -> str:
        """The controller manager's latest "Waited for ... due to client-side throttling"."""
        for record in reversed(list(self.cluster.trace)):
            if record.verb == "throttled" and record.component == COMPONENT:
                return f"t={record.time:.1f}s {record.detail.get('message', '')}"
        return ""

    def refresh(self) -> None:
        cm = "running" if COMPONENT in self.cluster.components else "<b style='color:#c0392b'>DOWN</b>"
        rows = [[f"<code>{html.escape(r[0])}</code>", *(str(v) for v in r[1:])]
                for r in self.replica_set_rows()]
        events = [e for e in self.cluster.events(self.namespace)
                  if e.get("source", {}).get("component") in CONTROLLERS]
        lines = "".join(f"<li>{html.escape(e['reason'])}: {html.escape(e['message'])}</li>"
                        for e in events[-6:])
        rollout = self.cluster.kubectl(f"rollout status deployment/{self.name} -n {self.namespace}")
        self.status.value = (
            f"<b>t={self.cluster.clock.now:.1f}s</b> · controller-manager {cm} · "
            f"<code>{html.escape(str(rollout))}</code>"
            + html_table(["ReplicaSet", "revision", "desired", "current", "ready", "available"], rows,
                         escape=False)
            + html_table(["controller", "workers", "syncs", "queued", "qps/burst", "throttled",
                          "waited (s)"], [[str(v) for v in r] for r in self.controller_rows()])
            + (f"<code>{html.escape(throttled)}</code>" if (throttled := self.throttling()) else "")
            + f"<ul>{lines}</ul>")
        if self.show_graph:
            graph = object_graph(self.cluster, namespace=self.namespace)
            try:
                self.picture.value = render_svg(graph, cluster_by="node")
            except GraphvizMissing as err:
                self.picture.value = f"<pre>{html.escape(str(err))}\n\n{html.escape(to_dot(graph))}</pre>"

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)  # type: ignore[no-untyped-call]
