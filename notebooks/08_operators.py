# %% [markdown]
# # 08 · Extending Kubernetes: CustomResourceDefinitions and operators
#
# Kubernetes stops being a container scheduler and becomes a platform the moment you add your
# own kind to its API. A **CustomResourceDefinition** (CRD) does that with no new server code:
# the API server validates, defaults, stores, watches and prints the new kind like a built-in
# one. An **operator** is then a controller for that kind, built from the same parts as the
# ReplicaSet controller of notebook 05: informers, a workqueue and a reconcile.
#
# The running example is a bank's night: a `SettlementJob` settles one book for one business
# date. Its operator locks the book in the bank's ledger (a system outside Kubernetes), runs the
# batch as a Kubernetes **Job**, retries failed attempts with back-off, and releases the lock
# when the SettlementJob is deleted.
#
# **Learning goals.** By the end you can
# - add a kind to the API with a CRD, and read the API server's answer to each invalid object;
# - run a batch as a Job and read its status: completions, back-off, `Complete` and `Failed`;
# - write a reconcile that is level-triggered and idempotent, on kubelab.client.operator;
# - explain what `ownerReferences` and a finalizer each clean up, and which one needs you;
# - break an operator (crash it, delete what it owns, take its outside system away) and predict the repair;
# - declare a rule as a ValidatingAdmissionPolicy instead of writing a webhook;
# - write a mutating and a validating admission webhook, and predict what its failurePolicy does
#   when it is slow or its pods are gone;
# - compare a reconcile loop with kopf's handlers, against the same served cluster;
# - read what a Database operator makes (a StatefulSet, a Service, a backup CronJob) and follow
#   its ownerReferences on the object graph.
#
# **Prerequisites.** Notebooks 03 (informers, the workqueue, level-triggered loops) and 05
# (controllers, ownerReferences, the garbage collector).
#
# **Time.** About 65 minutes.

# %%
import asyncio
import inspect
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kubelab.api.errors import ApiError
from kubelab.cluster import Cluster
from kubelab.cluster.ledger import ledger_for
from kubelab.samples.settlement_job import (
    SETTLEMENT_JOB_CRD,
    SettlementJobReconciler,
    settlement_job,
    settlement_operator,
)

# %%
c = Cluster(nodes=2, seed=8)
c.run(2)

# %% [markdown]
# ## 1. A CRD, and the API grows
#
# Before the CRD, the API server has never heard of a SettlementJob. Creating the CRD is one
# request; from then on the server serves `/apis/batch.kubelab.dev/v1/.../settlementjobs`,
# discovery lists it, and kubectl knows its short name `sj`.
#
# **Predict, then run.** Which line does `kubectl api-resources` gain, and what does it say
# in the NAMESPACED and KIND columns?
#
# <details><summary>Answer</summary>
#
# `settlementjobs   sj   batch.kubelab.dev/v1   true   SettlementJob`: the plural, the short
# name, group/version, `scope: Namespaced`, and the kind, all read from the CRD's `spec.names`.
#
# </details>

# %%
before = set(str(c.kubectl("api-resources")).splitlines())
print(c.apply(SETTLEMENT_JOB_CRD))
after = str(c.kubectl("api-resources")).splitlines()
print(after[0])
print("\n".join(line for line in after if line not in before))
print(c.kubectl("get crd"))

# %% [markdown]
# The CRD carries an OpenAPI v3 schema: `book` and `businessDate` are required, the date must
# match a pattern, `maxAttempts` lies between 1 and 10 (default 3), and a CEL rule
# (`x-kubernetes-validations`, `self == oldSelf`) makes `book` immutable. The API server applies
# every rule to every create and update, and defaults what is missing, before anything is stored.

# %%
print(c.kubectl("explain settlementjobs.spec"))   # the schema, as kubectl explain reads it

# %%
print(c.apply(settlement_job("eod-2025-01-01", behavior="exit=20")))
print(c.get("settlementjobs", "eod-2025-01-01")["spec"])   # maxAttempts and behavior defaulted

# %% [markdown]
# **Predict, then run.** Four bad requests follow. For each, which rule refuses it, and is
# anything stored?
#
# <details><summary>Answer</summary>
#
# The pattern (`should match '^[0-9]{4}-...'`), the minimum (`should be greater than or equal
# to 1`), `required` (`Required value`), and the CEL transition rule (`book is immutable`). All
# four are 422 Invalid, and nothing is stored or changed: the old object stays as it was.
#
# </details>

# %%
bad = [settlement_job("bad-date", date="yesterday"), settlement_job("no-tries", maxAttempts=0),
       {"apiVersion": "batch.kubelab.dev/v1", "kind": "SettlementJob",
        "metadata": {"name": "no-date"}, "spec": {"book": "fx"}}]
for obj in bad:
    try:
        c.client.create(obj)
    except ApiError as err:
        print(err.code, err.message)
moved = c.get("settlementjobs", "eod-2025-01-01")
moved["spec"]["book"] = "bonds"
try:
    c.client.update(moved)
