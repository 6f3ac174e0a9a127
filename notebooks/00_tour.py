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
# kubelab follows **Kubernetes 1.34**: the defaults, algorithms and messages you meet are that
# release's.
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
# **Time.** About 25 minutes.

# %% [markdown]
# ## 0. The cluster you will meet on kind
#
# On a real cluster built with kind, the first thing to look at is the namespace `kube-system`:
# `kubectl get pods -n kube-system -o wide`. The control plane itself runs there as pods, on the
# **control-plane** node (etcd, kube-apiserver, kube-controller-manager, kube-scheduler), and
# the network parts run once on **every** node (kube-proxy, kindnet). Every `Cluster(...)`
# builds the cluster that way (and so does `kubelab serve`).
#
# **Predict, then run.** Which NODE do the four control-plane pods show, and how many
# kube-proxy pods are there for three workers?
#
# <details><summary>Answer</summary>
#
# All four on `control-plane`; four kube-proxy pods (and four kindnet pods), one per node: the
# three workers and the control-plane node itself. The DaemonSet controller puts one on every
# node.
#
# </details>

# %%
print("Building a kind-like cluster and running it for 30 virtual seconds: a few seconds here, "
      "up to a minute on a busy machine...", flush=True)
import kubelab
from kubelab.viz.observe import peek
from kubelab.viz.sequence import SequenceDiagram
from kubelab.viz.timeline import Timeline
from kubelab.widgets.dashboard import Dashboard

kind = kubelab.Cluster(nodes=3, seed=0)   # three workers and a control-plane node
kind.run(30)
print(kind.kubectl("get nodes"))
print(kind.kubectl("get pods -n kube-system -o wide"))

# %% [markdown]
# The static pods tell the truth about their components: crash the scheduler and its pod stops
# being ready and restarts; restart it and the pod is Running again, with its restart count.

# %%
kind.faults.crash("scheduler")
kind.run(20)
print(kind.kubectl("get pod -n kube-system kube-scheduler-control-plane"))
kind.faults.restart("scheduler")
kind.run(30)
print(kind.kubectl("get pod -n kube-system kube-scheduler-control-plane"))

# %% [markdown]
# Each kubelet also asked for its client certificate when it started, as on kind: `kubectl get
# csr` lists one CertificateSigningRequest per node, approved by the controller manager and
# issued (`Approved,Issued`). The control-plane node's kubelet asked as itself
# (`system:node:control-plane`); the workers joined with kubeadm's bootstrap token
# (`system:bootstrap:abcdef`), so their requests are named after a digest of their keys.

# %%
print(kind.kubectl("get csr"))

# %% [markdown]
# The rest of this tour uses a smaller picture, `Cluster(nodes=3, anatomy=False)`: no
# control-plane node and no add-ons, so that the trace shows only your own objects; every
# component is there all the same.

# %%
c = kubelab.Cluster(nodes=3, seed=0, anatomy=False)   # three nodes, the whole control plane
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
# `kubectl run` creates one Pod object. Look at it right after, then let ten virtual seconds pass.

# %% [markdown]
# **Predict, then run.** The cell prints the pod twice: right after `kubectl run` answers, and ten
# virtual seconds later. What do STATUS and NODE say each time?
#
# <details><summary>Answer</summary>
#
# First `Pending` with NODE `<none>`: `pod/hello created` only means that the API server stored
# the object. Ten seconds later `Running` on a node: meanwhile the scheduler chose the node and
# that node's kubelet started the container, each in its own loop.
#
# </details>

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
# Before the API server stored the pod, it also passed it through **admission**: its own
# plugins, and then any **admission webhooks** the cluster has, servers that it calls with the
# object and that may change it or refuse it (cert-manager, policy engines and service meshes
# install them). This cluster has none. The cell below makes a small one with a webhook that
# gives every pod a `team` label, and shows the call between the request and the write to etcd
# (notebook 08 writes webhooks and breaks them).

# %%
from kubelab.samples.webhooks import default_labels, manifests

w = kubelab.Cluster(nodes=1, seed=0)
w.webhook_servers.register("kubelab.dev/default-team:1", default_labels({"team": "unowned"}))
webhook = manifests("default-team", "kubelab.dev/default-team:1", mutating=True)
w.apply(webhook[:2])                   # the webhook's Deployment and Service
w.run(20)                              # its pod runs
w.apply(webhook[2])                    # the MutatingWebhookConfiguration: from now on, every pod
w_mark = len(w.trace)
print(w.kubectl("run hello --image=nginx:1.27"))
print("\n".join(SequenceDiagram(list(w.trace)[w_mark:], related="hello").text().splitlines()[:3]))
print("labels:", w.get("pods", "hello")["metadata"]["labels"])

# %% [markdown]
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
#
# **Predict, then run.** Ten seconds after the delete, how many `web` pods are there, and what
# are their names?
#
# <details><summary>Answer</summary>
#
# Three again: the two that were left, and one with a new name. It has the same `web-<hash>-`
# prefix (same ReplicaSet, same template) and a new random 5-character suffix.
#
# </details>

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
#
# **Predict, then run.** The cell waits 60 s after the kill. What does `get nodes` say about the
# dead node then, and what do its pods say?
#
# <details><summary>Answer</summary>
#
# The node is no longer `Ready`: 50 s without a Lease renewal made its Ready condition `Unknown`.
# Its pods still show `1/1 Running`. The API only knows what the kubelet last reported, and
# nothing evicts them before their 300 s toleration runs out.
#
# </details>

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
# | [06b](06b_troubleshooting.ipynb) | the triage: describe, events, logs | `kubectl` | say why it is broken |
#
# (Packages are under `kubelab.`: `kubelab.store`, `kubelab.apiserver`, ...)

