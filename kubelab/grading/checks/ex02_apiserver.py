"""Checks for notebook 02's exercises: two admission plugins in a running API server.

The learner's plugin is registered at the end of the API server's admission chain, as
`--enable-admission-plugins` would, and every check talks to the server through a client:
what is refused, with which status and message, and what the stored object looks like.
"""

from __future__ import annotations

from typing import Any

from kubelab.api.errors import ApiError
from kubelab.apiserver.admission.chain import AdmissionPlugin, Attributes
from kubelab.grading.checks.common import configmap, pod
from kubelab.grading.context import CheckContext
from kubelab.grading.exercises import check

__all__: list[str] = []

TEAM = {"team": "payments"}
LIMIT_RANGER = "kubernetes.io/limit-ranger"


class _Validating(AdmissionPlugin):
    """The learner's validating plugin, as the API server's chain sees it."""

    def __init__(self, plugin: Any) -> None:
        self.name = str(plugin.name)
        self._plugin = plugin

    def validate(self, attrs: Attributes) -> None:
        self._plugin.validate(attrs)


class _Mutating(AdmissionPlugin):
    """The learner's mutating plugin. Its change comes back as a copy: apply it in place."""

    def __init__(self, ctx: CheckContext, plugin: Any) -> None:
        self.name = str(plugin.name)
        self._ctx, self._plugin = ctx, plugin

    def mutate(self, attrs: Attributes) -> None:
        _, after = self._ctx.invoke(self._plugin.mutate, attrs)
        changed = getattr(after[0], "object", None)
        if isinstance(attrs.object, dict) and isinstance(changed, dict):
            attrs.object.clear()
            attrs.object.update(changed)


def _cluster(ctx: CheckContext, mutating: bool, *, register: bool = True, **kwargs: Any) -> Any:
    kwargs.setdefault("nodes", 0)
    kwargs.setdefault("components", [])
    c = ctx.cluster(**kwargs)
    if register:
        _register(ctx, c, mutating)
    return c


def _register(ctx: CheckContext, c: Any, mutating: bool) -> None:
    plugin = ctx.learner()
    c.apiserver.admission.register(_Mutating(ctx, plugin) if mutating else _Validating(plugin))


def deployment(name: str, labels: dict[str, str] | None, template_labels: dict[str, str]) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if labels is not None:
        meta["labels"] = labels
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name, **template_labels}},
                                  "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}}}


def _refused(ctx: CheckContext, action: Any, what: str, message: str) -> None:
    try:
        action()
    except ApiError as err:
        got = f"{err.code} {err.reason}: {err.message}"
        if err.code != 403 or err.message != message:
            ctx.fail(f"{what} was refused, but not as admission refuses",
                     expected=f"403 Forbidden: {message}", got=got,
                     hint="Raise admission_forbidden(attrs, reason): the client sees 403 Forbidden.")
        return
    ctx.fail(f"{what} was admitted", expected=f"403 Forbidden: {message}", got="201 Created / 200 OK")


def _admitted(ctx: CheckContext, action: Any, what: str) -> Any:
    try:
        return action()
    except ApiError as err:
        ctx.fail(f"{what} was refused", expected="admitted", got=f"{err.code} {err.reason}: {err.message}")


MISSING = 'missing required label "team"'


@check("2.1", points=3, hint='Refuse with admission_forbidden(attrs, \'missing required label "team"\') '
       "when metadata.labels.team is missing or empty.")
def refuses_pods_without_a_team(ctx: CheckContext) -> None:
    c = _cluster(ctx, mutating=False)
    _refused(ctx, lambda: c.client.create(pod("web")), "a pod without labels",
             f'pods "web" is forbidden: {MISSING}')
    _refused(ctx, lambda: c.client.create(pod("web", labels={"team": ""})), "a pod with an empty team",
             f'pods "web" is forbidden: {MISSING}')
    _admitted(ctx, lambda: c.client.create(pod("web", labels=TEAM)), "a pod with team=payments")
    _admitted(ctx, lambda: c.client.create(configmap("settings", {"a": "b"})), "a ConfigMap (not a pod)")


