"""The Framework runs one scheduler profile: its plugins, at each extension point, in order.

pkg/scheduler/framework/runtime/framework.go (frameworkImpl: RunPreFilterPlugins,
RunFilterPlugins, RunPostFilterPlugins, RunPreScorePlugins, RunScorePlugins, RunBindPlugins).

A Scheduler (the queue, the informers, the API calls) drives it like this:

    fwk = Framework(profile, rand=cluster_rand, bind=lambda pod, node: client.bind(...))
    snapshot = Snapshot(nodes, pods)          # kept current from the informers
    state = CycleState()                      # one per scheduling cycle
    try:
        result = fwk.schedule_pod(pod, snapshot, state)
    except FitError as err:                   # str(err): "0/3 nodes are available: ..."
        ...record the FailedScheduling event, requeue the pod...
    else:
        snapshot.assume_pod(PodInfo(pod), result.suggested_host)
        status = fwk.run_bind_plugins(state, pod, result.suggested_host)  # None: bound
        ...on an error status, forget the assumed pod and requeue...

Several profiles (schedulerName) mean several Frameworks; a pod goes to the one named in
its spec.schedulerName.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from itertools import repeat
from operator import add, mul
from typing import Any

from kubelab.scheduler import algorithm
from kubelab.scheduler.algorithm import FitError, ScheduleResult, SchedulingError
from kubelab.scheduler.config import Profile, default_profile
from kubelab.scheduler.explain import Explanation, FilterVerdict
from kubelab.scheduler.interface import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    BindPlugin,
    Code,
    CycleState,
    FilterPlugin,
    NodeScore,
    Plugin,
    PostFilterPlugin,
    PostFilterResult,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScorePlugin,
    Status,
    as_status,
)
from kubelab.scheduler.plugins.registry import PluginFactory, in_tree_registry
from kubelab.scheduler.snapshot import Snapshot
from kubelab.scheduler.types import NodeInfo, Object

__all__ = ["Framework"]

_VALID_SCORES = frozenset(range(MIN_NODE_SCORE, MAX_NODE_SCORE + 1))


class Framework:
    """A profile's plugins, instantiated, plus the state carried from one cycle to the next:
    where the next node search starts (upstream keeps it on the Scheduler) and the random
    source that breaks ties."""

    def __init__(self, profile: Profile | None = None, *, rand: random.Random | None = None,
                 bind: Callable[[Object, str], None] | None = None,
                 registry: Mapping[str, PluginFactory] | None = None, global_percentage: int = 0) -> None:
        """registry: out-of-tree plugins by name, added to the in-tree ones."""
        profile = profile if profile is not None else default_profile()
        self.profile_name = profile.scheduler_name
        self.percentage_of_nodes_to_score = profile.percentage_of_nodes_to_score
        self.global_percentage = global_percentage  # KubeSchedulerConfiguration.percentageOfNodesToScore
        self.rand = rand if rand is not None else random.Random(0)
        self.next_start_node_index = 0
        self._bind = bind
        self._snapshot = Snapshot()
        registry = {**in_tree_registry(), **(registry or {})}
        self.plugins: dict[str, Plugin] = {}
        for names in profile.plugins.values():
            for name in names:
                if name not in self.plugins:
                    self.plugins[name] = registry[name](profile.plugin_config.get(name, {}), self)

        def at(point: str) -> list[Any]:
            return [self.plugins[name] for name in profile.plugins.get(point, ())]

        self.pre_filter_plugins: list[PreFilterPlugin] = at("preFilter")
        self.filter_plugins: list[FilterPlugin] = at("filter")
        self.post_filter_plugins: list[PostFilterPlugin] = at("postFilter")
        self.pre_score_plugins: list[PreScorePlugin] = at("preScore")
        self.score_plugins: list[ScorePlugin] = at("score")
        self.bind_plugins: list[BindPlugin] = at("bind")
        self.score_weights = {p.name: profile.score_weights.get(p.name, 1) for p in self.score_plugins}

    # --- the Handle plugins see ---------------------------------------------------------------

    @property
    def snapshot(self) -> Snapshot:
        """The cluster as this cycle sees it (SnapshotSharedLister)."""
        return self._snapshot

    @snapshot.setter
    def snapshot(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot

    def bind_pod(self, pod: Object, node_name: str) -> None:
        if self._bind is None:
            raise SchedulingError("no bind function was given to the Framework")
        self._bind(pod, node_name)

    def has_filter_plugins(self) -> bool:
        return bool(self.filter_plugins)

    def has_score_plugins(self) -> bool:
        return bool(self.score_plugins)

    def has_post_filter_plugins(self) -> bool:
        return bool(self.post_filter_plugins)

    # --- one scheduling cycle -----------------------------------------------------------------

    def schedule_pod(self, pod: Object, snapshot: Snapshot | Sequence[NodeInfo],
                     state: CycleState | None = None, *, explain: bool = False) -> ScheduleResult:
        """Pick a node for pod. Raises FitError (no node fits; PostFilter has run) or
        SchedulingError. With explain=True the result (or the FitError) carries an
        Explanation of every plugin's verdict and score."""
        if not isinstance(snapshot, Snapshot):
            snapshot = Snapshot.from_node_infos(snapshot)
        self._snapshot = snapshot
        state = state if state is not None else CycleState()
        explanation = None
        if explain:
            meta = pod.get("metadata") or {}
            explanation = Explanation(f"{meta.get('namespace', 'default')}/{meta.get('name', '')}",
                                      self.profile_name, len(snapshot))
        try:
            result = algorithm.schedule_pod(self, state, pod, snapshot, explanation)
        except FitError as err:
            if self.post_filter_plugins:
                nominated, status = self.run_post_filter_plugins(state, pod, err.diagnosis.node_to_status)
                err.diagnosis.post_filter_msg = status.message()
                err.post_filter_result = nominated
            if explanation is not None:
                explanation.error = str(err)
                explanation.finish([n.name for n in snapshot])
                err.explanation = explanation
            raise
        if explanation is not None:
            explanation.selected = result.suggested_host
            explanation.finish([n.name for n in snapshot])
        return result

    def run_pre_filter_plugins(self, state: CycleState, pod: Object, nodes: Sequence[NodeInfo],
                               explanation: Explanation | None = None
                               ) -> tuple[PreFilterResult | None, Status | None, list[str]]:
        """Run every PreFilter plugin. Returns the merged node restriction (None: all nodes),
        a rejecting status if any, and the plugins that restricted the nodes."""
        result: PreFilterResult | None = None
        returned: Status | None = None
        with_nodes: list[str] = []
        for pl in self.pre_filter_plugins:
            try:
                r, s = pl.pre_filter(state, pod, nodes)
            except Exception as err:
                r, s = None, as_status(err)
            if explanation is not None:
                explanation.pre_filter.append(FilterVerdict.of(pl.name, s))
            if s is not None and s.code == Code.Skip:
                state.skip_filter_plugins.add(pl.name)
                continue
            if s is not None and s.code != Code.Success:
                s = s.with_plugin(pl.name)
                if s.code == Code.UnschedulableAndUnresolvable:
                    return None, s, []  # preemption cannot help: stop here
                if s.code == Code.Unschedulable:
                    returned = s  # run the others too, as preemption may need their state
                    continue
                return None, Status(Code.Error, f'running PreFilter plugin "{pl.name}": {s.message()}',
                                    plugin=pl.name), []
            if r is not None and not r.all_nodes():
                with_nodes.append(pl.name)
                result = r.merge(result)
                if not result.node_names:
                    msg = (f"node(s) didn't satisfy plugin {with_nodes[0]}" if len(with_nodes) == 1
                           else f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(with_nodes))}] "
                           "simultaneously")
                    return result, Status(Code.UnschedulableAndUnresolvable, msg), with_nodes
        state.active_filters = [p for p in self.filter_plugins if p.name not in state.skip_filter_plugins]
        return result, returned, with_nodes

    def run_filter_plugins(self, state: CycleState, pod: Object, node_info: NodeInfo,
                           explanation: Explanation | None = None) -> Status | None:
        """The node fits (None) unless a Filter plugin says otherwise; the first one to
        reject decides, and the rest do not run."""
        return self.run_filter_plugins_on_nodes(state, pod, [node_info], explanation)[0]

    def run_filter_plugins_on_nodes(self, state: CycleState, pod: Object, nodes: Sequence[NodeInfo],
                                    explanation: Explanation | None = None) -> list[Status | None]:
        """run_filter_plugins for each node, worked out plugin by plugin: each plugin sees the
        nodes no earlier plugin rejected. Every node meets the same plugins, in the same order,
        as it would alone, and the explanation records the same verdicts."""
        plugins = state.active_filters
        if plugins is None:
            plugins = [p for p in self.filter_plugins if p.name not in state.skip_filter_plugins]
        verdicts: list[Status | None] = [None] * len(nodes)
        passing = list(range(len(nodes)))  # the positions of the nodes no plugin has rejected yet
        for pl in plugins:
            if not passing:
                break
            candidates = nodes if len(passing) == len(nodes) else [nodes[i] for i in passing]
            statuses = _filter_nodes(pl, state, pod, candidates)
            if explanation is not None:
                for node_info, status in zip(candidates, statuses, strict=True):
                    explanation.record_filter(node_info.name, pl.name, status)
            if not any(statuses):  # all passed: the usual case
                continue
            still = []
            for i, status in zip(passing, statuses, strict=True):
                if status is None or status.code == Code.Success:
                    still.append(i)
                elif not status.is_rejected():
                    verdicts[i] = Status(Code.Error, f'running "{pl.name}" filter plugin: {status.message()}',
                                         plugin=pl.name)
                else:
                    verdicts[i] = status.with_plugin(pl.name)
            passing = still
        return verdicts

    def run_post_filter_plugins(self, state: CycleState, pod: Object, node_to_status: Mapping[str, Status]
                                ) -> tuple[PostFilterResult | None, Status]:
        """Run PostFilter plugins (preemption) until one succeeds or gives up for good."""
        result: PostFilterResult | None = None
        reasons: list[str] = []
        rejector = ""
        for pl in self.post_filter_plugins:
            r, s = pl.post_filter(state, pod, node_to_status)
            if s.is_success() or s.code == Code.UnschedulableAndUnresolvable:
                return r, s.with_plugin(pl.name)
            if not s.is_rejected():
                return None, Status(Code.Error, s.message(), plugin=pl.name)
            result = r if r is not None else result
            reasons += s.reasons
            rejector = rejector or pl.name
        return result, Status(Code.Unschedulable, *reasons, plugin=rejector)

    def run_pre_score_plugins(self, state: CycleState, pod: Object, nodes: Sequence[NodeInfo],
                              explanation: Explanation | None = None) -> Status | None:
        for pl in self.pre_score_plugins:
            try:
                s = pl.pre_score(state, pod, nodes)
            except Exception as err:
                s = as_status(err)
            if explanation is not None:
                explanation.pre_score.append(FilterVerdict.of(pl.name, s))
            if s is not None and s.code == Code.Skip:
                state.skip_score_plugins.add(pl.name)
            elif s is not None and s.code != Code.Success:
                return Status(Code.Error, f'running PreScore plugin "{pl.name}": {s.message()}',
                              plugin=pl.name)
        return None

    def run_score_plugins(self, state: CycleState, pod: Object, nodes: Sequence[NodeInfo],
                          explanation: Explanation | None = None) -> list[int]:
        """Each plugin scores every node, normalizes, is weighted; returns the totals."""
        totals = [0] * len(nodes)
        names = [n.name for n in nodes]
        for pl in self.score_plugins:
            if pl.name in state.skip_score_plugins:
                continue
            try:
                score_nodes = getattr(pl, "score_nodes", None)  # the batch form, if any
                if score_nodes is not None:
                    scores = score_nodes(state, pod, nodes)
                else:
                    score = pl.score
                    scores = [score(state, pod, n) for n in nodes]
                raw = scores
                normalize_scores = getattr(pl, "normalize_scores", None)  # the batch form, if any
                normalize = getattr(pl, "normalize_score", None)  # ScoreExtensions, if any
                if normalize_scores is not None:
                    scores = normalize_scores(state, pod, names, scores)
                elif normalize is not None:
                    node_scores = list(map(NodeScore, names, scores))
                    status = normalize(state, pod, node_scores)
                    if status is not None and not status.is_success():
                        raise SchedulingError(status.message())
                    scores = [ns.score for ns in node_scores]
            except Exception as err:
                raise SchedulingError(f'plugin "{pl.name}" failed with: {err}') from err
            if (not _VALID_SCORES.issuperset(scores)  # a quick look (integers only), then the rule
                    and scores and not MIN_NODE_SCORE <= min(scores) <= max(scores) <= MAX_NODE_SCORE):
                bad = next(s for s in scores if not MIN_NODE_SCORE <= s <= MAX_NODE_SCORE)
                raise SchedulingError(f'plugin "{pl.name}" returns an invalid score {bad}, it '
                                      f"should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] "
                                      "after normalizing")
            weight = self.score_weights[pl.name]
            if any(scores):  # all zero (e.g. no node has the pod's images) adds nothing
                # map sums and multiplies in C: this runs for every feasible node of every plugin.
                totals = list(map(add, totals, scores if weight == 1 else map(mul, scores, repeat(weight))))
            if explanation is not None:
                explanation.record_scores(pl.name, names, raw, scores, weight)
        return totals

    def run_bind_plugins(self, state: CycleState, pod: Object, node_name: str) -> Status | None:
        """Bind plugins are tried in order; the first that does not Skip decides."""
        for pl in self.bind_plugins:
            status = pl.bind(state, pod, node_name)
            if status is not None and status.code == Code.Skip:
                continue
            if status is not None and not status.is_success():
                return Status(Code.Error, f'running Bind plugin "{pl.name}": {status.message()}',
                              plugin=pl.name)
            return None
        return Status(Code.Error, "no bind plugin bound the pod")


def _filter_nodes(pl: FilterPlugin, state: CycleState, pod: Object,
                  nodes: Sequence[NodeInfo]) -> list[Status | None]:
    """pl's verdict on each node; an exception is an Error status for that node alone."""
    batch = getattr(pl, "filter_nodes", None)
    if batch is not None:
        try:
            statuses: list[Status | None] = batch(state, pod, nodes)
            return statuses
        except Exception:
            pass  # ask node by node, to pin the error on the node that caused it
    statuses = []
    for node_info in nodes:
        try:
            statuses.append(pl.filter(state, pod, node_info))
        except Exception as err:
            statuses.append(as_status(err))
    return statuses