except ApiError as err:
    print(err.code, err.message)
print(c.kubectl("get settlementjobs"))   # only the valid one; its printer columns come from the CRD


# %% [markdown]
# ## 2. The batch itself: a Job
#
# The night's work runs as a **Job** (batch/v1): the Job controller creates pods until
# `completions` of them succeed, at most `parallelism` at a time. A failed pod is replaced after a
# back-off (10 s, doubling, at most 10 minutes) until `backoffLimit` failures; then the Job fails
# with `BackoffLimitExceeded`. Each pod carries the finalizer `batch.kubernetes.io/job-tracking`
# until the controller has counted it, so no success or failure is lost when a pod is deleted.
#
# **Predict, then run.** A Job with `completions: 3`, `parallelism: 2` whose pods run 15 s.
# Roughly how long until `COMPLETIONS` reads `3/3`? And a Job whose pods always exit with code 1,
# `backoffLimit: 2`: how many pods does it make, and when does it give up?
#
# <details><summary>Answer</summary>
#
# About 30 s: two pods, then the third once one has finished. The failing Job makes 3 pods
# (the first, then one after 10 s and one after 20 s more of back-off): its third failure exceeds
# `backoffLimit: 2`, and it is `Failed` with `BackoffLimitExceeded`.
#
# </details>

# %%
def job(name, behavior, **spec):
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {**spec, "template": {
                "metadata": {"annotations": {"kubelab.dev/behavior": behavior}},
                "spec": {"restartPolicy": "Never",
                         "containers": [{"name": "main", "image": "busybox:1.36"}]}}}}


c.apply(job("batch", "exit=15", completions=3, parallelism=2))
c.apply(job("flaky", "exit=2,code=1", backoffLimit=2))
c.run(70)
print(c.kubectl("get jobs"))
flaky = c.get("jobs", "flaky")["status"]
print("flaky:", flaky["failed"], "failed;", [(x["type"], x["reason"]) for x in flaky["conditions"]])

# %% [markdown]
# `FailureTarget` comes first: since Kubernetes 1.31 the Job controller writes that interim
# condition, deletes what still runs, and writes `Failed` only once no pod is left terminating.

# %% [markdown]
# ## 3. Write the operator
#
# An operator's reconcile gets a key, never an event: "look at `default/eod-2025-01-01` now".
# kubelab.client.operator gives it the shape controller-runtime gives Go operators:
#
# - a `Reconciler` with `reconcile(request)`, reading through `self.cache` (the informers, no
#   request) and writing through `self.client`;
# - it returns `Result(requeue_after=...)` to look again later; an exception requeues the key
#   with the workqueue's back-off (5 ms, doubling);
# - `set_controller_reference` makes the SettlementJob the Job's controller: a watch on Jobs
#   then wakes the owner, and the garbage collector deletes the Job with it;
# - `add_finalizer` / `remove_finalizer` hold the object until outside cleanup is done.
#
# Here is the whole reconcile of the sample operator, step by step in its docstring:

# %%
print(inspect.getsource(SettlementJobReconciler.reconcile))

# %% [markdown]
# Every branch reads the cache, compares, and writes only what differs, so running it twice
# changes nothing the second time. Start it as a component, beside the built-in ones, with the
# ledger it talks to. Each reconcile is recorded with the requests it sent.

# %%
ledger = ledger_for(c)
operator = c.add_component("settlement-operator", lambda ctx: settlement_operator(ctx, ledger))
c.run(40)
sj = c.get("settlementjobs", "eod-2025-01-01")
print(sj["status"]["phase"], sj["status"]["conditions"][0]["reason"], "| lock held by the SettlementJob:",
      ledger.holder_of("equities") == sj["metadata"]["uid"])
print(c.kubectl("get jobs eod-2025-01-01-1"))
for record in operator.records[:8]:
    print(record)

# %% [markdown]
# **Predict, then run.** The night is settled. Nothing changes now, but the operator is woken
# three more times (a resync, a duplicate event, a restart would do it). How many requests do
# those three reconciles send?
#
# <details><summary>Answer</summary>
#
# None. Each reads the SettlementJob and its Job from the cache, finds the status it would write
# already there, and returns. An operator that writes on every reconcile costs the API server a
# write per event, and wakes every watcher of that object: the budget of exercise 8.1.
#
# </details>

# %%
for _ in range(3):
    operator.enqueue("default/eod-2025-01-01")
    c.run(1)
for record in operator.records[-3:]:
    print(record)

# %% [markdown]
# ## 4. Break it: crashes, a deleted child, retries
#
# A failing night: every attempt exits with code 1. The operator counts attempts in status and
# waits 30 s, then 60 s, before the next one. Halfway through, the operator crashes (its caches,
# queue and timers are gone) and someone deletes the Job it owns.
#
# **Predict, then run.** After the restart, does the operator know which attempt it was on? Does
# it run a deleted attempt again, or skip it?
#
# <details><summary>Answer</summary>
#
# It knows: the attempt number is in the SettlementJob's status, in the API, not in the
# operator's memory. The restarted operator relists, reconciles every SettlementJob, sees that
# the Job of the current attempt is missing, and creates it again: the same name, so never two
# Jobs for one attempt. That is level-triggered and idempotent: what to do follows from what
# is there now, whatever happened before.
#
# </details>

