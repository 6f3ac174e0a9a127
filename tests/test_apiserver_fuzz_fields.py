"""Typed fields through every write verb: upstream's answer, whichever way the value arrives.

For each (field, value) an oracle written from upstream's rules (Go's encoding/json for the
type, the kind's validation for the value) says what kube-apiserver does: refuse the body with
the decoder's words, refuse the object with the validator's, or store the value. Create,
update and the three patch types must all give that answer, and a refusal changes nothing.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from test_apiserver_support import Env

from kubelab.api.errors import ApiError

Object = dict[str, Any]
NONNEGATIVE = "must be greater than or equal to 0"
INT32 = 2**31
CONTAINER = ("spec", "template", "spec", "containers", 0)


def base() -> Object:
    probe = {"exec": {"command": ["true"]}, "periodSeconds": 10}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
                         "containers": [{"name": "app", "image": "nginx",
                                         "readinessProbe": dict(probe),
                                         "livenessProbe": dict(probe),
                                         "resources": {"requests": {"cpu": "100m"}}}]}}}}


@dataclass(frozen=True)
class Field:
    path: tuple[str | int, ...]
    owner: str        # the Go struct holding the field, as the decoder names it
    go: str           # its Go type
    rule: str         # which validation applies to a well-typed value
    map_key: bool = False  # the last step is a key of a map (requests[cpu])

    @property
    def json_path(self) -> str:
        return ".".join(str(p) for p in self.path if not isinstance(p, int))

    @property
    def field_path(self) -> str:
        """The path as field errors print it: containers[0], requests[cpu]."""
        last = len(self.path) - 1
        return "".join(f"[{p}]" if isinstance(p, int) or (self.map_key and i == last)
                       else f".{p}" for i, p in enumerate(self.path))[1:]


def _probe(kind: str, field: str, rule: str = "nonnegative") -> Field:
    return Field((*CONTAINER, kind, field), "Probe", "int32", rule)


FIELDS = [
    Field(("spec", "replicas"), "DeploymentSpec", "int32", "nonnegative"),
    Field(("spec", "minReadySeconds"), "DeploymentSpec", "int32", "min_ready"),
    Field(("spec", "revisionHistoryLimit"), "DeploymentSpec", "int32", "nonnegative"),
    Field(("spec", "progressDeadlineSeconds"), "DeploymentSpec", "int32", "deadline"),
    Field(("spec", "paused"), "DeploymentSpec", "bool", "any"),
    Field(("spec", "template", "spec", "activeDeadlineSeconds"), "PodSpec", "int64", "range"),
    Field(("spec", "template", "spec", "hostname"), "PodSpec", "string", "dns_label"),
    _probe("readinessProbe", "periodSeconds"),
    _probe("readinessProbe", "failureThreshold"),
    _probe("readinessProbe", "initialDelaySeconds"),
    _probe("readinessProbe", "timeoutSeconds"),
    _probe("readinessProbe", "successThreshold"),
    _probe("livenessProbe", "successThreshold", "success_threshold"),
    Field((*CONTAINER, "resources", "requests", "cpu"), "ResourceRequirements",
          "resource.Quantity", "quantity", map_key=True),
]
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
# Quantities: (value as sent, what upstream stores, or None when the decoder refuses it).
QUANTITIES = {"1": "1", "0.5": "500m", "100m": "100m", "1000m": "1", "0": "0", "2e3": "2e3",
              "-1": "-1", "abc": None, "1.5.5": None, "": None}


def _json_kind(value: Any, go: str) -> str:
    """encoding/json's UnmarshalTypeError.Value: a number names its literal only when it
    does not fit an integer field."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number " + json.dumps(value) if go.startswith("int") else "number"
    return {str: "string", list: "array", dict: "object"}[type(value)]


def expected(field: Field, value: Any) -> tuple[str, Any]:
    """("decode", Go's words) | ("invalid", [field error, ...]) | ("stored", stored value)."""
    def cannot() -> tuple[str, Any]:
        return "decode", (f"json: cannot unmarshal {_json_kind(value, field.go)} into Go struct field "
                          f"{field.owner}.{field.json_path} of type {field.go}")
    if field.go in ("int32", "int64"):
        bound = INT32 if field.go == "int32" else 2**63
        if isinstance(value, bool) or not isinstance(value, int) or not -bound <= value < bound:
            return cannot()
    elif field.go in ("bool", "string") and not isinstance(value, {"bool": bool,
                                                                   "string": str}[field.go]):
        return cannot()
    elif field.go == "resource.Quantity":
        # Quantity.UnmarshalJSON parses any JSON value's text; it stores the canonical form.
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        elif not isinstance(value, str) or QUANTITIES[value] is None:
            return "decode", "quantities must match the regular expression"
        else:
            value = QUANTITIES[value]
    errors = _rule_errors(field.rule, field.field_path, value)
    return ("invalid", errors) if errors else ("stored", value)


