# %% [markdown]
# # 00 · A tour: what happens after `kubectl apply`
#
# You type `kubectl apply -f web.yaml`, and a few seconds later three copies of your web server
# run on three machines. Nobody told any machine to start anything. This notebook follows that
# story through a whole (simulated) Kubernetes control plane, then breaks it: a pod is deleted
# and comes back, a machine dies and its pods move. The rest of the course takes each part apart
# and builds it; here you only watch them work together.
#
# Everything below is a real simulation: kubelab runs an etcd stand-in, an API server, a
# controller manager, a scheduler and one kubelet per node, in Python, on a **virtual clock**.
# Minutes of cluster time pass in milliseconds, and the same seed always tells the same story.
#
# **Learning goals.** By the end you can
# - name the control plane's parts (etcd, API server, controller manager, scheduler, kubelet)
#   and say what each does;
# - follow `kubectl run` through its two loops: the scheduler picks a node, the kubelet starts the container;
# - follow `kubectl apply` of a 3-replica Deployment in five steps, in the trace and in a sequence diagram;
# - explain why a deleted pod comes back and why pods leave a dead node (desired state vs actual state);
# - find the notebook where each part is built.
#
# **Prerequisites.** None: Python basics are enough. Run each cell in order (Shift+Enter).
#
# **Time.** About 20 minutes.

# %%
import kubelab
from kubelab.viz.observe import peek
from kubelab.viz.sequence import SequenceDiagram
from kubelab.viz.timeline import Timeline
from kubelab.widgets.dashboard import Dashboard

c = kubelab.Cluster(nodes=3, seed=0)   # three nodes, the whole control plane
c.run(5)                               # five virtual seconds: the kubelets register their nodes
print(c)
print(c.kubectl("get nodes"))

# %% [markdown]
# ## 1. The map
#
# | part | what it does | talks to |
# |---|---|---|
# | **etcd** | stores every object: the cluster's only memory | the API server only |
# | **API server** | the only door: who, may they, is it valid; stores it; tells watchers | everyone |
# | **controller manager** | makes a Deployment's ReplicaSet, a ReplicaSet's Pods, ... | the API server |
# | **scheduler** | gives each new pod a node | the API server |
# | **kubelet** (per node) | starts the containers of its node's pods, reports their status | the API server |
#
# Nobody calls anybody: every component *watches* the API server for the objects it cares about
# and *writes* its results back there. `c.trace` records every request and every watch
# delivery, so we can read the story afterwards.
#
# ## 2. `kubectl run`: two loops
#
# `kubectl run` creates one Pod object. Look at it right after: no node, `Pending`. Then let ten
# virtual seconds pass.

# %%
mark = len(c.trace)                    # where the story starts
print(c.kubectl("run hello --image=nginx:1.27"))
print(c.kubectl("get pod hello -o wide"))
c.run(10)
print(c.kubectl("get pod hello -o wide"))

# %% [markdown]
# The trace says who did what. `SequenceDiagram` reads it: `->` is a request to the API server
# (and the API server's read or write in etcd), `~>` a watch delivery (a component *hearing*
# about a change), and `name:` a step a component took on its own.

# %%
print(SequenceDiagram(list(c.trace)[mark:], related="hello").text())

# %% [markdown]
# Two loops did the work, and neither was called by anyone:
#
# 1. the **scheduler** heard `ADDED pods/hello` (a pod without a node), chose a node, and wrote a
#    *binding*: that is all "scheduling" is;
# 2. the **kubelet** of that node heard about a pod bound to its node (its watch only matches pods
#    with `spec.nodeName` = its node), pulled the image, started the container and patched the
#    pod's status to `Running`.
#
# ## 3. `kubectl apply` of a Deployment, in five steps
#
# Now the usual way: a Deployment that asks for three replicas. We step the clock only until each
# step has happened, and print what the trace recorded in between. (`peek` reads objects like
# `c.get`, without leaving its own reads in the trace.)

# %%
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
        image: nginx:1.27
        resources:
          requests: {cpu: 250m, memory: 128Mi}
