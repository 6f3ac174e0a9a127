"""The death matrix: what stops when one part of the control plane dies, measured, not recalled.

    matrix = DeathMatrix.run(seed=0)      # one experiment per row, each on a fresh cluster
    matrix                                # a table in Jupyter; matrix.timeline() draws them all

Each row is one experiment on a fresh high-availability cluster with a three-replica Deployment
`web`: break one part, then for an observation window keep trying, once a virtual second, the
things a user needs, and note when each one first works again:

- **running pods**: the `web` containers that ran before the fault still run at the end of the
  window. Read from the nodes' container runtimes (the data plane), never through the API;
- **new pods**: a bare pod `probe-1` is created (the create is retried until the API accepts
  it) and its container starts on some node. A pod bound to a node whose kubelet is dead never
  starts, so, as a user would, another pod (`probe-2`, ...) is created every PATIENCE seconds
  until one starts: the column asks whether the cluster starts new pods, not whether one pod
  happened to be bound to the broken node;
- **scaling and self-healing**: `web` is scaled from 3 to 4 (retried likewise) and four `web`
  containers run on powered nodes, so a pod lost with a node must have been replaced too;
- **kubectl**: `kubectl get pods` and a write (`kubectl annotate`) both succeed.

Then the part is repaired and the experiment measures how long, in virtual seconds, until all
four work. Nothing in a row is typed by hand: the table is what the cluster did.

Beside its own columns each row shows the kube-system view, as `kubectl get pods -n kube-system`
prints it (NAME READY STATUS RESTARTS), of the killed part's pods: the static pod of a
control-plane component (kube-scheduler-control-plane, ...; kubelab/cluster/control_plane.py
ties each one's container to its component), or the DaemonSet pods (kube-proxy, kindnet) of a
node whose kubelet or whole self died. It is read twice: at the end of the window, while the part
is broken, and at the recovery. When kubectl itself fails (no API server, no etcd quorum) the
cell says that nothing can be listed and shows what `crictl ps` on the part's node would still
show: the names of the containers its runtime runs.

Rows are data (`Row`): a name, how to break the part and how to repair it. The cluster they run
on comes from `build` (by default `ha_cluster`), so the same matrix can be run on a cluster
without replicas, to see what high availability buys.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kubelab.api.errors import ApiError
from kubelab.viz import svg
from kubelab.viz.observe import quiet

__all__ = ["BASELINE", "COLUMNS", "HA_ROWS", "SINGLE_ROWS", "DeathMatrix", "Outcome", "Row",
           "experiment", "ha_cluster", "kube_system_view", "single_cluster"]

WEB = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "nginx:1.27"}]
"""

# A node's rows are watched long enough for its pods to be evicted and replaced: 50 s until
# the node is NotReady, then 300 s of tolerated NoExecute taint (notebook 06, section 9).
NODE_WINDOW = 420.0

# How long the new-pods probe waits for its pod before it creates another one.
PATIENCE = 10.0

# The columns, in the order the table prints them: key -> heading.
COLUMNS = {"running": "running pods keep running", "new_pods": "new pods start",
           "scaling": "scaling and self-healing", "kubectl": "kubectl works"}


@dataclass(frozen=True)
class Row:
    """One part to kill. `breaks(c)` kills it and returns what it killed (its name, for the
    table); `repairs(c, killed)` brings it back."""

    part: str
    breaks: Callable[[Any], str]
    repairs: Callable[[Any, str], None]
    window: float = 60.0  # virtual seconds to watch the broken cluster before the repair


@dataclass
class Outcome:
    """What one experiment measured. For each column: the virtual seconds after the fault at
    which it first worked (None: not within the window); `running` is the count of the
    fault-time containers still running at the end, out of `before`."""

    part: str
    killed: str
    window: float
    before: int = 0
    still_running: int = 0
    worked_at: dict[str, float | None] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)   # the first error each probe met
    recovery: float | None = None                          # after the repair, until all work
    kube_system: str = ""        # the killed part's pods in kube-system, while it was broken
    kube_system_after: str = ""  # and at the recovery

    def cell(self, column: str, baseline: Outcome | None = None) -> str:
        """The table's words: yes (as fast as on the unbroken `baseline`, give or take a
        second), no (not within the window), or after how long."""
        if column == "running":
            if self.still_running == self.before:
                return "yes"
            return f"no ({self.before - self.still_running} of {self.before} died)"
        at = self.worked_at.get(column)
        if at is None:
            return "no"
        usual = (baseline.worked_at.get(column) if baseline else None) or 1.0
        return "yes" if at <= usual + 1.0 else f"after {at:.0f} s"


