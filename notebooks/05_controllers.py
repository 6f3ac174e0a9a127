# %% [markdown]
# # 05 · Controllers: Deployment → ReplicaSet → Pod
#
# Nobody in Kubernetes "runs" your application. You write down what you want (a Deployment:
# three copies of this pod template) and a set of **controllers** in kube-controller-manager
# close the gap between that and what exists, over and over. Each watches a kind and talks only
# to the API server: the Deployment controller makes ReplicaSets, the ReplicaSet controller
# makes Pods, the scheduler (notebook 04) places them, the kubelet (notebook 06) runs them.
#
# In this notebook you run `kubelab.controllers.ControllerManager`, a re-implementation of the
# ReplicaSet and Deployment controllers, the garbage collector and the namespace controller,
# with upstream's algorithms, defaults, event messages and conditions.
#
# **Learning goals.** By the end you can
# - follow the cascade Deployment → ReplicaSet → Pod → scheduler in the trace, and say who wrote what;
# - explain why `kubectl delete pod` "doesn't work" on a Deployment's pod, and what does;
# - predict each step of a rolling update from `replicas`, `maxSurge` and `maxUnavailable`;
# - roll back, and read `kubectl rollout history`;
# - tell the three deletion policies apart (Background, Foreground, Orphan) on the object graph;
# - say what a crashed controller manager stops, and what it does not;
# - predict the order in which a StatefulSet scales down, and say what a DaemonSet promises.
#
# **Prerequisites.** Notebooks 03 (informers, the workqueue, level-triggered loops) and 04 (the scheduler).
#
# **Time.** About 40 minutes.

# %%
import networkx as nx

from kubelab.cluster import COMPONENTS, Cluster
from kubelab.viz import GraphView, keep_pods_ready, node_id, object_graph
from kubelab.widgets.controllers_panel import ControllersPanel

