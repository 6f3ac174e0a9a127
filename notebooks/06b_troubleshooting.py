# %% [markdown]
# # 06b · Troubleshooting: reading a broken cluster
#
# Notebooks 04 to 06 built the scheduler, the controllers and the kubelet. Each of them reports
# what it could not do, in its own place: the scheduler writes a `FailedScheduling` event on the
# pod, the kubelet writes a waiting reason into the container's status and events on the pod,
# the node lifecycle controller marks a silent node `Unknown`, a controller writes
# `FailedCreate` on the object it could not serve. Troubleshooting is knowing where each of them
# writes, and reading it in a fixed order:
#
# 1. **get**: what is not as it should be? (`STATUS`, `READY`, `RESTARTS`, the nodes);
# 2. **describe**: the object's conditions, its containers' states, and its events;
# 3. **events**: the cluster's Warnings, newest last;
# 4. **logs**: what the container printed (`--previous`: the one that died);
# 5. **exec**: look from inside a pod (files, DNS, a request to a Service).
#
# Every section below breaks one thing, by a manifest or a fault, asks you to predict what the
# commands will show, runs them, and ends with the fix and the cluster healing.
#
# **Learning goals.** By the end you can
# - run a three-command health check of a cluster and say which component is unhappy;
# - tell the three common reasons for `Pending` apart from the scheduler's message;
# - tell `ErrImagePull`, `CreateContainerConfigError`, `CrashLoopBackOff` and `OOMKilled` apart
#   from the container's state and last state, and find a dead container's output;
# - find why a Service answers nobody although its pods are `Running`;
# - recognise a node whose kubelet stopped reporting, and a controller that cannot create pods.
#
# **Prerequisites.** Notebooks 04 (the scheduler), 05 (controllers) and 06 (the kubelet).
#
# **Time.** About 40 minutes.

# %%
import json

from kubelab.api.meta import parse_time
from kubelab.cluster import Cluster


def events_of(c, name, namespace="default"):
    """The Events table of `kubectl describe`, for one object."""
    return c.kubectl(f"describe pod {name} -n {namespace}").split("Events:")[1].rstrip()


def section(text, start, end=None):
    """The lines of kubectl's text from the one starting with `start` (to the one with `end`)."""
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if line.strip().startswith(start))
    last = next((i for i, line in enumerate(lines[first + 1:], first + 1) if end and end in line),
                len(lines))
    return "\n".join(lines[first:last])


c = Cluster(nodes=2, seed=0)
c.run(30)
print(c.kubectl("get nodes"))

# %% [markdown]
# ## 1. Three commands first
#
# One of the articles this course grew from ends with a three-minute health check. Each command
# asks one of the control loops whether it is keeping up:
#
# - pods stuck in `Pending`: the scheduler cannot place them;
# - nodes that are not `Ready`: their kubelet cannot report;
# - Warning events piling up: some reconcile keeps failing.
#
# Here is a cluster that a busy team deployed to this morning: a healthy web Deployment and six
# pods, each broken in its own way.