# %%
c.apply(settlement_job("eod-2025-01-02", date="2025-01-02", book="bonds", behavior="exit=5,code=1"))
c.run_until(lambda: c.exists("jobs", "eod-2025-01-02-2"), timeout=120)   # attempt 2 has started
print(c.kubectl("get sj eod-2025-01-02"))
c.faults.crash("settlement-operator")
first = c.get("jobs", "eod-2025-01-02-2")["metadata"]["uid"]
print(c.kubectl("delete job eod-2025-01-02-2"))
c.run(5)
c.faults.restart("settlement-operator")
c.run(3)
again = c.get("jobs", "eod-2025-01-02-2")["metadata"]["uid"]
print("attempt 2's Job made again after the restart:", again != first)
c.run(150)
print(c.kubectl("get sj eod-2025-01-02"))
print(c.kubectl("get jobs -l batch.kubelab.dev/settlement=eod-2025-01-02"))

# %% [markdown]
# ## 5. Clean up outside the cluster: a finalizer
#
# Deleting a SettlementJob deletes its Jobs through `ownerReferences`: the garbage collector
# knows them, they are Kubernetes objects. It cannot know the ledger. So the operator puts the
# finalizer `batch.kubelab.dev/ledger-lock` on every SettlementJob: a delete then only sets
# `deletionTimestamp`, and the object stays until the operator has released the lock and
# removed its finalizer.
#
# **Predict, then run.** The ledger is down (`c.faults.ledger_down()`) when the settled night is
# deleted. What does `kubectl get sj` show a minute later? What happens once the ledger is back?
#
# <details><summary>Answer</summary>
#
# It is still listed: the finalizer holds it, with `deletionTimestamp` set, and every 10 s the
# operator tries the ledger again (each refusal counted on one `LedgerUnavailable` event). When the ledger is
# back, the next try releases the lock, the finalizer goes, and the SettlementJob disappears;
# the garbage collector then deletes its Job. Had the operator removed the finalizer first, a
# crash or an outage would have leaked the lock for good.
#
# </details>

# %%
c.faults.ledger_down()
c.client.delete("settlementjobs", "eod-2025-01-01")
c.run(60)
stuck = c.get("settlementjobs", "eod-2025-01-01")["metadata"]
print("deletionTimestamp:", stuck["deletionTimestamp"], "| finalizers:", stuck["finalizers"])
tries = sum(e.get("count", 1) for e in c.events() if e["reason"] == "LedgerUnavailable")
print(tries, "tries refused by the ledger (one LedgerUnavailable event, counted);", ledger)
c.faults.ledger_up()
c.run(15)
print("still there:", c.exists("settlementjobs", "eod-2025-01-01"), "|", ledger,
      "| its Job:", c.exists("jobs", "eod-2025-01-01-1"))

# %% [markdown]
# ## 6. A policy instead of a webhook
#
# The bank settles three books. Checking that in the operator is too late (the object is already
# stored), and an admission webhook is a server to write, deploy and keep up. A
# **ValidatingAdmissionPolicy** declares the rule in CEL, and the API server evaluates it in its
# admission chain, for every create and update, before anything is stored. A binding says where
# it applies and what to do when it fails (`Deny`, `Warn`, `Audit`).
#
# **Predict, then run.** Who refuses the SettlementJob for the book `crypto`: the schema, the
# policy or the operator? What status code does kubectl get?
#
# <details><summary>Answer</summary>
#
# The policy: the schema allows any non-empty string. The answer is 422 (a validation's `reason`
# defaults to Invalid), and its message says the request "is forbidden", naming the policy and its
# binding, with the text the `messageExpression` built. The operator never hears of it: nothing
# was stored, so no watch event exists.
#
# </details>

# %%
KNOWN_BOOKS = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: known-books}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [batch.kubelab.dev]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [settlementjobs]
  validations:
  - expression: "object.spec.book in ['equities', 'bonds', 'fx']"
    messageExpression: "'book ' + object.spec.book + ' is not one the bank settles'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: known-books}
spec:
  policyName: known-books
  validationActions: [Deny]