@check("2.1", points=3, hint="Check CREATE and UPDATE of the object itself; a subresource "
       "(status, binding) or a DELETE is not yours to refuse.")
def covers_updates_but_not_status_or_delete(ctx: CheckContext) -> None:
    c = _cluster(ctx, mutating=False, register=False)
    old = c.client.create(pod("legacy"))                     # from before the policy existed
    c.client.create(pod("web", labels=TEAM))
    _register(ctx, c, mutating=False)
    web = c.client.get("pods", "web")
    web["metadata"]["labels"] = {"app": "web"}
    _refused(ctx, lambda: c.client.update(web), "an update that removes the team label",
             f'pods "web" is forbidden: {MISSING}')
    old["status"] = {"phase": "Running"}
    _admitted(ctx, lambda: c.client.update_status(old), "a status update (what the kubelet writes)")
    _admitted(ctx, lambda: c.client.delete("pods", "legacy"), "deleting a pod without a team")


@check("2.1", points=2, hint="A Deployment needs the label itself and on the pods it will make: "
       "spec.template.metadata.labels.")
def deployments_and_their_templates(ctx: CheckContext) -> None:
    c = _cluster(ctx, mutating=False)
    _refused(ctx, lambda: c.client.create(deployment("web", None, TEAM)), "a Deployment without a team",
             f'deployments.apps "web" is forbidden: {MISSING}')
    _refused(ctx, lambda: c.client.create(deployment("web", TEAM, {})),
             "a Deployment whose pod template has no team",
             f'deployments.apps "web" is forbidden: {MISSING} in spec.template.metadata.labels')
    _admitted(ctx, lambda: c.client.create(deployment("web", TEAM, TEAM)), "a Deployment with both labels")


@check("2.1", points=2, hint="Objects in kube-system belong to the cluster itself: let them through.")
def kube_system_is_exempt(ctx: CheckContext) -> None:
    c = _cluster(ctx, mutating=False)
    _refused(ctx, lambda: c.client.create(pod("coredns", labels={"team": ""})), "a pod in default "
             "with an empty team (the policy applies outside kube-system)",
             f'pods "coredns" is forbidden: {MISSING}')
    _admitted(ctx, lambda: c.client.create(pod("coredns", namespace="kube-system")),
              "a pod in kube-system without a team")


# ---------------------------------------------------------------- 2.2 DefaultResourceRequests


def _requests(obj: dict[str, Any], field: str = "containers") -> list[dict[str, str]]:
    return [dict((c.get("resources") or {}).get("requests") or {}) for c in obj["spec"].get(field) or []]


@check("2.2", points=3, hint="For each container without resources.requests.cpu (or memory) set "
       "it to 100m (128Mi); keep what is there.")
def fills_missing_requests(ctx: CheckContext) -> None:
    c = _cluster(ctx, mutating=True)
    web = c.client.create(pod("web", containers=[
        {"name": "web", "image": "nginx:1.27"},
        {"name": "sidecar", "image": "envoy:1.30", "resources": {"requests": {"cpu": "250m"}}}]))
    ctx.expect_equal(_requests(web), [{"cpu": "100m", "memory": "128Mi"}, {"cpu": "250m", "memory": "128Mi"}],
                     "spec.containers[*].resources.requests after admission",
                     unit="requests per container =")
    stored = c.client.get("pods", "web")
    ctx.expect_equal(_requests(stored), _requests(web), "the stored pod must carry the defaults too",
                     unit="requests per container =")


@check("2.2", points=3, hint='Annotate kubernetes.io/limit-ranger: "LimitRanger plugin set: cpu, '
       'memory request for container web; cpu request for init container setup" (containers '
       "first, then init containers, resource names sorted, joined with '; ').")
