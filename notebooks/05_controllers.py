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
# - say what a crashed controller manager stops, and what it does not.
#
# **Prerequisites.** Notebooks 03 (informers, the workqueue, level-triggered loops) and 04 (the scheduler).
#
# **Time.** About 35 minutes.

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
# ## 7. Break it yourself
#
# A fresh cluster with the `web` Deployment. Scale it, change the image, roll back, delete a pod,
# and crash the controller manager in the middle of a rollout: while it is down, nothing moves
# (pods keep running: the data plane does not need the control plane), and when it restarts it
# relists everything and carries on exactly where the objects say it should.

# %%
c2, hollow2 = new_cluster(seed=7)
c2.apply(WEB)
c2.run(10)
ControllersPanel(c2, hollow=hollow2, step=2.0)

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
# **Exercises.** Open [`exercises/ex05_controllers.py`](../exercises/ex05_controllers.py): 5.1
# the ReplicaSet reconcile, 5.2 one rolling-update step within `maxSurge`/`maxUnavailable`. Check
# them with `kubelab grade 5` (or `grade("5")` from `kubelab.grading` in a cell).
#
# **Next:** [06 · The kubelet](06_kubelet.ipynb): who actually starts the containers, and what happens
# when a node dies.