"""


def story(since, **filters):
    """What the trace recorded from record number `since` on, about web and what it made."""
    return SequenceDiagram(list(c.trace)[since:], related="web", **filters)


timeline = Timeline(c)                 # samples pods and ReplicaSets every virtual second from now
t_apply, mark = c.clock.now, len(c.trace)
print(c.apply(WEB))
print("Step 1: the API server stores the Deployment in etcd")
print(story(mark).text())

# %%
mark = len(c.trace)
c.run_until(lambda: peek(c, "replicasets"))
print("Step 2: the controller manager hears of it and creates a ReplicaSet")
print(story(mark).text())

# %%
mark = len(c.trace)
c.run_until(lambda: len(peek(c, "pods", label_selector="app=web")) == 3)
print("Step 3: the ReplicaSet controller creates three pods (no node yet)")
print(story(mark).text())
print(c.kubectl("get pods -l app=web -o wide"))

# %%
mark = len(c.trace)
c.run_until(lambda: all(p["spec"].get("nodeName") for p in peek(c, "pods", label_selector="app=web")))
print("Step 4: the scheduler binds each pod to a node")
print(story(mark, watch=False).text())

# %%
mark = len(c.trace)
c.run_until(lambda: all(p["status"].get("phase") == "Running"
                        for p in peek(c, "pods", label_selector="app=web")))
print("Step 5: each node's kubelet pulls the image and starts the container")
print(story(mark, watch=False).text())
print(c.kubectl("get pods -l app=web -o wide"))

# %% [markdown]
# Five components, and the only thing you did was write one object. Each step was somebody
# noticing a difference between what is *wanted* and what *exists*, and writing one more object
# (or one status) to close it. Kubernetes calls this **reconciliation**.
#
# The same story as a picture, from `kubectl apply` until the last pod ran (watch deliveries
# left out so that it fits on a screen). Time runs downwards; etcd and the API server are on the
# left, everyone who talks to the API server on the right.

# %%
SequenceDiagram(c.trace, since=t_apply, related="web", watch=False,
                title="kubectl apply -f web.yaml: who asked the API server what")

# %% [markdown]
# And the first 20 milliseconds with the watch deliveries (dashed, blue): each arrow is a
# component *hearing* about a change, which is what makes it act.

# %%
SequenceDiagram(c.trace, since=t_apply, until=t_apply + 0.02, related="web",
                title="the first 20 ms, with watch deliveries")

# %% [markdown]
# ## 4. Delete a pod: it comes back
#
# The Deployment does not say "start three pods", it says "there *are* three pods". Delete one
# (`c.faults.delete_pod` does what `kubectl delete pod` does, and marks it in the trace as a
# fault) and the ReplicaSet controller sees two where three are wanted.

# %%
victim = peek(c, "pods", label_selector="app=web")[0]["metadata"]["name"]
mark = len(c.trace)
c.faults.delete_pod(victim)
c.run(10)
print(c.kubectl("get pods -l app=web -o wide"))
print(story(mark, watch=False).text())

# %% [markdown]
# A new pod (new name, same template) took its place, scheduled and started like the others.
# To really stop the pods you change what is wanted: `kubectl scale deployment web --replicas=0`.
#
# ## 5. Kill a node: the pods move
#
# Now the machine under some of the pods dies (`c.faults.kill_node`: no more kubelet, no more
# containers). Nobody is told. What happens is a chain of timeouts, each a default of upstream
# Kubernetes:
#
# 1. the kubelet no longer renews its node's Lease (every 10 s);
# 2. after 50 s of silence (`node-monitor-grace-period`) the node lifecycle controller marks the
#    node `Unknown` and taints it `node.kubernetes.io/unreachable:NoExecute`;
# 3. every pod tolerates that taint for 300 s (added by the `DefaultTolerationSeconds` admission
#    plugin); then the pods are evicted, the ReplicaSet controller replaces them, and the
#    scheduler puts the replacements on the nodes that are left.

# %%
on_node = {}
for p in peek(c, "pods", label_selector="app=web"):
    on_node.setdefault(p["spec"]["nodeName"], []).append(p["metadata"]["name"])
dead = max(sorted(on_node), key=lambda n: len(on_node[n]))
print(f"killing {dead}, which runs {on_node[dead]}")
c.faults.kill_node(dead)
c.run(60)
print(c.kubectl("get nodes"))
print(c.kubectl("get pods -l app=web -o wide"))

# %% [markdown]
# A minute later the node is `Unknown`, but its pods still look fine: the API only knows what
# was last reported. Five more minutes:

# %%
c.run(300)
print(c.kubectl("get pods -l app=web -o wide"))
print(c.kubectl("get events --sort-by=.lastTimestamp").splitlines()[0])
print("\n".join(line for line in c.kubectl("get events --sort-by=.lastTimestamp").splitlines()
                if "TaintManagerEviction" in line or "NodeNotReady" in line))

# %% [markdown]
# The replacements run on the other nodes. The old pods stay `Terminating`: only their kubelet
# could confirm that the containers stopped, and it is dead (in a real cluster you would delete
# the Node object, or the pods with `--force`).
#
# The whole life of the Deployment so far, with the faults marked: pods by phase on top, ready
# replicas below.

# %%
timeline

# %% [markdown]
# ## 6. Break it yourself
#
# A fresh cluster running the same Deployment, and the dashboard: **play** lets virtual time run
# (speed = virtual seconds per real second), **step** jumps ahead. Crash a component, kill a node,
# delete a pod, lose watch events, slow the store, break the image registry, and watch the graph,
# the nodes, the pods and the events. The dashboard also follows this notebook: run
# `c2.run(60)` in a new cell below and it refreshes.
#
# Things to try: crash the scheduler, then delete a pod (the new pod stays `Pending` until you
# restart the scheduler); crash the controller manager, then delete a pod (nothing replaces it
# until the restart); kill a node and step 300 s twice.

# %%
c2 = kubelab.Cluster(nodes=3, seed=1)
c2.run(5)
c2.apply(WEB)
c2.run(20)
Dashboard(c2, step=60.0)

# %% [markdown]
# ## 7. The course map
#
# Each notebook builds one part of what you just watched, with upstream's behaviour and words,
# and lets you break it.
#
# | notebook | you build | package | and then you can |
# |---|---|---|---|
# | [01](01_store.ipynb) | etcd: revisions, CAS, watch, compaction | `store` | explain `resourceVersion` |
# | [02](02_apiserver.ipynb) | authn, RBAC, admission, validation | `apiserver` | fix a `403`, retry a `409` |
# | [03](03_watch.ipynb) | reflector, informer, workqueue | `client` | write a level-triggered loop |
# | [04](04_scheduler.ipynb) | the queue, filter and score plugins | `scheduler` | read `FailedScheduling` |
# | [05](05_controllers.ipynb) | ReplicaSet, Deployment, the GC | `controllers` | predict a rollout |
# | [06](06_kubelet.ipynb) | pod lifecycle, runtime, probes | `kubelet` | explain `CrashLoopBackOff` |
#
# (Packages are under `kubelab.`: `kubelab.store`, `kubelab.apiserver`, ...)
#
# ## Summary
#
# - Kubernetes is a set of loops around one database: every component watches the API server
#   and writes its results back; nobody calls anybody.
# - `kubectl run`: the API server stores a pod; the scheduler binds it to a node; that node's
#   kubelet starts it.
# - `kubectl apply` of a Deployment: Deployment → (controller manager) ReplicaSet → (controller
#   manager) Pods → (scheduler) bindings → (kubelets) running containers.
# - You describe the desired state; controllers keep reconciling the actual state towards it. A
#   deleted pod comes back; a dead node's pods move (after 50 s + 300 s of default timeouts).
# - `c.trace`, `SequenceDiagram`, `Timeline` and `Dashboard` let you see all of it, in virtual time.
#
# **Exercises.** None graded here. Try: scale `web` to 5 with
# `c.kubectl("scale deployment web --replicas=5")` and read the story with `story(...)`; in the
# dashboard, crash the scheduler and delete a pod.
#
# **Next:** [01 · The store](01_store.ipynb): where every one of those objects lives.