"""
print(c.apply(KNOWN_BOOKS))
try:
    c.apply(settlement_job("eod-crypto", book="crypto"))
except ApiError as err:
    print(err.code, err.message)
print("stored:", c.exists("settlementjobs", "eod-crypto"))

# %% [markdown]
# ## 7. The same operator with kopf, against the served cluster
#
# kopf is a Python operator framework used on real clusters. It is handler-based: you write
# `@kopf.on.create`, `@kopf.on.update`, `@kopf.on.delete`; kopf remembers the last state it
# handled in an annotation (`kopf.zalando.org/last-handled-configuration`) to work out which
# handler a change needs, and adds its own finalizer when there is a delete handler.
#
# `c.serve()` puts this cluster behind HTTPS; kopf runs as its own process with the served
# kubeconfig, and our operator is stopped first so that the two do not both act. (kopf is a
# development dependency: `pip install kopf` if the cell says it is missing.)

# %%
KOPF_OPERATOR = '''
import kopf, kubernetes

@kopf.on.create("batch.kubelab.dev", "v1", "settlementjobs")
def start_night(spec, name, namespace, body, patch, **_):
    job = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": f"{name}-1", "namespace": namespace},
           "spec": {"backoffLimit": 0, "template": {
               "metadata": {"annotations": {"kubelab.dev/behavior": spec.get("behavior", "exit=30")}},
               "spec": {"restartPolicy": "Never",
                        "containers": [{"name": "settle", "image": "busybox:1.36"}]}}}}
    kopf.adopt(job, owner=body)                     # the ownerReference, as set_controller_reference
    kubernetes.config.load_kube_config()
    kubernetes.client.BatchV1Api().create_namespaced_job(namespace, job)
    patch.status["phase"] = "Running"

@kopf.on.delete("batch.kubelab.dev", "v1", "settlementjobs")
def release_lock(spec, logger, **_):                # kopf's finalizer holds the object until this returns
    logger.info(f"releasing the lock on {spec['book']}")
'''


async def eventually(predicate, timeout=2.5):
    """Wait (letting the served cluster run) until predicate() holds, at most timeout seconds."""
    end = time.monotonic() + timeout
    while time.monotonic() < end and not predicate():
        await asyncio.sleep(0.1)
    return predicate()


try:
    import kopf
except ImportError:
    kopf = None
    print("kopf is not installed: pip install kopf, then run this section again")
else:
    c.faults.crash("settlement-operator")             # ours steps aside
    print("serving at", c.serve(speed=10))

# %%
kopf_process = None
if kopf is not None:
    script = Path(tempfile.mkdtemp()) / "kopf_settlement.py"
    script.write_text(KOPF_OPERATOR)
    kopf_process = await asyncio.create_subprocess_exec(   # on the kernel's loop, beside the server
        sys.executable, "-m", "kopf", "run", "--standalone", "--namespace", "default", str(script),
        env=dict(os.environ, KUBECONFIG=c.kubeconfig(str(script.with_name("kubeconfig")))),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    c.apply(settlement_job("kopf-night", date="2025-01-03", book="fx", behavior="exit=20"))
    print("kopf is starting (it takes a few seconds: it imports aiohttp and the kubernetes client)")

# %% [markdown]
# **Predict, then run.** kopf makes the Job. What does kopf keep on the SettlementJob that our
# operator does not, and what happens if you then delete the Job it owns?
#
# <details><summary>Answer</summary>
#
# Its finalizer `kopf.zalando.org/KopfFinalizerMarker` and the annotation with the last handled
# spec. The deleted Job is not made again: `on.create` ran once, and no handler is about Jobs.
# kopf can reconcile too (`@kopf.on.resume`, timers, `@kopf.daemon`), but its default style is
# one handler per change; our reconcile asks "what is missing now?" every time.
#
# </details>

# %%
made = kopf_process is not None and await eventually(lambda: c.exists("jobs", "kopf-night-1"))
print("kopf made the Job:", made)

# %%
if kopf_process is not None and not made:  # a busy machine: kopf's imports take longer
    print("kopf is still starting: waiting for it, at most 20 s")
    made = await eventually(lambda: c.exists("jobs", "kopf-night-1"), 20.0)
if kopf_process is not None and not made:
    print("kopf is still starting: run this cell again in a moment")
elif kopf_process is not None:
    # kopf writes its annotation after the handler returns: the Job may be there before it is
    await eventually(lambda: "kopf.zalando.org/last-handled-configuration" in (
        c.get("settlementjobs", "kopf-night")["metadata"].get("annotations") or {}))
    night = c.get("settlementjobs", "kopf-night")["metadata"]
    print("Job made by kopf | finalizers:", night.get("finalizers"))
    print("annotations:", sorted(night.get("annotations") or {}))
    c.client.delete("jobs", "kopf-night-1", propagation_policy="Background")
    await eventually(lambda: False, 0.6)             # give kopf a moment
    print("Job again after a delete:", c.exists("jobs", "kopf-night-1"))

# %%
if kopf_process is not None:
    held = "kopf.zalando.org/KopfFinalizerMarker" in (
        c.get("settlementjobs", "kopf-night")["metadata"].get("finalizers") or [])
    c.client.delete("settlementjobs", "kopf-night")
    gone = await eventually(lambda: not c.exists("settlementjobs", "kopf-night"))
    print("deleted through kopf's finalizer:" if held else "deleted (kopf had not put its finalizer on it):",
          gone)
    kopf_process.terminate()
    # kopf takes seconds to stop; its log is read to the end whatever happens (a cancelled
    # read would lose what it had read), and it is killed only if it does not stop in 10 s.
    reading = asyncio.ensure_future(kopf_process.stdout.read())
    try:
        await asyncio.wait_for(kopf_process.wait(), 10)
    except TimeoutError:
        kopf_process.kill()
    log = (await reading).decode()
    handled = [line.split("] ", 2)[-1] for line in log.splitlines() if "Handler" in line]
    print("\n".join(handled) or "kopf ran no handler (still starting?); its log ends:\n"
          + "\n".join(log.splitlines()[-3:]))
    await c.server.stop()
    c.faults.restart("settlement-operator")

# %% [markdown]
# | | kubelab.client.operator (controller-runtime's shape) | kopf |
# |---|---|---|
# | unit of work | one key: reconcile "make it so, now" | one change: `on.create`, `on.update`, `on.delete` |
# | what was done before | read from the cluster every time | kept in an annotation on the object |
# | a deleted child | the owner's watch wakes the reconcile: made again | nothing, unless a handler asks |
# | outside cleanup | your finalizer, your order of steps | kopf's finalizer around `on.delete` |
# | retries | workqueue back-off, `Result(requeue_after=...)` | `kopf.TemporaryError(delay=...)` |

# %% [markdown]
# ## 8. Admission webhooks: the API server calls out
#
# A policy is CEL inside the API server. A **webhook** is your own code outside it: the API
# server POSTs an `AdmissionReview` to an HTTPS server and waits for the answer. cert-manager
# has one (every Certificate is checked by it), so do ingress controllers and policy engines.
# They come in two kinds, and sit in the request's walk exactly where kube-apiserver puts them:
#
# ```
# authn -> authz -> decode -> mutating plugins -> MUTATING WEBHOOKS (may patch; reinvoked if needed)
#       -> schema validation -> validating plugins, policies -> VALIDATING WEBHOOKS (yes or no) -> etcd
# ```
#
# A `MutatingWebhookConfiguration` or `ValidatingWebhookConfiguration` says which requests go to
# which webhook (`rules`, `namespaceSelector`, `objectSelector`, CEL `matchConditions`), where it
# runs (`clientConfig.service`: a Service in the cluster; or `url`: any HTTPS server, with the
# `caBundle` that signs its certificate), how long to wait (`timeoutSeconds`, default 10), and
# what to do when there is no answer (`failurePolicy`: `Fail`, the default, or `Ignore`).
#
# In kubelab a webhook server is a Python function from an AdmissionReview to an AdmissionReview,
# served by every running pod of the image you register it for; the API server reaches it through
# the Service's endpoints, as kube-apiserver does, on the virtual clock. Two webhooks: one
# defaults a `team` label, one refuses images without a pinned tag.

# %%
from kubelab.samples.webhooks import allowed, denied, manifests, patched

reviews = []                                     # what the webhooks were sent


def default_team(review):
    """Mutating: add team=unowned to a pod that has no team label."""
    reviews.append(review)
    labels = review["request"]["object"]["metadata"].get("labels")
    if labels is None:
        return patched(review, [{"op": "add", "path": "/metadata/labels", "value": {"team": "unowned"}}])
    if "team" not in labels:
        return patched(review, [{"op": "add", "path": "/metadata/labels/team", "value": "unowned"}])
    return allowed(review)


def pinned_images(review):
    """Validating: every container's image has a tag, and it is not latest."""
    for container in review["request"]["object"]["spec"]["containers"]:
        name = container["image"].rsplit("/", 1)[-1]
        if ":" not in name or name.endswith(":latest"):
            return denied(review, f'image {container["image"]} is not pinned')
    return allowed(review)


