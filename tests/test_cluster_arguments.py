"""Cluster(...) refuses a wrong argument up front with a TypeError or ValueError that names it
(issue 28), never an AttributeError or KeyError from deep inside the cluster."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from kubelab import Cluster


def _no_start(ctx: Any) -> None:
    return None


@pytest.mark.parametrize(("arguments", "error", "message"), [
    ({"replicas": ["apiserver"]}, TypeError,
     "replicas must be a dict of component name -> count, got list ['apiserver']"),
    ({"nodes": [{"garbage": 1}]}, ValueError,
     "nodes[0] is a Node manifest without metadata.name: {'garbage': 1}"),
    ({"nodes": [{"metadata": {"name": "a"}}, {"metadata": {"name": "a"}}]}, ValueError,
     "nodes[1]: a second Node named 'a'"),
    ({"nodes": ["node-1"]}, TypeError, "nodes[0] must be a Node manifest (a dict), got str"),
    ({"nodes": "3"}, TypeError, "nodes must be a number of nodes or a list of Node manifests, got str '3'"),
    ({"nodes": 2.5}, TypeError, "nodes must be a number of nodes or a list of Node manifests, got float 2.5"),
    ({"nodes": True}, TypeError,
     "nodes must be a number of nodes or a list of Node manifests, got bool True"),
    ({"nodes": -1}, ValueError, "nodes must be >= 0, got -1"),
    ({"etcd_members": "3"}, TypeError, "etcd_members must be an integer, got str '3'"),
    ({"etcd_members": 0}, ValueError, "etcd_members must be between 1 and 9, got 0"),
    ({"speed": math.nan, "realtime": True}, ValueError, "speed must be a finite number > 0, got nan"),
    ({"speed": math.inf, "realtime": True}, ValueError, "speed must be a finite number > 0, got inf"),
    ({"speed": 0}, ValueError, "speed must be a finite number > 0, got 0"),
    ({"speed": -2.0}, ValueError, "speed must be a finite number > 0, got -2.0"),
    ({"speed": "fast"}, TypeError, "speed must be a number, got str 'fast'"),
    ({"max_request_bytes": 0}, ValueError, "max_request_bytes must be >= 1, got 0"),
    ({"max_request_bytes": "1Mi"}, TypeError, "max_request_bytes must be an integer, got str '1Mi'"),
    ({"seed": "x"}, TypeError, "seed must be an int, got str 'x'"),
    ({"seed": 1.5}, TypeError, "seed must be an int, got float 1.5"),
    ({"components": "scheduler"}, TypeError,
     "components must be a list of component names, got str 'scheduler'"),
    ({"hollow": "yes"}, TypeError, "hollow must be True or False, got str 'yes'"),
    ({"realtime": 1}, TypeError, "realtime must be True or False, got int 1"),
    ({"store": None}, TypeError,
     'store must be a string ("embedded", "etcd" or an etcd:// URL), got NoneType None'),
    ({"replace": ["scheduler"]}, TypeError,
     "replace must be a dict of component name -> constructor, got list ['scheduler']"),
    ({"replace": {"scheduler": 3}}, TypeError,
     "replace['scheduler'] must be a constructor (a class or function taking the component's "
     "context), got int 3"),
    ({"replace": {"scheduler": _no_start}}, TypeError,
     "replace['scheduler'] returned NoneType None, not a component: it has no start() or stop()"),
    ({"replace": {"scheduler": _no_start}, "replicas": {"scheduler": 2}}, TypeError,
     "replace['scheduler'] returned NoneType None, not a component: it has no start() or stop()"),
])
def test_a_wrong_argument_is_named(arguments: dict[str, Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        Cluster(**arguments)


@pytest.mark.parametrize("resource", [None, 3, b"pods"])
def test_a_client_call_with_a_resource_that_is_not_a_string(resource: Any) -> None:
    c = Cluster(nodes=0, components=[])
    with pytest.raises(TypeError, match=f'^resource must be a string such as "pods", got '
                                        f"{type(resource).__name__} {re.escape(repr(resource))}$"):
        c.client.get(resource, "x")


def test_the_right_arguments_still_build_a_cluster() -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}}
    c = Cluster(nodes=[node], seed=3, components=[], speed=2, max_request_bytes=1 << 16,
                etcd_members=None, replicas={"scheduler": 1})
    assert c.node_names == ["a"]
