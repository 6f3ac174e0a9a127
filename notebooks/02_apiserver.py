# %% [markdown]
# # 02 · The API server: the only door to the store
#
# Nothing in Kubernetes talks to etcd except the API server. `kubectl`, the scheduler, the
# controllers and every kubelet send it requests; it decides **who** is asking
# (authentication), **whether they may** (authorization, RBAC), **whether the request is
# acceptable and what to add to it** (admission), **whether the object is well-formed**
# (validation), and only then **stores** it and tells every watcher what changed. It makes no
# decision of its own about pods or nodes: it writes things down, answers questions, and
# announces changes.
#
# **Learning goals.** By the end you can
# - follow one request through authentication → authorization → admission → validation → storage;
# - read a `403 Forbidden` and fix it with a Role and a RoleBinding;
# - write an admission plugin and see it refuse a request;
# - get a `409 Conflict`, understand it, and fix it with the retry loop every controller uses;
# - watch from a `resourceVersion`, and explain the `410 Gone` after compaction;
# - connect a slow store to slow API requests.
#
# **Prerequisites.** Notebook 01 (the store: revisions, compare-and-swap, watch, compaction).
#
# **Time.** About 40 minutes.

# %%
from kubelab.api import errors
from kubelab.apiserver import STAGES, AdmissionPlugin, admission_forbidden
from kubelab.client.retry import retry_on_conflict
from kubelab.cluster import Cluster

c = Cluster(nodes=2, seed=2, components=[])   # the store and the API server, nothing else yet
admin = c.client                                # what `kubectl` holds: a cluster administrator
print("the pipeline:", " -> ".join(STAGES))


def show(record):
    verdict = "OK" if record.code < 400 else f"rejected at {record.stage!r}"
    print(f"{record.user:<18} {record.verb:<7} {record.object:<32} {record.code}  {verdict}")
    if record.message:
        print("    ", record.message)


def pod(name, **spec):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}], **spec}}


# %% [markdown]
# ## 1. One request, every stage
#
# Create a pod as the administrator and look at the audit record the API server keeps for every
# request: who, what, the answer, and the stages it went through. (`c.apiserver.audit` keeps the
# newest 50,000 to 100,000 records; like a real audit log file, it rotates.)

# %%
created = admin.create(pod("web"))
record = c.apiserver.audit[-1]
show(record)
print("stages passed:", record.stages)
print()
print("What the API server added on the way (admission defaults and server-set metadata):")
print("  uid               ", created["metadata"]["uid"])
print("  resourceVersion   ", created["metadata"]["resourceVersion"], "(the store's mod_revision)")
print("  creationTimestamp ", created["metadata"]["creationTimestamp"])
print("  restartPolicy     ", created["spec"]["restartPolicy"])
print("  schedulerName     ", created["spec"]["schedulerName"])
print("  tolerations       ", [t["key"] for t in created["spec"]["tolerations"]])
print("  status.phase      ", created["status"]["phase"])

# %% [markdown]
# The two `NoExecute` tolerations for `not-ready` and `unreachable` nodes were added by the
# `DefaultTolerationSeconds` admission plugin: they are why a pod on a dead node is evicted
# after 300 seconds (notebook 06).
#
# ## 2. Each stage can say no
#
# Each request below is refused by a different stage. Read the messages: they are the ones a
# real cluster prints.

# %%
from kubelab.api.request import Request

stranger = c.client_for("bob")                  # authenticated, but no role at all
attempts = [
    ("resolve", lambda: admin.api.handle(Request("list", "widgets", token=admin.token))),
    ("authentication", lambda: admin.api.handle(Request("list", "pods", namespace="default",
                                                          token="a-token-nobody-issued"))),
    ("authorization", lambda: stranger.list("pods", "default")),
    ("decode", lambda: admin.create(pod("odd", colour="blue"))),
    ("mutating-admission", lambda: admin.create({**pod("lost"), "metadata": {"name": "lost",
                                                                            "namespace": "nowhere"}})),
    ("validation", lambda: admin.create(pod("Web_1"))),
    ("storage", lambda: admin.create(pod("web"))),
]
for expected, attempt in attempts:
    try:
        attempt()
    except errors.ApiError as err:
        print(f"[{expected}]  {err.kubectl_message()}")
    show(c.apiserver.audit[-1])
    print()