w = Cluster(nodes=2, seed=8)
w.webhook_servers.register("kubelab.dev/default-team:1", default_team)
w.webhook_servers.register("kubelab.dev/pinned-images:1", pinned_images)
w.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: shop, labels: {webhooks: enabled}}")
only_shop = {"matchLabels": {"webhooks": "enabled"}}
for name, image, mutating in (("default-team", "kubelab.dev/default-team:1", True),
                              ("pinned-images", "kubelab.dev/pinned-images:1", False)):
    deployment, service, configuration = manifests(name, image, mutating=mutating,
                                                   namespace_selector=only_shop)
    w.apply([deployment, service])
    w.run(20)                                    # its pod runs: the Service has an endpoint
    w.apply(configuration)
print(w.kubectl("get mutatingwebhookconfigurations,validatingwebhookconfigurations"))
print(w.kubectl("-n shop run web --image=nginx:1.27"))
print(w.kubectl("-n shop run cache --image=redis"))
print("labels:", w.get("pods", "web", namespace="shop")["metadata"]["labels"])

# %% [markdown]
# What the mutating webhook was sent, trimmed: the request's identity, the object as the
# mutating plugins left it (DefaultTolerationSeconds has added its tolerations), and a fresh
# `uid` its answer must echo. The answer's `patch` is base64 JSONPatch.

