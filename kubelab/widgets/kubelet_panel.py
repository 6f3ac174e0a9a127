"""KubeletPanel: break nodes, the network and the registry by hand, and watch pods cope
(notebook 06). Also `retry_timeline_svg`, the small chart of an image pull's retries.

Buttons kill / revive / partition / heal the chosen node, break or fix the image registry
(for one image or all), make a container crash, and let virtual time pass. The panel shows each
node (Ready, taints, the age of its Lease, what is wrong with it), each pod (node, phase, what
its container is doing, restarts) and the last events. Every control calls a plain method, so
tests and learners can drive the panel without a browser.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as W

from kubelab.api.errors import ApiError
from kubelab.api.meta import parse_time
from kubelab.kubelet.registry import MODES

__all__ = ["KubeletPanel", "retry_timeline_svg"]


def retry_timeline_svg(points: list[tuple[float, float]], width: int = 640, height: int = 220,
                       title: str = "") -> str:
    """An SVG step chart: (virtual seconds, back-off window in seconds) per failed pull."""
    if not points:
        return "<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'></svg>"
    left, bottom, top = 48, 28, 22
    t_max = max(t for t, _ in points) or 1.0
    y_max = max(w for _, w in points) or 1.0

    def x(t: float) -> float:
        return left + (width - left - 10) * t / t_max

    def y(w: float) -> float:
        return height - bottom - (height - bottom - top) * w / y_max
    steps = " ".join(f"{x(t):.1f},{y(w):.1f}" for t, w in points)
    dots = "".join(f"<circle cx='{x(t):.1f}' cy='{y(w):.1f}' r='2' fill='#c0392b'/>" for t, w in points)
    ticks = "".join(f"<text x='{left - 6}' y='{y(v) + 4:.1f}' font-size='10' "
                    f"text-anchor='end'>{v:g}s</text>" for v in sorted({0.0, y_max / 2, y_max}))
    hours = "".join(f"<text x='{x(h * 3600):.1f}' y='{height - 10}' font-size='10' "
                    f"text-anchor='middle'>{h}h</text>" for h in range(0, int(t_max // 3600) + 1, 3))
    return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
            f"font-family='sans-serif'><text x='{left}' y='14' font-size='12'>{html.escape(title)}</text>"
            f"<line x1='{left}' y1='{height - bottom}' x2='{width - 10}' y2='{height - bottom}' "
            "stroke='#888'/>"
            f"<line x1='{left}' y1='{top}' x2='{left}' y2='{height - bottom}' stroke='#888'/>"
            f"<polyline points='{steps}' fill='none' stroke='#2c7fb8'/>{dots}{ticks}{hours}</svg>")


class KubeletPanel:
    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster
        self.node = W.Dropdown(options=list(cluster.node_names), description="node")
        self.image = W.Text(value="", placeholder="image or repository (empty: all)",
                            description="image")
        self.mode = W.Dropdown(options=[m for m in MODES if m != "ok"], value="unauthorized",
                               description="mode")
        self.pod = W.Dropdown(options=[], description="pod")
        self.status, self.log = W.HTML(), W.HTML()
        actions = [
            ("kill node", "danger", lambda: self.kill(self.node.value)),
            ("revive node", "success", lambda: self.revive(self.node.value)),
            ("partition", "warning", lambda: self.partition(self.node.value)),
            ("heal", "success", lambda: self.heal(self.node.value)),
            ("break registry", "danger", lambda: self.break_registry(self.image.value, self.mode.value)),
            ("fix registry", "success", lambda: self.fix_registry(self.image.value)),
            ("crash container", "warning", lambda: self.crash(self.pod.value)),
            ("run 10 s", "", lambda: self.run(10)),
            ("run 1 min", "", lambda: self.run(60)),
            ("run 5 min", "", lambda: self.run(300)),
        ]
        buttons = []
        for label, style, action in actions:
            button = W.Button(description=label, button_style=style)
            button.on_click(lambda _b, act=action: act())
            buttons.append(button)
        self.widget = W.VBox([W.HBox([self.node, *buttons[:4]]),
                              W.HBox([self.image, self.mode, *buttons[4:6]]),
                              W.HBox([self.pod, buttons[6]]), W.HBox(buttons[7:]), self.status, self.log])
        self.refresh()

    # Each control calls one of these.

    def kill(self, node: str) -> None:
        self._do(lambda: self.cluster.faults.kill_node(node), f"{node} is dead: no kubelet, no containers")

    def revive(self, node: str) -> None:
        self._do(lambda: self.cluster.faults.revive_node(node), f"{node} boots again")

    def partition(self, node: str) -> None:
        self._do(lambda: self.cluster.faults.partition(node), f"{node} is cut off the control plane")

    def heal(self, node: str) -> None:
        self._do(lambda: self.cluster.faults.heal(node), f"{node} can reach the API server again")

    def break_registry(self, image: str, mode: str) -> None:
        self._do(lambda: self.cluster.faults.break_registry(image or None, mode),
                 f"registry: {image or 'every image'} is now {mode}")

    def fix_registry(self, image: str = "") -> None:
        self._do(lambda: self.cluster.faults.fix_registry(image or None),
                 f"registry: {image or 'every image'} works again")

    def crash(self, pod: str | None) -> None:
        if not pod:
            self.refresh("choose a pod first")
            return
        self._do(lambda: self.cluster.faults.crash_container(pod), f"the container of {pod} crashed")

    def run(self, seconds: float) -> None:
        self.cluster.run(seconds)
        self.refresh(f"ran {seconds:g} virtual seconds")

    def _do(self, action: Any, message: str) -> None:
        try:
            action()
        except (ValueError, ApiError) as err:
            self.refresh(f"refused: {err}")
            return
        self.refresh(message)

    # ------------------------------------------------------------------ the view

    def rows(self) -> tuple[list[list[str]], list[list[str]]]:
        """(node rows, pod rows) as the panel shows them: plain data for tests."""
        c, now = self.cluster, self.cluster.clock.now
        try:
            nodes = {n["metadata"]["name"]: n for n in c.get("nodes", namespace=None)}
            leases = {x["metadata"]["name"]: x for x in c.get("leases", namespace="kube-node-lease")}
            pods = c.get("pods", namespace=None)
        except ApiError as err:
            return [[f"API server: {err.reason}"]], []
        node_rows = []
        for name in c.node_names:
            node = nodes.get(name) or {}
            ready = next((x["status"] for x in (node.get("status") or {}).get("conditions") or []
                          if x["type"] == "Ready"), "-")
            taints = ", ".join(f"{t['key'].split('/')[-1]}:{t['effect']}"
                               for t in (node.get("spec") or {}).get("taints") or [])
            renew = ((leases.get(name) or {}).get("spec") or {}).get("renewTime")
            age = f"{now - parse_time(renew):.0f}s" if renew else "-"
            trouble = [w for w, bad in (("killed", not c.runtimes[name].powered),
                                        ("partitioned", not c.faults.node_link(name).up),
                                        ("no kubelet", f"kubelet/{name}" not in c.components)) if bad]
            node_rows.append([name, ready, taints or "-", age, ", ".join(trouble) or "ok"])
        pod_rows = []
        for p in sorted(pods, key=lambda p: p["metadata"]["name"]):
            cs = ((p.get("status") or {}).get("containerStatuses") or [{}])[0]
            state = cs.get("state") or {}
            doing = next((f"{k}: {v.get('reason', '')}".rstrip(": ") for k, v in state.items()), "-")
            phase = p["status"].get("phase", "")
            if p["metadata"].get("deletionTimestamp"):
                phase += " (Terminating)"
            pod_rows.append([p["metadata"]["name"], p["spec"].get("nodeName") or "-", phase, doing,
                             str(cs.get("restartCount", 0))])
        return node_rows, pod_rows

    def refresh(self, message: str = "") -> None:
        node_rows, pod_rows = self.rows()
        names = [r[0] for r in pod_rows]
        self.pod.options = names
        if names and self.pod.value not in names:
            self.pod.value = names[0]
        self.status.value = (
            f"<b>t={self.cluster.clock.now:.0f}s</b> · broken registry: "
            f"{html.escape(str(self.cluster.registry.broken or 'nothing'))}"
            + _table(["node", "Ready", "taints", "lease age", "trouble"], node_rows)
            + _table(["pod", "node", "phase", "container", "restarts"], pod_rows))
        try:
            recent = self.cluster.events()[-8:]
        except ApiError:
            recent = []
        lines = "".join(f"<li>{html.escape(e['involvedObject']['name'])} <b>{html.escape(e['reason'])}</b>: "
                        f"{html.escape(e['message'][:140])}</li>" for e in recent)
        note = f"<i>{html.escape(message)}</i>" if message else ""
        self.log.value = f"{note}<ul>{lines}</ul>"

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)  # type: ignore[no-untyped-call]


def _table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"
