"""`kubectl taint nodes node-1 key=value:NoSchedule` and `key:NoSchedule-`, as kubectl does it.

Follows k8s.io/kubectl pkg/cmd/taint/taint.go (argument order, checks, --overwrite) and
utils.go (parseTaints, reorganizeTaints and their messages). Errors are raised as ValueError,
which kubectl() prints as `error: ...`; a node that is not found, or cannot be tainted, is
reported after the others are tainted (the Builder's ContinueOnError).
"""

from __future__ import annotations

from typing import Any

from kubelab.api.errors import ApiError
from kubelab.api.validation import is_qualified_name, is_valid_label_value
from kubelab.client.client import Client
from kubelab.kubectl.common import check_errors

__all__ = ["parse_taint", "parse_taints", "taint"]

EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
Taint = dict[str, str]


def parse_taint(spec: str) -> Taint:
    """'<key>=<value>:<effect>', '<key>:<effect>' or '<key>' (the last only to remove)."""
    parts = spec.split(":")
    key, value, effect = parts[0], "", ""
    if len(parts) > 2:
        raise ValueError(f"invalid taint spec: {spec}")
    if len(parts) == 2:
        effect = parts[1]
        if effect not in EFFECTS:
            raise ValueError(f"invalid taint effect: {effect}, unsupported taint effect")
        key_value = parts[0].split("=")
        if len(key_value) > 2:
            raise ValueError(f"invalid taint spec: {spec}")
        key = key_value[0]
        if len(key_value) == 2:
            value = key_value[1]
            if errs := is_valid_label_value(value):
                raise ValueError(f"invalid taint spec: {spec}, {'; '.join(errs)}")
    if errs := is_qualified_name(key):
        raise ValueError(f"invalid taint spec: {spec}, {'; '.join(errs)}")
    return {"key": key, **({"value": value} if value else {}), "effect": effect}


def parse_taints(specs: list[str]) -> tuple[list[Taint], list[Taint]]:
    """The taints to add and those to remove (a spec ending in '-')."""
    add: list[Taint] = []
    remove: list[Taint] = []
    for spec in specs:
        if spec.endswith("-"):
            remove.append({k: v for k, v in parse_taint(spec[:-1]).items() if k != "value"})
            continue
        new = parse_taint(spec)
        if not new["effect"]:
            raise ValueError(f"invalid taint spec: {spec}")  # an effect is needed to add a taint
        if any(t["key"] == new["key"] and t["effect"] == new["effect"] for t in add):
            raise ValueError(f"duplicated taints with the same key and effect: {to_string(new)}")
        add.append(new)
    return add, remove


def to_string(t: Any) -> str:
    """corev1 Taint.ToString: key=value:effect, leaving out what is empty."""
    key, value, effect = str(t.get("key", "")), t.get("value") or "", t.get("effect") or ""
    return key + (f"={value}" if value else "") + (f":{effect}" if effect else "")


def _matches(removal: Taint, taint: Any) -> bool:
    """A removal without an effect removes every taint with its key (deleteTaintsByKey)."""
    return bool(taint.get("key") == removal["key"] and removal["effect"] in ("", taint.get("effect")))


def taint(client: Client, args: list[str], *, overwrite: bool = False) -> str:
    """Run `kubectl taint <args>`; returns what kubectl prints."""
    resources: list[str] = []
    changes: list[str] = []
    for arg in args:
        if "=" in arg or ":" in arg or arg.endswith("-"):
            changes.append(arg)
        elif changes:
            raise ValueError(f"all resources must be specified before taint changes: {arg}")
        else:
            resources.append(arg)
    if not resources:
        raise ValueError("one or more resources must be specified as <resource> <name>")
    if not changes:
        raise ValueError("at least one taint update is required")
    try:
        add, remove = parse_taints(changes)
    except ValueError as err:  # a usage error: kubectl points at the help
        raise ValueError(f"{err}\nSee 'kubectl taint -h' for help and examples") from None
    if client.resource(resources[0]).kind != "Node":
        raise ValueError(f"invalid resource type {resources[0]}, only node types are supported")
    clash = [f'{{"{r["key"]}":"{r["effect"]}"}}' for a in add for r in remove if _matches(r, a)]
    if clash:
        raise ValueError("can not both modify and remove the following taint(s) in the same command: "
                         + ", ".join(clash))
    if len(resources) < 2:
        raise ValueError("at least one resource name must be specified since 'all' parameter is not set")
    lines: list[str] = []
    errors: list[Exception] = []
    for name in resources[1:]:  # ContinueOnError: each node, then what went wrong
        try:
            lines.append(_taint_node(client, name, add, remove, overwrite))
        except (ApiError, ValueError) as err:
            errors.append(err)
    return check_errors(lines, errors)


def _taint_node(client: Client, name: str, add: list[Taint], remove: list[Taint], overwrite: bool) -> str:
    node = client.get("nodes", name, "")
    old = list((node.get("spec") or {}).get("taints") or [])
    same = [a["key"] for a in add for o in old if a["key"] == o.get("key") and a["effect"] == o.get("effect")]
    if same and not overwrite:
        raise ValueError(f"node {name} already has {','.join(same)} taint(s) with same effect(s) and "
                         "--overwrite is false")
    # reorganizeTaints: the new taints first, then the old ones they do not replace.
    replaced = {(a["key"], a["effect"]) for a in add}
    new: list[Any] = add + [o for o in old if (o.get("key"), o.get("effect")) not in replaced]
    added = len(new) != len(old)
    errors, removed = [], False
    for r in remove:
        kept = [t for t in new if not _matches(r, t)]
        removed = len(kept) != len(new)
        if not removed:
            errors.append(f'taint "{to_string(r)}" not found')
        new = kept
    if errors:
        raise ValueError(errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")
    operation = "modified" if (added and removed) or overwrite else "tainted" if added else "untainted"
    client.patch("nodes", name, {"spec": {"taints": new or None}}, "")
    return f"node/{name} {operation}"