# %% [markdown]
# Spec and status have separate doors. A plain update of a pod changes what you **want** (its
# spec) and keeps the status as it was; an update through the `status` subresource changes
# only what **is** (the status), and validation then checks the status. The kubelet and the
# controllers report through that second door, and their roles let them write little else.

# %%
web = admin.get("pods", "web")
web["spec"]["containers"][0]["image"] = "nginx:9.9"   # ignored: /status keeps the spec
web["status"]["nominatedNodeName"] = "Node_1"         # checked: not a node name
try:
    admin.update_status(web)
except errors.ApiError as err:
    print(err.kubectl_message())
show(c.apiserver.audit[-1])
web["status"]["nominatedNodeName"] = "node-1"
stored = admin.update_status(web)
print("image:", stored["spec"]["containers"][0]["image"],
      "| nominatedNodeName:", stored["status"]["nominatedNodeName"])

# %% [markdown]
# ## 3. A forbidden request, and the role that fixes it
#
# Bob is authenticated but may do nothing. RBAC grants permissions with a **Role** (what may
# be done, in one namespace) and a **RoleBinding** (to whom). Nothing else changes: the next
# request simply passes authorization.
#
# **Predict, then run.** The Role below allows `get`, `list` and `watch` on pods. After it is
# bound to bob, he lists pods, then tries to delete `web`. What does each request get?
#
# <details><summary>Answer</summary>
#
# The list works. The delete gets `403 Forbidden`: `pods "web" is forbidden: User "bob" cannot
# delete resource "pods" ...`. RBAC grants exactly the verbs listed; no verb implies another.
#
# </details>

# %%
reader_role = {
    "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
    "metadata": {"name": "pod-reader", "namespace": "default"},
    "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}],
}
binding = {
    "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
    "metadata": {"name": "bob-reads-pods", "namespace": "default"},
    "subjects": [{"kind": "User", "name": "bob", "apiGroup": "rbac.authorization.k8s.io"}],
    "roleRef": {"kind": "Role", "name": "pod-reader", "apiGroup": "rbac.authorization.k8s.io"},
}
print(c.apply([reader_role, binding]))
print("bob lists", len(stranger.list("pods", "default")["items"]), "pod(s)")
try:
    stranger.delete("pods", "web")
except errors.ApiError as err:
    print(err.kubectl_message())

# %% [markdown]
# **Asking on bob's behalf.** An admin checks bob's rights without bob's token. `--as bob`
# makes every request of one command act as bob (impersonation: the API server first checks that
# the admin may `impersonate` users). `kubectl auth can-i` asks the authorizer and changes
# nothing; `--list` prints every rule bob has in the namespace, as kubectl merges and sorts them
# (`[get list watch]` on pods from the Role, and what every authenticated user may do).
# `auth whoami` says who the server thinks you are.

# %%
print(c.kubectl("auth can-i delete pods/web --as bob"))
print(c.kubectl("auth can-i list pods --as bob"))
print(c.kubectl("auth can-i --list --as bob"))
print(c.kubectl("auth whoami --as bob"))

# %% [markdown]
# The built-in components are users too: `system:kube-scheduler` may bind pods but not create
# them, and each kubelet (`system:node:<name>`) may only touch its own node and the pods bound
# to it. A compromised component can do only its own job.

# %%
scheduler = c.client_for("system:kube-scheduler")
try:
    scheduler.create(pod("sneaky"))
except errors.ApiError as err:
    print(err.kubectl_message())


# %% [markdown]
# ## 4. Write an admission plugin
#
# Admission plugins see every write after authorization and may change it (mutating) or refuse
# it (validating). Here is a policy many teams have: every pod must say which team owns it.

# %%
class RequireTeamLabel(AdmissionPlugin):
    name = "RequireTeamLabel"

    def validate(self, attrs):
        if attrs.resource != "pods" or attrs.operation != "CREATE" or attrs.subresource:
            return
        labels = (attrs.object.get("metadata") or {}).get("labels") or {}
        if "team" not in labels:
            raise admission_forbidden(attrs, 'every pod needs a "team" label')


