"""The sample operator of notebook 08: SettlementJob, a nightly settlement batch.

    apiVersion: batch.kubelab.dev/v1
    kind: SettlementJob
    metadata: {name: eod-2025-01-01}
    spec: {book: equities, businessDate: "2025-01-01", maxAttempts: 3}

Its reconcile (a kubelab.client.operator Reconciler), for one SettlementJob:
1. gone from the cache: nothing to do (its Jobs are the garbage collector's);
2. being deleted: release the book's lock in the ledger, then remove the finalizer. While the
   ledger is down the finalizer stays, and the SettlementJob with it (requeue after 10 s);
3. no finalizer yet: add it, and stop (the update wakes the next reconcile);
4. lock the book in the ledger (idempotent: the same holder gets the same token back);
5. run attempt N as the Job `<name>-<N>` it owns (backoffLimit 0). A failed attempt waits
   30 s, doubling, before attempt N+1, up to spec.maxAttempts; status tracks attempts, the
   next attempt's time, the phase, and a Ready condition with observedGeneration.
Every step reads the cache and writes only what differs, so running it again changes nothing:
that is what makes it safe to crash, to lose events and to be woken twice.
"""

from __future__ import annotations

from typing import Any, Protocol

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.meta import deep_copy, parse_time, rfc3339
from kubelab.client.component import ComponentContext
from kubelab.client.events import NORMAL, WARNING
from kubelab.client.operator import (
    Operator,
    Reconciler,
    Request,
    Result,
    add_finalizer,
    contains_finalizer,
    remove_finalizer,
    set_controller_reference,
    set_status_condition,
)

__all__ = ["FINALIZER", "GROUP", "SETTLEMENT_JOB_CRD", "LedgerClient", "SettlementJobReconciler",
           "settlement_job", "settlement_operator"]

GROUP = "batch.kubelab.dev"
FINALIZER = "batch.kubelab.dev/ledger-lock"
RETRY_BASE = 30.0       # seconds before the second attempt; doubles after each failure
LEDGER_RETRY = 10.0     # how soon to try an unreachable ledger again

SETTLEMENT_JOB_CRD: Object = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": f"settlementjobs.{GROUP}"},
    "spec": {"group": GROUP, "scope": "Namespaced",
             "names": {"plural": "settlementjobs", "singular": "settlementjob", "kind": "SettlementJob",
                       "shortNames": ["sj"]},
             "versions": [{
                 "name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                 "additionalPrinterColumns": [
                     {"name": "Book", "type": "string", "jsonPath": ".spec.book"},
                     {"name": "Date", "type": "string", "jsonPath": ".spec.businessDate"},
                     {"name": "Phase", "type": "string", "jsonPath": ".status.phase"},
                     {"name": "Attempts", "type": "integer", "jsonPath": ".status.attempts"},
                     {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}],
                 "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                     "spec": {"type": "object", "required": ["book", "businessDate"],
                              "description": "One night's settlement of one book.", "properties": {
                         "book": {"type": "string", "minLength": 1, "description": "The ledger book "
                                  "to settle; locked in the ledger while the SettlementJob exists.",
                                  "x-kubernetes-validations": [
                                      {"rule": "self == oldSelf", "message": "book is immutable"}]},
                         "businessDate": {"type": "string", "pattern": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
                                          "description": "The business date settled, YYYY-MM-DD."},
                         "maxAttempts": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3,
                                         "description": "How many Jobs to try before giving up."},
                         "behavior": {"type": "string", "default": "exit=30,code=0",
                                      "description": "The simulated batch's kubelab.dev/behavior."}}},
                     "status": {"type": "object", "properties": {
                         "phase": {"type": "string"}, "attempts": {"type": "integer"},
                         "jobName": {"type": "string"}, "nextAttemptTime": {"type": "string"},
                         "lockToken": {"type": "string"}, "observedGeneration": {"type": "integer"},
                         "conditions": {"type": "array", "items": {
                             "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}}},
             }]}}


class LedgerClient(Protocol):
    """What the operator needs of the ledger (kubelab/cluster/ledger.py); a down ledger raises
    ConnectionError."""

    def acquire_lock(self, book: str, holder: str) -> str | None: ...

    def release_lock(self, book: str, holder: str) -> bool: ...


def settlement_job(name: str, book: str = "equities", date: str = "2025-01-01", **spec: Any) -> Object:
    return {"apiVersion": f"{GROUP}/v1", "kind": "SettlementJob",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"book": book, "businessDate": date, **spec}}


