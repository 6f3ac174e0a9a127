"""Checks on a KubeSchedulerConfiguration, in upstream's words.

pkg/scheduler/apis/config/validation/validation.go and validation_pluginargs.go; unknown
fields are refused as strict decoding does ("strict decoding error: unknown field ...").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kubelab.api.errors import (
    FieldError,
    field_duplicate,
    field_forbidden,
    field_invalid,
    field_not_supported,
)
from kubelab.scheduler.plugins.node_resources_fit import default_fit_args

__all__ = ["CONFIG_SCHEMA", "PLUGIN_TYPES", "SchedulerConfigError", "percentage", "plugin_config",
           "plugin_names", "strict"]

PLUGIN_TYPES = {
    "preEnqueue": "PreEnqueuePlugin", "queueSort": "QueueSortPlugin", "preFilter": "PreFilterPlugin",
    "filter": "FilterPlugin", "postFilter": "PostFilterPlugin", "preScore": "PreScorePlugin",
    "score": "ScorePlugin", "reserve": "ReservePlugin", "permit": "PermitPlugin",
    "preBind": "PreBindPlugin", "bind": "BindPlugin", "postBind": "PostBindPlugin",
    "multiPoint": "MultiPoint",
}


class SchedulerConfigError(ValueError):
    """A configuration the scheduler refuses. `errors` lists every problem found; the message
    is upstream's aggregate: one error as is, several as "[first, second]"."""

    def __init__(self, errors: Sequence[FieldError | str]) -> None:
        self.errors: list[FieldError | str] = list(errors)
        texts = [str(e) for e in self.errors]
        super().__init__(texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]")


# --- strict decoding ---------------------------------------------------------------------------
# A schema is a dict of known keys (value: sub-schema, or None for "anything"); a one-element
# list means "a list of this".
_PLUGIN = {"name": None, "weight": None}
_PLUGIN_SET = {"enabled": [_PLUGIN], "disabled": [_PLUGIN]}
_PROFILE = {
    "schedulerName": None, "percentageOfNodesToScore": None,
    "plugins": {point: _PLUGIN_SET for point in PLUGIN_TYPES},
    "pluginConfig": [{"name": None, "args": None}],
}
CONFIG_SCHEMA: dict[str, Any] = {
    key: None for key in ("apiVersion", "kind", "parallelism", "leaderElection", "clientConnection",
                          "healthzBindAddress", "metricsBindAddress", "enableProfiling",
                          "enableContentionProfiling", "percentageOfNodesToScore",
                          "podInitialBackoffSeconds", "podMaxBackoffSeconds", "extenders",
                          "delayCacheUntilActive")
} | {"profiles": [_PROFILE]}
_ARGS_SCHEMAS: dict[str, Any] = {
    "NodeResourcesFit": {"ignoredResources": None, "ignoredResourceGroups": None, "scoringStrategy": {
        "type": None, "resources": [{"name": None, "weight": None}],
        "requestedToCapacityRatio": {"shape": [{"utilization": None, "score": None}]}}},
    "NodeResourcesBalancedAllocation": {"resources": [{"name": None, "weight": None}]},
    "PodTopologySpread": {"defaultConstraints": None, "defaultingType": None},
    "NodeAffinity": {"addedAffinity": None},
    "DefaultPreemption": {"minCandidateNodesPercentage": None, "minCandidateNodesAbsolute": None},
}


def strict(value: Any, schema: Any, path: str) -> list[FieldError | str]:
    if schema is None or value is None:
        return []
    if isinstance(schema, list):
        if not isinstance(value, list):
            return [field_invalid(path, value, "must be a list")]
        return [e for i, item in enumerate(value) for e in strict(item, schema[0], f"{path}[{i}]")]
    if not isinstance(value, Mapping):
        return [field_invalid(path, value, "must be an object")]
    errors: list[FieldError | str] = []
    for key, item in value.items():
        where = f"{path}.{key}" if path else str(key)
        if key not in schema:
            errors.append(f'strict decoding error: unknown field "{where}"')
        else:
            errors += strict(item, schema[key], where)
    return errors


