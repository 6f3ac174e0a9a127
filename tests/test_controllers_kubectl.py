"""kubectl rollout status/history/undo/pause/resume/restart and delete --cascade, as kubectl
prints them."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab.api.request import Request
from kubelab.client.client import Client
from kubelab.cluster import Cluster
from kubelab.kubectl import kubectl
from tests.controllers_helpers import cluster, deployment, replica_sets, settle

DELETED_WEB = 'deployment.apps "web" deleted from default namespace'  # kubectl 1.34 names the namespace


def rolled(c: Cluster, *images: str) -> None:
    c.apply(deployment(replicas=2))
    settle(c)
    for image in images:
        c.client.patch("deployments", "web", {"spec": {"template": {"spec": {
            "containers": [{"name": "app", "image": image}]}}}}, patch_type="strategic")
        settle(c, rounds=4)


def test_rollout_status_lines_follow_the_rollout() -> None:
    c = cluster()
    c.apply(deployment(replicas=3, surge=1, unavailable=0))
    assert c.kubectl("rollout status deployment/web") == \
        "Waiting for deployment spec update to be observed..."
    c.run(1)
    assert c.kubectl("rollout status deployment/web") == \
        'Waiting for deployment "web" rollout to finish: 0 of 3 updated replicas are available...'
    settle(c)
    c.client.patch("deployments", "web", {"spec": {"template": {"spec": {
        "containers": [{"name": "app", "image": "nginx:1.26"}]}}}}, patch_type="strategic")
    c.run(1)
    assert c.kubectl("rollout status deploy/web") == \
        'Waiting for deployment "web" rollout to finish: 1 out of 3 new replicas have been updated...'
    lines = []
    for _ in range(10):
        settle(c, seconds=0.5)
        lines.append(c.kubectl("rollout status deployment web"))
    assert lines[-1] == 'deployment "web" successfully rolled out'
    assert 'Waiting for deployment "web" rollout to finish: 1 old replicas are pending termination...' \
        in lines


def test_rollout_history_and_undo() -> None:
    c = cluster()
    rolled(c, "nginx:1.26")
    c.kubectl("annotate deployment web kubernetes.io/change-cause=bump")
    c.client.patch("deployments", "web", {"spec": {"template": {"spec": {
        "containers": [{"name": "app", "image": "nginx:1.27"}]}}}}, patch_type="strategic")
    settle(c, rounds=4)
    assert c.kubectl("rollout history deployment/web") == (
        "deployment.apps/web \nREVISION  CHANGE-CAUSE\n1         <none>\n2         <none>\n3         bump")
    out = c.kubectl("rollout history deployment/web --revision=2")
    assert out.startswith("deployment.apps/web with revision #2\nPod Template:") and "nginx:1.26" in out
    assert c.kubectl("rollout undo deployment/web") == "deployment.apps/web rolled back"
    image = c.get("deployments", "web")["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image == "nginx:1.26"
    assert "pod-template-hash" not in c.get("deployments", "web")["spec"]["template"]["metadata"]["labels"]
    settle(c, rounds=4)
    assert c.kubectl("rollout undo deployment/web --to-revision=4") == \
        "deployment.apps/web skipped rollback (current template already matches revision 4)"
    assert c.kubectl("rollout undo deployment/web --to-revision=1") == "deployment.apps/web rolled back"
    out = c.kubectl("rollout undo deployment/web --to-revision=9")
    assert (out, out.exit_code) == ("error: unable to find specified revision 9 in history", 1)


def test_undo_without_history_and_of_a_paused_deployment() -> None:
    c = cluster()
    rolled(c)
    assert c.kubectl("rollout undo deployment/web") == \
        'error: no rollout history found for deployment "web"'
    c.kubectl("rollout pause deployment/web")
    out = c.kubectl("rollout undo deployment/web --to-revision=1")
    assert out == ("error: you cannot rollback a paused deployment; resume it first with "
                   "'kubectl rollout resume deployment/web' and try again")


def test_pause_resume_and_restart() -> None:
    c = cluster()
    rolled(c)
    assert c.kubectl("rollout pause deployment/web") == "deployment.apps/web paused"
    assert c.get("deployments", "web")["spec"]["paused"] is True
    assert c.kubectl("rollout pause deployment/web") == 'error: deployments.apps "web" is already paused'
    assert c.kubectl("rollout resume deployment/web") == "deployment.apps/web resumed"
    assert not c.get("deployments", "web")["spec"].get("paused")
    assert c.kubectl("rollout resume deployment/web") == 'error: deployments.apps "web" is not paused'
    c.run(7.5)
    assert c.clock.now == 11.5
    assert c.kubectl("rollout restart deployment/web") == "deployment.apps/web restarted"
    annotations = c.get("deployments", "web")["spec"]["template"]["metadata"]["annotations"]
    assert annotations == {"kubectl.kubernetes.io/restartedAt": "2025-01-01T00:00:11Z"}
    settle(c, rounds=4)
    assert len(replica_sets(c)) == 2  # a restart is a rollout of a new template


def test_rollout_refuses_kinds_without_rollouts() -> None:
    c = cluster()
    rolled(c)
    rs = replica_sets(c)[0]["metadata"]["name"]
    assert c.kubectl(f"rollout status rs/{rs}") == \
        "error: no status viewer has been implemented for ReplicaSet"
    assert c.kubectl("rollout dance deployment/web") == (  # cmdutil.RequireNoArguments
        'error: unknown command "dance deployment/web"\nSee \'kubectl rollout -h\' for help and examples')
    out = c.kubectl("rollout status deployment/nope")
    assert (out, out.exit_code) == ('Error from server (NotFound): deployments.apps "nope" not found', 1)


class Spy:
    """An API in front of the server that remembers every request's options."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.seen = inner, []

    def handle(self, request: Request) -> Any:
        self.seen.append((request.verb, request.resource, dict(request.options)))
        return self.inner.handle(request)

    def watch(self, *args: Any, **kwargs: Any) -> Any:
        return self.inner.watch(*args, **kwargs)


@pytest.mark.parametrize(("flag", "policy"), [("", "Background"), ("--cascade=background", "Background"),
                                              ("--cascade=foreground", "Foreground"),
                                              ("--cascade=orphan", "Orphan")])
def test_delete_sends_the_propagation_policy(flag: str, policy: str) -> None:
    c = cluster()
    c.apply(deployment(replicas=1))
    spy = Spy(c.apiserver)
    client = Client(spy, c.client.token, user_agent="kubectl")
    assert kubectl(client, f"delete deployment web {flag}") == DELETED_WEB
    deletes = [options for verb, resource, options in spy.seen if verb == "delete"]
    assert deletes == [{"propagationPolicy": policy}]