c.apiserver.admission.register(RequireTeamLabel())
try:
    admin.create(pod("anonymous"))
except errors.ApiError as err:
    print(err.kubectl_message())
show(c.apiserver.audit[-1])
labelled = pod("owned")
labelled["metadata"]["labels"] = {"team": "payments"}
print("created:", admin.create(labelled)["metadata"]["name"])
c.apiserver.admission.unregister("RequireTeamLabel")

# %% [markdown]
# ## 5. `409 Conflict`, and the loop that fixes it
#
# Every object carries its `resourceVersion` (the store's `mod_revision`). An update that sends
# an old one is refused: somebody else wrote in between. This is notebook 01's compare-and-swap,
# seen from the API.
#
# **Predict, then run.** Alice and carol read `counter` at the same version. Alice updates it
# first. What does the API server answer carol's update?
#
# <details><summary>Answer</summary>
#
# `409 Conflict`: `Operation cannot be fulfilled on configmaps "counter": the object has been
# modified; please apply your changes to the latest version and try again`. Her copy's
# `resourceVersion` is no longer the stored one, and nothing was written.
#
# </details>

# %%
admin.create({"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": "counter", "namespace": "default"}, "data": {"n": "0"}})
alice = admin.get("configmaps", "counter")      # two writers read the same version...
carol = admin.get("configmaps", "counter")
alice["data"]["n"] = "1"
admin.update(alice)                             # ...alice writes first
carol["data"]["n"] = "1"
try:
    admin.update(carol)                         # carol's copy is stale
except errors.ApiError as err:
    print(err.code, err.reason, "-", err.message)


# %% [markdown]
# The fix is not a lock; it is a loop: read the latest, apply the change again, try again.
# client-go calls it `retry_on_conflict`, and every controller uses it.

# %%
def increment():
    latest = admin.get("configmaps", "counter")
    latest["data"]["n"] = str(int(latest["data"]["n"]) + 1)
    return admin.update(latest)

print("after the retry loop:", retry_on_conflict(increment)["data"])

# %% [markdown]
# ## 6. Watch from a resourceVersion, and `410 Gone`
#
# A client that LISTed at some `resourceVersion` can WATCH from exactly there and miss nothing.
# If the store has compacted that history away, the API server answers the watch with an
# `ERROR` event carrying `410 Expired: too old resource version`, and the client must LIST
# again (notebook 03 shows a reflector doing that).

# %%
listing = admin.list("pods", "default")
rv = listing["metadata"]["resourceVersion"]
seen = []
admin.watch("pods", seen.append, "default", resource_version=rv)
admin.create(pod("late-1"))
admin.delete("pods", "late-1")
c.run(1)
print("events after", rv, ":", [(e["type"], e["object"]["metadata"]["name"]) for e in seen])

c.faults.compact()
stale = []
admin.watch("pods", stale.append, "default", resource_version=rv)
c.run(1)
print("watch from", rv, "after compaction:", stale[0]["type"], stale[0]["object"]["code"],
      stale[0]["object"]["reason"], "-", stale[0]["object"]["message"])

# %% [markdown]
# ## 7. A slow store makes a slow API
#
# Every write waits for the store's disk. Slow the disk down and look at the latency the audit
# log records for each create.
#
# **Predict, then run.** At the end the disk takes 1 s per write, and five patches arrive back to
# back. About how long does the fifth one wait?
#
# <details><summary>Answer</summary>
#
# About 6 s (the audit log says 2, 3, 4, 5, 6): each write queues behind those before it, and
# the first also waits for the create just before the burst.
#
# </details>

# %%
for latency in (0.0, 0.2, 1.0):
    c.run(5)                      # let the disk finish earlier writes
    c.faults.slow_store(latency)
    admin.create({"apiVersion": "v1", "kind": "ConfigMap",
                  "metadata": {"name": f"slow-{int(latency * 10)}", "namespace": "default"}})
    print(f"disk latency {latency:>3}s -> create took {c.apiserver.audit[-1].latency:g}s")
burst = []
for i in range(5):               # back-to-back writes queue behind each other on the disk
    admin.patch("configmaps", "counter", {"data": {"n": str(i)}})
    burst.append(c.apiserver.audit[-1].latency)