def _web_running(c: Any, name: str = "web") -> list[str]:
    """Ids of the running containers called `name` on powered nodes: the data plane's truth."""
    return [x.id for runtime in c.runtimes.values() if runtime.powered
            for x in runtime.running() if x.name == name]


class _Failed(Exception):
    """kubectl printed an error (its first line is the probe's error)."""


class _Probe:
    """One thing a user needs: an action retried until the API accepts it, then a condition
    waited for. Both are tried once a virtual second; the first success is remembered."""

    def __init__(self, act: Callable[[], None] | None, done: Callable[[], bool]) -> None:
        self.act, self.done = act, done
        self.acted = act is None
        self.at: float | None = None
        self.error = ""

    def poll(self, elapsed: float) -> None:
        if self.at is not None:
            return
        try:
            if not self.acted:
                assert self.act is not None
                self.act()
                self.acted = True
            if self.done():
                self.at = elapsed
        except (ApiError, _Failed) as err:
            self.error = self.error or str(err).splitlines()[0]


class _NewPods(_Probe):
    """Create a bare pod; if none of the pods made so far runs after PATIENCE seconds (it may be
    bound to a node whose kubelet is dead), create another: done when one of them runs."""

    def __init__(self, c: Any, prefix: str) -> None:
        self.made: list[str] = []
        self.since = 0.0
        self.c, self.prefix = c, prefix
        super().__init__(self._create, lambda: any(_web_running(c, n) for n in self.made))

    def _create(self) -> None:
        name = f"{self.prefix}-{len(self.made) + 1}"
        self.c.client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                              # its one container is named as the pod is
                              "spec": {"containers": [{"name": name, "image": "nginx:1.27"}]}})
        self.made.append(name)

    def poll(self, elapsed: float) -> None:
        if self.at is None and self.acted and elapsed - self.since >= PATIENCE:
            self.acted = False  # try another pod on this poll
        was = len(self.made)
        super().poll(elapsed)
        if len(self.made) != was:
            self.since = elapsed


def _probes(c: Any, replicas: int, pod: str) -> dict[str, _Probe]:
    def kubectl_works() -> bool:
        for command in ("get pods", "annotate deployment web kubelab.dev/probe=now --overwrite"):
            out = c.kubectl(command)
            if out.exit_code != 0:
                raise _Failed(str(out).strip())
        return True

    return {
        "running": _Probe(None, lambda: True),
        "new_pods": _NewPods(c, pod),
        "scaling": _Probe(lambda: c.client.patch("deployments", "web",
                                                 {"spec": {"replicas": replicas + 1}}),
                          lambda: len(_web_running(c)) >= replicas + 1),
        "kubectl": _Probe(None, kubectl_works),
    }


def _watch(c: Any, probes: dict[str, _Probe], seconds: float, *, whole: bool = True) -> None:
    """Let the cluster run, polling every probe once a virtual second, until all have worked;
    then on to the end of `seconds` if `whole`."""
    start = c.clock.now
    with quiet(c):
        while c.clock.now - start < seconds and any(p.at is None for p in probes.values()):
            c.run(1.0)
            for probe in probes.values():
                probe.poll(c.clock.now - start)
        if whole:
            c.run(max(0.0, seconds - (c.clock.now - start)))


def _part_pods(c: Any) -> dict[str, tuple[str, list[str]]]:
    """Where each part's pods are, read while the cluster is healthy: component (as c.faults
    names it: scheduler-1, etcd-2, ...) or node -> (its node, the names of its pods in
    kube-system). A component's pod is the static pod on its node running its image; a node's
    are its DaemonSet pods."""
    with quiet(c):
        pods = c.get("pods", namespace="kube-system")
    placed = dict(getattr(c, "_processes", {}))  # component -> (node, image), the anatomy's
    parts: dict[str, tuple[str, list[str]]] = {}
    for component, (node, image) in placed.items():
        if "/" in component:
            continue  # kube-proxy/<node>: listed with its node
        parts[component] = (node, sorted(
            p["metadata"]["name"] for p in pods if p["spec"].get("nodeName") == node
            and any(o["kind"] == "Node" for o in p["metadata"].get("ownerReferences", []))
            and any(x["image"] == image for x in p["spec"]["containers"])))
    for node in c.node_names:
        parts[node] = (node, sorted(
            p["metadata"]["name"] for p in pods if p["spec"].get("nodeName") == node
            and any(o["kind"] == "DaemonSet" for o in p["metadata"].get("ownerReferences", []))))
    return parts


