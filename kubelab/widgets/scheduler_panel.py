"""SchedulerPanel: change the nodes and the scoring strategy, and watch placement change (notebook 04).

Buttons add and remove nodes, cordon and taint them (through kubectl, as an operator would),
create pods and let virtual time pass. The strategy switch restarts the scheduler with
NodeResourcesFit's LeastAllocated (spread) or MostAllocated (pack) scoring. The panel shows, per
node, its pods and what they request against what the node can give, the pods still Pending,
and the scheduler's explanation of its latest decision.

Every control calls a plain method (add_node, remove_node, cordon, uncordon, taint, untaint,
set_strategy, create_pods, run), so tests and learners can drive it without a browser.

Pods may be created with a priority (PriorityClasses "low", 100, and "high", 1000, created on
first use): on a full cluster a "high" pod preempts "low" ones, and the panel explains the
latest preemption: the candidate nodes, their victims, and the criterion that chose the node
(DefaultPreemption's pickOneNodeForPreemption).
"""

from __future__ import annotations

import contextlib
import functools
import html
from collections.abc import Callable
from typing import Any

import ipywidgets as W

from kubelab.api.errors import ApiError
from kubelab.api.quantity import parse_quantity
from kubelab.client.component import ComponentContext
from kubelab.scheduler import Scheduler, load_config
from kubelab.scheduler.types import pod_requests
from kubelab.widgets.action_log import ActionLog, html_table

__all__ = ["STRATEGIES", "SchedulerPanel", "strategy_config"]

STRATEGIES = {"LeastAllocated": "spread", "MostAllocated": "pack"}
PRIORITY_CLASSES = {"low": 100, "high": 1000}  # what the panel's "priority" choice creates


def strategy_config(strategy: str) -> str:
    """A KubeSchedulerConfiguration whose default profile scores with `strategy`."""
    if strategy not in STRATEGIES:
        raise ValueError(f'scoring strategy "{strategy}" is not supported; supported: '
                         f"{', '.join(STRATEGIES)}")
    return ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
            "profiles:\n- schedulerName: default-scheduler\n  pluginConfig:\n  - name: NodeResourcesFit\n"
            f"    args: {{scoringStrategy: {{type: {strategy}}}}}\n")


def _refreshes(method: Callable[..., str]) -> Callable[..., str]:
    """Log the action and its result, then redraw the panel, however it was called. An error
    is logged (in its own words) and raised again to a caller in code; a button's press stops
    there."""
    @functools.wraps(method)
    def wrapper(self: SchedulerPanel, *args: Any, **kwargs: Any) -> str:
        action = " ".join([method.__name__.replace("_", " "), *(str(a) for a in args if a is not None)])
        try:
            message = method(self, *args, **kwargs)
        except Exception as err:
            self.actions.record(action, _error_text(err), ok=False)
            self.refresh()
            raise
        self.actions.record(action, message)
        self.refresh()
        return message
    return wrapper


def _chosen(node: str | None) -> str:
    """With no node in the dropdown there is nothing to act on (not a node called "None")."""
    if not node:
        raise ValueError("no node chosen: add a node first")
    return node


def _error_text(err: Exception) -> str:
    return err.kubectl_message() if isinstance(err, ApiError) else f"error: {err}"


