"""The scheduling framework's vocabulary: Status, CycleState and one Protocol per extension point.

Mirrors pkg/scheduler/framework/interface.go and cycle_state.go (the types now live in
k8s.io/kube-scheduler/framework). As in Go, a plugin that succeeds returns None (Go's nil
*Status); a Status is built only to say something went wrong or to ask to be skipped.

The extension points, in the order one scheduling cycle runs them:

    pre_filter -> filter (per node) -> [post_filter if no node fits]
    -> pre_score -> score (per feasible node) -> normalize_score -> weight -> select_host
    -> bind

Upstream runs Filter and Score for many nodes at once on 16 goroutines (parallelize.Until in
pkg/scheduler/schedule_one.go and framework/runtime/framework.go); kubelab runs the same calls
one node after another, which gives the same answer in a reproducible order. A plugin has one
method per extension point it serves and nothing else: the learner's plugins of notebook 04
have exactly this shape.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, NamedTuple, Protocol

from kubelab.scheduler.snapshot import Snapshot
from kubelab.scheduler.types import NodeInfo, Object

__all__ = [
    "MAX_NODE_SCORE",
    "MAX_TOTAL_SCORE",
    "MIN_NODE_SCORE",
    "BindPlugin",
    "Code",
    "CycleState",
    "FilterPlugin",
    "Handle",
    "NodePluginScores",
    "NodeScore",
    "NodeToStatus",
    "Plugin",
    "PostFilterPlugin",
    "PostFilterResult",
    "PreFilterPlugin",
    "PreFilterResult",
    "PreScorePlugin",
    "ScoreExtensions",
    "ScorePlugin",
    "StateNotFoundError",
    "Status",
    "as_status",
    "score_extensions",
]

MAX_NODE_SCORE = 100  # what every score plugin's normalized score must fit in
MIN_NODE_SCORE = 0
MAX_TOTAL_SCORE = 2**63 - 1  # math.MaxInt64: the weighted sum must not overflow


class Code(IntEnum):
    """interface.go Code, in upstream's order."""

    Success = 0
    Error = 1  # something broke; the pod is retried, not declared unschedulable
    Unschedulable = 2  # this node cannot take the pod now; preemption might help
    UnschedulableAndUnresolvable = 3  # preemption cannot help either
    Wait = 4  # Permit plugins only
    Skip = 5  # PreFilter/PreScore: "nothing to do for this pod", skip my Filter/Score
    Pending = 6


