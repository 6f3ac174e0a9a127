# %% [markdown]
# # 04 · The scheduler: which node gets the pod
#
# `kubectl run web --image=nginx` creates a Pod object, and nothing more. The Pod has no node:
# its `spec.nodeName` is empty. The **kube-scheduler** watches for such pods, filters out the
# nodes that cannot take one, scores the rest, and writes its choice back to the API server as
# a **Binding**. That is all it does: it never starts a container (the kubelet on the chosen
# node does that, notebook 06) and it never talks to a node.
#
# In this notebook you run `kubelab.scheduler.Scheduler`, a re-implementation of kube-scheduler
# with upstream's queue, cache, plugins, messages and defaults, and make it decide.
#
# **Learning goals.** By the end you can
# - say what the scheduler reads (pods without a node, nodes, bound pods) and what it writes (a Binding);
# - follow a pod from Pending to bound in the trace: informer, queue, filter, score, assume, bind;
# - explain why *requests*, not real usage, decide placement, and what over-requesting costs;
# - read a `FailedScheduling` message and say what would fix it;
# - steer pods with taints, tolerations and node affinity;
# - compare spreading (`LeastAllocated`) with bin packing (`MostAllocated`) on the same workload;
# - read the scheduler's explanation of a decision, plugin by plugin;
# - predict which pods a high-priority pod preempts, on which node, and why.
#
# **Prerequisites.** Notebooks 02 (the API server) and 03 (informers and the workqueue).
#
# **Time.** About 45 minutes.

# %%
from kubelab.cluster import Cluster
from kubelab.scheduler import Scheduler, load_config


def pod(name, cpu="250m", memory="256Mi", **spec):
    """A one-container pod that requests cpu and memory (what the scheduler looks at)."""
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "nginx",
                                     "resources": {"requests": {"cpu": cpu, "memory": memory}}}], **spec}}


def show_nodes(c):
    """The scheduler's own view: what is requested on each node, out of what it can give."""
    for info in c.components["scheduler"].cache.snapshot:
        print(f"{info.name:8} cpu {info.requested.milli_cpu:5}m / {info.allocatable.milli_cpu}m   "
              f"memory {info.requested.memory // 2**20:5}Mi / {info.allocatable.memory // 2**20}Mi   "
              f"{len(info.pods)} pods")


# %% [markdown]
# ## 1. Without a scheduler, pods stay Pending
#
# A cluster with the API server and three nodes, and no control-plane components at all.
# (These are *hollow* nodes: they look Ready, but no kubelet runs on them, so pods never get
# past Pending in this notebook. Placement is all we care about here.)

# %%
c = Cluster(nodes=3, components=[])
c.apply([pod("web-1"), pod("web-2"), pod("web-3")])
c.run(60)
print(c.kubectl("get pods -o wide"))

# %% [markdown]
# A minute later, nothing has happened: the NODE column is empty, and no event explains
# anything. Nobody is watching for pods without a node. Start the scheduler:

# %%
c.faults.restart("scheduler")   # starts a component that is not running
c.run(1)
print(c.kubectl("get pods -o wide"))

# %% [markdown]
# Here is what it did, in order. The scheduler LISTs and WATCHes pods and nodes (its informers),
# waits until both caches are filled, then takes the pods one by one from its queue: it
# **assumes** the pod on the chosen node in its own cache (so the next decision already counts
# it), then POSTs the Binding, which the API server turns into `spec.nodeName`.

# %%
steps = [r for r in c.trace if r.component.startswith("scheduler") or r.object.endswith("/binding")
         or r.component == "default-scheduler"]
print(c.trace.text(steps[:10]))

# %% [markdown]
# The Binding is the scheduler's only write to a pod (besides a status condition when it
# fails). The API server sets `spec.nodeName` *and* the `PodScheduled` condition, and the
# scheduler records an event, which `kubectl describe` shows:

# %%
web1 = c.get("pods", "web-1")
print("nodeName:", web1["spec"]["nodeName"])
print("condition:", [x for x in web1["status"]["conditions"] if x["type"] == "PodScheduled"])
print(c.kubectl("get events"))

# %% [markdown]
# ### One pod at a time
#
# The scheduler decides pods one after another. In kubelab each scheduling cycle costs
# `cycle_cost` virtual seconds (10 ms by default, so at most 100 pods a second); the real
# kube-scheduler manages a few hundred pods per second on a big cluster. 300 pods therefore take
# about three virtual seconds to place:

# %%
c2 = Cluster(nodes=20, components=["scheduler"])
c2.apply([pod(f"burst-{i}", cpu="10m", memory="16Mi") for i in range(300)])
took = c2.run_until(lambda: c2.components["scheduler"].scheduled == 300)
print(f"300 pods bound after {took:.2f} virtual seconds")

# %% [markdown]
# ## 2. Requests, not usage
#
# The scheduler never looks at how much CPU a container really uses. It adds up the
# **requests** of the pods already on a node and checks that the new pod's requests fit in what
# is left of the node's *allocatable*. A request is a reservation: once granted, nobody else
# gets it, used or not.
#
# Suppose a team asks for 2 CPUs per pod "to be safe" while each pod really uses about 100m.
# Three 4-CPU nodes hold six such pods; the seventh stays Pending while the machines are almost
# idle.
#
# **Predict, then run.** The cell prints each node's requested CPU and the pods still without a
# node. What will the nodes show, and which pod is left over?
#
# <details><summary>Answer</summary>
#
# Every node shows `4000m / 4000m` with 2 pods, and `greedy-6` is Pending. The pods use almost no
# CPU, but a request is a reservation: the scheduler adds up requests, never usage.
#
# </details>

# %%
c = Cluster(nodes=3, components=["scheduler"])
c.apply([pod(f"greedy-{i}", cpu="2") for i in range(7)])
c.run(1)
show_nodes(c)
print(c.kubectl("get pods --field-selector spec.nodeName="))

# %% [markdown]
# Requesting what the pods really need (here 250m, with some headroom) lets the same three nodes
# take all seven, and many more:

# %%
c = Cluster(nodes=3, components=["scheduler"])
c.apply([pod(f"right-sized-{i}", cpu="250m") for i in range(7)])
c.run(1)
show_nodes(c)

# %% [markdown]
# Under-requesting is the opposite mistake: the scheduler packs pods onto a node whose real
# CPU is then too small for them all, and they slow each other down. Good requests are
# measured ones.
#
# ## 3. Reading a FailedScheduling message
#
# Three nodes of different shapes, and a pod asking for 2 CPUs and 2Gi of memory:

# %%
nodes = [
    {"apiVersion": "v1", "kind": "Node",
     "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
     "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}}}
    for name, cpu, memory in (("node-1", "4", "1Gi"), ("node-2", "1", "8Gi"), ("node-3", "1", "8Gi"))
]
c = Cluster(nodes=nodes, components=["scheduler"])
c.apply(pod("web-1", cpu="2", memory="2Gi"))
c.run(1)
print(c.kubectl("get events"))

# %% [markdown]
# `0/3 nodes are available: 1 Insufficient memory, 2 Insufficient cpu.` reads: *none* of the 3
# nodes passed the filters; one was turned away for memory, two for CPU. Each node counts once
# per reason (a node short of both would count in both), and the reasons are sorted as text.
# The sentence after `preemption:` is the verdict of the PostFilter plugin, DefaultPreemption,
# which runs whenever no node fits: would deleting lower-priority pods help? Not here, since
# every node is too small *in total* (UnschedulableAndUnresolvable): "Preemption is not helpful
# for scheduling". Section 8 shows when it does help. The same message is written on the pod
# as the condition `PodScheduled=False`, reason `Unschedulable`:

# %%
print([x for x in c.get("pods", "web-1")["status"]["conditions"] if x["type"] == "PodScheduled"])
print(c.components["scheduler"].pending())

# %% [markdown]
# The pod now waits in the queue's `unschedulablePods`. It is not retried in a loop: it is
# retried when something happens that *could* help, such as a node being added, a node growing,
# or a bound pod being deleted. (If nothing happens it is retried after 5 minutes anyway; a pod
# that fails for other reasons backs off 1 s, 2 s, 4 s, ... up to 10 s.) Add a big node the way
# a kubelet registers one (create the Node, then report its capacity in its status), and the
# pod is scheduled at once:

# %%
node4 = c.client.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-4"}})
node4["status"] = {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}
c.client.update_status(node4)  # capacity is reported through the status subresource
c.run(1)
print(c.kubectl("get pod web-1 -o wide"))
print(c.trace.text(c.trace.filter(component="scheduler", object_prefix="pods/default/web-1")))

# %% [markdown]
# Look at the event that moved the pod back to `activeQ`: not the node's creation (a node
# with no allocatable resources cannot help, and NodeResourcesFit's *queueing hint* said so),
# but the status update a moment later, `NodeAllocatableChange`.

# %% [markdown]
# ## 4. Taints and tolerations
#
# A **taint** on a node repels pods; a **toleration** on a pod lets it ignore a taint.
# `NoSchedule` keeps new pods off (`NoExecute` also evicts running ones; `PreferNoSchedule`
# only lowers the score). Reserve node-1 for GPU work:

# %%
c = Cluster(nodes=3, components=["scheduler"])
print(c.kubectl("taint nodes node-1 dedicated=gpu:NoSchedule"))
c.apply([pod(f"web-{i}") for i in range(4)])
gpu_toleration = [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]
c.apply(pod("trainer", tolerations=gpu_toleration, nodeSelector={"kubernetes.io/hostname": "node-1"}))
c.run(1)
print(c.kubectl("get pods -o wide"))

# %% [markdown]
# A toleration *allows* a pod on the tainted node; it does not send it there. That is why the
# trainer also has a `nodeSelector`. Taint every node and an ordinary pod has nowhere to go.
#
# **Predict, then run.** Once node-2 and node-3 carry the taint too, what becomes of `web-late`,
# and do the four `web-*` pods already bound to them move?
#
# <details><summary>Answer</summary>
#
# `web-late` stays Pending, and its message counts 3 nodes with a taint it does not tolerate.
# The bound pods stay where they are: `NoSchedule` only keeps new pods off. Only `NoExecute`
# evicts running ones.
#
# </details>

# %%
print(c.kubectl("taint nodes node-2 node-3 dedicated=gpu:NoSchedule"))
c.apply(pod("web-late"))
c.run(1)
print(c.get("pods", "web-late")["status"]["conditions"][-1]["message"])

# %% [markdown]
# Removing a taint (`key:Effect-`) is a node update the waiting pod was rejected for
# (TaintToleration registered for it), so it is retried straight away:

# %%
print(c.kubectl("taint nodes node-3 dedicated:NoSchedule-"))
c.run(1)
print(c.kubectl("get pod web-late -o wide"))

# %% [markdown]
# ## 5. Node affinity
#
# `nodeSelector` is the simple form; **node affinity** says the same with operators (`In`,
# `NotIn`, `Exists`, `Gt`, ...) and has a *preferred* form that only adds to the score. Label
# the nodes with zones, then ask for zone a *or* b, preferring b:

# %%
c = Cluster(nodes=3, components=["scheduler"])
for node, zone in (("node-1", "a"), ("node-2", "b"), ("node-3", "c")):
    c.kubectl(f"label nodes {node} topology.kubernetes.io/zone={zone}")
affinity = {"nodeAffinity": {
    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a", "b"]}]}]},
    "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "preference": {"matchExpressions": [
        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["b"]}]}}]}}
c.apply([pod(f"zonal-{i}", affinity=affinity) for i in range(3)])
c.apply(pod("nowhere", nodeSelector={"topology.kubernetes.io/zone": "z"}))
c.run(1)
print(c.kubectl("get pods -o wide"))
print(c.get("pods", "nowhere")["status"]["conditions"][-1]["message"])