WEB = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.25
"""


def new_cluster(seed=5):
    """The full control plane. Without kubelets (an older kubelab), hollow nodes stand in:
    keep_pods_ready reports pods Running and Ready, as a kubelet would."""
    if "kubelet" in COMPONENTS:
        return Cluster(nodes=3, seed=seed), False
    c = Cluster(nodes=3, seed=seed)
    keep_pods_ready(c, every=1.0)
    return c, True


def writes(c, since, kinds=("deployments", "replicasets", "pods")):
    """Who wrote what to the API server since trace record number `since`."""
    for r in list(c.trace)[since:]:
        if r.component == "apiserver" and r.verb in ("create", "update", "patch", "delete") \
                and r.object.split("/")[0] in kinds and r.detail.get("code") in (200, 201):
            print(f"{r.time:6.2f}s  {r.detail['user']:32} {r.verb:7} {r.object}")


c, hollow = new_cluster()
c

# %% [markdown]
# ## 1. One `kubectl apply`, four components at work
#
# Apply a Deployment of three replicas and let a few virtual seconds pass. Then read the trace:
# every write to the API server, and who made it.

# %%
start = len(c.trace)
print(c.apply(WEB))
c.run(10)
writes(c, start)

# %% [markdown]
# Read it top to bottom. `kubernetes-admin` (you, through kubectl) created one object. The
# Deployment controller (`system:kube-controller-manager`) saw it through its informer and
# created a **ReplicaSet** named `web-<hash>`: the hash is of the pod template, so a new
# template means a new ReplicaSet. The ReplicaSet controller (same process, same identity) saw
# that ReplicaSet and created three **Pods** named `web-<hash>-<5 random characters>`. The
# scheduler bound each to a node (`pods/.../binding`); kubelets then reported status. Nobody
# called anybody: each reacted to an object in the API.
#
# The events say the same thing in words, and `kubectl get` shows the result:

# %%
for e in c.events():
    if e["source"]["component"] in ("deployment-controller", "replicaset-controller", "default-scheduler"):
        print(f"{e['source']['component']:22} {e['reason']:18} {e['message']}")
print()
print(c.kubectl("get deployments"))
print(c.kubectl("get replicasets"))
print(c.kubectl("get pods -o wide"))

# %% [markdown]
# The same hierarchy as a graph, built from the live objects: an edge from owner to dependent
# for each `metadata.ownerReferences` entry, and from each pod to its node (`spec.nodeName`).

# %%
g = object_graph(c)
GraphView(g, title="web: Deployment -> ReplicaSet -> Pods -> Nodes")

# %% [markdown]
# It is a networkx graph, so you can ask it questions:

# %%
ownership = nx.subgraph_view(g, filter_edge=lambda u, v: g.edges[u, v]["kind"] == "owns")
print("owned, directly or not, by the Deployment:")
for name in sorted(nx.descendants(ownership, node_id("Deployment", "web", "default"))):
    print("  ", name)
rs_node = next(n for n, a in g.nodes(data=True) if a["kind"] == "ReplicaSet")
print("the ReplicaSet's attributes:", g.nodes[rs_node])
print("not ready:", [n for n, a in g.nodes(data=True) if a["kind"] == "Pod" and not a["ready"]])

# %% [markdown]
# ## 2. Delete a pod, and it comes back
#
# A common first surprise: `kubectl delete pod` on a Deployment's pod "doesn't work".

# %%
before = sorted(p["metadata"]["name"] for p in c.get("pods"))
victim = before[0]
print(c.kubectl(f"delete pod {victim}"))
c.run(10)
after = sorted(p["metadata"]["name"] for p in c.get("pods") if not p["metadata"].get("deletionTimestamp"))
print("before:", before)
print("after: ", after)
print([e["message"] for e in c.events() if e["reason"] == "SuccessfulCreate"][-1])

# %% [markdown]
# The delete worked: that pod is gone for good. But the ReplicaSet still says `replicas: 3`,
# and its controller is **level-triggered**: the pod's deletion woke it up, it counted two pods
# where three are wanted, and it created one more (with a new name). Deleting a pod is a way
# to *replace* it, never to remove it. To have fewer pods, change what you want:
#
# ## 3. Scale to zero, and back
#
# **Predict, then run.** After `--replicas=0` and 40 s, what do `get deployments`, `get
# replicasets` and `get pods` show? And when you scale back to 3, is there a new ReplicaSet?
#
# <details><summary>Answer</summary>
#
# The Deployment `0/0` and its ReplicaSet with `DESIRED 0` both stay; only the pods are gone.
# Scaling back uses the same ReplicaSet: the template did not change, so neither did its hash.
#
# </details>

# %%
print(c.kubectl("scale deployment web --replicas=0"))
c.run(40)  # the pods' graceful termination takes a while
print(c.kubectl("get deployments"))
print(c.kubectl("get replicasets"))
print(c.kubectl("get pods"))
print(c.kubectl("scale deployment web --replicas=3"))
c.run(10)
print(c.kubectl("get pods"))

# %% [markdown]
# Zero replicas is a perfectly good desired state: the Deployment and the ReplicaSet stay
# (with their history), only the pods go. Scaling does not create a new ReplicaSet: the
# template did not change.
#
# ## 4. A rolling update, step by step
#
# Change the image: the template changes, so its hash does, so there is a new ReplicaSet. The
# Deployment controller moves replicas from old to new, within two bounds that you set:
#
# - **maxSurge** (default 25%, *rounded up*): how many pods above `replicas` may exist;
# - **maxUnavailable** (default 25%, *rounded down*): how many below `replicas` may be unavailable.
#
# With 10 replicas: at most 13 pods, at least 8 available. Each step of the controller either
# scales the new ReplicaSet up (as far as 13 pods allow) or the old one down (as far as 8
# available pods allow), then waits for the ReplicaSet controller to report new pods available.
#
# **Predict, then run.** Before any new pod is available, how far can the controller go? How
# many replicas do the old and the new ReplicaSet want after those first steps?
#
# <details><summary>Answer</summary>
#
# New 5, old 8. Up to 13 pods may exist, so it creates 3 new ones at once. The 10 old pods are
# all available and 8 must stay, so it scales the old ReplicaSet down by 2. That leaves room
# under 13 for 2 more new pods. After this, each step waits for new pods to become available.
#
# </details>

# %%
c.kubectl("scale deployment web --replicas=10")
c.run(20)
print(c.kubectl("rollout status deployment/web"))
events_before = len(c.events())
c.client.patch("deployments", "web", {"spec": {"template": {"spec": {
    "containers": [{"name": "web", "image": "nginx:1.26"}]}}}}, patch_type="strategic")

rows, last = [], None
for _ in range(1200):
    c.run(0.05)  # look often: several steps can happen within a fraction of a second
    rss = sorted(c.get("replicasets"), key=lambda r: (r["metadata"]["creationTimestamp"],
                                                      r["metadata"]["name"]))
    old, new = rss[0], rss[1]
    pods = [p for p in c.get("pods") if not p["metadata"].get("deletionTimestamp")]
    available = sum(1 for p in pods if any(x["type"] == "Ready" and x["status"] == "True"
                                           for x in p["status"].get("conditions") or ()))
    row = (old["spec"]["replicas"], new["spec"]["replicas"], len(pods), available)
    if row != last:
        rows.append((c.clock.now, *row))
        last = row
    if c.kubectl("rollout status deployment/web").startswith("deployment"):
        break
print(f"{'t':>6}  {'old RS':>6}  {'new RS':>6}  {'pods':>5}  {'available':>9}")
for t, o, n, p, a in rows:
    flag = "" if p <= 13 and a >= 8 else "   <-- out of bounds!"
    print(f"{t:6.1f}  {o:6}  {n:6}  {p:5}  {a:9}{flag}")
print(c.kubectl("rollout status deployment/web"))

# %% [markdown]
# Read the table against the rule: pods never above 13, available never below 8. The first
# steps (3 new pods, the old ReplicaSet down to 8, the new one up to 5) wait for no pod to
# become available, so they happen in the same instant; after that every step waits for new
# pods to become available before old ones go. The controller's own account, in its events:

# %%
for e in c.events()[events_before:]:
    if e["reason"] == "ScalingReplicaSet":
        print(e["message"])

# %% [markdown]
# (With `maxSurge: 1, maxUnavailable: 0` you would see +1 new, −1 old, one pod at a time: slow
# and never below full capacity. With `type: Recreate`, all old pods go before any new one
# starts: a gap in service, but never two versions at once.)
#
# ## 5. Roll back
#
# Every ReplicaSet remembers its revision in the annotation `deployment.kubernetes.io/revision`.
# `kubectl rollout undo` copies the previous ReplicaSet's template back into the Deployment; the
# Deployment controller then finds that an existing ReplicaSet already has that template, and
# rolls *it* forward again, as revision 3.
#
# **Predict, then run.** After the undo, how many ReplicaSets are there, which one has the 10
# replicas, and which revisions does `rollout history` list?
#
# <details><summary>Answer</summary>
#
# Still two. The first one (`nginx:1.25`) is back at 10 and the second at 0. History lists 2 and
# 3: revision 1 became revision 3, since a revision number belongs to a ReplicaSet.
#
# </details>

# %%
print(c.kubectl("rollout history deployment/web"))
print(c.kubectl("rollout undo deployment/web"))
c.run(30)
print(c.kubectl("rollout status deployment/web"))
print(c.kubectl("rollout history deployment/web"))
print(c.kubectl("get replicasets"))


# %% [markdown]
# ## 6. Deleting with dependents: Background, Foreground, Orphan
#
# Who deletes the ReplicaSet and the pods when you delete the Deployment? The **garbage
# collector**. It keeps a graph of `ownerReferences` and acts on a deletion in one of three ways,
# chosen by `kubectl delete --cascade=...`. To see the in-between states, we freeze the garbage
# collector first by crashing the controller manager, delete, look, and then restart it.

# %%
def delete_and_watch(policy):
    c.faults.crash("controller-manager")
    print(c.kubectl(f"delete deployment web --cascade={policy}"))
    frozen = GraphView(object_graph(c, kinds=("deployments", "replicasets", "pods")), cluster_by=None,
                       title=f"--cascade={policy}, collector stopped")
    c.faults.restart("controller-manager")
    c.run(40)
    return frozen


c.apply(WEB)
c.run(10)
delete_and_watch("foreground")

# %% [markdown]
# **Foreground**: the Deployment is not gone. It has a `deletionTimestamp` and the finalizer
# `foregroundDeletion`, and it stays until every dependent that blocks it (`blockOwnerDeletion:
# true`, which controllers always set) is deleted: the collector deletes the pods, then the
# ReplicaSet, then removes the finalizer, and only then does the Deployment disappear.

# %%
print(c.kubectl("get deployments"))
print(c.kubectl("get replicasets"))
print(c.kubectl("get pods"))
c.apply(WEB)
c.run(10)
delete_and_watch("background")

# %% [markdown]
# **Background** (kubectl's default): the Deployment is deleted at once. Its ReplicaSet now
# points at an owner that no longer exists (drawn dotted: *not found*); when the collector runs,
# it finds that dangling reference and deletes the ReplicaSet, whose pods then follow the same way.

# %%
c.apply(WEB)
c.run(10)
delete_and_watch("orphan")

# %% [markdown]
# **Orphan**: the Deployment waits with the `orphan` finalizer while the collector *removes* the
# `ownerReferences` pointing at it from its dependents; then it goes, and the ReplicaSet and
# its pods live on, owned by nobody above the ReplicaSet:

# %%
print(c.kubectl("get deployments"))
print(c.kubectl("get replicasets"))
print(c.kubectl("get pods"))
GraphView(object_graph(c), title="after --cascade=orphan")

# %% [markdown]
# ## 7. Drain a node, with a disruption budget
#
# `kubectl drain` empties a node before maintenance: it cordons it, then **evicts** each pod
# (`pods/<name>/eviction`), a delete that asks first. The API server checks the
# PodDisruptionBudgets that select the pod; the **disruption controller** keeps each budget's
# status (`currentHealthy`, `desiredHealthy`, `disruptionsAllowed`). A budget that allows no
# disruption now answers 429 *Cannot evict pod as it would violate the pod's disruption
# budget.*, and drain tries that pod again 5 s later, as the real kubectl does.
#
# **Predict** before you run: two `web` pods, both on `node-1`, and a budget of
# `minAvailable: 1`. How many evictions are refused, and when does the second pod go?

# %%
c3 = Cluster(nodes=2, seed=3)
c3.kubectl("cordon node-2")  # both replicas start on node-1
c3.kubectl("create deployment web --image=nginx:1.25 --replicas=2")
c3.apply("""
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: web}}
""")
c3.run(30)
c3.kubectl("uncordon node-2")
print(c3.kubectl("get pdb"))

# %%
start = c3.clock.now
print(c3.kubectl("drain node-1 --ignore-daemonsets --timeout=2m"))
print(f"drained in {c3.clock.now - start:.0f} virtual seconds")
print(c3.kubectl("get pods -o wide"))

# %% [markdown]
# One disruption was allowed, so the first eviction passed and spent it (the pod went into the
# budget's `status.disruptedPods`). The second was refused until the first pod's replacement
# was Ready on `node-2`; then the controller allowed one disruption again, and the retry
# passed. With `minAvailable: 2` no retry would ever pass: drain waits until its `--timeout`.
# `kubectl describe pdb web` shows the counts; evicted pods carry the condition
# `DisruptionTarget` (reason `EvictionByEvictionAPI`) while they terminate.

# %%
print(c3.kubectl("describe pdb web"))

# %% [markdown]
# ## 8. Break it yourself
#
# A fresh cluster with the `web` Deployment. Scale it, change the image, roll back, delete a pod,
# and crash the controller manager in the middle of a rollout: while it is down, nothing moves
# (pods keep running: the data plane does not need the control plane), and when it restarts it
# relists everything and carries on exactly where the objects say it should.
#
# The second table is the controllers' work: each runs upstream's number of workers (5 for
# ReplicaSets and Deployments), and each sync takes 5 virtual ms. Each controller's client waits
# for its rate limit, kube-controller-manager's `--kube-api-qps 20 --kube-api-burst 30`: scale
# to 50 and the ReplicaSet controller's creates wait for their tokens. While a worker waits,
# the events of its pods pile up in the queue and become one sync. A wait over a second (60
# creates at once: the 51st waits 1.05 s) is in the trace, `c2.trace.filter(verb="throttled")`,
# in client-go's words: `Waited for 1.05s due to client-side throttling, not priority and
# fairness, ...`.

# %%
c2, hollow2 = new_cluster(seed=7)
c2.apply(WEB)
c2.run(10)
ControllersPanel(c2, hollow=hollow2, step=2.0)

# %% [markdown]
# ## 9. Beside the Deployment: a StatefulSet and a DaemonSet
#
# Two more controllers of kube-controller-manager make pods from a template, each with a
# promise of its own:
#
# - a **DaemonSet** runs one pod on every (eligible) node: it picks the node itself, by node
#   affinity, and the scheduler binds the pod there;
# - a **StatefulSet** gives each pod a stable identity: the name `<set>-<ordinal>` (`db-0`,
#   `db-1`, ...), a hostname and DNS subdomain (`db-0.db`, through `spec.serviceName`), and a
#   claim per volume template (`data-db-0`) that outlives the pod. Its default policy,
#   `OrderedReady`, creates pod n+1 only once pods 0..n are Running and Ready.
#
# Both keep their templates' history in **ControllerRevisions**, where a Deployment keeps it
# in ReplicaSets. Here are all three kinds on one graph, on a fresh cluster. (The containers
# run what their images run: busybox's default command is `sh`, which exits at once without a
# terminal, so the agent sleeps; postgres will not start without `POSTGRES_PASSWORD`, as the real
# image does.)

# %%
c3, _ = new_cluster(seed=11)
c3.apply(WEB)
c3.apply("""
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: agent, image: busybox:1.37, command: [sleep, infinity]}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  replicas: 3
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
      - {name: db, image: postgres:17, env: [{name: POSTGRES_PASSWORD, value: example}]}