class SchedulerPanel:
    """cluster: a kubelab.Cluster running the "scheduler" component."""

    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster
        self.strategy = "LeastAllocated"
        self._pods = 0
        self.node = W.Dropdown(description="node", layout=W.Layout(width="200px"))
        self.taint_spec = W.Text(value="dedicated=gpu:NoSchedule", description="taint",
                                 layout=W.Layout(width="300px"))
        self.count = W.BoundedIntText(value=5, min=1, max=200, description="pods",
                                      layout=W.Layout(width="140px"))
        self.cpu = W.Text(value="500m", description="cpu", layout=W.Layout(width="150px"))
        self.memory = W.Text(value="512Mi", description="memory", layout=W.Layout(width="170px"))
        self.priority = W.Dropdown(options=[("no priority", ""), *((f"{k} ({v})", k) for k, v in
                                                                   PRIORITY_CLASSES.items())],
                                   description="priority", layout=W.Layout(width="210px"))
        # Buttons as wide as their labels: "LeastAllocated (spread)" is not cut.
        self.strategy_toggle = W.ToggleButtons(options=[(f"{s} ({v})", s) for s, v in STRATEGIES.items()],
                                               style={"button_width": "auto"})
        self.strategy_toggle.observe(self._on_toggle, names="value")
        buttons = [("add node", "plus", lambda: self.add_node()),
                   ("remove node", "minus", lambda: self.remove_node(self.node.value)),
                   ("cordon", "ban", lambda: self.cordon(self.node.value)),
                   ("uncordon", "check", lambda: self.uncordon(self.node.value)),
                   ("taint", "tint", lambda: self.taint(self.node.value, self.taint_spec.value)),
                   ("untaint", "eraser", lambda: self.untaint(self.node.value, self.taint_spec.value)),
                   ("create pods", "cubes", lambda: self.create_pods(self.count.value, self.cpu.value,
                                                                      self.memory.value,
                                                                      self.priority.value or None)),
                   ("run 1 s", "play", lambda: self.run(1)), ("run 10 s", "forward", lambda: self.run(10))]
        self.buttons: dict[str, W.Button] = {}
        for label, icon, action in buttons:
            button = W.Button(description=label, icon=icon, layout=W.Layout(width="auto"))
            button.on_click(lambda _b, action=action: self._do(action))
            self.buttons[label] = button
        b = list(self.buttons.values())
        self.status, self.explanation, self.preemption = W.HTML(), W.HTML(), W.HTML()
        self.actions = ActionLog(cluster.clock)
        self.widget = W.VBox([self.strategy_toggle, W.HBox([self.node, *b[:4]]),
                              W.HBox([self.taint_spec, *b[4:6]]),
                              # (the pod's fields fill a row: the buttons get their own, uncut)
                              W.HBox([self.count, self.cpu, self.memory, self.priority]), W.HBox(b[6:]),
                              self.actions.widget, self.status, self.explanation, self.preemption])
        self._explain_on()
        self.refresh()
        rows, pending = self.placement(), self.pending()
        scheduler = self.cluster.components.get("scheduler")
        self.actions.starting_state(
            f"{len(rows)} node(s) ({', '.join(rows) or 'none'}), "
            f"{sum(len(r['pods']) for r in rows.values())} pod(s) bound, {len(pending)} pending; "
            + (f"the scheduler scores with {self.strategy}" if isinstance(scheduler, Scheduler)
               else "no scheduler runs"))

    # --- what the controls do ------------------------------------------------------------------

    def _on_toggle(self, change: dict[str, Any]) -> None:
        if change["new"] != self.strategy:  # not when set_strategy itself moved the toggle
            self._do(lambda: self.set_strategy(change["new"]))

    def _do(self, action: Callable[[], object]) -> None:
        with contextlib.suppress(Exception):  # a button's press: the action log shows the error
            action()


    @_refreshes
    def add_node(self, name: str | None = None, cpu: str = "4", memory: str = "8Gi") -> str:
        """Register a hollow node (Ready, nothing really runs there), as the Cluster does."""
        existing = {n["metadata"]["name"] for n in self.cluster.get("nodes", namespace=None)}
        name = name or next(f"node-{i}" for i in range(1, len(existing) + 2) if f"node-{i}" not in existing)
        resources = {"cpu": cpu, "memory": memory, "pods": "110"}
        created = self.cluster.client.create({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                  "kubernetes.io/os": "linux"}},
            "spec": {}})
        ready = {"type": "Ready", "status": "True", "reason": "KubeletReady",
                 "message": "kubelet is posting ready status"}
        created["status"] = {"capacity": resources, "allocatable": dict(resources), "conditions": [ready]}
        self.cluster.client.update_status(created)
        return f"node/{name} created"

    @_refreshes
    def remove_node(self, name: str | None) -> str:
        name = _chosen(name)
        self.cluster.client.delete("nodes", name, "")
        return f'node "{name}" deleted (its pods stay bound to it: no node controller runs here)'

    @_refreshes
    def cordon(self, name: str | None) -> str:
        name = _chosen(name)
        return str(self.cluster.kubectl(f"cordon {name}"))

    @_refreshes
    def uncordon(self, name: str | None) -> str:
        name = _chosen(name)
        return str(self.cluster.kubectl(f"uncordon {name}"))

    @_refreshes
    def taint(self, name: str | None, spec: str) -> str:
        name = _chosen(name)
        return str(self.cluster.kubectl(f"taint nodes {name} {spec}"))

    @_refreshes
    def untaint(self, name: str | None, spec: str) -> str:
        name = _chosen(name)
        key_effect = spec.split("=", 1)[0] + (":" + spec.rsplit(":", 1)[1] if ":" in spec else "")
        return str(self.cluster.kubectl(f"taint nodes {name} {key_effect}-"))

    @_refreshes
    def create_pods(self, n: int, cpu: str = "500m", memory: str = "512Mi",
                    priority: str | None = None) -> str:
        """priority: "low" or "high" (PRIORITY_CLASSES), created on first use. Such pods end
        at once when deleted (terminationGracePeriodSeconds 0): the panel's nodes are hollow,
        no kubelet would ever finish a graceful deletion."""
        names = []
        extra: dict[str, Any] = {}
        if priority is not None:
            if priority not in PRIORITY_CLASSES:
                raise ValueError(f'priority "{priority}" is not one of {", ".join(PRIORITY_CLASSES)}')
            self._ensure_priority_class(priority)
            extra = {"priorityClassName": priority, "terminationGracePeriodSeconds": 0}
        for _ in range(n):
            self._pods += 1
            names.append(f"demo-{self._pods}")
            self.cluster.client.create({
                "apiVersion": "v1", "kind": "Pod", "metadata": {"name": names[-1], "labels": {"app": "demo"}},
                "spec": {**extra, "containers": [{"name": "app", "image": "nginx", "resources": {
                    "requests": {"cpu": cpu, "memory": memory}}}]}})
        return f"created {names[0]} .. {names[-1]}" if len(names) > 1 else f"pod/{names[0]} created"

    def _ensure_priority_class(self, name: str) -> None:
        try:
            self.cluster.client.get("priorityclasses", name, "")
        except ApiError as err:
            if err.code != 404:
                raise
            self.cluster.client.create({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                        "metadata": {"name": name}, "value": PRIORITY_CLASSES[name]})

    @_refreshes
    def run(self, seconds: float) -> str:
        self.cluster.run(seconds)
        return f"ran {seconds:g} virtual second(s)"

    @_refreshes
    def set_strategy(self, strategy: str) -> str:
        """Crash the scheduler and start a fresh one whose profile scores with `strategy`.

        (The panel starts it itself; a later cluster.faults.restart("scheduler") brings back
        the Cluster's own configuration.)"""
        config = load_config(strategy_config(strategy))
        c = self.cluster
        if "scheduler" in c.components:
            c.faults.crash("scheduler")
        ctx = ComponentContext("scheduler", c.client_for("system:kube-scheduler"), c.clock, c.rand, c.trace)
        scheduler = Scheduler(ctx, config=config, explain=True)
        scheduler.start()
        c.components["scheduler"] = scheduler
        c.trace.record("scheduler-panel", "restart", "scheduler", strategy=strategy)
        self.strategy = strategy
        if self.strategy_toggle.value != strategy:
            self.strategy_toggle.value = strategy
        return (f"scheduler restarted with {strategy} ({STRATEGIES[strategy]}): it places pods "
                "only as virtual time runs (run 1 s)")

    def _explain_on(self) -> None:
        scheduler = self.cluster.components.get("scheduler")
        if isinstance(scheduler, Scheduler):
            scheduler.explain_mode = True

    # --- what the panel shows ------------------------------------------------------------------

    def placement(self) -> dict[str, dict[str, Any]]:
        """Per node: its pods, requested and allocatable cpu (millicores) and memory (bytes)."""
        pods = self.cluster.get("pods", namespace=None)
        rows: dict[str, dict[str, Any]] = {}
        for node in self.cluster.get("nodes", namespace=None):
            status, spec = node.get("status") or {}, node.get("spec") or {}
            alloc = status.get("allocatable") or status.get("capacity") or {}
            rows[node["metadata"]["name"]] = {
                "pods": [], "cpu": 0, "memory": 0,
                "allocatable_cpu": parse_quantity(str(alloc.get("cpu", "0"))).milli_value(),
                "allocatable_memory": parse_quantity(str(alloc.get("memory", "0"))).value(),
                "cordoned": bool(spec.get("unschedulable")),
                "taints": [t["key"] + ":" + t["effect"] for t in spec.get("taints") or ()]}
        for pod in pods:
            row = rows.get((pod.get("spec") or {}).get("nodeName") or "")
            if row is not None and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
                requests = pod_requests(pod)
                row["pods"].append(pod["metadata"]["name"])
                row["cpu"] += requests.get("cpu", 0)
                row["memory"] += requests.get("memory", 0)
        return rows

    def pending(self) -> list[str]:
        return [p["metadata"]["name"] for p in self.cluster.get("pods", namespace=None)
                if not (p.get("spec") or {}).get("nodeName")]

    def refresh(self) -> None:
        self._explain_on()
        rows = self.placement()
        chosen = self.node.value
        self.node.options = list(rows)
        # Keep the chosen node; else the first one, never an empty choice while nodes exist.
        self.node.value = chosen if chosen in rows else next(iter(rows), None)
        table = [[f"<b>{html.escape(name)}</b>{' (cordoned)' if r['cordoned'] else ''}"
                  f"<br><small>{html.escape(', '.join(r['taints']))}</small>",
                  _bar(r["cpu"], r["allocatable_cpu"], "m"),
                  _bar(r["memory"] // 2**20, r["allocatable_memory"] // 2**20, "Mi"),
                  f"{len(r['pods'])}: {html.escape(_first(r['pods'], 12))}"] for name, r in rows.items()]
        pending = self.pending()
        self.status.value = (
            f"<b>t={self.cluster.clock.now:.1f}s</b> · strategy <b>{self.strategy}</b> · "
            f"pending: <b>{len(pending)}</b> {html.escape(_first(pending, 10))}"
            + html_table(["node", "cpu requested / allocatable", "memory requested / allocatable",
                          "pods"], table, escape=False))
        scheduler = self.cluster.components.get("scheduler")
        text = "the scheduler is not running" if not isinstance(scheduler, Scheduler) else (
            scheduler.explain().table() if scheduler.explanations else "no decision yet")
        self.explanation.value = ("<b>latest decision</b><pre style='white-space:pre;overflow-x:auto;"
                                  f"font-size:11px'>{html.escape(text)}</pre>")
        self.preemption.value = ""
        if isinstance(scheduler, Scheduler) and scheduler.preemptions:
            latest = scheduler.explain_preemption()
            assert latest.preemption is not None
            self.preemption.value = (f"<b>latest preemption</b> (for pod {html.escape(latest.pod)})<pre "
                                     "style='white-space:pre;overflow-x:auto;font-size:11px'>"
                                     f"{html.escape(latest.preemption.table())}</pre>")

    def preemption_text(self) -> str:
        """The latest preemption's explanation as text ("" if none yet)."""
        scheduler = self.cluster.components.get("scheduler")
        if not isinstance(scheduler, Scheduler) or not scheduler.preemptions:
            return ""
        latest = scheduler.explain_preemption().preemption
        return latest.table() if latest is not None else ""

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)  # type: ignore[no-untyped-call]


def _bar(used: int, total: int, unit: str) -> str:
    share = min(used / total, 1.0) if total else 0.0
    colour = "#c0392b" if share > 0.9 else "#2e86c1"
    return (f"<div style='width:160px;background:#eee'><div style='width:{160 * share:.0f}px;"
            f"background:{colour};color:white;font-size:10px'>&nbsp;</div></div>{used}{unit} / {total}{unit}")


def _first(names: list[str], n: int) -> str:
    return " ".join(names[:n]) + (" ..." if len(names) > n else "")