# %% [markdown]
# Node-3 (zone c) is filtered out; node-2 wins on score. *Required* rules filter, *preferred*
# rules score: a preference can lose to other plugins' scores once node-2 fills up.
#
# ## 6. Spreading or bin packing: the same workload, two strategies
#
# The `NodeResourcesFit` plugin scores each node by how much would be left after placing the
# pod. `LeastAllocated` (the default) prefers the emptiest node, so pods **spread**;
# `MostAllocated` prefers the fullest node that still fits, so pods **pack**. The strategy is
# part of the scheduler's configuration, a `KubeSchedulerConfiguration`, and the Cluster's
# `replace=` seam lets us start the scheduler with it.
#
# **Predict, then run.** Eight pods of 500m CPU on four empty 4-CPU nodes. How many pods land on
# each node under each strategy?
#
# <details><summary>Answer</summary>
#
# LeastAllocated: 2, 2, 2, 2. MostAllocated: all 8 on one node, exactly its 4 CPUs, and the
# other three stay empty. The ninth pod would open a second node.
#
# </details>

# %%
BIN_PACKING = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
"""
spread = Cluster(nodes=4, components=["scheduler"])
packed = Cluster(nodes=4, components=["scheduler"],
                 replace={"scheduler": lambda ctx: Scheduler(ctx, config=load_config(BIN_PACKING))})
workload = [pod(f"app-{i}", cpu="500m", memory="512Mi") for i in range(8)]
for cluster in (spread, packed):
    cluster.apply(workload)
    cluster.run(1)
for title, cluster in (("LeastAllocated (spread)", spread), ("MostAllocated (pack)", packed)):
    counts = {info.name: len(info.pods) for info in cluster.components["scheduler"].cache.snapshot}
    print(f"{title:24}", counts)

# %% [markdown]
# Spreading limits the damage when one node dies and leaves room on every node for a pod to
# grow. Packing leaves whole nodes empty: a cluster autoscaler can remove them (saving money),
# and a big pod that needs a whole node still finds one. Neither is "right"; it depends on
# whether you pay for idle machines or for outages.
#
# ## 7. Why that node? The explanation
#
# With `explain=True` the scheduler keeps, for each pod, what every plugin said about every
# node: the filters' verdicts, and each score plugin's raw score, the score after
# normalization to 0..100, and its weight. The total decides; equal totals are broken at
# random, with the cluster's seed.

# %%
c = Cluster(nodes=nodes, components=["scheduler"],
            replace={"scheduler": lambda ctx: Scheduler(ctx, explain=True)})
c.apply([pod("small", cpu="500m", memory="512Mi"), pod("huge", cpu="8")])
c.run(1)
print(c.components["scheduler"].explain("small").table())

# %% [markdown]
# Each score cell reads `weighted (raw->normalized)`. Under `NodeResourcesFit x1`, `68 (68->68)`
# is a raw score of 68 (how much would be left free, LeastAllocated), already on the 0..100
# scale, times weight 1. `TaintToleration x3` counts the taints the pod does not tolerate
# (raw 0), normalizes so that fewer is better (100) and weighs 3. NodeAffinity,
# VolumeBinding (the pod has no claims) and PodTopologySpread had nothing to check for this
# pod, so they *skipped*. Here all three
# nodes total 449: a tie, broken at random, and the same seed breaks it the same way.
#
# When no node fits, the explanation shows each node's first failed filter, the same facts
# the FailedScheduling message counts:

# %%
print(c.components["scheduler"].explain("huge").table())


# %% [markdown]
# ## 8. Priority and preemption: making room
#
# A **PriorityClass** gives pods a number (admission copies its `value` into `spec.priority`).
# The queue already pops higher-priority pods first. When no node fits a pod, the scheduler's
# PostFilter plugin **DefaultPreemption** asks, node by node: if I deleted every pod of *lower*
# priority here, would the pod fit? If so, it puts back as many of them as it can, most
# important first, and the ones that must still go are that node's *victims*. Among the
# candidate nodes it picks, in this order: the fewest PodDisruptionBudget violations, then the
# lowest priority among the victims, then the smallest sum of their priorities, then the fewest
# victims, then the victims that started last. It deletes the victims (each gets the condition
# `DisruptionTarget`, reason `PreemptionByScheduler`, and a `Preempted` event) and writes the
# node into the pod's `status.nominatedNodeName`; the pod is bound there on a later cycle, once
# the victims are gone. Lower-priority pods cannot take that room meanwhile: the filters count
# a nominated pod on its node for every pod of lower or equal priority.
#
# Two 2-CPU nodes, full: node-1 runs two `batch` pods (priority 100), node-2 one `batch` pod
# and one `scavenger` pod (priority 10). (The pods are put on their nodes by hand with
# `nodeName`, and deleted at once, `terminationGracePeriodSeconds: 0`: no kubelet runs here to
# stop containers.) Then a `critical` pod (priority 1000) asks for 1 CPU.
#
# **Predict** before you run the cell: which node does it get, and which pod is deleted? And
# if it had asked for 2 CPUs?

# %%
def priority_class(name, value, **fields):
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, **fields}


def prio_pod(name, klass, cpu, node=None):
    extra = {"nodeName": node} if node else {}
    return pod(name, cpu=cpu, priorityClassName=klass, terminationGracePeriodSeconds=0, **extra)


def full_cluster():
    two_cpu = [{"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                "status": {"allocatable": {"cpu": "2", "memory": "8Gi", "pods": "110"}}}
               for name in ("node-1", "node-2")]
    c = Cluster(nodes=two_cpu, components=["scheduler"],
                replace={"scheduler": lambda ctx: Scheduler(ctx, explain=True)})
    c.apply([priority_class("scavenger", 10), priority_class("batch", 100),
             priority_class("critical", 1000)])
    c.apply([prio_pod("batch-1", "batch", "1", "node-1"), prio_pod("batch-2", "batch", "1", "node-1"),
             prio_pod("batch-3", "batch", "1", "node-2"), prio_pod("scavenger", "scavenger", "1", "node-2")])
    c.run(1)
    return c


c = full_cluster()
c.apply(prio_pod("critical", "critical", "1"))
c.run(3)
print(c.kubectl("get pods -o wide"))
critical = c.get("pods", "critical")
victims = [e["involvedObject"]["name"] for e in c.events() if e["reason"] == "Preempted"]
print(f"critical: nominated {critical['status']['nominatedNodeName']}, bound to "
      f"{critical['spec']['nodeName']}; {len(victims)} victim(s): {', '.join(victims)}")
print(c.components["scheduler"].explain_preemption("critical").preemption.table())

# %% [markdown]
# On either node one pod had to go. The first criterion (PDB violations) tied at 0; the second
# decided: node-2's victim has priority 10, node-1's would have had 100. The `batch` pods were
# *reprieved*: put back first, as the more important ones, and kept because the pod still fit.
# Now 2 CPUs (run the cell):

# %%
c = full_cluster()
c.apply(prio_pod("critical", "critical", "2"))
c.run(3)
sched = c.components["scheduler"]
print(sched.explain_preemption("critical").preemption.table())
victims = [e["involvedObject"]["name"] for e in c.events() if e["reason"] == "Preempted"]
where = c.get("pods", "critical")["spec"]["nodeName"]
print(f"{len(victims)} victims, freed {len(victims)} CPU(s) on {where}")

# %% [markdown]
# Both nodes must lose both pods; the highest victim priority ties (100 on each), so the third
# criterion, the **sum** of priorities (each shifted by 2^31 so that negative priorities add up
# correctly), picks node-2: 100 + 10 beats 100 + 100.
#
# Two ways a pod declines to preempt. `preemptionPolicy: Never` on its PriorityClass (the pod
# still goes first in the queue, but waits for room), and a pod whose victims are still
# terminating on its nominated node waits for them rather than preempting more. The
# FailedScheduling message says which:

# %%
c = full_cluster()
c.apply(priority_class("polite", 1000, preemptionPolicy="Never"))
c.apply(prio_pod("polite-pod", "polite", "1"))
c.run(3)
print([e["message"] for e in c.events() if e["reason"] == "FailedScheduling"][-1])

# %% [markdown]
# A PodDisruptionBudget changes the first criterion: a victim whose deletion would take its
# budget below `disruptionsAllowed` counts as a violation, and DefaultPreemption prefers nodes
# (and victims) that violate none, although it will still violate a budget when nothing else
# makes room: preemption is not an eviction, the API server does not refuse it.
#
# ## 9. Try it yourself
#
# Add and remove nodes, cordon and taint them, switch the scoring strategy (this restarts the
# scheduler with the other profile), create pods and let time pass. The table shows each
# node's pods and requests; below it, the explanation of the latest decision, and of the
# latest preemption. Try: cordon two nodes and create pods; taint every node; create pods too
# big for any node, then add one that fits; create ten pods under each strategy; fill the
# nodes with `low` priority pods, then create one `high` pod and read which victims it chose.

# %%
from kubelab.widgets.scheduler_panel import SchedulerPanel

demo = Cluster(nodes=3, components=["scheduler"])
SchedulerPanel(demo)

# %% [markdown]
# ## Pitfalls
#
# - **A node at 10% CPU can be full.** `kubectl top` (with metrics-server) shows usage; the
#   scheduler reads only requests. `kubectl describe node` sums those under "Allocated
#   resources".
# - **A pod without requests fits anywhere.** The fit filter counts it as zero, so any number
#   of them can land on one node (for scoring only, the scheduler assumes 100m CPU and 200Mi).
#   Set requests on everything that matters.
# - **A toleration does not attract.** To send pods to dedicated nodes, pair the taint and the
#   toleration with a `nodeSelector` or node affinity.
# - **Scheduling happens once.** A bound pod is never moved, not even when a better node
#   appears or a node's labels stop matching its affinity (`...IgnoredDuringExecution`). To
#   rebalance, delete pods and let their controller create new ones.
# - **Pending with no events means nobody is scheduling it.** Either no scheduler runs, or the
#   pod names a `schedulerName` that no scheduler serves.
#
# ## On a real cluster
#
# In a kind cluster (notebook 00). Its control-plane node carries the taint
# `node-role.kubernetes.io/control-plane:NoSchedule`, so your pods go to the two workers.
#
# ```bash
# kubectl describe node learn-worker | grep -A6 Allocatable  # how many CPUs a worker offers
# kubectl create deployment greedy --image=nginx:1.27 --replicas=3
# kubectl set resources deployment greedy --requests=cpu=<N>   # N: just over half a worker's CPUs
# kubectl get pods -o wide --field-selector status.phase=Pending
# kubectl describe pod <a pending greedy pod>                  # Events: FailedScheduling  0/3 nodes ...
# kubectl get events --field-selector reason=FailedScheduling
# kubectl describe node learn-worker                           # "Allocated resources": requests, in %
# kubectl taint nodes learn-worker dedicated=gpu:NoSchedule    # and with a trailing - to remove it
# kubectl cordon learn-worker2; kubectl uncordon learn-worker2
# kubectl label nodes learn-worker topology.kubernetes.io/zone=a
# ```
#
# The third pod stays Pending. The counts in its FailedScheduling message include the
# control-plane node, turned away for its taint, and the message goes on with a `preemption:`
# part, DefaultPreemption's verdict (with no priorities set, "No preemption victims found for
# incoming pod" on the workers). `kubectl get priorityclass` lists the two system classes;
# create one with `kubectl create priorityclass high --value=1000` and a pod that names it
# (`priorityClassName: high`) preempts `greedy` pods.
#
# Where kubelab simplifies: the nodes in this notebook are hollow (no kubelet), so pods stay
# Pending after binding. The default profile is here without inter-pod affinity and NodePorts.
# Preemption deletes its victims within the scheduling cycle (upstream's SchedulerAsyncPreemption
# does it in a goroutine; the API calls are the same) and lists PodDisruptionBudgets from the
# API rather than from an informer. Each
# scheduling cycle costs a fixed `cycle_cost` (10 ms). `explain=True` is kubelab's own: a real
# kube-scheduler shows per-plugin scores only in its logs at a high verbosity.
#
# ## Challenge
#
# Use `Cluster`, `pod` and `show_nodes` from above, in new cells.
#
# 1. On a fresh 3-node cluster with a scheduler, cordon all three nodes and create two pods. What
#    does FailedScheduling say? Uncordon one node and run a few seconds: where do the pods go?
# 2. Give a pod a *preferred* node affinity for zone `z`, which no node has. Does it schedule?
# 3. With `MostAllocated`, how many of the 500m pods fit before the scheduler uses a second node?
#    Check with 9 pods.
#
# <details><summary>Hints</summary>
#
# 1. `0/3 nodes are available: 3 node(s) were unschedulable.` Uncordoning is a node update
#    that can help, so both pods are retried and land on that node (after their 1 s back-off).
# 2. Yes: a preference only adds to a node's score. It never filters a node out.
# 3. Eight fill one node's 4 CPUs; the ninth goes to a second node.
#
# </details>

# %% [markdown]
# ## Summary
#
# - The scheduler watches pods with no `spec.nodeName`; for each it **filters** nodes, **scores**
#   the survivors, and writes a **Binding**. The API server sets `nodeName` and `PodScheduled=True`.
# - It decides one pod per cycle, and **assumes** the pod on its node in its cache right away,
#   so the next decision already counts it, before the binding is confirmed.
# - Placement uses **requests**, never real usage: over-requesting leaves nodes idle and pods Pending.
# - `0/3 nodes are available: 1 Insufficient memory, 2 Insufficient cpu.`: one count per node
#   and reason. The pod waits in the queue until an event that could help (a node added,
#   a taint removed, a pod deleted), or 5 minutes.
# - **Taints** repel, **tolerations** permit (they do not attract); **node affinity** filters
#   (required) and scores (preferred).
# - `LeastAllocated` spreads, `MostAllocated` packs; both are one line of
#   `KubeSchedulerConfiguration`.
# - When no node fits, **DefaultPreemption** deletes lower-priority pods on one node (fewest PDB
#   violations, then the lowest highest victim priority, the smallest sum, the fewest victims,
#   the latest start) and nominates the node; `preemptionPolicy: Never` opts out.
#
# **Exercises.** Open [exercises/ex04_scheduler.py](../exercises/ex04_scheduler.py): 4.1 a
# filter plugin for taints, 4.2 a bin-packing score plugin.
#
# ## Check your work
#
# The cell below grades exercises 4.1 and 4.2 in
# [exercises/ex04_scheduler.py](../exercises/ex04_scheduler.py), as `kubelab grade 4` does in a
# terminal. It takes a few seconds. Save the file, then run the cell again after each change:
# the grader reads the file from disk, so there is nothing to re-import.
#
# Nothing solved yet? Then the report says `0/20 points`, and each check says `FAIL ... not
# implemented yet (NotImplementedError: ...)`. That is the starting point, not an error. Open
# the file, replace a `raise NotImplementedError(...)` with your code, save, and run the cell.
# A failed check says what it expected, what it got, a hint, and a `replay:` command that reruns
# just that check. `grade("4", verbose=True)` also shows what your code printed and the end of
# the cluster's trace.
#
# **Next:** [05 · Controllers](05_controllers.ipynb): who creates all these pods in the first place.

# %%
from kubelab.grading import grade

grade("4")

# %% [markdown]
# Run the cell above again after each change you save (Shift+Enter moves here, so no empty cell
# is added). In a workshop, your instructor's report shows as a `note:` at the top of its output.
