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
import math
from typing import Any

import ipywidgets as W

from kubelab.api.errors import ApiError
from kubelab.api.meta import parse_time
from kubelab.kubelet.registry import MODES
from kubelab.widgets.action_log import ActionLog, html_table

__all__ = ["KubeletPanel", "retry_timeline_svg"]


def retry_timeline_svg(points: list[tuple[float, float]], width: int = 640, height: int = 240,
                       title: str = "") -> str:
    """An SVG step chart of an image pull's back-off: (virtual seconds since the first failure,
    back-off window in seconds) per failed pull.

    Both axes are logarithmic, so the doubling (10 s, 20 s, 40 s ... up to the 300 s cap) reads
    as equal steps up, and the hours of retries at the cap as one flat run, not 180 dots on a
    line. The y ticks are the windows that occur; the x ticks are 10 s, 1 min, 10 min, 1 h..."""
    if not points:
        return "<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'></svg>"
    left, right, bottom, top = 52, 12, 30, 24
    t_max = max(t for t, _ in points)
    windows = sorted({w for _, w in points if w > 0}) or [1.0]
    lo, hi = math.log2(windows[0]), math.log2(windows[-1])
    span_x = math.log10(1 + max(t_max, 10.0))

    def x(t: float) -> float:
        return left + (width - left - right) * math.log10(1 + max(t, 0.0)) / span_x

    def y(w: float) -> float:
        share = (math.log2(max(w, windows[0])) - lo) / (hi - lo) if hi > lo else 1.0
        return height - bottom - (height - bottom - top) * share

    steps: list[str] = []
    for n, (t, w) in enumerate(points):  # hold each window until the next failure
        if n:
            steps.append(f"{x(t):.1f},{y(points[n - 1][1]):.1f}")
        steps.append(f"{x(t):.1f},{y(w):.1f}")
    dots = "".join(f"<circle cx='{x(t):.1f}' cy='{y(w):.1f}' r='2' fill='#c0392b'/>" for t, w in points)
    ticks = "".join(f"<text x='{left - 6}' y='{y(v) + 4:.1f}' font-size='10' text-anchor='end'>{v:g}s</text>"
                    f"<line x1='{left}' y1='{y(v):.1f}' x2='{width - right}' y2='{y(v):.1f}' "
                    "stroke='#eee'/>" for v in windows)
    marks = [(10, "10s"), (60, "1m"), (600, "10m"), (3600, "1h"), (6 * 3600, "6h"), (24 * 3600, "24h")]
    times = "".join(f"<text x='{x(t):.1f}' y='{height - 14}' font-size='10' text-anchor='middle'>{label}"
                    "</text>" for t, label in marks if t <= max(t_max, 10.0))
    return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
            f"font-family='sans-serif'><text x='{left}' y='14' font-size='12'>{html.escape(title)}</text>"
            f"{ticks}<line x1='{left}' y1='{height - bottom}' x2='{width - right}' y2='{height - bottom}' "
            "stroke='#888'/>"
            f"<line x1='{left}' y1='{top}' x2='{left}' y2='{height - bottom}' stroke='#888'/>"
            f"<polyline points='{' '.join(steps)}' fill='none' stroke='#2c7fb8'/>{dots}{times}"
            f"<text x='{width - right}' y='{height - 2}' font-size='9' text-anchor='end' fill='#555'>"
            "time since the first failure (log scale); back-off window (log scale, doubling)</text></svg>")


class KubeletPanel:
    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster
        self.node = W.Dropdown(options=list(cluster.node_names), description="node")
        self.image = W.Text(value="", placeholder="image or repository (empty: all)",
                            description="image")
        self.mode = W.Dropdown(options=[m for m in MODES if m != "ok"], value="unauthorized",
                               description="mode")
        self.pod = W.Dropdown(options=[], description="pod")
        self.status, self.events = W.HTML(), W.HTML()
        self.actions = ActionLog(cluster.clock)
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
        row = W.Layout(flex_flow="row wrap")
        self.widget = W.VBox([W.HBox([self.node, *buttons[:4]], layout=row),
                              W.HBox([self.image, self.mode, *buttons[4:6]], layout=row),
                              W.HBox([self.pod, buttons[6]], layout=row), W.HBox(buttons[7:], layout=row),
                              self.actions.widget, self.status, self.events])
        self.refresh()
        node_rows, pod_rows = self.rows()
        troubled = [r[0] for r in node_rows if len(r) > 4 and r[4] != "ok"]
        self.actions.starting_state(
            f"{len(node_rows)} node(s)" + (f" ({', '.join(troubled)} in trouble)" if troubled else ", all ok")
            + f", {len(pod_rows)} pod(s); the registry: "
            + (f"broken for {cluster.registry.broken}" if cluster.registry.broken else "every pull works"))

    # Each control calls one of these.

    def kill(self, node: str) -> None:
        self._do(lambda: self.cluster.faults.kill_node(node), f"{node} is dead: no kubelet, no containers",
                 f"kill node {node}")

    def revive(self, node: str) -> None:
        self._do(lambda: self.cluster.faults.revive_node(node), f"{node} boots again", f"revive node {node}")

    def partition(self, node: str) -> None:
        self._do(lambda: self.cluster.faults.partition(node), f"{node} is cut off the control plane",
                 f"partition {node}")

    def heal(self, node: str) -> None:
        self._do(lambda: self.cluster.faults.heal(node), f"{node} can reach the API server again",
                 f"heal {node}")

    def break_registry(self, image: str, mode: str) -> None:
        self._do(lambda: self.cluster.faults.break_registry(image or None, mode),
                 f"{image or 'every image'} is now {mode}", f"break registry ({mode})")

    def fix_registry(self, image: str = "") -> None:
        self._do(lambda: self.cluster.faults.fix_registry(image or None),
                 f"{image or 'every image'} pulls again", "fix registry")

    def crash(self, pod: str | None) -> None:
        if not pod:
            self.actions.record("crash container", "choose a pod first", ok=False)
            return
        self._do(lambda: self.cluster.faults.crash_container(pod),
                 f"the container of {pod} crashed: the kubelet restarts it after a back-off, as time runs",
                 f"crash container of {pod}")

    def run(self, seconds: float) -> None:
        self._do(lambda: self.cluster.run(seconds), f"ran {seconds:g} virtual seconds", f"run {seconds:g} s")

    def _do(self, action: Any, message: str, label: str = "") -> None:
        label = label or message.split(":")[0]
        self.actions.run(label, action, lambda _r: message)
        self.refresh()

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

    def refresh(self) -> None:
        node_rows, pod_rows = self.rows()
        names = [r[0] for r in pod_rows]
        self.pod.options = names
        if names and self.pod.value not in names:
            self.pod.value = names[0]
        self.status.value = (
            f"<b>t={self.cluster.clock.now:.0f}s</b> · broken registry: "
            f"{html.escape(str(self.cluster.registry.broken or 'nothing'))}"
            + html_table(["node", "Ready", "taints", "lease age", "trouble"], node_rows)
            + html_table(["pod", "node", "phase", "container", "restarts"], pod_rows))
        try:
            recent = self.cluster.events()[-8:]
        except ApiError:
            recent = []
        lines = "".join(f"<li>{html.escape(e['involvedObject']['name'])} <b>{html.escape(e['reason'])}</b>: "
                        f"{html.escape(e['message'][:140])}</li>" for e in recent)
        self.events.value = f"<small>the latest events</small><ul>{lines}</ul>" if lines else ""

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)  # type: ignore[no-untyped-call]