print("a burst of 5 writes at 1s each waited:", burst)
c.faults.slow_store(0.0)

# %% [markdown]
# ## 8. Try it yourself
#
# List pods as bob, grant and revoke his role, compact the store, slow its disk, and read the
# audit log: which stage answered, and why.

# %%
from kubelab.widgets.apiserver_panel import ApiServerPanel

ApiServerPanel(c, user="bob")

# %% [markdown]
# ## 9. The same door over HTTPS: the real `kubectl`
#
# So far every request came from `c.client`, a Python object. A real API server is an HTTPS
# server, and kubectl, client-go, the Python client and operators all speak that one
# protocol. `c.serve()` puts this cluster's API server behind HTTPS on your machine: a fresh
# certificate authority, a serving certificate, and a kubeconfig with two users,
# `kubernetes-admin` and `viewer` (bound to the built-in `view` ClusterRole). The HTTP layer
# only translates: each request still walks authentication, RBAC, admission, validation and
# storage, and lands in the same audit log. While the server runs, the cluster's clock follows
# the wall clock whenever the kernel is idle.
#
# **Predict, then run.** `viewer` asks to create a ConfigMap. Which stage refuses it, and does
# the API server even look at the ConfigMap?
#
# <details><summary>Answer</summary>
#
# Authorization refuses it with 403, in the same words as before. The body is never decoded,
# admitted or validated: a request that may not be made is not examined.
#
# </details>

# %%
from kubelab.serve.server import kubectl_binary

url = c.serve()
print("serving", url)
print("kubeconfig", c.kubeconfig())   # ~/.kube/kubelab.yaml

# %%
if kubectl_binary():           # the real kubectl binary, awaited so the server can answer
    print(await c.server.kubectl("get configmaps"))
    print(await c.server.kubectl("create configmap from-kubectl --from-literal=who=you"))
    print(await c.server.kubectl("create configmap not-allowed", context="kubelab-viewer"))
else:
    print("kubectl is not installed here; `make lab` installs it")
for r in c.apiserver.audit[-3:]:
    print(f"{r.user:17} {r.verb:7} {r.resource:11} {r.name:14} {r.code}  stages: {' -> '.join(r.stages)}")

# %% [markdown]
# Open a terminal in JupyterLab (File > New > Terminal) and try it yourself while this kernel
# is idle: `export KUBECONFIG=~/.kube/kubelab.yaml`, then `kubectl get configmaps -w`, and
# create one from a cell. When you are done, stop the server:

# %%
await c.server.stop()

