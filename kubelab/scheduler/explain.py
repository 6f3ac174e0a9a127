"""Why the scheduler chose that node: the per-node, per-plugin record of one decision.

The view kube-scheduler-simulator gives (sigs.k8s.io/kube-scheduler-simulator, its "result"
annotations): for every node, each Filter plugin's verdict and reason, and each Score plugin's
raw score, normalized score and weighted score. Recording costs time, so it is off unless
asked for: schedule_one.schedule_pod(..., explain=True).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubelab.scheduler.interface import Status

__all__ = ["PREEMPTION_EXPLANATION_KEY", "Explanation", "FilterVerdict", "NodeExplanation", "PluginScore",
           "PreemptionCandidate", "PreemptionExplanation"]

# Where DefaultPreemption leaves its PreemptionExplanation in the CycleState.
PREEMPTION_EXPLANATION_KEY = "kubelab.io/preemption-explanation"


@dataclass(frozen=True)
class FilterVerdict:
    """One plugin's answer at PreFilter, Filter or PreScore. code is a Code name."""

    plugin: str
    code: str = "Success"
    reasons: tuple[str, ...] = ()

    @classmethod
    def of(cls, plugin: str, status: Status | None) -> FilterVerdict:
        if status is None:
            return cls(plugin)
        return cls(plugin, status.code.name, status.reasons)

    @property
    def passed(self) -> bool:
        return self.code == "Success"

    def __str__(self) -> str:
        if self.passed:
            return f"{self.plugin}: passed"
        return f"{self.plugin}: {', '.join(self.reasons) or self.code}"


@dataclass(frozen=True)
class PluginScore:
    plugin: str
    raw: int  # what Score returned
    normalized: int  # after NormalizeScore (equal to raw for plugins without one)
    weight: int

    @property
    def weighted(self) -> int:
        return self.normalized * self.weight


@dataclass
class NodeExplanation:
    node: str
    filters: list[FilterVerdict] = field(default_factory=list)  # in the order they ran
    scores: list[PluginScore] = field(default_factory=list)
    evaluated: bool = False  # False: the search stopped before this node, or PreFilter excluded it
    note: str = ""  # why a node was not evaluated or scored

    @property
    def feasible(self) -> bool:
        return self.evaluated and all(f.passed for f in self.filters)

    @property
    def total(self) -> int | None:
        return sum(s.weighted for s in self.scores) if self.scores else None

    def filter_summary(self) -> str:
        if not self.evaluated:
            return self.note or "not evaluated"
        failed = [f for f in self.filters if not f.passed]
        return str(failed[0]) if failed else "passed"


@dataclass(frozen=True)
class PreemptionCandidate:
    """A node where deleting `victims` ("namespace/name (priority N)") would make room."""

    node: str
    victims: tuple[str, ...]
    pdb_violations: int = 0


@dataclass
class PreemptionExplanation:
    """What DefaultPreemption did for an unschedulable pod: whether it could preempt, the
    candidate nodes and their victims, the chosen node and the criterion that chose it
    (pickOneNodeForPreemption's), or why no node is a candidate."""

    eligible: bool = True
    message: str = ""  # why not eligible, or the "0/N nodes are available: ..." of no candidate
    candidates: list[PreemptionCandidate] = field(default_factory=list)
    node_statuses: dict[str, str] = field(default_factory=dict)  # node -> why it is no candidate
    nominated: str | None = None
    reason: str = ""  # why that node: the criterion that broke the tie

    def table(self) -> str:
        if not self.eligible:
            return f"preemption: {self.message}"
        lines = []
        if self.nominated:
            lines.append(f"preemption: nominated {self.nominated} ({self.reason})")
        else:
            lines.append(f"preemption: no candidate: {self.message}")
        for c in self.candidates:
            mark = " *" if c.node == self.nominated else ""
            pdb = f", {c.pdb_violations} PDB violation(s)" if c.pdb_violations else ""
            lines.append(f"  {c.node}{mark}: evict {', '.join(c.victims)}{pdb}")
        for node, why in self.node_statuses.items():
            lines.append(f"  {node}: {why}")
        return "\n".join(lines)


@dataclass
class Explanation:
    """One scheduling decision. `selected` is the chosen node, or None with `error` set to
    the FitError message."""

    pod: str
    scheduler_name: str
    num_all_nodes: int = 0
    pre_filter: list[FilterVerdict] = field(default_factory=list)
    pre_score: list[FilterVerdict] = field(default_factory=list)
    nodes: dict[str, NodeExplanation] = field(default_factory=dict)
    selected: str | None = None
    error: str | None = None
    note: str = ""
    preemption: PreemptionExplanation | None = None  # when PostFilter (DefaultPreemption) ran

    def node(self, name: str) -> NodeExplanation:
        if name not in self.nodes:
            self.nodes[name] = NodeExplanation(name)
        return self.nodes[name]

    def record_filter(self, node: str, plugin: str, status: Status | None) -> None:
        entry = self.node(node)
        entry.evaluated = True
        entry.filters.append(FilterVerdict.of(plugin, status))

    def record_scores(self, plugin: str, nodes: list[str], raw: list[int], normalized: list[int],
                      weight: int) -> None:
        for name, r, n in zip(nodes, raw, normalized, strict=True):
            self.node(name).scores.append(PluginScore(plugin, r, n, weight))

    def finish(self, all_nodes: list[str],
               note: str = "not evaluated: enough feasible nodes were found") -> None:
        """List every node of the snapshot, marking those the search never reached."""
        for name in all_nodes:
            entry = self.node(name)
            if not entry.evaluated and not entry.note:
                entry.note = note

    @property
    def feasible(self) -> list[str]:
        return [n.node for n in self.nodes.values() if n.feasible]

    @property
    def evaluated(self) -> int:
        return sum(1 for n in self.nodes.values() if n.evaluated)

    def table(self) -> str:
        """The decision as text: a header, then one row per node (the chosen one starred)."""
        outcome = f"-> {self.selected}" if self.selected else f"unschedulable: {self.error}"
        lines = [f"pod {self.pod} (scheduler {self.scheduler_name}) {outcome}",
                 f"{self.num_all_nodes} nodes, {self.evaluated} evaluated, {len(self.feasible)} feasible"]
        for title, verdicts in (("PreFilter", self.pre_filter), ("PreScore", self.pre_score)):
            said = [f"{v.plugin} {v.code.lower()}" if not v.reasons else str(v)
                    for v in verdicts if not v.passed]
            if said:
                lines.append(f"{title}: " + "; ".join(said))
        if self.note:
            lines.append(self.note)
        plugins: dict[str, int] = {}
        for entry in self.nodes.values():
            for s in entry.scores:
                plugins.setdefault(s.plugin, s.weight)
        header = ["NODE", "FILTER", *(f"{p} x{w}" for p, w in plugins.items())]
        if plugins:
            header.append("TOTAL")
        rows = [header]
        for entry in self.nodes.values():
            by_plugin = {s.plugin: s for s in entry.scores}
            cells = [_cell(by_plugin.get(p)) for p in plugins]
            total = entry.total
            row = [entry.node + (" *" if entry.node == self.selected else ""),
                   entry.filter_summary(), *cells]
            if plugins:
                row.append("" if total is None else str(total))
            rows.append(row)
        widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
        lines.append("")
        lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
        if plugins:
            lines.append("score cells: weighted (raw->normalized); * marks the chosen node")
        if self.preemption is not None:
            lines += ["", self.preemption.table()]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


def _cell(score: PluginScore | None) -> str:
    return "" if score is None else f"{score.weighted} ({score.raw}->{score.normalized})"