# %%
request = reviews[0]["request"]
print({k: request[k] for k in ("uid", "kind", "resource", "namespace", "name", "operation", "dryRun")})
print("user:", request["userInfo"]["username"], "| tolerations seen:",
      [t["key"] for t in request["object"]["spec"]["tolerations"]])
print("answer:", default_team(reviews[0])["response"])

# %% [markdown]
# **Predict, then run.** The pinned-images webhook now takes 12 s to answer (its timeout is
# 10 s). What does `kubectl run` print with `failurePolicy: Fail`, and with `Ignore`? Does an
# unpinned image get in?
#
# <details><summary>Answer</summary>
#
# With `Fail`: `Error from server (InternalError): Internal error occurred: failed calling
# webhook "pinned-images.kubelab.dev": failed to call webhook: Post
# "https://pinned-images.default.svc:443/admit?timeout=10s": context deadline exceeded`, after
# 10 s (the request's latency). With `Ignore` the pod is created, unpinned image and all: the
# API server "fails open" and notes it in the audit log. A webhook's timeout is added to every
# request it matches, so a slow webhook slows the whole cluster's writes.
#
# </details>

# %%
w.faults.slow_webhook("kubelab.dev/pinned-images:1", 12)
print(w.kubectl("-n shop run slow --image=nginx"))
print("the create waited", w.apiserver.audit[-1].latency, "virtual seconds")
policy = w.get("validatingwebhookconfigurations", "pinned-images", namespace="")
policy["webhooks"][0]["failurePolicy"] = "Ignore"
w.client.update(policy)
print(w.kubectl("-n shop run slow --image=nginx"))
w.faults.heal_webhook("kubelab.dev/pinned-images:1")

# %% [markdown]
# ### The classic outage
#
# A `Fail` webhook whose pods are gone blocks every create it matches: the Service has no
# endpoints, so the call fails before it starts. Scale the labeller to zero (a node drain, a bad
# rollout, a namespace deleted by mistake), then let a Deployment in `shop` scale up.
#
# **Predict, then run.** How many pods does `shop/api` have after the scale-up? What must you
# change to recover, and why can you always change it?
#
# <details><summary>Answer</summary>
#
# One: the ReplicaSet controller's creates are refused like anyone's (its events say
# `FailedCreate`). Deleting, or fixing, the MutatingWebhookConfiguration recovers: webhooks are
# never called for webhook configurations, so the fix cannot be blocked. The lasting fix is a
# `namespaceSelector` that leaves out the webhook's own namespace and kube-system, so its pods
# can always come back (exercise 8.3).
#
# </details>

# %%
print(w.kubectl("-n shop create deployment api --image=nginx:1.27"))
w.run(20)
print(w.kubectl("scale deployment default-team --replicas=0"))
w.run(30)
print(w.kubectl("-n shop run one-more --image=nginx:1.27"))
print(w.kubectl("-n shop scale deployment api --replicas=3"))
w.run(30)
print("api pods:", len(w.get("pods", namespace="shop", label_selector="app=api")))
print([e["message"][:90] for e in w.get("events", namespace="shop") if e["reason"] == "FailedCreate"][:1])
print(w.kubectl("delete mutatingwebhookconfiguration default-team"))
w.run(30)
print("api pods after the fix:", len(w.get("pods", namespace="shop", label_selector="app=api")))

# %% [markdown]
# A `url` webhook is the same call to a real server: while the cluster is served (`c.serve()`,
# `kubelab serve`), the HTTPS edge POSTs the review and checks the server's certificate against
# the `caBundle`. kopf's admission handlers (`@kopf.on.validate`, `@kopf.on.mutate`, with
# `settings.admission.managed`) register their own configurations that way and are called on
# every create; `tests/test_webhook_serve.py` runs kopf's admission example against
# `kubelab serve`. The wall time of such a call is charged to the request on the virtual clock.

# %% [markdown]
# ## 9. A Database: a StatefulSet, a Service and a backup CronJob
#
# The operators you meet on real clusters manage stateful software: "when a Database appears,
# create a StatefulSet, a Service and a backup CronJob; when its spec changes, bring them in
# line". The sample Database operator (`kubelab/samples/database.py`) does exactly that, on the
# same kubelab.client.operator toolkit. Each reconcile makes sure of three children, in the
# shape of controller-runtime's `CreateOrUpdate`: create what is missing, copy the fields the
# operator owns (replicas, image, schedule) onto what drifted, send nothing when all match.
#
# - a headless **Service** `<name>` (`clusterIP: None`): the StatefulSet's governing Service,
#   which gives each replica a stable DNS name, `orders-0.orders`;
# - a **StatefulSet** `<name>`: pods `orders-0`, `orders-1`, ... started in order, each with its
#   own PersistentVolumeClaim `data-orders-N` from the volumeClaimTemplate;
# - a **CronJob** `<name>-backup` on `spec.backupSchedule`, `concurrencyPolicy: Forbid`.
#
# Each carries a controller reference to the Database: a change to one wakes the Database's
# reconcile (`owns=["statefulsets", "services", "cronjobs"]`), and the garbage collector deletes
# all three with it.