def annotates_like_limit_ranger(ctx: CheckContext) -> None:
    c = _cluster(ctx, mutating=True)
    web = c.client.create(pod("web", containers=[
        {"name": "web", "image": "nginx:1.27"},
        {"name": "sidecar", "image": "envoy:1.30", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}],
        initContainers=[{"name": "setup", "image": "busybox:1.36",
                         "resources": {"requests": {"memory": "64Mi"}}}]))
    annotation = (web["metadata"].get("annotations") or {}).get(LIMIT_RANGER)
    ctx.expect_equal(annotation, "LimitRanger plugin set: cpu, memory request for container web; "
                     "cpu request for init container setup", f"metadata.annotations[{LIMIT_RANGER!r}]",
                     unit=f"annotation {LIMIT_RANGER} =")
    ctx.expect_equal(_requests(web, "initContainers"), [{"cpu": "100m", "memory": "64Mi"}],
                     "spec.initContainers[*].resources.requests", unit="requests per init container =")
    full = c.client.create(pod("full", containers=[
        {"name": "app", "image": "nginx:1.27", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]))
    ctx.expect_equal((full["metadata"].get("annotations") or {}).get(LIMIT_RANGER), None,
                     "a pod whose requests are all set gets no annotation",
                     unit=f"annotation {LIMIT_RANGER} =")


@check("2.2", points=2, hint="Only pods, only CREATE, never a subresource; a limit without a request "
       "was already copied into requests by defaulting, before admission.")
def leaves_everything_else_alone(ctx: CheckContext) -> None:
    c = _cluster(ctx, mutating=True)
    plain = c.client.create(pod("plain"))
    ctx.expect_equal(_requests(plain), [{"cpu": "100m", "memory": "128Mi"}],
                     "a pod without requests gets the defaults (leaving everything alone is not "
                     "enough: the plugin must work where it applies)", unit="requests per container =")
    capped = c.client.create(pod("capped", containers=[
        {"name": "app", "image": "nginx:1.27", "resources": {"limits": {"cpu": "500m", "memory": "256Mi"}}}]))
    ctx.expect_equal(_requests(capped), [{"cpu": "500m", "memory": "256Mi"}],
                     "a container with limits only requests its limits (SetDefaults_Pod), not the defaults",
                     unit="requests per container =")
    dep = c.client.create({"apiVersion": "apps/v1", "kind": "Deployment",
                           "metadata": {"name": "web", "namespace": "default"},
                           "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {
                               "metadata": {"labels": {"app": "web"}},
                               "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}}})
    ctx.expect_equal(_requests(dep["spec"]["template"]), [{}],
                     "a Deployment's pod template is left alone (its pods get defaults when created)",
                     unit="requests per template container =")
    before = c.client.get("pods", "capped")
    before["metadata"]["labels"] = {"touched": "yes"}
    after = c.client.update(before)
    ctx.expect_equal((after["metadata"].get("annotations") or {}).get(LIMIT_RANGER), None,
                     "an UPDATE is not defaulted again", unit=f"annotation {LIMIT_RANGER} =")


@check("2.2", points=2, hint="The scheduler counts requests: with defaults, ten 100m pods fill a "
       "1-CPU node and the eleventh waits.")
def the_scheduler_counts_the_defaults(ctx: CheckContext) -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "small", "labels": {}},
            "spec": {}, "status": {"capacity": {"cpu": "1", "memory": "4Gi", "pods": "110"},
                                   "allocatable": {"cpu": "1", "memory": "4Gi", "pods": "110"}}}
    c = _cluster(ctx, mutating=True, nodes=[node], components=["scheduler"])
    for i in range(11):
        c.client.create(pod(f"p{i}"))
    c.run(30)
    bound = [p["metadata"]["name"] for p in c.get("pods") if p["spec"].get("nodeName")]
    ctx.expect_equal(len(bound), 10, "pods bound to the 1-CPU node (each requests 100m after admission)",
                     unit="pod(s) bound")