def kube_system_view(c: Any, killed: str, parts: dict[str, tuple[str, list[str]]]) -> str:
    """The killed part's pods as `kubectl get pods -n kube-system` shows them, one
    `NAME READY STATUS RESTARTS` per pod, joined by "; ". `killed` is what a Row's breaks
    returned (a component, `kubelet/<node>`, a node, or several joined by commas). If kubectl
    fails: "nothing can be listed (its error)", and the running containers of the first part's
    node, as `crictl ps` there would list them."""
    names = killed.split(",")
    where = [parts[n.removeprefix("kubelet/")] for n in names if n.removeprefix("kubelet/") in parts]
    if not where:
        return "-"
    wanted = [pod for _, pods in where for pod in pods]
    with quiet(c):
        out = c.kubectl("get pods -n kube-system")
    text = str(out).strip()
    if out.exit_code != 0:
        node = where[0][0]
        running = sorted(x.name for x in c.runtimes[node].running())
        return (f"nothing can be listed ({text.splitlines()[0]}); "
                f"crictl ps on {node}: {', '.join(running) or 'nothing'}")
    lines = text.splitlines()
    end = lines[0].find("AGE")  # NAME READY STATUS RESTARTS, then AGE (none: No resources found)
    shown = {line.split()[0]: " ".join(line[:end].split()) for line in lines[1:]} if end > 0 else {}
    return "; ".join(shown.get(pod, f"{pod} (gone)") for pod in wanted)


def experiment(row: Row, build: Callable[[int], Any], *, seed: int = 0,
               recovery_limit: float = 600.0) -> Outcome:
    """Run one row on a fresh cluster: settle, break, watch for the row's window, repair, then
    time how long until a fresh pod starts, the scale holds and kubectl works (None: not within
    `recovery_limit`)."""
    c = build(seed)
    replicas = 3
    c.apply(WEB)
    c.run_until(lambda: len(_web_running(c)) >= replicas, timeout=300)
    c.run(20)  # leases renewed, every informer synced: a settled cluster
    before = set(_web_running(c))
    parts = _part_pods(c)
    killed = row.breaks(c)
    probes = _probes(c, replicas, "probe")
    _watch(c, probes, row.window)
    outcome = Outcome(row.part, killed, row.window, before=len(before),
                      still_running=len(before & set(_web_running(c))),
                      worked_at={name: probe.at for name, probe in probes.items()},
                      errors={name: probe.error for name, probe in probes.items() if probe.error},
                      kube_system=kube_system_view(c, killed, parts))
    row.repairs(c, killed)
    after = _probes(c, replicas, "probe-after")
    _watch(c, after, recovery_limit, whole=False)
    if all(probe.at is not None for probe in after.values()):
        outcome.recovery = max(probe.at or 0.0 for probe in after.values())
    # the kubelet restarts the part's container at its next back-off try (up to 5 min,
    # doubling from 10 s): wait, once a virtual second, until its pods are ready again
    start = c.clock.now
    view = kube_system_view(c, killed, parts)
    while c.clock.now - start < recovery_limit and not _all_ready(view):
        with quiet(c):
            c.run(1.0)
        view = kube_system_view(c, killed, parts)
    outcome.kube_system_after = view
    return outcome


def _all_ready(view: str) -> bool:
    """Every pod of a kube_system_view Running with all its containers ready (or none shown)."""
    pods = [pod.split() for pod in view.split("; ") if pod != "-"]
    return all(len(p) >= 3 and p[2] == "Running" and p[1].count("/") == 1
               and p[1].split("/")[0] == p[1].split("/")[1] for p in pods)


def _web_node(c: Any) -> str:
    """The node of the first `web` pod (by name): where a kubelet or a node dies."""
    with quiet(c):
        pods = sorted(c.get("pods", label_selector="app=web"), key=lambda p: p["metadata"]["name"])
    return str(pods[0]["spec"]["nodeName"])