def _rule_errors(rule: str, where: str, value: Any) -> list[str]:
    """What the kind's validation says of a well-typed value (pieces of its message)."""
    negative = [f"{where}: Invalid value: {value}: {NONNEGATIVE}"] \
        if isinstance(value, int) and value < 0 else []
    if rule == "nonnegative":
        return negative
    if rule == "min_ready":  # and progressDeadlineSeconds (defaulted to 600) must exceed it
        return negative + (["spec.progressDeadlineSeconds: Invalid value: 600: must be greater "
                            "than minReadySeconds"] if value >= 600 else [])
    if rule == "deadline":
        return negative + ([f"{where}: Invalid value: {value}: must be greater than "
                            "minReadySeconds"] if value <= 0 else [])
    if rule == "range":
        return [] if 1 <= value < INT32 else \
            [f"{where}: Invalid value: {value}: must be between 1 and 2147483647, inclusive"]
    if rule == "success_threshold":
        return negative + ([f"{where}: Invalid value: {value}: must be 1"]
                           if value not in (0, 1) else [])
    if rule == "dns_label":
        valid = not value or (len(value) <= 63 and _DNS_LABEL.fullmatch(value))
        return [] if valid else [f"{where}: Invalid value: {json.dumps(value)}: "]
    if rule == "quantity":
        return [f'{where}: Invalid value: "{value}": {NONNEGATIVE}'] if value.startswith("-") \
            else []
    return []


def _set(obj: Any, path: tuple[str | int, ...], value: Any) -> None:
    for step in path[:-1]:
        obj = obj[step]
    obj[path[-1]] = value


def _get(obj: Any, path: tuple[str | int, ...]) -> Any:
    for step in path:
        obj = obj[step]
    return obj


def _nest(target: Object, path: tuple[str | int, ...], value: Any) -> Object:
    cursor = target
    for step in path[:-1]:
        cursor = cursor.setdefault(step, {})
    cursor[path[-1]] = value
    return target


def _merge_patch(live: Object, path: tuple[str | int, ...], value: Any, strategic: bool) -> Object:
    """A merge patch replaces a list whole: it sends the whole container list, changed. A
    strategic patch merges containers by name: it sends the named container's change only."""
    index = next((i for i, step in enumerate(path) if isinstance(step, int)), None)
    if index is None:
        return _nest({}, path, value)
    items = copy.deepcopy(_get(live, path[:index]))
    if strategic:
        items = [{"name": items[0]["name"]}]
    _nest(items[0], path[index + 1:], value)
    return _nest({}, path[:index], items)


def request(env: Env, verb: str, field: Field, value: Any) -> Object:
    """Send value for field with verb: create, update, or a merge, strategic or JSON patch."""
    live = env.get("deployments", "web")
    if verb in ("create", "update"):
        body = copy.deepcopy(base() if verb == "create" else live)
        _set(body, field.path, value)
        if verb == "create":
            body["metadata"]["name"] = "fuzz"
            return env.req("create", "deployments", body=body)
        return env.req("update", "deployments", "default", "web", body=body)
    if verb == "json":
        pointer = "/" + "/".join(str(p) for p in field.path)
        patch: Any = [{"op": "add", "path": pointer, "value": value}]
    else:
        patch = _merge_patch(live, field.path, value, strategic=verb == "strategic")
    return env.req("patch", "deployments", "default", "web", body=patch,
                   options={"patchType": verb})


EDGES = st.sampled_from([INT32 - 1, INT32, -INT32, -INT32 - 1, 2**63, -(2**63) - 1])
INTS = st.one_of(st.integers(-3, 5), st.integers(-3, 700), st.integers(-3, 5), EDGES)
WELL_TYPED = {
    "int32": INTS, "int64": INTS, "bool": st.booleans(),
    "string": st.sampled_from(["web-1", "Not_A_Host", "a" * 64, "-1", "", "x.y"]),
    "resource.Quantity": st.one_of(st.sampled_from(sorted(QUANTITIES)), st.integers(-3, 999)),
}
ANY_TYPE = st.one_of(INTS, st.booleans(), st.floats(allow_nan=False, allow_infinity=False),
                     st.text(max_size=4), st.lists(st.integers(-1, 1), max_size=2),
                     st.just({"a": 1}), st.just("2"))


@st.composite
def field_and_value(draw: st.DrawFn) -> tuple[Field, Any]:
    """A field, and mostly a value of its type (else of any type)."""
    field = draw(st.sampled_from(FIELDS))
    typed = draw(st.integers(0, 3)) > 0
    return field, draw(WELL_TYPED[field.go] if typed else ANY_TYPE)


VERBS = ["create", "update", "merge", "strategic", "json"]


@settings(max_examples=250, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(case=field_and_value(), verb=st.sampled_from(VERBS))
def test_typed_fields_get_upstreams_answer_through_every_verb(case: tuple[Field, Any],
                                                              verb: str) -> None:
    field, value = case
    quantity = field.go == "resource.Quantity"
    assume(not quantity or type(value) in (bool, list, dict) or
           (type(value) is str and value in QUANTITIES) or
           (type(value) is int and -1000 < value < 1000))
    env = Env()
    env.req("create", "deployments", body=base())
    outcome, detail = expected(field, value)
    event(f"{verb}: {outcome}")
    revision = env.store.revision
    try:
        result = request(env, verb, field, value)
    except ApiError as err:
        assert outcome != "stored", (field.path, value, verb, err.message)
        assert env.store.revision == revision, "a refused write changed the store"
        if outcome == "decode":
            assert err.code in (400, 422) and detail in err.message, (err.message, detail)
            if verb in ("create", "update"):
                assert err.code == 400 and err.message.startswith(
                    'Deployment in version "v1" cannot be handled as a Deployment: ')
        else:
            name = "fuzz" if verb == "create" else "web"
            assert err.code == 422, err.message
            assert err.message.startswith(f'Deployment.apps "{name}" is invalid: ')
            for words in detail:
                assert words in err.message, (err.message, words)
        return
    assert outcome == "stored", (field.path, value, verb, outcome, detail)
    assert _get(result, field.path) == detail
    stored = env.get("deployments", result["metadata"]["name"])
    assert _get(stored, field.path) == detail