""")
c3.run_until(lambda: (c3.get("statefulsets", "db").get("status") or {}).get("readyReplicas") == 3,
             timeout=120)
print(c3.kubectl("get deployments,daemonsets,statefulsets"))
GraphView(object_graph(c3, kinds=("deployments", "daemonsets", "statefulsets", "replicasets",
                                  "pods", "nodes")),
          title="a Deployment, a DaemonSet and a StatefulSet")

# %% [markdown]
# The events show `OrderedReady` at work: one create per pod, each after the one before it
# became Ready.

# %%
for e in c3.events():
    if e["source"]["component"] == "statefulset-controller":
        print(f"{e['lastTimestamp']}  {e['reason']:17} {e['message']}")

# %% [markdown]
# **Predict.** `kubectl scale statefulset db --replicas=1`. Which pods go, in what order, and
# all at once or one after the other? Write your answer down, then run the cell.

# %%
print(c3.kubectl("scale statefulset db --replicas=1"))
seen = []


def watch_scale_down():
    """Each change of the db pods: (virtual time, pods, * for one being deleted)."""
    pods = sorted(c3.get("pods", label_selector="app=db"), key=lambda p: p["metadata"]["name"])
    view = [p["metadata"]["name"] + ("*" if p["metadata"].get("deletionTimestamp") else "")
            for p in pods]
    if not seen or seen[-1][1] != view:
        seen.append((round(c3.clock.now, 3), view))
    return view == ["db-0"]


c3.run_until(watch_scale_down, timeout=120)
for at, view in seen:
    print(f"{at:8.3f}s  {' '.join(view)}")

# %% [markdown]
# The highest ordinal goes first, and the next one only when the first is gone: a StatefulSet
# scales down in reverse order, one pod at a time, so `db-0` (often the primary of a database)
# is the last to go. The claims are kept (`persistentVolumeClaimRetentionPolicy` is `Retain`
# by default) so that a scale back up finds its data. `podManagementPolicy: Parallel` drops the
# ordering for both directions; `kubectl rollout status|history|undo statefulset/db` work as for
# a Deployment, and a rolling update replaces pods from the highest ordinal down to
# `updateStrategy.rollingUpdate.partition`.

# %% [markdown]
# ## Pitfalls
#
# - **Do not scale or edit a ReplicaSet that a Deployment owns.** The Deployment controller sets
#   it back to what the Deployment says. Change the Deployment.
# - **A Deployment's selector is fixed.** In `apps/v1`, `spec.selector` cannot be changed after
#   creation, and it must match the template's labels. To change it, create a new Deployment.
# - **`kubectl delete deployment` returns before the pods are gone.** With the default
#   (background) cascade, the garbage collector deletes the ReplicaSet and the pods afterwards,
#   and each pod then takes its grace period to stop.
# - **`--cascade=orphan` leaves the ReplicaSet owned by nobody.** It still keeps its pods
#   running and replaces them, but nothing scales it or rolls it out any more, until a new
#   Deployment with a matching selector adopts it.
# - **An undo is a roll forward.** `rollout undo` creates a new revision from an old template.
#   `CHANGE-CAUSE` stays `<none>` unless you set the `kubernetes.io/change-cause` annotation.
#
# ## On a real cluster
#
# In a kind cluster (notebook 00). `kubectl create deployment` names the container after the
# image, here `nginx`:
#
# ```bash
# kubectl create deployment web --image=nginx:1.25 --replicas=3
# kubectl get deployments,replicasets,pods -l app=web --show-labels     # note pod-template-hash
# kubectl get pods -l app=web -o custom-columns=NAME:.metadata.name,OWNER:.metadata.ownerReferences[0].name
# kubectl delete pod <a web pod>; kubectl get pods -l app=web           # a new name appears
# kubectl scale deployment web --replicas=10
# kubectl set image deployment/web nginx=nginx:1.26
# kubectl get replicasets -l app=web --watch                             # old down, new up, in steps
# kubectl rollout status deployment/web; kubectl rollout history deployment/web
# kubectl rollout undo deployment/web
# kubectl delete deployment web --cascade=orphan; kubectl get replicasets,pods -l app=web   # still there
# # stop the controller manager (a static pod), then start it again:
# docker exec learn-control-plane mv /etc/kubernetes/manifests/kube-controller-manager.yaml /root/
# docker exec learn-control-plane mv /root/kube-controller-manager.yaml /etc/kubernetes/manifests/
# kubectl scale deployment web --replicas=200     # then look for client-side throttling:
# kubectl -n kube-system logs kube-controller-manager-learn-control-plane | grep "client-side throttling"
# ```
#
# Where kubelab simplifies: its controller manager runs most of the controllers a real one runs
# (`c.components["controller-manager"].controllers` lists them), each a Python object in one
# process. Like a real one it elects a leader: of several copies only one acts, the one holding
# the Lease `kube-system/kube-controller-manager` (`kubectl get lease -n kube-system`); notebook 07
# runs two copies.
#
# ## Challenge
#
# Use `c`, `WEB` and `writes` from above, in new cells (first `c.apply(WEB)` and `c.run(10)`:
# the last cascade demo left no Deployment behind).
#
# 1. Set `strategy: {rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}` and change the image in
#    the same patch. Predict the `ScalingReplicaSet` events, then read them.
# 2. `kubectl rollout pause deployment/web`, change the image twice, then
#    `kubectl rollout resume deployment/web`. How many new ReplicaSets appear?
# 3. `kubectl rollout restart deployment/web` changes no image. Does it make a new ReplicaSet?
#    What did it change in the Deployment?
#
# <details><summary>Hints</summary>
#
# 1. One pod at a time: up by 1 on the new ReplicaSet, down by 1 on the old, until the new one
#    has all the replicas. Capacity never drops below `replicas`.
# 2. One, for the last template only: a paused Deployment makes no ReplicaSet for a template
#    it is not rolling out.
# 3. Yes: it writes the annotation `kubectl.kubernetes.io/restartedAt` into the pod template.
#    A new template means a new hash, a new ReplicaSet, and a rollout.
#
# </details>

# %% [markdown]
# ## Summary
#
# - A controller watches objects, compares desired with actual, and acts through the API server, nothing else.
# - Deployment → ReplicaSet (one per pod template, named by the template's hash) → Pods (`generateName`).
# - Deleting a pod of a ReplicaSet replaces it; scaling (even to zero) changes what is wanted.
# - A rolling update stays within `replicas + maxSurge` pods and `replicas − maxUnavailable` available pods.
# - Revisions live on ReplicaSets; `rollout undo` brings an old template back as a new revision.
# - The garbage collector follows `ownerReferences`: Background deletes dependents after the owner,
#   Foreground before it (finalizer `foregroundDeletion`), Orphan keeps them (finalizer `orphan`).
# - A crashed controller manager stops changes, not running pods; after a restart it relists and converges.
#
# **Exercises.** Open [exercises/ex05_controllers.py](../exercises/ex05_controllers.py): 5.1
# the ReplicaSet reconcile, 5.2 one rolling-update step within `maxSurge`/`maxUnavailable`.
#
# ## Check your work
#
# The cell below grades exercises 5.1 and 5.2 in
# [exercises/ex05_controllers.py](../exercises/ex05_controllers.py), as `kubelab grade 5` does in
# a terminal. It takes a few seconds. Save the file, then run the cell again after each change:
# the grader reads the file from disk, so there is nothing to re-import.
#
# Nothing solved yet? Then the report says `0/20 points`, and each check says `FAIL ... not
# implemented yet (NotImplementedError: ...)`. That is the starting point, not an error. Open
# the file, replace a `raise NotImplementedError(...)` with your code, save, and run the cell.
# A failed check says what it expected, what it got, a hint, and a `replay:` command that reruns
# just that check. `grade("5", verbose=True)` also shows what your code printed and the end of
# the cluster's trace.
#
# **Next:** [06 · The kubelet](06_kubelet.ipynb): who actually starts the containers, and what happens
# when a node dies.

# %%
from kubelab.grading import grade

grade("5")

# %% [markdown]
# Run the cell above again after each change you save (Shift+Enter moves here, so no empty cell
# is added). In a workshop, your instructor's report shows as a `note:` at the top of its output.