def percentage(path: str, value: Any) -> list[FieldError | str]:
    if value is None:
        return []
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 100:
        return [field_invalid(path, value, "not in valid range [0-100]")]
    return []


def plugin_names(plugins: Mapping[str, Any], path: str, registry: Mapping[str, object],
                 upstream_only: frozenset[str]) -> list[FieldError | str]:
    """Every enabled plugin must exist here; disabled ones may also be upstream's."""
    errors: list[FieldError | str] = []
    for point, plugin_set in plugins.items():
        for kind in ("enabled", "disabled"):
            for i, plugin in enumerate((plugin_set or {}).get(kind) or ()):
                name, where = plugin.get("name"), f"{path}.{point}.{kind}[{i}].name"
                if name in registry or (kind == "disabled" and (name == "*" or name in upstream_only)):
                    continue
                if name in upstream_only:
                    detail = (f'{PLUGIN_TYPES[point]} "{name}" is a kube-scheduler plugin that kubelab '
                              "does not implement; disable it or leave it out")
                else:
                    detail = (f'{PLUGIN_TYPES[point]} "{name}" does not exist; known plugins: '
                              + ", ".join(sorted(registry)))
                errors.append(field_invalid(where, name, detail))
    return errors


# --- pluginConfig ------------------------------------------------------------------------------

def plugin_config(entries: Sequence[Mapping[str, Any]], path: str, registry: Mapping[str, object],
                  upstream_only: frozenset[str], used: set[str],
                  errors: list[FieldError | str]) -> dict[str, dict[str, Any]]:
    """Validate each entry's args and return every used plugin's defaulted args."""
    given: dict[str, dict[str, Any]] = {}
    for i, entry in enumerate(entries):
        name, where = entry.get("name", ""), f"{path}[{i}]"
        args = dict(entry.get("args") or {})
        if name in given:
            errors.append(field_duplicate(where, name))
            continue
        if name not in registry:
            if name not in upstream_only:
                errors.append(field_invalid(f"{where}.name", name, "no plugin of this name exists"))
            continue
        kind = args.pop("kind", f"{name}Args")
        args.pop("apiVersion", None)
        if kind != f"{name}Args":
            errors.append(field_invalid(f"{where}.args", kind, "has to match plugin args"))
        errors += strict(args, _ARGS_SCHEMAS.get(name, {}), f"{where}.args")
        errors += _ARGS_CHECKS.get(name, _no_checks)(f"{where}.args", args)
        given[name] = args
    out = {name: dict(given.get(name, {})) for name in sorted(used)}
    if "NodeResourcesFit" in out:
        out["NodeResourcesFit"] = default_fit_args(out["NodeResourcesFit"])
    return out


def _no_checks(path: str, args: Mapping[str, Any]) -> list[FieldError | str]:
    return []


def _weight_errors(path: str, resources: Any, check: Callable[[Any], str | None]) -> list[FieldError | str]:
    errors: list[FieldError | str] = []
    seen: set[str] = set()
    for i, resource in enumerate(resources or ()):
        name = resource.get("name", "")
        if name in seen:
            errors.append(field_duplicate(f"{path}[{i}].name", name))
        seen.add(name)
        if (problem := check(resource.get("weight", 1))) is not None:
            errors.append(field_invalid(f"{path}[{i}].weight", resource.get("weight"), problem.format(name)))
    return errors