# %%
c.faults.break_registry("nginx:1.99-typo", "notfound")   # a tag nobody ever pushed
BROKEN = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: nginx, image: "nginx:1.27"}
---
apiVersion: v1
kind: Pod
metadata: {name: report}
spec:
  containers:
  - {name: app, image: "nginx:1.27", resources: {requests: {cpu: "8"}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: db}
spec:
  containers:
  - name: postgres
    image: "postgres:16"
    env: [{name: POSTGRES_PASSWORD, value: example}]
    volumeMounts: [{name: data, mountPath: /var/lib/postgresql/data}]
  volumes:
  - {name: data, persistentVolumeClaim: {claimName: data}}
---
apiVersion: v1
kind: Pod
metadata: {name: frontend}
spec:
  containers:
  - {name: app, image: "nginx:1.99-typo"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {color: blue}
---
apiVersion: v1
kind: Pod
metadata: {name: worker}
spec:
  containers:
  - name: app
    image: "busybox:1.36"
    command: [sleep, "3600"]
    env:
    - name: MODE
      valueFrom: {configMapKeyRef: {name: settings, key: mode}}
---
apiVersion: v1
kind: Pod
metadata: {name: migrate}
spec:
  containers:
  - name: app
    image: "busybox:1.36"
    command: [sh, -c, "echo connecting to db:5432; echo 'FATAL: password authentication failed' >&2; exit 1"]
---
apiVersion: v1
kind: Pod
metadata: {name: resize}
spec:
  containers:
  - name: app
    image: "polinux/stress"
    command: [stress, --vm, "1", --vm-bytes, 150M, --vm-hang, "1"]
    resources: {limits: {memory: 100Mi}}
"""
c.apply(BROKEN)
c.run(90)
print("$ kubectl get pods -A --field-selector=status.phase=Pending")
print(c.kubectl("get pods -A --field-selector=status.phase=Pending"))
print("\n$ kubectl get nodes --no-headers | grep -v ' Ready '")
print("\n".join(line for line in c.kubectl("get nodes --no-headers").splitlines()
                if " Ready " not in line) or "(nothing)")
print("\n$ kubectl get events -A --field-selector type=Warning --sort-by=.lastTimestamp | tail -8")
print("\n".join(c.kubectl("get events -A --field-selector type=Warning "
                          "--sort-by=.lastTimestamp").splitlines()[-8:]))

# %% [markdown]
# The nodes are fine. Four pods are in phase `Pending`: two have no node (the scheduler's
# trouble), two have one but their containers never started (the kubelet's: a pod stays
# `Pending` until its containers run). The Warnings name two more, restarting in a loop.
# `get pods` gives the whole picture, one STATUS per pod; every investigation starts there:

# %%
print(c.kubectl("get pods -o wide"))

# %% [markdown]
# `STATUS` is a summary that kubectl computes: the pod's phase, or the reason of the first
# container that is not running. The rest of this notebook reads behind each summary, in the
# order get, describe, events, logs, exec.
#
# ## 2. Pending: the scheduler cannot place the pod
#
# A pod without `spec.nodeName` is the scheduler's. When no node passes its filters, it writes
# one `FailedScheduling` event that counts, per reason, how many nodes failed it (notebook 04).
#
# **Predict, then run.** `report` requests 8 CPUs; each node has 4. What does the event say,
# and in which part of `kubectl describe node` do you check the claim?
#
# <details><summary>Answer</summary>
#
# `0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu.` The
# control-plane node's NoSchedule taint keeps every workload off it (kind's too), and both
# workers lack the CPU. On a node, compare `Allocatable` with `Allocated resources`: the
# scheduler counts requests (kindnet's and coredns's among them), not what containers use.
#
# </details>

# %%
print(events_of(c, "report"))
print()
print(section(c.kubectl("describe node node-1"), "Allocatable:", "System Info:"))
print(section(c.kubectl("describe node node-1"), "Allocated resources:", "ephemeral-storage"))

# %% [markdown]
# A pod's requests cannot change once it exists (only in-place resize touches a running pod's
# resources), so the fix is a new pod: delete it and apply it with a request that fits.

# %%
c.kubectl("delete pod report")
c.run(5)
c.apply(BROKEN.split("---")[1].replace('cpu: "8"', 'cpu: "500m"'))
c.run(10)
print(c.kubectl("get pod report"))

# %% [markdown]
# ### An untolerated taint
#
# Taints are the other half of the same filter step: a node keeps away every pod that does not
# tolerate its taint. A team reserves both workers for GPU jobs, then starts a pod.
#
# **Predict, then run.** Which reason does the event give this time?
#
# <details><summary>Answer</summary>
#
# `0/3 nodes are available: 3 node(s) had untolerated taint(s).` The message counts nodes per
# reason (the control-plane node's own taint is one of the three) but does not name the taints;
# `describe node` shows each.
#
# </details>

# %%
print(c.kubectl("taint nodes node-1 dedicated=gpu:NoSchedule"))
print(c.kubectl("taint nodes node-2 dedicated=gpu:NoSchedule"))
c.apply("""
apiVersion: v1
kind: Pod
metadata: {name: batch}
spec:
  containers:
  - {name: app, image: "busybox:1.36", command: [sleep, "3600"]}
""")
c.run(10)
print(events_of(c, "batch"))
print(c.kubectl("describe node node-1").splitlines()[7])

# %% [markdown]
# `2 node(s) had untolerated taint(s)`. The pods that were already running stay: `NoSchedule`
# keeps new pods away and evicts nobody (`NoExecute` would). The fix is either a toleration in
# the pod, if it belongs on those nodes, or removing the taint from the nodes it may use. The
# scheduler retries as soon as a node changes.

# %%
print(c.kubectl("taint nodes node-2 dedicated=gpu:NoSchedule-"))
c.run(5)
print(c.kubectl("get pod batch -o wide"))

# %% [markdown]
# ### An unbound claim
#
# **Predict, then run.** `db` mounts the claim `data`, which asks for 1Gi without a storage
# class. What does the scheduler say, and which object has the next clue?
#
# <details><summary>Answer</summary>
#
# `pod has unbound immediate PersistentVolumeClaims`: the scheduler does not bind
# claims of mode Immediate, the PV controller does. The claim's own events say why it did
# not: no volume fits, and there is no storage class to provision one.
#
# </details>

# %%
print(events_of(c, "db"))
print(c.kubectl("get pvc data"))
print(c.kubectl("describe pvc data").split("Events:")[1].rstrip())

# %% [markdown]
# The fix: give the PV controller a volume that fits (or a default StorageClass). The claim
# binds within seconds, at the PV controller's next resync, and the pod follows at once: the
# VolumeBinding plugin registered claim events, so the claim's update moves `db` out of the
# unschedulable pods without waiting for the sweep that retries every pod unschedulable for
# longer than `podMaxInUnschedulablePodsDuration` (5 minutes).

# %%
c.apply("""
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-data}
spec:
  capacity: {storage: 5Gi}
  accessModes: [ReadWriteOnce]
  hostPath: {path: /mnt/data}
""")
fixed_at = c.clock.now
c.run(5)
print(c.kubectl("get pvc data"))
c.run_until(lambda: c.get("pods", "db")["spec"].get("nodeName"), timeout=400)
print(f"db scheduled {c.clock.now - fixed_at:.0f} s after the volume appeared")
c.run(30)
print(c.kubectl("get pod db"))

# %% [markdown]
# ## 3. The kubelet cannot start the container
#
# Once the pod is on a node, the kubelet is the one that fails, and it says so in two places:
# the container's `state.waiting.reason` (what `get pods` shows) and events on the pod.
#
# **Predict, then run.** `frontend` uses `nginx:1.99-typo`, a tag that does not exist. Which
# two reasons does its STATUS alternate between, and what does the event say that a
# wrong password would not?
#
# <details><summary>Answer</summary>
#
# `ErrImagePull` right after a failed pull, `ImagePullBackOff` while the kubelet waits before
# the next one (10 s, doubling to 5 minutes, as in notebook 06). The message carries the
# registry's answer: `code = NotFound ... not found`, where an expired credential says
# `401 Unauthorized`.
#
# </details>

# %%
print(c.kubectl("get pod frontend"))
print(events_of(c, "frontend"))

# %% [markdown]
# The image of a container is one of the few fields of a pod you may change in place. The
# kubelet sees the new spec, kills the container that never ran, and pulls the right tag.

# %%
c.apply(BROKEN.split("---")[4].replace("1.99-typo", "1.27"))
c.run(30)
print(c.kubectl("get pod frontend"))

# %% [markdown]
# ### A missing ConfigMap key
#
# **Predict, then run.** `worker` reads `MODE` from key `mode` of ConfigMap `settings`, which
# only has `color`. Its STATUS, and the message?
#
# <details><summary>Answer</summary>
#
# `CreateContainerConfigError`, and a Warning `Failed` event: `Error: couldn't find key mode in
# ConfigMap default/settings`. Had the ConfigMap itself been missing: `configmap "settings" not
# found`.
#
# </details>

# %%
print(c.kubectl("get pod worker"))
print(events_of(c, "worker"))

# %% [markdown]
# The kubelet cannot build the container's environment, so it never creates the container, and
# it tries again at every sync. The pod needs no change: fix the
# ConfigMap, and the next attempt succeeds.

# %%
c.apply("""
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {color: blue, mode: fast}
""")
c.run(30)
print(c.kubectl("get pod worker"))
print(c.kubectl("exec worker -- printenv MODE"))

# %% [markdown]
# ## 4. The container starts, and dies
#
# **Predict, then run.** `migrate` prints two lines and exits 1. What do `RESTARTS` and
# `kubectl logs` show, and what does `logs --previous` add?
#
# <details><summary>Answer</summary>
#
# RESTARTS climbs while the back-off between restarts grows. The container that is waiting has
# not run yet, so the log to read is the previous one: `--previous` prints what the last crashed
# container wrote, stderr included. `describe` shows its `Last State: Terminated`, reason
# `Error`, and the exit code.
#
# </details>

# %%
print(c.kubectl("get pod migrate"))
print(section(c.kubectl("describe pod migrate"), "State:", "Ready:"))
print("$ kubectl logs migrate --previous")
print(c.kubectl("logs migrate --previous"))

# %% [markdown]
# The log names the cause: the password. Nothing in Kubernetes is broken, and no amount of
# restarting helps; the fix is in the program's input (here, its command), in a new pod.
#
# ### OOMKilled
#
# **Predict, then run.** `resize` allocates 150M with a memory limit of 100Mi. Its STATUS shows
# `CrashLoopBackOff` most of the time. Where do you see that this is not a bug in the program?
#
# <details><summary>Answer</summary>
#
# In `describe`: `Last State: Terminated`, reason `OOMKilled`, exit code 137, where a program's
# own failure says `Error` and its exit code.
#
# </details>

# %%
print(c.kubectl("get pod resize"))
print(section(c.kubectl("describe pod resize"), "Last State:", "Ready:"))

# %% [markdown]
# Exit code 137 is 128 + SIGKILL: the kernel's OOM killer ended it for crossing its cgroup's
# limit. The logs would say nothing useful: the process
# never had a chance to write. Raise the limit (or lower the program's use); again a new pod.

# %%
for name, old, new in (("migrate", "exit 1", "echo migrated; sleep 3600"),
                       ("resize", "memory: 100Mi", "memory: 200Mi")):
    c.kubectl(f"delete pod {name}")
    c.run(5)
    c.apply(next(d for d in BROKEN.split("---") if f"name: {name}" in d).replace(old, new))
c.run(30)
print(c.kubectl("get pods"))

# %% [markdown]
# ## 5. Running, and nobody gets an answer
#
# A Service sends traffic only to ready pods. Here the `api` Deployment's readiness probe
# checks a file the image never writes.
#
# **Predict, then run.** `get pods` says `Running`. What does READY say, and what does a
# request to the Service from another pod get?
#
# <details><summary>Answer</summary>
#
# `0/1`, and `Connection refused`: with no ready endpoint, kube-proxy rejects connections to
# the Service's IP. No Warning mentions the Service; the Unhealthy events are on the pods.
#
# </details>

# %%
API = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  replicas: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers:
      - name: nginx
        image: "nginx:1.27"
        readinessProbe:
          exec: {command: [cat, /tmp/ready]}
          periodSeconds: 5
---
apiVersion: v1
kind: Service
metadata: {name: api}
spec:
  selector: {app: api}
  ports: [{port: 80, targetPort: 80}]
"""
c.apply(API)
c.run(40)
print(c.kubectl("get pods -l app=api"))
print("$ kubectl exec worker -- wget -qO- -T 2 http://api")
print(c.kubectl("exec worker -- wget -qO- -T 2 http://api"))

# %% [markdown]
# The EndpointSlice lists the pods, all with `ready: false`. Ask a pod directly, from
# inside the cluster: the server answers, so the program is fine and the probe is the problem.
# `describe` and an `exec` into the pod say what the probe sees.

# %%
slice_ = c.client.list("endpointslices", "default",
                       label_selector="kubernetes.io/service-name=api")["items"][0]
print("endpoints:", [(e["addresses"][0], e["conditions"]["ready"]) for e in slice_["endpoints"]])
pod = sorted(p["metadata"]["name"] for p in c.client.list("pods", label_selector="app=api")["items"])[0]
ip = c.get("pods", pod)["status"]["podIP"]
print(f"$ kubectl exec worker -- wget -qO- http://{ip}/ | head -4")
print("\n".join(c.kubectl(f"exec worker -- wget -qO- http://{ip}/").splitlines()[:4]))
print(events_of(c, pod).splitlines()[-1])
print(f"$ kubectl exec {pod} -- cat /tmp/ready")
print(c.kubectl(f"exec {pod} -- cat /tmp/ready"))

# %% [markdown]
# The fix is in the Deployment's template, so it is a rollout: new pods with a probe that checks
# what the server really does (here, that it answers `GET /` on its own port).

# %%
c.apply(API.replace("[cat, /tmp/ready]", "[curl, -fsS, -o, /dev/null, http://localhost/]"))
c.run(60)
print(c.kubectl("get pods -l app=api"))
print("$ kubectl exec worker -- wget -qO- -T 2 http://api | head -4")
print("\n".join(c.kubectl("exec worker -- wget -qO- -T 2 http://api").splitlines()[:4]))

# %% [markdown]
# ## 6. A node stops reporting
#
# **Predict, then run.** node-2's machine loses power. Right after, what do `get nodes` and
# `get pods` say about it? And 60 s later?
#
# <details><summary>Answer</summary>
#
# Right after, nothing: nobody has noticed yet. Once the Lease has not been renewed for the
# grace period (`--node-monitor-grace-period`, 40 s by default), the node lifecycle controller
# sets its conditions to `Unknown` ("Kubelet stopped posting node status."), `get nodes` says
# `NotReady`, and the node is tainted `unreachable`. Its pods still say `Running`: only their
# kubelet could say otherwise. They are evicted 300 s later (notebook 06).
#
# </details>

# %%
c.faults.kill_node("node-2")
killed_at = c.clock.now
c.run(60)
print(c.kubectl("get nodes"))
for event in c.events():
    if event["reason"] == "NodeNotReady" and event["involvedObject"]["name"] == "node-2":
        print(f"NodeNotReady {parse_time(event['lastTimestamp']) - killed_at:.0f} s after the power cut")
print(section(c.kubectl("describe node node-2"), "Conditions:", "Addresses:"))
print(c.kubectl("get pods -o wide --field-selector spec.nodeName=node-2"))

# %% [markdown]
# The cell printed how long nobody noticed: the grace period counts from the last Lease
# renewal before the power cut, and the controller looks only every few seconds.
#
# Every pod since section 2 landed on node-2: node-1 still has its `dedicated=gpu` taint. So
# now nothing new can be scheduled anywhere. There is nothing to fix in the API: the node has
# to come back (or be replaced, and the Node object deleted). When its kubelet reports again,
# the node is `Ready` and the taint goes.

# %%
c.faults.revive_node("node-2")
c.run(30)
print(c.kubectl("get nodes"))

# %% [markdown]
# ## 7. A controller cannot create pods
#
# The last kind of failure never reaches a pod: the controller that should make it is refused.
# A platform team gives namespace `payments` a ResourceQuota: at most 256Mi of memory limits.
# A quota on `limits.memory` also makes every container state its memory limit (the quota
# could not be counted otherwise). Then a Deployment without one arrives.
#
# **Predict, then run.** Does `kubectl apply` of the Deployment fail? Where is the refusal?
#
# <details><summary>Answer</summary>
#
# No: the quota's ResourceQuota admission plugin judges pods, and the Deployment is not a pod.
# The ReplicaSet controller's pod creations are refused (`failed quota: ...: must specify
# limits.memory for: app`); it writes `FailedCreate` events on the ReplicaSet, with the API
# server's message, and the Deployment sits at 0 available.
#
# </details>

# %%
QUOTA = """
apiVersion: v1
kind: ResourceQuota
metadata: {name: memory, namespace: payments}
spec:
  hard: {limits.memory: 256Mi}
"""
CHECKOUT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: checkout, namespace: payments}
spec:
  replicas: 2
  selector: {matchLabels: {app: checkout}}
  template:
    metadata: {labels: {app: checkout}}
    spec:
      containers:
      - {name: app, image: "nginx:1.27"}