# %% [markdown]
# ## Pitfalls
#
# - **"created" is not "running".** `kubectl apply` returns as soon as the API server has stored
#   the object. Right after it, `Pending` or `ContainerCreating` is normal; `kubectl get pods`
#   or `kubectl rollout status deployment/web` tell you when it runs.
# - **Deleting a Deployment's pod does not get rid of it.** Its ReplicaSet makes a new one at
#   once, and that is Kubernetes working, not failing. To have fewer pods, scale the Deployment
#   (`kubectl scale deployment web --replicas=0`) or delete the Deployment itself.
# - **A dead node's pods look alive for minutes.** They keep `Running` for about 50 s + 300 s,
#   and afterwards stay `Terminating` next to their replacements: only their kubelet could
#   confirm that the containers stopped.
# - **In kubelab, time stands still until you move it.** Nothing happens between cells unless a
#   cell calls `c.run(...)` (or the dashboard plays). On a real cluster the clock never stops,
#   which is why real commands need `sleep` or `--watch`.
#
# ## On a real cluster
#
# The same story on a laptop with [kind](https://kind.sigs.k8s.io/) (Kubernetes in Docker: each
# node is a container). Use a v1.34 node image: your kind release's notes list one, with its
# `@sha256` digest.
#
# ```bash
# cat > kind.yaml <<'EOF'
# kind: Cluster
# apiVersion: kind.x-k8s.io/v1alpha4
# nodes:
# - role: control-plane
# - role: worker
# - role: worker
# EOF
# kind create cluster --name learn --config kind.yaml --image kindest/node:v1.34.<patch>@sha256:<digest>
# kubectl get pods -n kube-system -o wide    # etcd, kube-apiserver, ...: pods on learn-control-plane
# kubectl run hello --image=nginx:1.27; kubectl get pod hello -o wide    # Pending or ContainerCreating
# kubectl create deployment web --image=nginx:1.27 --replicas=3
# kubectl get deployments,replicasets,pods -o wide
# kubectl get events --sort-by=.lastTimestamp  # Scheduled, Pulling, Pulled, Created, Started
# kubectl delete pod <one of the web pods>; kubectl get pods    # a new name appears
# docker stop learn-worker2                  # the node "dies": its container stops
# kubectl get nodes --watch                  # learn-worker2 turns NotReady after about 50 s
# kind delete cluster --name learn
# ```
#
# Where kubelab simplifies: everything runs in one Python process on a virtual clock, with no
# network, TLS or real containers. The control-plane components are Python objects; their
# static pods in `kube-system` stand for them (a crash shows as a crashing pod), but the pods
# are not the processes. Services come in notebook 09. Images come from a simulated registry,
# and containers follow small scripts (notebook 06).
# `c.faults.kill_node` does what `docker stop` does to a kind node.
#
# ## Challenge
#
# Work in new cells below this one; `story(mark)` prints what the trace recorded since `mark`.
#
# 1. Scale `web` to 5 with `c.kubectl("scale deployment web --replicas=5")`, run 10 s and read
#    the story. Which components wrote, in what order? Does a new ReplicaSet appear?
# 2. In the dashboard above, crash the scheduler, then delete a pod. What do STATUS and NODE of
#    its replacement say? What makes it run?
# 3. In `c`, bring the dead node back with `c.faults.revive_node(dead)` and run 60 s. What
#    happens to the two `Terminating` pods, and where do the web pods run now?
#
# <details><summary>Hints</summary>
#
# 1. No new ReplicaSet: the template did not change, so the Deployment controller only scales
#    the existing one, and the ReplicaSet controller creates two pods that the scheduler binds.
# 2. The replacement is created (the controller manager still runs) but stays `Pending` with no
#    node, and no event explains why. Restarting the scheduler binds it at once.
# 3. The revived kubelet sees that its pods are being deleted, stops their containers and
#    deletes them for good. Nothing moves the pods that run elsewhere back: a running pod is
#    never rescheduled.
#
# </details>

# %% [markdown]
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
# **Exercises.** None graded here: try the challenge above, then check yourself below. Graded
# exercises start in notebook 01, in files under `exercises/` (the first is
# [exercises/ex01_store.py](../exercises/ex01_store.py)); a cell at the end of each notebook
# grades its exercises.
#
# ## Check yourself
#
# Answer in your head first, then open the answer.
#
# 1. `kubectl apply` printed `deployment.apps/web created`. How many of web's containers run
#    at that moment?
#
#    <details><summary>Answer</summary>
#
#    None. The API server stored one object, the Deployment. The ReplicaSet, the pods, their
#    bindings and the containers come later, each from another component reacting to a change.
#
#    </details>
#
# 2. Which component talks to etcd?
#
#    <details><summary>Answer</summary>
#
#    Only the API server. Every other component, kubectl included, reads and writes through it.
#
#    </details>
#
# 3. Who decides on which node a pod runs, and what does it write?
#
#    <details><summary>Answer</summary>
#
#    The scheduler. It writes a Binding (`pods/<name>/binding`), which the API server turns into
#    the pod's `spec.nodeName`. It starts nothing: the kubelet of that node does.
#
#    </details>
#
# 4. A node loses power. About how long until its pods run somewhere else, and why?
#
#    <details><summary>Answer</summary>
#
#    About six minutes with the defaults: 50 s without a heartbeat before the node is marked
#    `Unknown` and tainted `unreachable`, then 300 s during which every pod tolerates that taint.
#    Then the pods are evicted and their ReplicaSet creates replacements, which the scheduler
#    places on the healthy nodes.
#
#    </details>
#
# **Next:** [01 · The store](01_store.ipynb): where every one of those objects lives.
