"""The Framework runs one scheduler profile: its plugins, at each extension point, in order.

pkg/scheduler/framework/runtime/framework.go (frameworkImpl: RunPreFilterPlugins,
RunFilterPlugins, RunFilterPluginsWithNominatedPods, RunPostFilterPlugins, RunPreScorePlugins,
RunScorePlugins, RunBindPlugins). The algorithm that calls them, node by node, is
schedule_one.py's (schedulePod, findNodesThatPassFilters, prioritizeNodes, selectHost).

A Scheduler (the queue, the informers, the API calls) drives it like this:

    fwk = Framework(profile, rand=cluster_rand, bind=lambda pod, node: client.bind(...))
    snapshot = Snapshot(nodes, pods)          # kept current from the informers
    state = CycleState()                      # one per scheduling cycle
    try:
        result = schedule_pod(fwk, state, pod, snapshot)   # schedule_one.py
    except FitError as err:                   # str(err): "0/3 nodes are available: ..."
        fwk.run_post_filter_plugins(state, pod, err.diagnosis.node_to_status)  # preemption
        ...record the FailedScheduling event, requeue the pod...
    else:
        snapshot.assume_pod(PodInfo(pod), result.suggested_host)
        status = fwk.run_bind_plugins(state, pod, result.suggested_host)  # None: bound
        ...on an error status, forget the assumed pod and requeue...

Several profiles (schedulerName) mean several Frameworks; a pod goes to the one named in
its spec.schedulerName. That driver is schedule_one.py's schedule_one and scheduling_cycle, as
in upstream, where the Framework has no SchedulePod of its own.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kubelab.scheduler.config import Profile, default_profile
from kubelab.scheduler.explain import Explanation, FilterVerdict
from kubelab.scheduler.interface import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    BindPlugin,
    Code,
    CycleState,
    FilterPlugin,
    NodePluginScores,
    NodeScore,
    Plugin,
    PostFilterPlugin,
    PostFilterResult,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScoreExtensions,
    ScorePlugin,
    Status,
    as_status,
    score_extensions,
)
from kubelab.scheduler.plugins.registry import PluginFactory, in_tree_registry
from kubelab.scheduler.schedule_one import SchedulingError
from kubelab.scheduler.snapshot import Snapshot
from kubelab.scheduler.types import NodeInfo, Object, pod_key

__all__ = ["Framework"]


class Framework:
    """A profile's plugins, instantiated, plus the state carried from one cycle to the next:
    where the next node search starts (upstream keeps it on the Scheduler) and the random
    source that breaks ties."""

    def __init__(self, profile: Profile | None = None, *, rand: random.Random | None = None,
                 bind: Callable[[Object, str], None] | None = None,
                 registry: Mapping[str, PluginFactory] | None = None, global_percentage: int = 0,
                 client: Any = None, clock: Any = None, recorder: Any = None) -> None:
        """registry: out-of-tree plugins by name, added to the in-tree ones; client: the
        scheduler's client (Handle.ClientSet()), for plugins that write (VolumeBinding,
        DefaultPreemption); clock and recorder: the scheduler's virtual clock and this
        profile's event recorder (Handle.EventRecorder()), for DefaultPreemption."""
        self.client = client
        self.clock = clock
        self.recorder = recorder
        # The queue's PodNominator (Handle.NominatedPodsForNode): the pods a preemption has
        # nominated to each node. The Scheduler sets it; a bare Framework has none.
        self.pod_nominator: Any = None
        profile = profile if profile is not None else default_profile()
        self.profile_name = profile.scheduler_name
        # percentageOfNodesToScore (profile, then global; 0 is adaptive): the filter search stops
        # once num_feasible_nodes_to_find nodes fit, so a cycle looks at a share of a big cluster.
        self.percentage_of_nodes_to_score = profile.percentage_of_nodes_to_score
        self.global_percentage = global_percentage  # KubeSchedulerConfiguration.percentageOfNodesToScore
        self.rand = rand if rand is not None else random.Random(0)
        # nextStartNodeIndex: where the next search starts, so that successive cycles look at
        # different nodes. Invariant: 0 <= it < the node count of the last snapshot searched.
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
        self.pre_bind_plugins: list[Any] = at("preBind")  # --- i31-storage ---
        self.score_weights = {p.name: profile.score_weights.get(p.name, 1) for p in self.score_plugins}
        # ScoreExtensions() of each score plugin, asked once: None when it has no NormalizeScore.
        self.score_plugin_extensions: dict[str, ScoreExtensions | None] = {
            p.name: score_extensions(p) for p in self.score_plugins}

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
            if s is not None and s.is_skip():
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
        return result, returned, with_nodes

    def run_filter_plugins(self, state: CycleState, pod: Object, node_info: NodeInfo,
                           explanation: Explanation | None = None) -> Status | None:
        """The node fits (None) unless a Filter plugin says otherwise; the first one to
        reject decides, and the rest do not run. A plugin that PreFilter skipped does not run."""
        for pl in self.filter_plugins:
            if pl.name in state.skip_filter_plugins:
                continue
            try:
                status = pl.filter(state, pod, node_info)
            except Exception as err:  # a broken plugin fails this node's check, not the process
                status = as_status(err)
            if explanation is not None:
                explanation.record_filter(node_info.name, pl.name, status)
            if status is not None and not status.is_success():
                if not status.is_rejected():  # Filter may only say Success or Unschedulable*
                    return Status(Code.Error, f'running "{pl.name}" filter plugin: {status.message()}',
                                  plugin=pl.name)
                return status.with_plugin(pl.name)
        return None

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Object, node_info: NodeInfo,
                                               explanation: Explanation | None = None) -> Status | None:
        """RunFilterPluginsWithNominatedPods: the filters run twice when pods of equal or
        higher priority are nominated to the node: once as if they were already there (so
        a lower-priority pod does not take the room a preemption made for them), once
        without them (so a pod that only fits beside them, e.g. by affinity, is not
        wrongly admitted). Without such pods they run once, as before. The explanation
        records the first pass."""
        pods_added, state_to_use, info_to_use = self._add_ge_nominated_pods(pod, state, node_info)
        status = self.run_filter_plugins(state_to_use, pod, info_to_use, explanation)
        if pods_added and status is None:
            status = self.run_filter_plugins(state, pod, node_info)
            if status is not None and explanation is not None:
                explanation.record_filter(node_info.name, status.plugin, status)
        return status

    def _add_ge_nominated_pods(self, pod: Object, state: CycleState, node_info: NodeInfo
                               ) -> tuple[bool, CycleState, NodeInfo]:
        """addGENominatedPods: a copy of the node with the nominated pods of priority >= the
        pod's (other than the pod itself) added, and a copy of the state."""
        if self.pod_nominator is None:
            return False, state, node_info
        nominated = self.pod_nominator.nominated_pods_for_node(node_info.name)
        if not nominated:
            return False, state, node_info
        priority = int((pod.get("spec") or {}).get("priority") or 0)
        key = pod_key(pod)
        node_out: NodeInfo | None = None
        for info in nominated:
            if int((info.pod.get("spec") or {}).get("priority") or 0) >= priority and info.key != key:
                node_out = node_out or node_info.snapshot()
                node_out.add_pod_info(info)
        if node_out is None:
            return False, state, node_info
        return True, state.clone(), node_out

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
            if s is not None and s.is_skip():
                state.skip_score_plugins.add(pl.name)
            elif s is not None and s.code != Code.Success:
                return Status(Code.Error, f'running PreScore plugin "{pl.name}": {s.message()}',
                              plugin=pl.name)
        return None

    def run_score_plugins(self, state: CycleState, pod: Object, nodes: Sequence[NodeInfo],
                          explanation: Explanation | None = None) -> list[NodePluginScores]:
        """Score every node with every plugin PreScore did not skip, let each plugin's
        NormalizeScore rewrite its scores, check they lie in [0, 100], weight and sum them."""
        plugins = [pl for pl in self.score_plugins if pl.name not in state.skip_score_plugins]
        plugin_to_node_scores: dict[str, list[NodeScore]] = {pl.name: [] for pl in plugins}
        for node_info in nodes:  # upstream: parallelize.Until over the nodes
            for pl in plugins:
                try:
                    score = pl.score(state, pod, node_info)
                except Exception as err:
                    raise SchedulingError(f'plugin "{pl.name}" failed with: {err}') from err
                plugin_to_node_scores[pl.name].append(NodeScore(node_info.name, score))
        raw = ({name: [s.score for s in scores] for name, scores in plugin_to_node_scores.items()}
               if explanation is not None else {})  # what the explanation shows before NormalizeScore
        for pl in plugins:
            extensions = self.score_plugin_extensions[pl.name]
            if extensions is None:
                continue
            try:
                status = extensions.normalize_score(state, pod, plugin_to_node_scores[pl.name])
            except Exception as err:
                status = as_status(err)
            if status is not None and not status.is_success():
                raise SchedulingError(f'plugin "{pl.name}" failed with: {status.message()}')
        all_node_plugin_scores = []
        for index, node_info in enumerate(nodes):
            total_score = 0
            for pl in plugins:
                score = plugin_to_node_scores[pl.name][index].score
                if not MIN_NODE_SCORE <= score <= MAX_NODE_SCORE:
                    raise SchedulingError(f'plugin "{pl.name}" returns an invalid score {score}, it '
                                          f"should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] "
                                          "after normalizing")
                total_score += score * self.score_weights[pl.name]
            all_node_plugin_scores.append(NodePluginScores(node_info.name, total_score))
        if explanation is not None:
            names = [n.name for n in nodes]
            for pl in plugins:
                explanation.record_scores(pl.name, names, raw[pl.name],
                                          [s.score for s in plugin_to_node_scores[pl.name]],
                                          self.score_weights[pl.name])
        return all_node_plugin_scores

    def run_pre_bind_plugins(self, state: CycleState, pod: Object, node_name: str) -> Status | None:
        """RunPreBindPlugins: each in order; Wait (VolumeBinding's claims are not bound yet)
        and any failure stop the run."""
        for pl in self.pre_bind_plugins:
            status: Status | None = pl.pre_bind(state, pod, node_name)
            if status is None or status.is_success():
                continue
            if status.code == Code.Wait:
                return status.with_plugin(pl.name)
            return Status(Code.Error, f'running PreBind plugin "{pl.name}": {status.message()}',
                          plugin=pl.name)
        return None

    def run_bind_plugins(self, state: CycleState, pod: Object, node_name: str) -> Status | None:
        """Bind plugins are tried in order; the first that does not Skip decides."""
        for pl in self.bind_plugins:
            status = pl.bind(state, pod, node_name)
            if status is not None and status.is_skip():
                continue
            if status is not None and not status.is_success():
                return Status(Code.Error, f'running Bind plugin "{pl.name}": {status.message()}',
                              plugin=pl.name)
            return None
        return Status(Code.Error, "no bind plugin bound the pod")