class SettlementJobReconciler(Reconciler):
    def __init__(self, ledger: LedgerClient) -> None:
        self.ledger = ledger

    def reconcile(self, request: Request) -> Result | None:
        sj = self.cache.get("settlementjobs", request.name, request.namespace)
        if sj is None:
            return None  # deleted: the garbage collector removes its Jobs
        holder = sj["metadata"]["uid"]
        if sj["metadata"].get("deletionTimestamp"):
            return self.finalize(sj, holder)
        if not contains_finalizer(sj, FINALIZER):
            updated = deep_copy(sj)
            add_finalizer(updated, FINALIZER)
            self.client.update(updated)
            return None
        status = sj.get("status") or {}
        if status.get("phase") in ("Succeeded", "Failed"):
            return None  # done: never run a finished night again
        try:
            token = self.ledger.acquire_lock(sj["spec"]["book"], holder)
        except ConnectionError as err:
            self.recorder.event(sj, WARNING, "LedgerUnavailable", str(err))
            return Result(requeue_after=LEDGER_RETRY)
        if token is None:
            return self.write_status(sj, {**status, "phase": "Waiting"}, "False", "BookLocked",
                                     "another SettlementJob holds the book's lock", LEDGER_RETRY)
        return self.run_attempt(sj, {**status, "lockToken": token})

    def finalize(self, sj: Object, holder: str) -> Result | None:
        if not contains_finalizer(sj, FINALIZER):
            return None
        try:
            if self.ledger.release_lock(sj["spec"]["book"], holder):
                self.recorder.event(sj, NORMAL, "LockReleased", f"released the lock on {sj['spec']['book']}")
        except ConnectionError as err:
            self.recorder.event(sj, WARNING, "LedgerUnavailable", str(err))
            return Result(requeue_after=LEDGER_RETRY)  # the finalizer holds the object meanwhile
        updated = deep_copy(sj)
        remove_finalizer(updated, FINALIZER)
        self.client.update(updated)
        return None

    def run_attempt(self, sj: Object, status: Object) -> Result | None:
        attempt = max(int(status.get("attempts") or 0), 1)
        max_attempts = int(sj["spec"].get("maxAttempts") or 3)
        name, namespace = f"{sj['metadata']['name']}-{attempt}", sj["metadata"]["namespace"]
        status = {**status, "attempts": attempt, "jobName": name}
        job = self.cache.get("jobs", name, namespace)
        now = self.clock.now
        if job is None:
            wait = parse_time(status["nextAttemptTime"]) - now if status.get("nextAttemptTime") else 0.0
            if wait > 0:
                return self.write_status(sj, {**status, "phase": "BackingOff"}, "False", "BackingOff",
                                         f"attempt {attempt} starts at {status['nextAttemptTime']}", wait)
            try:
                self.client.create(self.job_for(sj, name))
            except ApiError as err:
                if err.code != 409:  # AlreadyExists: the cache is behind; the event will come
                    raise
            return self.write_status(sj, {**status, "phase": "Running"}, "False", "Running",
                                     f"attempt {attempt} of {max_attempts} is running")
        finished = {c.get("type"): c for c in (job.get("status") or {}).get("conditions") or ()
                    if c.get("status") == "True"}
        if "Complete" in finished:
            return self.write_status(sj, {**status, "phase": "Succeeded"}, "True", "Settled",
                                     f"settled in attempt {attempt}")
        if "Failed" not in finished:
            return self.write_status(sj, {**status, "phase": "Running"}, "False", "Running",
                                     f"attempt {attempt} of {max_attempts} is running")
        if attempt >= max_attempts:
            return self.write_status(sj, {**status, "phase": "Failed"}, "False", "AttemptsExhausted",
                                     f"{attempt} attempts failed")
        delay = RETRY_BASE * 2 ** (attempt - 1)
        status = {**status, "attempts": attempt + 1, "nextAttemptTime": rfc3339(now + delay)}
        return self.write_status(sj, {**status, "phase": "BackingOff"}, "False", "BackingOff",
                                 f"attempt {attempt + 1} starts at {status['nextAttemptTime']}", delay)

    def job_for(self, sj: Object, name: str) -> Object:
        job: Object = {
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": sj["metadata"]["namespace"],
                         "labels": {f"{GROUP}/settlement": sj["metadata"]["name"]}},
            "spec": {"backoffLimit": 0, "template": {
                "metadata": {"annotations": {"kubelab.dev/behavior": sj["spec"].get("behavior") or
                                             "exit=30,code=0"}},
                "spec": {"restartPolicy": "Never", "containers": [{
                    "name": "settle", "image": "busybox:1.36",
                    "args": ["settle", sj["spec"]["book"], sj["spec"]["businessDate"]]}]}}}}
        set_controller_reference(sj, job)  # the garbage collector deletes it with its owner
        return job

    def write_status(self, sj: Object, status: Object, ready: str, reason: str, message: str,
                     requeue_after: float = 0.0) -> Result | None:
        """Write status only if it differs: a reconcile with nothing to do sends nothing."""
        old = sj.get("status") or {}
        new = {**status, "observedGeneration": sj["metadata"].get("generation", 1)}
        if reason != "BackingOff":
            new.pop("nextAttemptTime", None)
        conditions = deep_copy({"c": old.get("conditions") or []})["c"]
        set_status_condition(conditions, {"type": "Ready", "status": ready, "reason": reason,
                                          "message": message,
                                          "observedGeneration": new["observedGeneration"]}, self.clock.now)
        new["conditions"] = conditions
        if new != old:
            updated = deep_copy(sj)
            updated["status"] = new
            self.client.update_status(updated)
        return Result(requeue_after=requeue_after) if requeue_after > 0 else None


def settlement_operator(ctx: ComponentContext, ledger: LedgerClient) -> Operator:
    """The component, for c.add_component("settlement-operator",
    lambda ctx: settlement_operator(ctx, ledger))."""
    return Operator(ctx, SettlementJobReconciler(ledger), for_resource="settlementjobs", owns=["jobs"])