class Status:
    """A plugin's answer: a Code, the reasons (each one counted in the FitError message) and
    the plugin that said it."""

    __slots__ = ("code", "err", "plugin", "reasons")

    def __init__(self, code: Code = Code.Success, *reasons: str, plugin: str = "") -> None:
        self.code = code
        self.reasons: tuple[str, ...] = reasons
        self.plugin = plugin
        self.err: BaseException | None = None  # the error behind the status (WithError / AsError)

    def is_success(self) -> bool:
        return self.code == Code.Success

    def is_skip(self) -> bool:
        return self.code == Code.Skip

    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending: the pod was turned away."""
        return self.code in (Code.Unschedulable, Code.UnschedulableAndUnresolvable, Code.Pending)

    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_error(self, err: BaseException) -> Status:
        """WithError: keep the error itself, e.g. a FitError with its Diagnosis."""
        self.err = err
        return self

    def as_error(self) -> BaseException | None:
        return self.err

    def with_plugin(self, plugin: str) -> Status:
        return Status(self.code, *self.reasons, plugin=plugin)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Status) and self.code == other.code
                and self.reasons == other.reasons)

    def __hash__(self) -> int:
        return hash((self.code, self.reasons))

    def __repr__(self) -> str:
        by = f" by {self.plugin}" if self.plugin else ""
        return f"Status({self.code.name}{by}: {self.message()!r})"


def as_status(err: BaseException) -> Status:
    """AsStatus: an exception becomes an Error status carrying its message."""
    return Status(Code.Error, str(err)).with_error(err)


class StateNotFoundError(KeyError):
    """CycleState.read of a key nobody wrote (cycle_state.go ErrNotFound)."""


class CycleState(dict[str, Any]):
    """Scratch space for one scheduling cycle: PreFilter writes what Filter reads.

    Also records which plugins asked to be skipped (upstream SkipFilterPlugins and
    SkipScorePlugins). It is a dict underneath because Filter and Score read it once per node."""

    __slots__ = ("skip_filter_plugins", "skip_score_plugins")

    def __init__(self) -> None:
        super().__init__()
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()

    # read(key) is dict lookup: it raises StateNotFoundError (a KeyError) for a missing key.
    read = dict.__getitem__
    write = dict.__setitem__

    def __missing__(self, key: str) -> Any:
        raise StateNotFoundError(f'reading "{key}" from cycleState: not found')

    def delete(self, key: str) -> None:
        self.pop(key, None)

    def clone(self) -> CycleState:
        copy = CycleState()
        copy.update(self)
        copy.skip_filter_plugins = set(self.skip_filter_plugins)
        copy.skip_score_plugins = set(self.skip_score_plugins)
        return copy


class NodeToStatus(dict[str, Status]):
    """The Status of each rejected node, plus the one that stands for every node not in the
    map (types.go NodeToStatus: absentNodesStatus, UnschedulableAndUnresolvable by default).
    A dict, so PostFilter plugins written against a plain Mapping keep working."""

    def __init__(self, statuses: Mapping[str, Status] | None = None,
                 absent_nodes_status: Status | None = None) -> None:
        super().__init__(statuses or {})
        self.absent_nodes_status = absent_nodes_status

    def get_status(self, node_name: str) -> Status:
        """NodeToStatus.Get: the node's own Status, else the absent nodes' one."""
        if node_name in self:
            return self[node_name]
        return self.absent_nodes_status or Status(Code.UnschedulableAndUnresolvable)

    def nodes_for_status_code(self, nodes: Iterable[NodeInfo], code: int) -> list[NodeInfo]:
        """NodesForStatusCode: the nodes whose Status has this code, absent ones included."""
        return [n for n in nodes if self.get_status(n.name).code == code]


@dataclass(frozen=True)
class PreFilterResult:
    """A PreFilter plugin may narrow the search to some nodes. None means all nodes."""

    node_names: frozenset[str] | None = None

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.all_nodes():
            return self
        if self.all_nodes():
            return other
        assert self.node_names is not None and other.node_names is not None
        return PreFilterResult(self.node_names & other.node_names)


@dataclass(frozen=True)
class PostFilterResult:
    """What a PostFilter plugin (e.g. preemption) proposes: a node to nominate."""

    nominated_node_name: str = ""


class NodeScore:
    """One node's score from one plugin; normalize_score rewrites `score` in place."""

    __slots__ = ("name", "score")

    def __init__(self, name: str, score: int) -> None:
        self.name = name
        self.score = score

    def __repr__(self) -> str:
        return f"NodeScore({self.name}, {self.score})"


class NodePluginScores(NamedTuple):
    """A feasible node and the sum of its weighted scores (NodePluginScores.TotalScore)."""

    name: str
    total_score: int


class Handle(Protocol):
    """What a plugin may ask of the framework that runs it (interface.go Handle)."""

    @property
    def snapshot(self) -> Snapshot: ...

    def bind_pod(self, pod: Object, node_name: str) -> None: ...


class Plugin(Protocol):
    name: str


class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(self, state: CycleState, pod: Object,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]: ...


class FilterPlugin(Plugin, Protocol):
    def filter(self, state: CycleState, pod: Object, node_info: NodeInfo) -> Status | None: ...


class PostFilterPlugin(Plugin, Protocol):
    def post_filter(self, state: CycleState, pod: Object,
                    node_to_status: Mapping[str, Status]) -> tuple[PostFilterResult | None, Status]: ...


class PreScorePlugin(Plugin, Protocol):
    def pre_score(self, state: CycleState, pod: Object, nodes: Sequence[NodeInfo]) -> Status | None: ...


class ScorePlugin(Plugin, Protocol):
    def score(self, state: CycleState, pod: Object, node_info: NodeInfo) -> int: ...


class ScoreExtensions(Protocol):
    """NormalizeScore, run once per cycle on every feasible node's score of one plugin."""

    def normalize_score(self, state: CycleState, pod: Object, scores: list[NodeScore]) -> Status | None: ...


def score_extensions(plugin: ScorePlugin) -> ScoreExtensions | None:
    """ScorePlugin.ScoreExtensions(): upstream's plugins return themselves when they have a
    NormalizeScore, else nil. In Python a plugin that defines normalize_score is its own
    ScoreExtensions, so a learner's Score plugin needs no second method."""
    return plugin if callable(getattr(plugin, "normalize_score", None)) else None  # type: ignore[return-value]


class BindPlugin(Plugin, Protocol):
    def bind(self, state: CycleState, pod: Object, node_name: str) -> Status | None: ...
