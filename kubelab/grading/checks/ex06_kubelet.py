"""Checks for notebook 06's exercises: image-pull back-off (6.1) and a readiness probe (6.2).

6.1: the learner's Backoff becomes the image manager's back-off of a running kubelet
(kubelet.images.backoff). 6.2: the learner's ReadinessProbe does the bookkeeping of every
readiness worker of a running kubelet (the prober's timers, container checks and the workload's
answers stay kubelab's). In both, the pods' story (events, pulls, Ready transitions) must be
exactly the story the same seeded cluster tells with kubelab's own kubelet.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubelab.grading.checks.common import patched, pod
from kubelab.grading.context import CheckContext
from kubelab.grading.exercises import check
from kubelab.kubelet import probes
from kubelab.kubelet.probes import FAILURE, INITIAL, SUCCESS, probe_message
from kubelab.kubelet.runtime import RUNNING
from kubelab.sim.clock import Clock

__all__: list[str] = []

IMAGE = "registry.example.com/shop/app:1.0"
KUBELET = "kubelet/node-1"


@check("6.1", points=3, hint="The first failure opens a 10 s window; each failure inside the "
       "back-off's memory doubles it, up to 300 s.")
def doubles_up_to_five_minutes(ctx: CheckContext) -> None:
    clock = Clock()
    backoff = ctx.learner(clock, 10.0, 300.0)
    windows = []
    for _ in range(7):
        backoff.next("pod-a_app", clock.now)
        window = float(backoff.get("pod-a_app"))
        windows.append(window)
        inside = bool(backoff.is_in_back_off_since_update("pod-a_app", clock.now + window - 0.5))
        after = bool(backoff.is_in_back_off_since_update("pod-a_app", clock.now + window))
        if not inside or after:
            ctx.fail(f"is_in_back_off_since_update around the end of a {window:g} s window",
                     expected="True 0.5 s before its end, False at its end",
                     got=f"{inside} before, {after} at the end")
        clock.run(until=clock.now + window)
    ctx.expect_equal(windows, [10.0, 20.0, 40.0, 80.0, 160.0, 300.0, 300.0],
                     "the window after each failure (get)", unit="seconds of back-off after each failure =")
    ctx.expect_equal(float(backoff.get("pod-b_app")), 0.0, "get() of a key that never failed",
                     unit="second(s) of back-off")


@check("6.1", points=2, hint="An entry quiet for more than 2 x maximum (10 minutes) has expired: "
       "the next failure starts again at 10 s, and gc() forgets it.")
def forgets_after_ten_quiet_minutes(ctx: CheckContext) -> None:
    clock = Clock()
    backoff = ctx.learner(clock, 10.0, 300.0)
    for _ in range(4):
        backoff.next("k", clock.now)
    clock.run(until=clock.now + 601)
    ctx.expect_equal(bool(backoff.is_in_back_off_since_update("k", clock.now)), False,
                     "is_in_back_off_since_update after 601 quiet seconds",
                     unit="is_in_back_off_since_update() =")
    backoff.next("k", clock.now)
    ctx.expect_equal(float(backoff.get("k")), 10.0, "the window of a failure after 601 quiet seconds",
                     unit="second(s) of back-off")
    backoff.next("j", clock.now)
    clock.run(until=clock.now + 601)
    backoff.gc()
    ctx.expect_equal(float(backoff.get("j")), 0.0, "get() after gc() of an expired entry",
                     unit="second(s) of back-off")


def _pull_story(ctx: CheckContext, install: Callable[[Any], None]) -> dict[str, Any]:
    c = ctx.cluster(nodes=1)
    install(c)
    c.faults.break_registry(IMAGE, "unauthorized")
    c.client.create(pod("shop", containers=[{"name": "app", "image": IMAGE}]))
    c.run(1800)                                  # a credential expired: half an hour of failures
    c.faults.fix_registry(IMAGE)
    c.run_until(lambda: (c.get("pods", "shop").get("status") or {}).get("phase") == "Running", timeout=600)
    events: dict[str, int] = {}
    for e in c.events():
        if e.get("involvedObject", {}).get("name") == "shop":
            events[e["reason"]] = events.get(e["reason"], 0) + int(e.get("count") or 1)
    state = c.get("pods", "shop")["status"]["containerStatuses"][0]["state"]
    return {"running since": state.get("running", {}).get("startedAt"), "events": events,
            "pull attempts": c.components[KUBELET].images.pull_attempts}


@check("6.1", points=5, hint="Inside the window the kubelet does not pull at all (BackOff event, "
       "ImagePullBackOff); the first sync after it pulls again. After five minutes of failures the "
       "window stays at 5 min.")
def half_an_hour_of_image_pull_back_off(ctx: CheckContext) -> None:
    def mine(c: Any) -> None:
        c.components[KUBELET].images.backoff = ctx.learner(c.clock, 10.0, 300.0)
    got = _pull_story(ctx, mine)
    expected = _pull_story(ctx, lambda c: None)
    for what in ("pull attempts", "running since", "events"):
        if got[what] != expected[what]:
            ctx.fail(f"the pod's story differs from the kubelet's own ({what})",
                     expected=f"{what}: {expected[what]}", got=f"{what}: {got[what]}")


# ---------------------------------------------------------------- 6.2 ReadinessProbe


def _reference(sequence: list[bool], success: int, failure: int) -> list[str]:
    """worker.go doProbe's bookkeeping: a result counts after a run of thresholds."""
    result, last, run, out = FAILURE, None, 0, []
    for ok in sequence:
        outcome = SUCCESS if ok else FAILURE
        last, run = (last, run + 1) if outcome == last else (outcome, 1)
        if run >= (success if ok else failure):
            result = outcome
        out.append(result)
    return out