def _fit_checks(path: str, args: Mapping[str, Any]) -> list[FieldError | str]:
    strategy = args.get("scoringStrategy")
    if strategy is None:
        return []
    errors: list[FieldError | str] = []
    supported = ["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]
    if strategy.get("type") not in supported:
        errors.append(field_not_supported(f"{path}.scoringStrategy.type", strategy.get("type"), supported))
    errors += _weight_errors(f"{path}.scoringStrategy.resources", strategy.get("resources"),
                             lambda w: None if isinstance(w, int) and 0 < w <= 100
                             else "resource weight of {} not in valid range (0, 100]")
    shape: list[Any] = (strategy.get("requestedToCapacityRatio") or {}).get("shape") or []
    if strategy.get("requestedToCapacityRatio") is not None:
        where = f"{path}.scoringStrategy.shape"
        if not shape:
            errors.append(f"{where}: Required value: at least one point must be specified")
        for i, point in enumerate(shape):
            u, s = point.get("utilization"), point.get("score")
            previous = shape[i - 1].get("utilization") if i else None
            if isinstance(u, int) and isinstance(previous, int) and previous >= u:
                errors.append(field_invalid(f"{where}[{i}].utilization", u,
                                            "values must be sorted in increasing order"))
            if not isinstance(u, int) or not 0 <= u <= 100:
                errors.append(field_invalid(f"{where}[{i}].utilization", u, "not in valid range [0, 100]"))
            if not isinstance(s, int) or not 0 <= s <= 10:
                errors.append(field_invalid(f"{where}[{i}].score", s, "not in valid range [0, 10]"))
    return errors


def _balanced_checks(path: str, args: Mapping[str, Any]) -> list[FieldError | str]:
    return _weight_errors(f"{path}.resources", args.get("resources"),
                          lambda w: None if w == 1 else "must be 1")


def _spread_checks(path: str, args: Mapping[str, Any]) -> list[FieldError | str]:
    errors: list[FieldError | str] = []
    defaulting = args.get("defaultingType", "System")
    constraints = args.get("defaultConstraints") or []
    if defaulting not in ("System", "List"):
        errors.append(field_not_supported(f"{path}.defaultingType", defaulting, ["System", "List"]))
    elif defaulting == "System" and constraints:
        errors.append(field_invalid(f"{path}.defaultingType", defaulting,
                                    "when .defaultConstraints are not empty"))
    seen: set[tuple[str, str]] = set()
    for i, c in enumerate(constraints):
        where = f"{path}.defaultConstraints[{i}]"
        if not isinstance(c.get("maxSkew"), int) or c["maxSkew"] <= 0:
            errors.append(field_invalid(f"{where}.maxSkew", c.get("maxSkew"), "not in valid range (0, inf)"))
        if not c.get("topologyKey"):
            errors.append(f"{where}.topologyKey: Required value: can not be empty")
        if c.get("whenUnsatisfiable") not in ("DoNotSchedule", "ScheduleAnyway"):
            errors.append(field_not_supported(f"{where}.whenUnsatisfiable", c.get("whenUnsatisfiable"),
                                              ["DoNotSchedule", "ScheduleAnyway"]))
        if c.get("labelSelector") is not None:
            errors.append(field_forbidden(f"{where}.labelSelector", "constraint must not define a "
                                          "selector, as they deduced for each pod"))
        key = (c.get("topologyKey", ""), c.get("whenUnsatisfiable", ""))
        if key in seen:
            errors.append(field_duplicate(where, "{" + ", ".join(key) + "}"))
        seen.add(key)
    return errors


def _preemption_checks(path: str, args: Mapping[str, Any]) -> list[FieldError | str]:
    """ValidateDefaultPreemptionArgs (defaults: 10 and 100)."""
    errors: list[FieldError | str] = []
    percentage = args.get("minCandidateNodesPercentage", 10)
    absolute = args.get("minCandidateNodesAbsolute", 100)
    percentage_path = f"{path}.minCandidateNodesPercentage"
    absolute_path = f"{path}.minCandidateNodesAbsolute"
    if not isinstance(percentage, int) or isinstance(percentage, bool) or not 0 <= percentage <= 100:
        errors.append(field_invalid(percentage_path, percentage, "not in valid range [0, 100]"))
    if not isinstance(absolute, int) or isinstance(absolute, bool) or absolute < 0:
        errors.append(field_invalid(absolute_path, absolute, "not in valid range [0, inf)"))
    if percentage == 0 and absolute == 0:
        errors += [
            field_invalid(percentage_path, 0, "cannot be zero at the same time as minCandidateNodesAbsolute"),
            field_invalid(absolute_path, 0, "cannot be zero at the same time as minCandidateNodesPercentage")]
    return errors


_ARGS_CHECKS: dict[str, Callable[[str, Mapping[str, Any]], list[FieldError | str]]] = {
    "DefaultPreemption": _preemption_checks,
    "NodeResourcesFit": _fit_checks,
    "NodeResourcesBalancedAllocation": _balanced_checks,
    "PodTopologySpread": _spread_checks,
}
