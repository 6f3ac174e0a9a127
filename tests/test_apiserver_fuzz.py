"""Bad input never breaks the server: random malformed objects get a 4xx and change nothing."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_apiserver_support import Env, config_map, deployment, node, pod

from kubelab.api.errors import ApiError

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) |
                      st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=12)
NASTY = st.sampled_from([
    "x" * 2_000_000,                     # over the store's request limit
    "y" * 3_200_000,                     # over the API server's body limit
    "Bad_Name!", "", "-leading", "a" * 300, "..",
    {1, 2}, b"bytes", object(),          # not JSON at all
    float("nan"),
])
BASES = {"configmaps": config_map(), "pods": pod(), "deployments": deployment(),
         "nodes": node()}


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if len(prefix) > 6:
        return out
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


def _deep(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = [value]
    return value


@st.composite
def malformed(draw: st.DrawFn) -> tuple[str, Any]:
    resource = draw(st.sampled_from(sorted(BASES)))
    body: Any = copy.deepcopy(BASES[resource])
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(body)
        path = draw(st.sampled_from(paths))
        op = draw(st.sampled_from(["replace", "delete", "unknown", "nasty", "deep", "whole"]))
        if op == "whole":
            body = draw(VALUES)
            continue
        parent: Any = body
        for step in path[:-1]:
            parent = parent[step]
        target = parent[path[-1]] if path else body
        if op == "delete" and path:
            del parent[path[-1]]
        elif op == "unknown" and isinstance(target, dict):
            target[draw(st.text(min_size=1, max_size=8))] = draw(VALUES)
        else:
            value = {"replace": lambda: draw(VALUES), "nasty": lambda: draw(NASTY),
                     "deep": lambda: _deep(draw(st.sampled_from([50, 3000]))),
                     "unknown": lambda: draw(VALUES), "delete": lambda: None}[op]()
            if path:
                parent[path[-1]] = value
            else:
                body = value
    return resource, body


ENV = Env()
for _resource, _body in BASES.items():
    ENV.create(_resource, _body, namespace="" if _resource == "nodes" else "default")


@settings(max_examples=150, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(case=malformed(), verb=st.sampled_from(["create", "update"]))
def test_malformed_objects_get_a_4xx_and_change_nothing(case: tuple[str, Any], verb: str) -> None:
    resource, body = case
    namespace = "" if resource == "nodes" else "default"
    name = BASES[resource]["metadata"]["name"]
    revision = ENV.store.revision
    try:
        result = ENV.req(verb, resource, namespace, name if verb == "update" else "", body=body)
    except ApiError as err:
        assert 400 <= err.code < 500, (err.code, err.message)
        assert ENV.store.revision == revision
        assert ENV.server.audit[-1].code == err.code and ENV.server.audit[-1].stage
        return
    # Some mutations leave a valid object: then it was stored, as asked.
    assert isinstance(result, dict) and result["metadata"]["resourceVersion"]
    if verb == "create":
        ENV.delete(resource, result["metadata"]["name"], namespace, gracePeriodSeconds=0)


@given(body=VALUES | NASTY)
@settings(max_examples=100, deadline=None, derandomize=True, database=None)
def test_any_value_as_a_body_is_a_4xx(body: Any) -> None:
    revision = ENV.store.revision
    try:
        ENV.req("create", "configmaps", body=body)
    except ApiError as err:
        assert 400 <= err.code < 500, (err.code, err.message)
        assert ENV.store.revision == revision
    else:  # pragma: no cover - a random value is never a valid ConfigMap with a name
        raise AssertionError(f"accepted {body!r}")


OPTIONS = st.fixed_dictionaries({}, optional={
    "patchType": st.sampled_from(["merge", "strategic", "json", "apply", 3]),
    "propagationPolicy": st.sampled_from(["Orphan", "Foreground", "Background", "x", None, 1]),
    "gracePeriodSeconds": st.one_of(st.integers(-5, 60), st.floats(), st.text(max_size=3)),
    "preconditions": st.one_of(st.dictionaries(st.sampled_from(["uid", "resourceVersion"]),
                                               st.text(max_size=5)), VALUES),
})


@settings(max_examples=150, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(verb=st.sampled_from(["create", "update", "patch", "delete", "get", "list"]),
       resource=st.sampled_from(sorted(BASES)),
       subresource=st.sampled_from(["", "", "status", "scale", "binding", "finalize"]),
       options=OPTIONS, body=VALUES | NASTY, selector=st.text(max_size=10),
       limit=st.integers(-2, 5), token=st.text(max_size=6))
def test_any_request_shape_gets_an_api_error_or_succeeds(
        verb: str, resource: str, subresource: str, options: dict[str, Any], body: Any,
        selector: str, limit: int, token: str) -> None:
    env = Env()
    for name, base in BASES.items():
        env.create(name, base, namespace="" if name == "nodes" else "default")
    namespace = "" if resource == "nodes" else "default"
    name = "" if verb in ("create", "list") and not subresource else \
        BASES[resource]["metadata"]["name"]
    try:
        env.req(verb, resource, namespace, name, subresource=subresource, body=body,
                options=options, label_selector=selector, limit=limit,
                token=token if token.startswith("x") else None)
    except ApiError as err:
        assert 400 <= err.code < 500, (err.code, err.message)