SEQUENCES = [
    (1, 3, [False, True, False, False, True, False, False, False, True]),
    (2, 1, [True, False, True, True, True, False, True]),
    (3, 2, [True, True, False, True, True, True, False, False, True]),
]


@check("6.2", points=4, hint="Count results in a row: the result flips to Success after "
       "successThreshold successes in a row, to Failure after failureThreshold failures in a row.")
def thresholds_like_the_prober(ctx: CheckContext) -> None:
    for success, failure, sequence in SEQUENCES:
        probe = ctx.learner(0, 10, success, failure)
        got = [probe.observe(ok) for ok in sequence]
        expected = _reference(sequence, success, failure)
        if got != expected:
            outcomes = " ".join("S" if ok else "F" for ok in sequence)
            ctx.fail(f"results for probe outcomes {outcomes} with successThreshold={success}, "
                     f"failureThreshold={failure}", expected=f"observe() results = {expected}",
                     got=f"observe() results = {got}")


@check("6.2", points=1, hint="No probe before initialDelaySeconds: compare whole seconds, as the "
       "kubelet does (int(running_for) < initialDelaySeconds).")
def waits_for_the_initial_delay(ctx: CheckContext) -> None:
    probe = ctx.learner(5, 10, 1, 3)
    got = [bool(probe.due(t)) for t in (0.0, 4.9, 5.0, 12.0)]
    ctx.expect_equal(got, [False, False, True, True], "due(running_for) for 0, 4.9, 5 and 12 s",
                     unit="due() for each =")


def _readiness_worker(make: Any, mistakes: list[str]) -> type:
    class ReadinessWorker(probes._Worker):
        """kubelab's prober worker; for readiness, the learner's object keeps the count."""

        tracker: Any = None

        def do_probe(self) -> bool:
            if self.kind != "readiness":
                return super().do_probe()
            m, spec = self.m, self.spec
            c = m.current(self.uid, self.container)
            if c is None:
                return True
            if c.id != self.container_id:  # a new container: a new count
                m.forget(self.container_id)
                self.container_id = c.id
                m.results[(c.id, self.kind)] = INITIAL[self.kind]
                self.tracker = make(spec.initial_delay, spec.period, spec.success_threshold,
                                    spec.failure_threshold)
            if c.state != RUNNING:
                m.results[(c.id, self.kind)] = FAILURE
                return True
            running_for = m.clock.now - (c.started_at or m.clock.now)
            if not self.tracker.due(running_for) or not m.started(c):
                return True
            timed_out = c.workload.probe_latency >= spec.timeout
            ok = not timed_out and c.workload.responds(self.kind, running_for)
            if not ok:
                m.record(self.pod, "Warning", "Unhealthy",
                         f"Readiness probe failed: {probe_message(spec, m.ip(self.uid), timed_out)}")
            result = self.tracker.observe(ok)
            if result not in (SUCCESS, FAILURE):
                mistakes.append(f"observe() returned {result!r}, not {SUCCESS!r} or {FAILURE!r}")
                return True
            previous = m.results.get((c.id, self.kind))
            m.results[(c.id, self.kind)] = result
            if previous != result:
                m.on_change(self.uid)
            return True
    return ReadinessWorker


def _readiness_story(ctx: CheckContext) -> dict[str, Any]:
    c = ctx.cluster(nodes=1)
    probe = {"httpGet": {"path": "/ready", "port": 8080}, "periodSeconds": 2, "failureThreshold": 2,
             "successThreshold": 2, "initialDelaySeconds": 3}
    for name, behavior in (("slow-start", "startup=7"), ("goes-unready", "unready=20")):
        p = pod(name, containers=[{"name": "app", "image": "nginx:1.27", "readinessProbe": probe}])
        p["metadata"]["annotations"] = {"kubelab.dev/behavior": behavior}
        c.client.create(p)
    c.run(60)
    story: dict[str, Any] = {}
    for name in ("slow-start", "goes-unready"):
        conditions = c.get("pods", name).get("status", {}).get("conditions") or []
        ready: dict[str, Any] = next((x for x in conditions if x.get("type") == "Ready"), {})
        story[name] = (ready.get("status"), ready.get("lastTransitionTime"))
    story["Unhealthy events"] = sum(int(e.get("count") or 1) for e in c.events()
                                    if e.get("reason") == "Unhealthy")
    return story


@check("6.2", points=5, hint="In a running kubelet your counts decide when the pod's Ready "
       "condition flips: a slow starter becomes ready only after successThreshold good probes, a "
       "pod that stops answering turns NotReady after failureThreshold bad ones.")
def pods_become_ready_like_upstream(ctx: CheckContext) -> None:
    mistakes: list[str] = []
    with patched(probes, "_Worker", _readiness_worker(ctx.learner, mistakes)):
        got = _readiness_story(ctx)
    expected = _readiness_story(ctx)
    if mistakes:
        ctx.fail("the readiness bookkeeping " + mistakes[0])
    for what in expected:
        if got[what] != expected[what]:
            ctx.fail(f"{what}: the Ready condition (status, lastTransitionTime) differs from the "
                     "kubelet's own", expected=f"{what} = {expected[what]}", got=f"{what} = {got[what]}")
