"""Hostile input against a running cluster: refused cleanly or stored, and the cluster converges.

A few writes drawn from the inputs of issue 15 (bad types, negative counts, probes without a
handler, patches that drop metadata, strategic patches upstream refuses, YAML bombs) go to a
running Deployment through apply, update and every patch type. Each either fails with an
ApiError or ParseError (never another exception) and changes nothing, or is stored; then the
simulation runs on without an exception, and the Deployment reaches the state its stored spec
asks for: every replica updated, ready and available.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import kubelab
from kubelab.api.errors import ApiError, ParseError

Object = dict[str, Any]
PROBE = {"exec": {"command": ["true"]}, "periodSeconds": 2}
DEPLOYMENT: Object = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
    "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
             "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
                 {"name": "app", "image": "nginx", "readinessProbe": PROBE,
                  "resources": {"requests": {"cpu": "100m"}}}]}}}}
CONTAINER = ("spec", "template", "spec", "containers", 0)
PATHS = [("spec", "replicas"), ("spec", "minReadySeconds"), ("spec", "paused"),
         (*CONTAINER, "readinessProbe"), (*CONTAINER, "readinessProbe", "periodSeconds"),
         (*CONTAINER, "readinessProbe", "failureThreshold"),
         (*CONTAINER, "readinessProbe", "successThreshold"),
         (*CONTAINER, "resources", "requests", "cpu"), (*CONTAINER, "resources", "requests"),
         ("spec", "template", "spec", "hostname"), ("spec", "template", "spec", "containers"),
         ("metadata",), ("metadata", "name"), ("spec", "selector")]
# Small numbers keep a stored spec reachable in bounded time (a probe every 2**31 s is valid
# upstream too, but never makes a pod ready within a test).
VALUES = st.one_of(
    st.integers(-3, 4), st.none(), st.booleans(),
    st.sampled_from(["2", "-1", "yes", "bogus", "Not_A_Host", "web-2", "500m", "0.5", "-4"]),
    st.sampled_from([[], ["-1"], {}, {"periodSeconds": 1}, {"bogus": "1"}, {"exec": {}},
                     {"$patch": "explode"}, [{"image": "x"}], 1.5]))
YAML_BOMBS = [
    "a: &a [*a]\n",
    "apiVersion: v1\nkind: List\nitems: 5\n",
    "a: " + "[" * 300 + "]" * 300,
    "x: &x [1,1,1,1,1,1,1,1,1,1]\n" + "".join(
        f"{n}: &{n} [{', '.join(['*' + p] * 10)}]\n" for p, n in zip("xabcdef", "abcdefg", strict=True)),
]


def _set(obj: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    target = obj
    for step in path[:-1]:
        target = target[step] if isinstance(target, list) else target.setdefault(step, {})
    target[path[-1]] = value
    return obj


def _nested(path: tuple[Any, ...], value: Any) -> Any:
    """A merge patch setting path: lists become one-item lists of the named container."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if rest and isinstance(rest[0], int):
        return {head: [{"name": "app", **_nested(rest[1:], value)}]} if rest[1:] else \
            {head: [value]}
    return {head: _nested(rest, value)}


def write(c: kubelab.Cluster, verb: str, path: tuple[Any, ...], value: Any) -> None:
    live = c.get("deployments", "web")
    if verb == "apply":
        c.apply(_set(copy.deepcopy(DEPLOYMENT), path, value))
    elif verb == "update":
        c.client.update(_set(live, path, value))
    elif verb == "json":
        pointer = "/" + "/".join(str(p) for p in path)
        c.client.patch("deployments", "web", [{"op": "add", "path": pointer, "value": value}],
                       patch_type="json")
    else:
        c.client.patch("deployments", "web", _nested(path, value), patch_type=verb)


def converged(c: kubelab.Cluster) -> bool:
    """Every Deployment (an apply with another name makes a second one) has all its replicas
    updated and available, and every pod is ready."""
    want = 0
    for deploy in c.get("deployments"):
        replicas, status = deploy["spec"]["replicas"], deploy.get("status") or {}
        want += replicas
        if status.get("observedGeneration") != deploy["metadata"]["generation"] or any(
                status.get(f, 0) != replicas
                for f in ("replicas", "updatedReplicas", "availableReplicas")):
            return False
    pods = [p for p in c.get("pods") if not p["metadata"].get("deletionTimestamp")]
    ready = [p for p in pods if any(cond["type"] == "Ready" and cond["status"] == "True"
                                    for cond in (p.get("status") or {}).get("conditions") or [])]
    return len(pods) == len(ready) == want


WRITES = st.lists(st.tuples(st.sampled_from(["apply", "update", "merge", "strategic", "json"]),
                            st.sampled_from(PATHS), VALUES), min_size=1, max_size=3)


@settings(max_examples=40, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(writes=WRITES, bomb=st.sampled_from([None, *YAML_BOMBS]))
def test_hostile_writes_leave_a_cluster_that_converges(
        writes: list[tuple[str, tuple[Any, ...], Any]], bomb: str | None) -> None:
    c = kubelab.Cluster(nodes=2, seed=0)
    c.apply(copy.deepcopy(DEPLOYMENT))
    c.run(20)
    for verb, path, value in writes:
        before = c.get("deployments", "web")
        try:
            write(c, verb, path, value)
            event("stored")
        except (ApiError, ParseError) as err:
            event("refused")
            assert not isinstance(err, ApiError) or err.code in range(400, 501), err
            assert c.get("deployments", "web") == before, "a refused write changed the object"
        c.run(1)
    if bomb is not None:
        try:
            c.apply(bomb)
        except ParseError as err:
            assert "error converting YAML to JSON" in str(err) or "unable to decode" in str(err)
    after = c.get("deployments", "web")
    assert after["metadata"]["name"] == "web" and after["metadata"]["uid"]
    c.run_until(lambda: converged(c), timeout=600)
