# Generated from solutions/ex09_services.py by `kubelab release`. Do the exercises in this file, then
# check them with `kubelab grade` (see the README).
# release-digest: 31a378093ebfa415
"""Exercises for notebook 09 · Services: EndpointSlices and kube-proxy's rules.

The grader runs your code inside a real cluster: for 9.1 kubelab's EndpointSlice controller
keeps its informers, queue and writes, and asks your function what to create, update and delete
for one Service; for 9.2 kube-proxy's rules on a node get your KUBE-SVC chain, and thousands of
seeded requests are routed through it.

    kubelab grade 9                                          # both exercises
    from kubelab.grading import grade; grade("9.2")

Do not import kubelab.controllers or kubelab.proxy here: writing them is the exercise.
"""

from __future__ import annotations

import copy
from typing import Any

MANAGED_BY = "endpointslice-controller.k8s.io"


def reconcile_endpoint_slices(service: dict[str, Any], pods: list[dict[str, Any]],
                              slices: list[dict[str, Any]], max_endpoints: int = 100
                              ) -> dict[str, list[dict[str, Any]]]:
    """Exercise 9.1: The EndpointSlice reconcile for one Service.

    Notebook 09_services, section "4. EndpointSlices: who is behind the Service". Hard, 10 points.

    kubernetes/endpointslice reconciler.go in small: given the Service, the pods its selector
    matches and the EndpointSlices it already has (all from the informers: do not change them,
    copy), return {"create": [...], "update": [...], "delete": [...]}: the slices to write.

    - A pod belongs when it has status.podIP and its phase is not Succeeded or Failed. Its
      endpoint: {"addresses": [podIP], "conditions": {"ready": R and not T, "serving": R,
      "terminating": T}, "targetRef": {"kind": "Pod", "namespace": ns, "name": name, "uid": uid},
      "nodeName": spec.nodeName}, where R is the pod's Ready condition being "True" and T is
      metadata.deletionTimestamp being set: terminating pods stay, not ready.
    - Every slice has "addressType": "IPv4", "ports": one {"name": <service port's name or "">,
      "port": <targetPort, a number here>, "protocol": <protocol>} per service port, and at most
      max_endpoints endpoints. A new slice: metadata {"generateName": "<service>-", "namespace":
      ns, "labels": {"kubernetes.io/service-name": <service>, "endpointslice.kubernetes.io/
      managed-by": "endpointslice-controller.k8s.io"}, "ownerReferences": [{"apiVersion": "v1",
      "kind": "Service", "name": <service>, "uid": <its uid>, "controller": True,
      "blockOwnerDeletion": True}]}. An update is an existing slice (its metadata kept) with new
      endpoints.
    - Churn is graded: write as little as you can. A slice whose endpoints are all still right
      is not written; one endpoint that changed updates its slice only; a slice left empty is
      deleted, unless it is the Service's only slice (an empty one is kept as a placeholder:
      a Service with no endpoints has exactly one slice, with no endpoints and no ports).
    """
    raise NotImplementedError("exercise 9.1: The EndpointSlice reconcile for one Service")


def service_to_endpoint_rules(service_port_name: str, chain: str,
                              endpoints: list[tuple[str, str]]) -> list[str]:
    """Exercise 9.2: The KUBE-SVC probability ladder.

    Notebook 09_services, section "5. kube-proxy's rules on one node". Medium, 10 points.

    kube-proxy's writeServiceToEndpointRules (pkg/proxy/iptables/proxier.go): the rules of the
    Service's chain that pick one endpoint, as iptables-save lines. endpoints is a list of
    (ip:port, its KUBE-SEP chain) pairs. iptables tries the rules in order and the first that
    matches wins, so rule i of n must match with probability 1/(n - i): 1/n of all packets for
    the first, 1/(n - 1) of the rest for the second, ..., and the last always. Write each as

        -A <chain> -m comment --comment "<service_port_name> -> <ip:port>" -m statistic
            --mode random --probability <p> -j <KUBE-SEP chain>

    (one line; the last rule has no `-m statistic` part), with p printed with ten decimals as
    Go's %0.10f does (0.3333333333). No endpoints: no rules.
    """
    raise NotImplementedError("exercise 9.2: The KUBE-SVC probability ladder")