# %%
from kubelab.samples.database import DATABASE_CRD, DatabaseReconciler, database, database_operator
from kubelab.viz import object_graph

print(inspect.getsource(DatabaseReconciler.reconcile))
print(c.kubectl("get storageclass"))  # kind's default class: the claims will be provisioned
c.apply(DATABASE_CRD)
c.run(2)
db_operator = c.add_component("database-operator", database_operator)
print(c.apply(database("orders", replicas=2, backupSchedule="30 1 * * *")))
c.run(60)
print(c.kubectl("get db orders"))
print(c.kubectl("get statefulsets,services,cronjobs,pods,pvc -l app.kubernetes.io/instance=orders"))

# %% [markdown]
# The claims are named `<template>-<pod>` and carry the StatefulSet's selector labels, so one
# label finds everything. The object graph (notebook 05) follows `ownerReferences`: the Database
# owns three objects, the StatefulSet owns its pods.

# %%
for resource, name in (("statefulsets", "orders"), ("services", "orders"), ("cronjobs", "orders-backup")):
    ref = c.get(resource, name)["metadata"]["ownerReferences"][0]
    print(f"{resource}/{name}: owned by {ref['kind']}/{ref['name']}, controller={ref['controller']}")
g = object_graph(c, "default", kinds=("databases", "statefulsets", "services", "cronjobs", "pods"))
for owner, dependent in sorted(g.edges):
    if owner.startswith(("Database/", "StatefulSet/")):
        print(f"{owner} -> {dependent}")

# %% [markdown]
# **Predict, then run.** Someone scales the StatefulSet to 4 by hand and deletes the backup
# CronJob. What does the operator do, and how many pods are left a few seconds later? Then the
# Database is deleted: what is left of its children, and of the claims?
#
# <details><summary>Answer</summary>
#
# The scale and the delete are events on objects the Database owns, so they wake its reconcile:
# it puts `replicas` back to the Database's 2 and creates the CronJob again; two pods are left.
# The StatefulSet controller may have started `orders-2` in between (and made its claim); it
# removes it again, highest ordinal first. A reconcile may end `error Conflict`: it updated the
# StatefulSet from a cached copy the StatefulSet controller had just changed; the retry reads
# the cache again and succeeds. Deleting the Database leaves nothing of the three:
# the garbage collector follows their ownerReferences. The claims stay (the StatefulSet's
# `persistentVolumeClaimRetentionPolicy` defaults to Retain): data outlives the pods, on purpose.
#
# </details>

# %%
seen = len(db_operator.records)
print(c.kubectl("scale statefulset orders --replicas=4"))
print(c.kubectl("delete cronjob orders-backup"))
c.run(20)
print(c.kubectl("get statefulset orders"), "| backup CronJob back:", c.exists("cronjobs", "orders-backup"))
for record in db_operator.records[seen:]:
    if record.requests:
        print(record)
print(c.kubectl("delete db orders"))
c.run(30)
left = [f"{r}/{n}" for r, n in (("statefulsets", "orders"), ("services", "orders"),
                                ("cronjobs", "orders-backup")) if c.exists(r, n)]
print("children left:", left, "| claims left:",
      sorted(p["metadata"]["name"] for p in c.get("persistentvolumeclaims")))

# %% [markdown]
# ## 10. Break it yourself
#
# Crash and restart the operator (`c.faults.crash("settlement-operator")`), drop its watch
# events (`c.faults.drop_watch_events(0.5, user="kubernetes-admin")`, then
# `c.faults.heal_watch_events()`), take the ledger down and up, delete Jobs, edit a spec. Then
# run time forward and check that every SettlementJob ends `Succeeded` or `Failed`, that no
# attempt ran twice, and that `ledger.locks` holds exactly the books of SettlementJobs that exist.

# %%
print(c.kubectl("get sj"))
print(ledger, sorted(ledger.locks))

