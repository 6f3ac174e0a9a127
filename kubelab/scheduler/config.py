"""Scheduler profiles, written as a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1).

    apiVersion: kubescheduler.config.k8s.io/v1
    kind: KubeSchedulerConfiguration
    profiles:
    - schedulerName: bin-packing
      plugins:
        score:
          disabled: [{name: NodeResourcesBalancedAllocation}]
          enabled: [{name: NodeResourcesFit, weight: 5}]
      pluginConfig:
      - name: NodeResourcesFit
        args: {scoringStrategy: {type: MostAllocated}}

How a profile's plugin list is worked out follows upstream exactly:
- apis/config/v1/default_plugins.go: the default multiPoint list and default weights
  (TaintToleration 3, NodeAffinity 2, PodTopologySpread 2, NodeResourcesFit 1,
  NodeResourcesBalancedAllocation 1, ImageLocality 1); mergePluginSet for each extension point
  ("*" disables all defaults; a re-listed default keeps its place with the new settings).
- framework/runtime/framework.go: expandMultiPointPlugins (a multiPoint plugin serves every
  extension point it implements unless disabled there) and getScoreWeights (an explicit score
  weight beats the multiPoint one; weight 0 means 1).
- apis/config/validation: the checks and their wording. We are stricter in three places, as a
  teacher should be: unknown fields, unknown plugin names and negative weights are refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubelab.api.errors import FieldError, field_invalid, field_required
from kubelab.api.yamlio import load_objects
from kubelab.scheduler import config_validation as v
from kubelab.scheduler.interface import MAX_NODE_SCORE, MAX_TOTAL_SCORE
from kubelab.scheduler.plugins.registry import (
    UPSTREAM_ONLY,
    PluginFactory,
    extension_points,
    in_tree_registry,
)

__all__ = [
    "API_VERSION",
    "DEFAULT_MULTI_POINT",
    "DEFAULT_SCHEDULER_NAME",
    "KIND",
    "Profile",
    "SchedulerConfigError",
    "SchedulerConfiguration",
    "default_profile",
    "load_config",
]

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER_NAME = "default-scheduler"
# default_plugins.go getDefaultPlugins, keeping the plugins kubelab implements, in order.
DEFAULT_MULTI_POINT: tuple[tuple[str, int], ...] = (
    ("NodeUnschedulable", 0), ("NodeName", 0), ("TaintToleration", 3), ("NodeAffinity", 2),
    ("NodeResourcesFit", 1), ("VolumeBinding", 0), ("PodTopologySpread", 2),
    ("DefaultPreemption", 0), ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1), ("DefaultBinder", 0),
)
# Extension points we run; the others (queueSort, reserve, ...) are recognised but empty.
RUN_POINTS = ("preFilter", "filter", "postFilter", "preScore", "score", "preBind", "bind")

SchedulerConfigError = v.SchedulerConfigError


@dataclass
class Profile:
    """One resolved profile: the plugins each extension point runs, in order, and their
    weights and (defaulted, validated) arguments."""

    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    plugins: dict[str, list[str]] = field(default_factory=dict)  # extension point -> names
    score_weights: dict[str, int] = field(default_factory=dict)
    plugin_config: dict[str, dict[str, Any]] = field(default_factory=dict)
    percentage_of_nodes_to_score: int | None = None


@dataclass
class SchedulerConfiguration:
    profiles: list[Profile]
    percentage_of_nodes_to_score: int = 0  # 0: adaptive (see schedule_one.num_feasible_nodes_to_find)
    pod_initial_backoff_seconds: int = 1
    pod_max_backoff_seconds: int = 10

    def profile(self, scheduler_name: str) -> Profile:
        for profile in self.profiles:
            if profile.scheduler_name == scheduler_name:
                return profile
        raise KeyError(f'profile not found for scheduler name "{scheduler_name}"')


def default_profile(scheduler_name: str = DEFAULT_SCHEDULER_NAME,
                    registry: Mapping[str, PluginFactory] | None = None) -> Profile:
    return _resolve_profile({"schedulerName": scheduler_name}, "profiles[0]", registry)


def load_config(source: str | Mapping[str, Any] | None = None,
                registry: Mapping[str, PluginFactory] | None = None) -> SchedulerConfiguration:
    """A KubeSchedulerConfiguration from YAML text, a path or a dict; None gives the defaults.
    Raises SchedulerConfigError (a ValueError) naming every bad field. `registry` adds
    out-of-tree plugins (name -> class), as a custom kube-scheduler build would."""
    if source is None:
        source = {"apiVersion": API_VERSION, "kind": KIND}
    docs = load_objects(dict(source) if isinstance(source, Mapping) else source)
    if len(docs) != 1:
        raise SchedulerConfigError([f"expected one {KIND}, got {len(docs)} objects"])
    doc = docs[0]
    if doc.get("apiVersion") != API_VERSION or doc.get("kind") != KIND:
        raise SchedulerConfigError([f'no kind "{doc.get("kind")}" is registered for version '
                                    f'"{doc.get("apiVersion")}"; expected apiVersion {API_VERSION}, '
                                    f"kind {KIND}"])
    errors = v.strict(doc, v.CONFIG_SCHEMA, "")
    if errors:
        raise SchedulerConfigError(errors)
    percentage = doc.get("percentageOfNodesToScore", 0)
    errors += v.percentage("percentageOfNodesToScore", percentage)
    initial = doc.get("podInitialBackoffSeconds", 1)
    maximum = doc.get("podMaxBackoffSeconds", 10)
    if not isinstance(initial, int) or initial <= 0:
        errors.append(field_invalid("podInitialBackoffSeconds", initial, "must be greater than 0"))
    elif not isinstance(maximum, int) or maximum < initial:
        errors.append(field_invalid("podMaxBackoffSeconds", maximum,
                                    "must be greater than or equal to PodInitialBackoffSeconds"))
    if doc.get("extenders"):
        errors.append(field_invalid("extenders", "...", "scheduler extenders are not supported by kubelab"))
    profiles: list[Profile] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(doc.get("profiles") or [{}]):
        path = f"profiles[{i}]"
        try:
            profile = _resolve_profile(raw, path, registry)
        except SchedulerConfigError as err:
            errors += err.errors
            continue
        if profile.scheduler_name in seen:
            errors.append(FieldError("Duplicate value", f"{path}.schedulerName", profile.scheduler_name))
        seen[profile.scheduler_name] = i
        profiles.append(profile)
    if errors:
        raise SchedulerConfigError(errors)
    return SchedulerConfiguration(profiles, percentage or 0, initial, maximum)


def _merge_plugin_set(defaults: Sequence[tuple[str, int]], custom: Mapping[str, Any]
                      ) -> tuple[list[tuple[str, int]], set[str]]:
    """mergePluginSet: defaults minus the disabled ones (all if "*"), a re-listed default
    replaced in place, then the other custom plugins in the order given."""
    disabled = {p.get("name") for p in custom.get("disabled") or ()}
    enabled = [(p.get("name", ""), p.get("weight") or 0) for p in custom.get("enabled") or ()]
    custom_by_name = dict(enabled)
    merged: list[tuple[str, int]] = []
    replaced: set[str] = set()
    if "*" not in disabled:
        for name, weight in defaults:
            if name in disabled:
                continue
            if name in custom_by_name:
                weight = custom_by_name[name]
                replaced.add(name)
            merged.append((name, weight))
    merged += [p for p in enabled if p[0] not in replaced]
    return merged, {d for d in disabled if d}


def _resolve_profile(raw: Mapping[str, Any], path: str,
                     extra: Mapping[str, PluginFactory] | None = None) -> Profile:
    errors: list[FieldError | str] = []
    registry = {**in_tree_registry(), **(extra or {})}
    name = raw.get("schedulerName", DEFAULT_SCHEDULER_NAME)
    if not name:
        errors.append(field_required(f"{path}.schedulerName"))
    percentage = raw.get("percentageOfNodesToScore")
    errors += v.percentage(f"{path}.percentageOfNodesToScore", percentage)
    custom: Mapping[str, Any] = raw.get("plugins") or {}
    errors += v.plugin_names(custom, f"{path}.plugins", registry, UPSTREAM_ONLY)
    multi_point, _ = _merge_plugin_set(DEFAULT_MULTI_POINT, custom.get("multiPoint") or {})
    for point, plugin_set in custom.items():
        for n in [p.get("name") for p in (plugin_set or {}).get("enabled") or ()]:
            if point != "multiPoint" and n in registry and point not in extension_points(registry[n]):
                errors.append(field_invalid(f"{path}.plugins.{point}.enabled", n,
                                            f'plugin "{n}" does not extend {v.PLUGIN_TYPES[point]} plugin'))
    plugins: dict[str, list[str]] = {}
    for point in RUN_POINTS:
        enabled, disabled = _merge_plugin_set((), custom.get(point) or {})
        explicit = [n for n, _ in enabled]
        from_multi: list[str] = []
        if "*" not in disabled:  # expandMultiPointPlugins
            for n, _ in multi_point:
                if n not in registry or point not in extension_points(registry[n]) or n in disabled:
                    continue
                if n not in explicit and n in from_multi:
                    errors.append(field_invalid(f"{path}.plugins.multiPoint.enabled", n, f'plugin "{n}" '
                                                f'already registered as "{v.PLUGIN_TYPES[point]}"'))
                elif n not in explicit:
                    from_multi.append(n)
        overrides = [n for n in explicit if n in {m for m, _ in multi_point}]
        ordered = overrides + from_multi + [n for n in explicit if n not in overrides]
        if len(set(ordered)) != len(ordered):
            errors.append(field_invalid(f"{path}.plugins.{point}.enabled", ordered,
                                        f"a plugin may be registered once as {v.PLUGIN_TYPES[point]}"))
        plugins[point] = ordered
    weights = _score_weights(custom, multi_point, plugins["score"], path, errors)
    if not plugins["bind"]:
        errors.append(field_invalid(f"{path}.plugins.bind", [], "at least one bind plugin is needed for "
                                    f'profile with scheduler name "{name}"'))
    used = {n for names in plugins.values() for n in names}
    plugin_config = v.plugin_config(raw.get("pluginConfig") or [], f"{path}.pluginConfig", registry,
                                    UPSTREAM_ONLY, used, errors)
    if errors:
        raise SchedulerConfigError(errors)
    return Profile(name, plugins, weights, plugin_config, percentage)


def _score_weights(custom: Mapping[str, Any], multi_point: Sequence[tuple[str, int]], scorers: list[str],
                   path: str, errors: list[FieldError | str]) -> dict[str, int]:
    """getScoreWeights: explicit score weights first, then multiPoint; 0 means 1; the total
    of weight * 100 must fit in an int64."""
    listed = [(p.get("name"), p.get("weight") or 0, f"{path}.plugins.score.enabled[{i}].weight")
              for i, p in enumerate((custom.get("score") or {}).get("enabled") or ())]
    listed += [(n, w, f"{path}.plugins.multiPoint.enabled.weight") for n, w in multi_point]
    weights: dict[str, int] = {}
    for name, weight, where in listed:
        if name not in scorers or name in weights:
            continue
        if isinstance(weight, bool) or not isinstance(weight, int) or weight < 0:
            errors.append(field_invalid(where, weight, f'weight of score plugin "{name}" must be a '
                                                       "non-negative integer (0 means 1)"))
            continue
        weights[name] = weight or 1
    if sum(weights.values()) * MAX_NODE_SCORE > MAX_TOTAL_SCORE:
        errors.append(field_invalid(f"{path}.plugins.score", weights,
                                    "total score of Score plugins could overflow"))
    return weights