def _crash(name: str, part: str = "") -> Row:
    def breaks(c: Any) -> str:
        c.faults.crash(name)
        return name
    return Row(part or name, breaks, lambda c, killed: c.faults.restart(killed))


def _kubelet() -> Row:
    def breaks(c: Any) -> str:
        name = f"kubelet/{_web_node(c)}"
        c.faults.crash(name)
        return name
    return Row("a kubelet", breaks, lambda c, killed: c.faults.restart(killed), NODE_WINDOW)


def _node() -> Row:
    def breaks(c: Any) -> str:
        node = _web_node(c)
        c.faults.kill_node(node)
        return node
    return Row("a whole node", breaks, lambda c, killed: c.faults.revive_node(killed), NODE_WINDOW)


def _etcd_leader() -> Row:
    def breaks(c: Any) -> str:
        return str(c.faults.crash_etcd_leader())
    return Row("etcd member (the leader)", breaks,
               lambda c, killed: c.faults.restart_etcd_member(killed))


def _etcd_quorum() -> Row:
    def breaks(c: Any) -> str:
        return ",".join(c.faults.lose_etcd_quorum())

    def repairs(c: Any, killed: str) -> None:
        for member in killed.split(","):
            c.faults.restart_etcd_member(member)
    return Row("etcd quorum", breaks, repairs)


def _all_apiservers() -> Row:
    def breaks(c: Any) -> str:
        names = [server.name for server in c.apiservers]
        for name in names:
            c.faults.crash(name)
        return ",".join(names)

    def repairs(c: Any, killed: str) -> None:
        for name in killed.split(","):
            c.faults.restart(name)
    return Row("all API servers", breaks, repairs)


def _leader(component: str, part: str) -> Row:
    def breaks(c: Any) -> str:
        return str(c.faults.crash_leader(component))
    return Row(part, breaks, lambda c, killed: c.faults.restart(killed))


def ha_cluster(seed: int) -> Any:
    """The seeds' high-availability layout: three API servers behind a load balancer, two
    schedulers and two controller managers electing leaders, a three-member etcd."""
    from kubelab.cluster import Cluster
    return Cluster(nodes=3, seed=seed, etcd_members=3,
                   replicas={"apiserver": 3, "scheduler": 2, "controller-manager": 2})


def single_cluster(seed: int) -> Any:
    """Today's default: one API server, one scheduler, one controller manager, one store."""
    from kubelab.cluster import Cluster
    return Cluster(nodes=3, seed=seed)


# Nothing broken: how long each probe takes on a healthy cluster, the yardstick for "yes".
BASELINE = Row("nothing (baseline)", lambda c: "-", lambda c, killed: None)

# The rows on a cluster without replicas: every control-plane part is a single point of failure.
SINGLE_ROWS: tuple[Row, ...] = (_crash("apiserver"), _crash("scheduler"),
                                _crash("controller-manager"), _kubelet(), _node())


# The rows, on ha_cluster.
HA_ROWS: tuple[Row, ...] = (
    _etcd_leader(), _etcd_quorum(), _crash("apiserver-1", "one API server"),
    _all_apiservers(), _leader("scheduler", "scheduler leader"),
    _leader("controller-manager", "controller-manager leader"), _kubelet(), _node())