# %% [markdown]
# ## Pitfalls
#
# - **401 is not 403.** `401 Unauthorized` means the server does not know who you are: a wrong
#   or expired credential; fix your kubeconfig. `403 Forbidden` means it knows you and RBAC says
#   no; fix it with a binding, not a new token.
# - **A Role works in one namespace.** A RoleBinding in `default` grants nothing in `team-b`.
#   Use a ClusterRole and a ClusterRoleBinding for rights everywhere.
# - **RBAC only adds.** There are no deny rules. To take a right away, delete the binding or
#   the rule that grants it.
# - **Do not remove `resourceVersion` to silence a 409.** An update without one is
#   unconditional, and it overwrites whatever the other writer just stored. Re-read and retry.
# - **Status goes through `/status`.** A plain update keeps the stored status, so a status
#   change sent with it is silently lost.
#
# ## On a real cluster
#
# In a kind cluster (notebook 00), you are `kubernetes-admin` (group `kubeadm:cluster-admins`),
# so you may act as bob with `--as bob`:
#
# ```bash
# kubectl auth can-i list pods --as bob              # no
# kubectl get pods --as bob                          # Error from server (Forbidden): pods is forbidden: ...
# kubectl create role pod-reader --verb=get,list,watch --resource=pods
# kubectl create rolebinding bob-reads-pods --role=pod-reader --user=bob
# kubectl auth can-i list pods --as bob              # yes
# kubectl auth can-i --list --as bob                 # everything bob may do here
# kubectl run web --image=nginx:1.27 --dry-run=server -o yaml   # admission and validation, nothing stored
# kubectl get pods -v=8                              # the HTTP requests kubectl sends, and the answers
# kubectl get --raw '/api/v1/namespaces/default/pods?watch=1&resourceVersion=1'   # 410, too old
# ```
#
# The `--dry-run=server` output shows what the server added: defaults such as `schedulerName`,
# and the two `NoExecute` tolerations from the DefaultTolerationSeconds admission plugin.
#
# Where kubelab simplifies: authentication is a table of tokens (`c.client_for("bob")` makes
# one), not client certificates, service-account tokens or OIDC. Your policies are Python
# classes registered in the process; a real API server calls admission webhooks or CEL
# ValidatingAdmissionPolicies for that. kubelab audits every request; a real API server writes
# an audit log only with an audit policy (`--audit-policy-file`), which kind leaves off. There
# is no API Priority and Fairness: a real overloaded API server queues requests and answers
# `429 Too Many Requests`.
#
# ## Challenge
#
# Use `c`, `admin` and `stranger` (bob) from above, in new cells.
#
# 1. Create a namespace `team-b`. Can bob list pods there? Grant him read access in `team-b`
#    only, with a ClusterRole `pod-reader` and a RoleBinding in `team-b`. Check both namespaces.
# 2. Count the refused requests in `c.apiserver.audit` by the stage that refused them
#    (`collections.Counter`, `record.code`, `record.stage`).
# 3. Slow the store to 1 s. Does a `get` wait for the disk too? Compare its audit latency with a
#    `patch`'s.
#
# <details><summary>Hints</summary>
#
# 1. A RoleBinding may point at a ClusterRole: the rules then apply in the binding's namespace
#    only. Bob can read pods in `team-b`; in `default` he has whatever the earlier binding gives.
# 2. `Counter(r.stage for r in c.apiserver.audit if r.code >= 400)`.
# 3. The read does not wait: only writes go to the disk. In etcd, a write commits after an fsync
#    on a majority of members; a read needs no fsync.
#
# </details>

# %% [markdown]
# ## Summary
#
# - The API server is the only door to the store, and it is stateless: all state is in etcd.
# - Every request passes **authentication → authorization (RBAC) → mutating admission →
#   validation → validating admission → storage**, and any stage can refuse it in Kubernetes' words.
# - Spec and status have separate doors: an update through `/status` changes only the status,
#   and validation checks it as a status.
# - RBAC: Roles say what, RoleBindings say who. Components are users with exactly their job's rights.
# - Admission plugins can add defaults (tolerations, restartPolicy...) or enforce policy.
# - `resourceVersion` is the store's revision: stale updates get **409 Conflict**, and the fix is
#   `retry_on_conflict`; watches resume from a `resourceVersion`, or get **410 Gone** and relist.
# - A slow store slows every write through the API.
# - Over HTTPS (`c.serve()`, `kubelab serve`) the real kubectl takes the same path: the HTTP
#   layer only translates, so its requests meet the same stages and the same audit log.
#
# **Exercises.** Open [exercises/ex02_apiserver.py](../exercises/ex02_apiserver.py): 2.1 an
# admission plugin that requires a team label, 2.2 one that defaults resource requests.
#
# ## Check your work
#
# The cell below grades exercises 2.1 and 2.2 in
# [exercises/ex02_apiserver.py](../exercises/ex02_apiserver.py), as `kubelab grade 2` does in a
# terminal. It takes a few seconds. Save the file, then run the cell again after each change:
# the grader reads the file from disk, so there is nothing to re-import.
#
# Nothing solved yet? Then the report says `0/20 points`, and each check says `FAIL ... not
# implemented yet (NotImplementedError: ...)`. That is the starting point, not an error. Open
# the file, replace a `raise NotImplementedError(...)` with your code, save, and run the cell.
# A failed check says what it expected, what it got, a hint, and a `replay:` command that reruns
# just that check. `grade("2", verbose=True)` also shows what your code printed and the end of
# the cluster's trace.
#
# **Next:** [03 · Watch](03_watch.ipynb): how every component turns these watches into a cache
# and a work queue.

# %%
from kubelab.grading import grade

grade("2")

# %% [markdown]
# Run the cell above again after each change you save (Shift+Enter moves here, so no empty cell
# is added). In a workshop, your instructor's report shows as a `note:` at the top of its output.