# %% [markdown]
# ## Pitfalls
#
# - **Reconciling from the event.** The event says something changed, not what to do; and
#   events get lost, merged and replayed. Read the object from the cache and decide from it.
# - **State in memory.** A restart forgets it. Keep what must survive in the object's status
#   (attempts, next attempt time) or derive it from what exists (the Job `<name>-<attempt>`).
# - **Writing when nothing changed.** Every write bumps resourceVersion and wakes every watcher,
#   your own operator included: compare first, write only the difference.
# - **Removing the finalizer before the cleanup.** Once the last finalizer is gone the object
#   is gone, and so is your reminder. Clean up, then remove the finalizer.
# - **A finalizer without an operator.** Uninstall the operator and every object with its
#   finalizer stays `Terminating` forever (`kubectl patch ... --type=json` to remove it by hand).
# - **Changing the cache's objects.** They are shared and read-only: `deep_copy` before you
#   change one (notebook 03).
#
# ## On a real cluster
#
# ```
# kubectl apply -f settlementjob-crd.yaml
# kubectl api-resources --api-group=batch.kubelab.dev
# kubectl explain settlementjob.spec          # the CRD's schema, served as OpenAPI
# kubectl apply -f - <<'EOF'                  # a bad date: the API server refuses it
# apiVersion: batch.kubelab.dev/v1
# kind: SettlementJob
# metadata: {name: bad}
# spec: {book: fx, businessDate: yesterday}
# EOF
# kubectl apply -f known-books-policy.yaml; kubectl get validatingadmissionpolicies
# kubectl create job pi --image=perl:5.34 -- perl -Mbignum=bpi -wle 'print bpi(200)'
# kubectl get jobs -w; kubectl describe job pi
# kubectl delete sj eod-2025-01-01 --wait=false
# kubectl get sj eod-2025-01-01 -o jsonpath='{.metadata.finalizers}'
# kopf run --standalone --namespace default kopf_settlement.py
# ```
#
# Where kubelab simplifies: the ledger is an object in the same process, not a network service;
# operators run as components of the simulated cluster (a real one is a Deployment with a
# ServiceAccount and RBAC for its kinds); controller-runtime's manager also runs leader election,
# webhooks and metrics, and its cache can be namespaced or filtered by label. The Job controller
# has no `backoffLimitPerIndex`, `successPolicy` or suspend conditions.
#
# ## Challenge
#
# 1. Add `spec.suspend: true` support to a copy of the SettlementJob reconcile in a new cell:
#    a suspended night creates no Job. Which branch decides, and what status would you write?
# 2. Give the flaky Job of section 2 a `podFailurePolicy` that fails the Job at once on exit
#    code 1 (`action: FailJob`). What message does its `Failed` condition carry?
# 3. Make two SettlementJobs for the same book. What does the second one's status say, and why
#    is that the ledger's decision, not Kubernetes'?
#
# <details><summary>Hints</summary>
#
# 1. Before creating the Job: `if sj["spec"].get("suspend"): return self.write_status(...)`,
#    with phase `Suspended`. A running Job could be suspended too (`spec.suspend` on the Job).
# 2. `Container main for pod default/flaky-... failed with exit code 1 matching FailJob rule at
#    index 0`, reason `PodFailurePolicy`; `restartPolicy` must be `Never` for a podFailurePolicy.
# 3. Phase `Waiting`, reason `BookLocked`: the ledger gives the lock to one holder only; the
#    operator just asks, and asks again every 10 s.
#
# </details>

# %% [markdown]
# ## Summary
#
# - A CRD adds a kind to the API: discovery, validation (schema, CEL), defaults, printer columns.
# - A Job runs pods to completion: `completions`, `parallelism`, `backoffLimit` with a pod back-off,
#   interim `FailureTarget`/`SuccessCriteriaMet`, then `Failed`/`Complete`.
# - An operator is a controller for your kind: a reconcile per key, from the cache, writing only differences.
# - Level-triggered and idempotent: the next reconcile repairs crashes, lost events, deleted children.
# - `ownerReferences` clean up Kubernetes objects (the garbage collector); a finalizer, the outside world.
# - A Database operator owns a StatefulSet, a headless Service and a backup CronJob: it
#   creates what is missing and repairs what drifts; the claims outlive it (Retain).
# - A ValidatingAdmissionPolicy declares a rule in CEL; the API server enforces it before storing.
# - Admission webhooks are your code on the request's path: mutating ones patch, validating ones
#   say no; a `Fail` webhook that is slow or gone slows or blocks every write it matches.
# - kopf's handlers react to changes; a reconcile loop converges on the state. Both run on any API server.
#
# **Exercises.** Open [exercises/ex08_operators.py](../exercises/ex08_operators.py): 8.1 the
# reconcile of a Website that owns a Deployment (within a request budget), 8.2 a finalizer that
# releases an outside lock exactly once, 8.3 a validating webhook and the configuration that
# lets it survive its own outage.
#
# ## Check your work
#
# The cell below grades exercises 8.1 to 8.3 in
# [exercises/ex08_operators.py](../exercises/ex08_operators.py), as `kubelab grade 8` does in a
# terminal. It takes several seconds. Save the file, then run the cell again after each change:
# the grader reads the file from disk, so there is nothing to re-import.
#
# Nothing solved yet? Then the report says `0/30 points`, and each check says `FAIL ... not
# implemented yet (NotImplementedError: ...)`. That is the starting point, not an error. Open
# the file, replace a `raise NotImplementedError(...)` with your code, save, and run the cell.
# A failed check says what it expected, what it got, a hint, and a `replay:` command that reruns
# just that check. `grade("8", verbose=True)` also shows what your code printed and the end of
# the cluster's trace.

# %%
from kubelab.grading import grade

grade("8")

# %% [markdown]
# Run the cell above again after each change you save (Shift+Enter moves here, so no empty cell
# is added). In a workshop, your instructor's report shows as a `note:` at the top of its output.