"""
c.kubectl("create namespace payments")
c.apply(QUOTA)
c.run(1)  # the resourcequota controller counts what the namespace uses, then the quota applies
print(c.apply(CHECKOUT))
c.run(20)
print(c.kubectl("get deploy,rs,pods -n payments"))
events = c.kubectl("describe rs -n payments").split("Events:")[1].strip("\n").splitlines()
print("\n".join(events[:4]))
print(f"... {sum('FailedCreate' in line for line in events)} FailedCreate events in all")

# %% [markdown]
# The fix is the Deployment's: give its container a memory limit. The rollout makes a new
# ReplicaSet, whose pods pass the quota; `kubectl get quota` shows what they use of it.
# A quota that is full refuses in the same place, with `exceeded quota: memory, requested:
# limits.memory=64Mi, used: ..., limited: limits.memory=256Mi`: a Deployment stuck below its
# replicas.

# %%
c.apply(CHECKOUT.replace('image: "nginx:1.27"}', 'image: "nginx:1.27", resources: {limits: {memory: 64Mi}}}'))
c.run(30)
print(c.kubectl("get deploy,rs,pods -n payments"))
print(json.dumps({d["metadata"]["name"]: d["status"].get("availableReplicas")
                  for d in c.client.list("deployments", "payments")["items"]}))
print(c.kubectl("get quota -n payments"))

# %% [markdown]
# ## 8. Your turn: diagnose a cluster you have not seen
#
# Exercise 6.3 asks for `diagnose(c)`, the triage of this notebook as a function. It gets a
# cluster (only `c.kubectl(...)` and `c.client`) and returns the cause, one of the ten codes
# listed in [exercises/ex06b_troubleshooting.py](../exercises/ex06b_troubleshooting.py)
# (`"InsufficientCPU"`, ..., `"FailedCreate"`), with the name of the object to fix. The grader
# builds clusters with names and namespaces drawn from a seed, healthy pods beside the broken
# one, a scheduler that restarted, and a container that crashed once and came back (a restart
# count alone proves nothing). Here is the kind of answer it wants, for the cluster above
# before section 2's fix:
#
# ```python
# diagnose(c)   # ("InsufficientCPU", "report")
# ```
#
# Start with the nodes, then the pods without a node and their `FailedScheduling` messages,
# then the containers' `state` and `lastState`, then the workloads: `-o json` output is easier
# to read from code than the tables (`json.loads(c.kubectl("get pods -A -o json"))["items"]`).

# %% [markdown]
# ## Pitfalls
#
# - **`STATUS` is a summary.** `CrashLoopBackOff` says a container keeps stopping, not why:
#   an `OOMKilled` container shows it too between kills. Read `Last State` in `describe`.
# - **`kubectl logs` of a crash-looping pod is usually empty.** The current container has not
#   run yet; `--previous` is the one that died.
# - **`Running` is not serving.** A pod that never turns Ready keeps its Service empty without
#   a single Warning about the Service itself: look at READY and at the Unhealthy events.
# - **A dead node's pods still say `Running`.** Read the nodes before the pods.
# - **A Deployment that applies cleanly can still make no pods.** Admission refuses the pods,
#   not the Deployment: the events are on the ReplicaSet.
# - **Events expire** (after an hour by default): an old incident's reasons may be gone.
#
# ## On a real cluster
#
# With kind (`kind create cluster --name learn`) the same manifests give the same texts:
#
# ```
# kubectl get pods -A --field-selector=status.phase=Pending
# kubectl get nodes --no-headers | grep -v ' Ready '
# kubectl get events -A --field-selector type=Warning --sort-by=.lastTimestamp | tail -20
# kubectl describe pod db                  # FailedScheduling ... unbound immediate PersistentVolumeClaims
# kubectl logs migrate --previous          # the crashed container's output
# kubectl exec worker -- wget -qO- -T 2 http://api    # from inside the cluster
# kubectl describe rs -n payments          # FailedCreate ... failed quota: memory: ...
# docker stop learn-worker2                # NotReady after about 40 s
# ```
#
# Where kubelab simplifies: a tag that does not exist is a fault (`break_registry(image,
# "notfound")`), since the simulated registry knows only image names; kind's default
# StorageClass (`standard`) provisions the claim at once, so to see `db` stuck there, set
# `storageClassName: ""`.
#
# ## Challenge
#
# Work in new cells below this one.
#
# 1. Taint node-1 with `dedicated=gpu:NoExecute`. Which pods leave it, and which event says so?
# 2. Start a pod that mounts ConfigMap `missing` as a volume. Is it `CreateContainerConfigError`?
# 3. Give `api` a liveness probe that fails. How do its READY, RESTARTS and events differ from
#    the readiness case?
#
# <details><summary>Hints</summary>
#
# 1. Every pod on node-1 without a matching toleration is deleted by the taint manager
#    (`TaintManagerEviction` events); the Deployment's pods come back on node-2.
# 2. No: a volume is mounted before the containers are created, so the pod stays
#    `ContainerCreating` with `FailedMount` events.
# 3. The container is restarted after `failureThreshold` failures: RESTARTS climbs and the
#    events say `Container nginx failed liveness probe, will be restarted`.
#
# </details>
#
# ## Summary
#
# - Read in a fixed order: get, describe, events, logs, exec; start with the nodes.
# - `Pending` without a node is the scheduler's: its `FailedScheduling` message names the filter
#   (Insufficient cpu, untolerated taint, unbound claim).
# - A waiting reason is the kubelet's: `ErrImagePull`/`ImagePullBackOff` (the image),
#   `CreateContainerConfigError` (the pod's references), `CrashLoopBackOff` (the program; read
#   `Last State` and `logs --previous`; `OOMKilled` is the memory limit).
# - A Service with no ready endpoints refuses connections: check READY, the probe's events, and
#   the pod from another pod with `exec`.
# - A `NotReady` node is its kubelet's silence; its pods' status is stale until eviction.
# - A controller that cannot create pods writes `FailedCreate` on its own object.
#
# **Exercise.** Open [exercises/ex06b_troubleshooting.py](../exercises/ex06b_troubleshooting.py):
# 6.3 diagnose a broken cluster (section 8).
#
# ## Check your work
#
# The cell below grades exercise 6.3 in
# [exercises/ex06b_troubleshooting.py](../exercises/ex06b_troubleshooting.py), as
# `kubelab grade 6.3` does in a terminal. It builds ten small clusters: allow a minute. Save
# the file, then run the cell again after each change: the grader reads the file from disk.
#
# Nothing solved yet? Then the report says `0/10 points`, and each check says `FAIL ... not
# implemented yet (NotImplementedError: ...)`. That is the starting point, not an error. A
# failed check says what it expected (the cause and the name), what your function returned, a
# hint, and a `replay:` command that reruns just that check; `grade("6.3", verbose=True)` also
# shows what your code printed.

# %%
from kubelab.grading import grade

grade("6.3")

# %% [markdown]
# Run the cell above again after each change you save (Shift+Enter moves here, so no empty cell
# is added). In a workshop, your instructor's report shows as a `note:` at the top of its output.