class DeathMatrix:
    """The outcomes of one experiment per row; shows itself as a table in Jupyter."""

    def __init__(self, outcomes: Iterable[Outcome], baseline: Outcome | None = None,
                 title: str = "", build: Callable[[int], Any] = ha_cluster, seed: int = 0) -> None:
        self.outcomes = list(outcomes)
        self.baseline, self.title = baseline, title
        self.build, self.seed = build, seed

    @classmethod
    def run(cls, rows: Iterable[Row] | None = None, build: Callable[[int], Any] | None = None, *,
            seed: int = 0, title: str = "") -> DeathMatrix:
        """Run the baseline, then each row, each on a fresh cluster from `build(seed)`."""
        rows = HA_ROWS if rows is None else rows
        build = build or ha_cluster
        baseline = experiment(BASELINE, build, seed=seed)
        matrix = cls([], baseline, title, build, seed)
        return matrix.extend(rows)

    def extend(self, rows: Iterable[Row]) -> DeathMatrix:
        """Run more rows on the same kind of cluster and seed (a notebook runs a long matrix in
        several cells); returns the matrix, grown."""
        self.outcomes += [experiment(row, self.build, seed=self.seed) for row in rows]
        return self

    def rows(self) -> list[list[str]]:
        """The table as text cells: part, killed, how long it was watched broken, one cell per
        column, and how long the recovery took once the part was back."""
        out = []
        for o in self.outcomes:
            recovery = "not within the limit" if o.recovery is None else f"{o.recovery:.0f} s"
            out.append([o.part, o.killed, f"{o.window:.0f} s",
                        *(o.cell(col, self.baseline) for col in COLUMNS), recovery,
                        o.kube_system, o.kube_system_after])
        return out

    def headings(self) -> list[str]:
        return ["part", "killed", "watched for", *COLUMNS.values(), "recovery after repair",
                "kube-system, broken", "kube-system, recovered"]

    def __str__(self) -> str:
        table = [self.headings(), *self.rows()]
        widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
        return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
                         for r in table)

    def _repr_html_(self) -> str:
        def colour(cell: str) -> str:
            return ("#d5f5e3" if cell == "yes" else "#fadbd8" if cell.split(" (")[0] == "no"
                    else "#fcf3cf" if cell.startswith("after") else "#ffffff")
        head = "".join(f"<th>{html.escape(h)}</th>" for h in self.headings())
        body = "".join(
            "<tr>" + "".join(f'<td style="background:{colour(c)}">{html.escape(c)}</td>' for c in r)
            + "</tr>" for r in self.rows())
        caption = f"<caption>{html.escape(self.title)}</caption>" if self.title else ""
        return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"

    def timeline(self) -> str:
        """One lane per row: the fault at 0, when each column first worked, the repair at the
        window's end and the recovery after it, on one axis of virtual seconds (SVG text)."""
        left, width, lane = 170.0, 620.0, 34.0
        span = max((o.window + (o.recovery or 0.0)) for o in self.outcomes) or 1.0
        marks = {"new_pods": "#2471a3", "scaling": "#ca6f1e", "kubectl": "#7d3c98"}

        def x(t: float) -> float:
            return left + width * t / span

        body: list[str] = []
        for i, o in enumerate(self.outcomes):
            y = 30 + i * lane
            body.append(svg.text(8, y + 4, o.part, size=11))
            body.append(svg.rect(x(0), y - 6, x(o.window) - x(0), 12, fill="#fadbd8", stroke="#fadbd8"))
            if o.recovery is not None:
                body.append(svg.rect(x(o.window), y - 6, x(o.window + o.recovery) - x(o.window), 12,
                                     fill="#fcf3cf", stroke="#fcf3cf"))
            # each column's mark in a band of its own (top, middle, bottom of the lane), so marks
            # a second apart near the fault do not hide one another
            for band, (column, colour) in enumerate(marks.items()):
                at = o.worked_at.get(column)
                if at is not None:
                    top = y - 9 + band * 6
                    body.append(svg.line(x(at), top, x(at), top + 6, stroke=colour, width=2))
                    body.append(svg.line(x(at), top + 3, x(at) + 4, top + 3, stroke=colour, width=2))
        axis = 30 + len(self.outcomes) * lane
        body.append(svg.line(left, axis - 14, left + width, axis - 14, stroke="#888"))
        for t in range(0, int(span) + 1, 60):
            body.append(svg.text(x(t), axis, f"{t}s", size=9, anchor="middle", fill="#555"))
        legend = [("broken", "#fadbd8", "box"), ("repaired, recovering", "#fcf3cf", "box")]
        legend += [(f"{COLUMNS[column]} again", colour, "mark") for column, colour in marks.items()]
        for j, (label, colour, kind) in enumerate(legend):
            lx, ly = left + (j % 3) * 210, axis + 10 + (j // 3) * 16
            if kind == "box":
                body.append(svg.rect(lx, ly, 12, 10, fill=colour, stroke=colour))
            else:
                body.append(svg.line(lx + 6, ly - 2, lx + 6, ly + 12, stroke=colour, width=2))
            body.append(svg.text(lx + 16, ly + 9, label, size=10))
        return svg.document(left + width + 20, axis + 48, body, title=self.title or "death matrix")
