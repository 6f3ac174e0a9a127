# Generated from solutions/ex08_operators.py by `kubelab release`. Do the exercises in this file, then
# check them with `kubelab grade` (see the README).
# release-digest: 5786fcadb1592a39
"""Exercises for notebook 08 · Extending Kubernetes: CRDs and operators.

Two reconcilers (8.1, 8.2) and an admission webhook (8.3). The reconcilers are in the shape of
kubelab.client.operator (controller-runtime's ideas): the grader runs yours inside an Operator
component: every event on the custom kind, or on an object it owns, becomes a call with the
object's namespace and name; `client` writes to the API server and `cache` reads the informers
(`cache.get(resource, name, namespace)` returns the object or None, `cache.list(...)` a list;
no API request). Let errors propagate: the Operator retries the key with back-off. The grader
crashes your operator, drops its watch events, deletes what it owns and edits the spec while it
works; for 8.1 it also counts the requests of every reconcile.

The webhook (8.3) is served by a pod of its own image in the grader's cluster, which then
times it out, kills its pods and watches what your configuration does about it.

    kubelab grade 8                                          # all three exercises
    from kubelab.grading import grade; grade("8.1")

Helpers you may use: kubelab.client.operator (set_status_condition, set_controller_reference,
add_finalizer, remove_finalizer, create_or_update) and kubelab.api.meta.deep_copy. Do not
import kubelab.controllers or kubelab.samples: the sample operator and the sample webhooks
there are the answers' neighbours.
"""

from __future__ import annotations

from typing import Any

from kubelab.api.meta import deep_copy
from kubelab.client.client import Client
from kubelab.client.operator import (
    Cache,
    add_finalizer,
    contains_finalizer,
    remove_finalizer,
    set_controller_reference,
    set_status_condition,
)

FINALIZER = "batch.kubelab.dev/release-lock"


def reconcile_website(namespace: str, name: str, client: Client, cache: Cache, now: float) -> None:
    """Exercise 8.1: Reconcile a Website.

    Notebook 08_operators, section "3. Write the operator". Hard, 10 points.

    A Website (web.kubelab.dev/v1: spec.image, spec.replicas) is served by a Deployment of the
    same name that it owns. Read the Website from cache.get("websites", name, namespace); if it
    is gone, there is nothing to do (the garbage collector deletes the Deployment).

    - The Deployment: {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name":
      name, "namespace": namespace, "labels": {"website": name}}, "spec": {"replicas":
      spec.replicas, "selector": {"matchLabels": {"website": name}}, "template": {"metadata":
      {"labels": {"website": name}}, "spec": {"containers": [{"name": "web", "image":
      spec.image}]}}}}, with an ownerReference to the Website (controller: true,
      blockOwnerDeletion: true: set_controller_reference). Create it if the cache has none;
      if its replicas or its container's image differ, update a copy; otherwise leave it.
    - Status: readyReplicas = the Deployment's status.availableReplicas (0 if none yet);
      observedGeneration = the Website's metadata.generation; one condition "Ready": "True"
      with reason "Available" when readyReplicas == spec.replicas, else "False" with reason
      "Progressing"; message "<ready>/<replicas> replicas available"; the condition's
      observedGeneration too; its lastTransitionTime changes only when its status does
      (set_status_condition, with `now`). Write it with client.update_status on a copy, and
      only if it differs from the status the Website has.
    The budget: a reconcile that finds nothing to change sends no request at all, and no
    reconcile ever lists: the cache has the answer.
    """
    raise NotImplementedError("exercise 8.1: Reconcile a Website")


def reconcile_ledger_lock(namespace: str, name: str, client: Client, cache: Cache, ledger: Any) -> None:
    """Exercise 8.2: A finalizer for an outside lock.

    Notebook 08_operators, section "5. Clean up outside the cluster: a finalizer". Medium, 10 points.

    A LedgerLock (batch.kubelab.dev/v1: spec.book) holds the book's lock in the bank's ledger,
    outside Kubernetes, for as long as it exists: ledger.acquire_lock(book, holder) returns a
    token (the same one again for the same holder), ledger.release_lock(book, holder) releases
    it; holder is the LedgerLock's metadata.uid. Both raise while the ledger is down.

    - Gone from the cache: nothing to do.
    - Being deleted (metadata.deletionTimestamp set) and still carrying the finalizer
      "batch.kubelab.dev/release-lock": release the lock, then remove the finalizer (update a
      copy). In that order: once the finalizer is gone the object is gone, and so is your last
      chance to release. Never acquire for an object being deleted.
    - Not being deleted, no finalizer yet: add it (update a copy) before anything else.
    - Then acquire the lock; if status.token differs from the token, write it
      (client.update_status on a copy).
    The grader checks that every lock is acquired once and released exactly once, also when
    the ledger is down while the LedgerLock is deleted and when your operator crashes then.
    """
    raise NotImplementedError("exercise 8.2: A finalizer for an outside lock")


PINNED_HINT = "use a tag other than latest, or a digest"


class ImagePolicyWebhook:
    """Exercise 8.3: A validating webhook that survives its own outage.

    Notebook 08_operators, section "8. Admission webhooks: the API server calls out". Medium, 10 points.

    review(review) is the webhook's HTTP handler: it gets an AdmissionReview
    (admission.k8s.io/v1) for a pod CREATE or UPDATE and returns the AdmissionReview that
    answers it: {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response":
    {"uid": <the request's uid>, "allowed": ...}}. Every image of the pod's initContainers,
    then containers, must be pinned: a digest ("@sha256:..."), or a tag other than latest (the
    tag is what follows the last ":" after the last "/"; no tag means latest). For the first
    one that is not, refuse with "status": {"code": 403, "reason": "Forbidden", "message":
    'container "<name>": image "<image>" is not pinned: use a tag other than latest, or a
    digest'}.

    configuration(namespace, service) returns the ValidatingWebhookConfiguration
    "image-policy" that installs it: one webhook named "images.kubelab.dev", calling the
    Service `service` in `namespace` (port 443, path "/validate") for CREATE and UPDATE of core
    v1 "pods"; sideEffects None; admissionReviewVersions ["v1"]; failurePolicy Fail (an
    unpinned image must never slip through); and two choices that decide what an outage
    costs: timeoutSeconds 3 (a hung webhook makes each create wait 3 s, not 10), and a
    namespaceSelector that leaves out every namespace labelled kubelab.dev/webhook=exempt
    (the webhook's own namespace has that label: without it, the webhook's pods could not be
    recreated while it is down, and the outage would never end).
    """

    name = "images.kubelab.dev"

    def review(self, review: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError("exercise 8.3: A validating webhook that survives its own outage")

    def configuration(self, namespace: str, service: str) -> dict[str, Any]:
        raise NotImplementedError("exercise 8.3: A validating webhook that survives its own outage")
