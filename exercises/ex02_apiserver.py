# Generated from solutions/ex02_apiserver.py by `kubelab release`. Do the exercises in this file, then
# check them with `kubelab grade` (see the README).
# release-digest: 09c7de2f396fa6e9
"""Exercises for notebook 02 · The API server: the only door to the store.

Two admission plugins, the kind a platform team adds to its clusters. The grader registers
yours at the end of a running API server's admission chain (after the built-in Defaults,
NamespaceLifecycle, ... as `--enable-admission-plugins` would) and sends it real requests
through a client: creates, updates, status updates and deletes, by users and by the scheduler.

    kubelab grade 2                                          # both exercises
    from kubelab.grading import grade; grade("2.1")

A plugin refuses a request by raising an ApiError, normally admission_forbidden(attrs, reason),
which the client receives as `403 Forbidden: pods "web" is forbidden: <reason>`. A mutating
plugin changes attrs.object in place. See kubelab/apiserver/admission/chain.py for Attributes.
"""

from __future__ import annotations

from typing import Any, ClassVar

from kubelab.apiserver.admission import AdmissionPlugin, Attributes, admission_forbidden


class RequireTeamLabel(AdmissionPlugin):
    """Exercise 2.1: Admission: require a team label.

    Notebook 02_apiserver, section "Admission". Easy, 10 points.

    A validating admission plugin named "RequireTeamLabel": every Pod and every Deployment
    (group apps) must say which team owns it.

    - Look only at CREATE and UPDATE of the object itself: never at a subresource (status,
      binding, scale: a kubelet reporting status must not be blocked by an ownership rule) and
      never at DELETE.
    - Objects in the namespace kube-system are exempt: they belong to the cluster itself.
    - Refuse when metadata.labels["team"] is missing or empty, with
      admission_forbidden(attrs, 'missing required label "team"'), which the client sees as
      403 Forbidden `pods "web" is forbidden: missing required label "team"`.
    - A Deployment must also put the label on the pods it will create: refuse a template
      without it with the reason 'missing required label "team" in
      spec.template.metadata.labels' (better now than a ReplicaSet failing to create pods).
    """

    name = "RequireTeamLabel"

    def validate(self, attrs: Attributes) -> None:
        raise NotImplementedError("exercise 2.1: Admission: require a team label")


class DefaultResourceRequests(AdmissionPlugin):
    """Exercise 2.2: Admission: default resource requests.

    Notebook 02_apiserver, section "Admission". Medium, 10 points.

    A mutating admission plugin named "DefaultResourceRequests" that does what the LimitRanger
    plugin does for a namespace whose LimitRange has defaultRequest cpu: 100m, memory: 128Mi
    (plugin/pkg/admission/limitranger/admission.go, mergePodResourceRequirements):

    - Only on CREATE of a Pod (resource "pods", group ""), never a subresource.
    - For every container in spec.containers, then every one in spec.initContainers: each
      resource of DEFAULT_REQUESTS missing from resources.requests is set to its default;
      requests already there are kept. (A container with only limits already requests its
      limits: the API server's defaulting ran before admission.)
    - If anything was set, annotate the pod with LimitRanger's own words:
      metadata.annotations["kubernetes.io/limit-ranger"] =
      "LimitRanger plugin set: cpu, memory request for container web; cpu request for init
      container setup" (one part per container that got something, resource names sorted
      and joined with ", ", parts joined with "; ", "container" or "init container").
    - Change attrs.object in place.
    """

    name = "DefaultResourceRequests"
    DEFAULT_REQUESTS: ClassVar[dict[str, str]] = {"cpu": "100m", "memory": "128Mi"}
    ANNOTATION = "kubernetes.io/limit-ranger"

    def mutate(self, attrs: Attributes) -> None:
        raise NotImplementedError("exercise 2.2: Admission: default resource requests")
