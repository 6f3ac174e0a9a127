# %% [markdown]
# # 06 · The kubelet: where pods become processes
#
# Everything so far happened in the API server: objects were written, watched, reconciled.
# Nothing *ran*. On every node a **kubelet** watches the pods bound to its node, and only those,
# asks the container runtime (containerd, through the CRI) to pull images and start containers,
# and reports back what happened, as pod status and events. It never learns why a pod exists:
# a Deployment's pod and one you wrote by hand look the same to it.
#
# The kubelet also heartbeats: it renews a **Lease** every 10 seconds. When a node goes silent,
# the **node lifecycle controller** notices, taints the node, and the pods leave it.
#
# In this notebook you run `kubelab.kubelet.Kubelet` on a simulated container runtime with a
# simulated image registry, both deterministic, both breakable.
#
# **Learning goals.** By the end you can
# - follow a pod from `Pending` to `Running`, event by event, and read its conditions;
# - explain the back-off behind `CrashLoopBackOff` and `ImagePullBackOff` (10 s, doubling, 5 min);
# - replay the 15-hour `ImagePullBackOff` incident and say why it healed with nobody's help;
# - tell liveness from readiness by what each does when it fails;
# - describe graceful deletion: SIGTERM, the grace period, SIGKILL, and the kubelet's final delete;
# - explain heartbeats (Lease, NodeReady) and the path NotReady → taint → eviction → rescheduling;
# - show that running pods do not need the control plane.
#
# **Prerequisites.** Notebooks 02 (the API server, RBAC) and 03 (informers); 04 and 05 help for
# the last part.
#
# **Time.** About 45 minutes.

# %%
import time

from IPython.display import SVG

from kubelab.api.meta import parse_time
from kubelab.cluster import COMPONENTS, Cluster
from kubelab.widgets.kubelet_panel import KubeletPanel, retry_timeline_svg


def phase_and_reason(c, name):
    """What `kubectl get pods` would say in its STATUS column, roughly."""
    p = c.get("pods", name)
    state = ((p["status"].get("containerStatuses") or [{}])[0]).get("state") or {}
    reason = next((v.get("reason", k) for k, v in state.items()), "")
    return p["status"].get("phase"), reason


# %% [markdown]
# ## 1. From Pending to Running
#
# Two nodes, each with its kubelet, and nothing else: no scheduler. So we bind the pod by hand,
# writing `spec.nodeName` ourselves, exactly what the scheduler's binding does. The kubelet of
# `node-1` sees it because it watches pods with the field selector `spec.nodeName=node-1`.

# %%
c = Cluster(nodes=2, components=["kubelet"], seed=0)
c.run(30)
c.apply("""
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  nodeName: node-1
  containers:
  - {name: app, image: "nginx:1.27"}
""")
last = None
for _ in range(50):
    c.run(0.1)
    now = phase_and_reason(c, "web")
    if now != last:
        print(f"t={c.clock.now:6.1f}s  phase={now[0]:<8} container={now[1]}")
        last = now
print()
print(c.kubectl("get pods -o wide"))

# %% [markdown]
# `ContainerCreating` covers three steps: the pod sandbox (its network namespace and IP from the
# node's pod CIDR, 10.244.1.0/24), the image pull, and creating the container. The events tell
# the story, in upstream's words:

# %%
print(c.kubectl("describe pod web").split("Events:")[1])
watches = [r.text() for r in c.trace.filter(component="kubelet/node-1/reflector")]
print("\n".join(watches))

# %% [markdown]
# The pod's conditions are the kubelet's summary for everyone else (a Service only sends traffic
# to a pod whose `Ready` is True):

# %%
for cond in c.get("pods", "web")["status"]["conditions"]:
    print(f"{cond['type']:<26} {cond['status']:<6} since {cond['lastTransitionTime']}")

# %% [markdown]
# ## 2. Heartbeats: the Lease and the Node's conditions
#
# The kubelet registered its Node when it started, and proves it is alive in two ways: it
# renews the Lease `kube-node-lease/node-1` every 10 s (cheap: a tiny object), and it posts the
# Node's conditions only when one changes, or every 5 minutes anyway.

# %%
c.run(600)
lease_writes = [a.time for a in c.apiserver.audit if a.resource == "leases" and a.name == "node-1"]
status_posts = [a.time for a in c.apiserver.audit if a.resource == "nodes" and a.name == "node-1"
                and a.subresource == "status"]
print("lease written at:", lease_writes[:6], "...", lease_writes[-2:])
print("node status posted at:", status_posts)
node = c.get("nodes", "node-1")
for cond in node["status"]["conditions"]:
    print(f"{cond['type']:<15} {cond['status']:<6} {cond['reason']:<28} {cond['message']}")

# %% [markdown]
# ## 3. A simulated runtime, on purpose
#
# There are no real processes. A container's `command` and `args` (over the image's own
# ENTRYPOINT and CMD: busybox runs `sh`, nginx its entrypoint then `nginx -g 'daemon off;'`) are
# interpreted by a small process model on the virtual clock: `echo`, `sleep`, `exit`, `cat`,
# `env`, `sh -c "...; ... && ..."`, `while true; do ...; sleep N; done`, `wget -qO-` to a Service,
# and a few more (the README lists them). What it prints is the container's log; its exit code
# is the container's state, and the kubelet acts on it.
#
# **Predict, then run.** `kubectl run t --image=busybox --restart=Never -- echo hi`: what does
# `get pods` show ten seconds later, and what does `kubectl logs t` print? And a Job whose
# command is `sh -c "exit 3"`, with `backoffLimit: 2`: how many pods does it make, and what
# does the Job say in the end?
#
# <details><summary>Answer</summary>
#
# The pod is `0/1 Completed`: `echo` exited 0, restartPolicy Never, so the phase is `Succeeded`
# and the log is `hi`. The Job makes three pods (the first, then two retries), each `Error` with
# exit code 3, and then it is `Failed` with reason `BackoffLimitExceeded`.
#
# </details>

# %%
demo = Cluster(nodes=1, seed=0)   # with a scheduler and the Job controller this time
demo.run(2)
print(demo.kubectl("run t --image=busybox --restart=Never -- echo hi"))
demo.apply("""
apiVersion: batch/v1
kind: Job
metadata: {name: exit3}
spec:
  backoffLimit: 2
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: "busybox:1.36", command: [sh, -c, "exit 3"]}]
""")
demo.run(10)
print(demo.kubectl("get pod t"))
print("logs:", demo.kubectl("logs t"))
demo.run(120)
print(demo.kubectl("get pods -l job-name=exit3"))
print([(x["type"], x["reason"]) for x in demo.get("jobs", "exit3")["status"]["conditions"]
       if x["status"] == "True"])

# %% [markdown]
# Containers whose lifetime is the lesson, not their command, follow a small script chosen with
# an annotation instead (their command is then not run): `run` (the default), `exit=<s>` with
# `code=<c>`, `crash`, `oom=<s>`, `startup=<s>`, `unhealthy=<s>`, `unready=<s>`,
# `probe-latency=<s>`, `shutdown=<s>|never`. Put `kubelab.dev/behavior: crash` on a pod for all
# its containers, or `kubelab.dev/behavior.app: crash` for the container `app` only. The image
# registry (`c.registry`) knows image sizes and can be broken: `c.faults.break_registry(image,
# mode)` with mode `unauthorized`, `notfound`, `slow` or `flaky`.
#
# ## 4. CrashLoopBackOff
#
# A container that keeps crashing is restarted at once the first time, then after 10 s, 20 s,
# 40 s... never more than 5 minutes apart. The pod's phase stays `Running` (the kubelet is still
# trying); what you see in `kubectl get pods` is the container's waiting reason.
#
# **Predict, then run.** This container crashes as soon as it starts. How long does the kubelet
# wait before each of the first eight restarts? What STATUS does `get pods` show after 25
# minutes?
#
# <details><summary>Answer</summary>
#
# 0, 10, 20, 40, 80 and 160 s, then 300 s from then on. STATUS is `CrashLoopBackOff`, with
# RESTARTS climbing, while the pod's phase stays `Running`.
#
# </details>

# %%
c.apply("""
apiVersion: v1
kind: Pod
metadata:
  name: crasher
  annotations: {kubelab.dev/behavior: crash}
spec:
  nodeName: node-2
  containers:
  - {name: app, image: "busybox:1.36"}
""")
start = c.clock.now
c.run(1500)
exits = [r.time for r in c.trace.filter(component="runtime/node-2", verb="exit")]
starts = [r.time for r in c.trace.filter(component="kubelet/node-2", verb="start-container")]
print("restart  exited at  restarted at  waited")
for n, (end, again) in enumerate(zip(exits, starts[1:], strict=False), 1):
    print(f"{n:>7}  {end - start:9.1f}  {again - start:12.1f}  {again - end:6.0f}s")
print()
print(c.kubectl("get pods"))
print(c.get("pods", "crasher")["status"]["containerStatuses"][0]["state"]["waiting"]["message"])

# %% [markdown]
# The waiting message is upstream's, `back-off 5m0s restarting failed container=app
# pod=crasher_default(<uid>)`. A container that runs for more than 10 minutes before crashing
# starts again with a 10 s back-off: the back-off forgets after twice its maximum.
#
# ## 5. The 15-hour ImagePullBackOff
#
# A real incident, replayed in virtual time. A team's private registry credential expires in
# the evening. New pods (here: one) cannot pull `registry.example.com/shop/api:2.3`: `401
# Unauthorized`. The kubelet retries on its own, with back-off. The credential is renewed 15
# hours later, and the pod starts, with nobody issuing a command.

# %%
story = Cluster(nodes=1, components=["kubelet"], seed=6)
story.run(30)
story.faults.break_registry("registry.example.com/shop/api", "unauthorized")
story.faults.at(story.clock.now + 15 * 3600, "fix_registry")   # the credential is renewed
story.apply("""
apiVersion: v1
kind: Pod
metadata: {name: api}
spec:
  nodeName: node-1
  containers:
  - {name: api, image: "registry.example.com/shop/api:2.3"}
""")
began = story.clock.now
wall = time.perf_counter()
story.run(8 * 3600)
print(f"8 hours later (replayed in {time.perf_counter() - wall:.2f} s):", story.kubectl("get pods"))
print(story.get("pods", "api")["status"]["containerStatuses"][0]["state"]["waiting"]["message"][:150], "...")

# %% [markdown]
# Nobody looks; the kubelet keeps trying every five minutes. Seven hours later the credential
# is renewed (the `faults.at` above), and at its next attempt...

# %%
wall = time.perf_counter()
story.run(7 * 3600 + 600)
print(f"15 h 10 min after the pod was created (this part replayed in {time.perf_counter() - wall:.2f} s):")
print(story.kubectl("get pods"))
failed = story.trace.filter(component="kubelet/node-1", verb="pull-failed")
print(f"{len(failed)} failed pulls, then one that worked; restarts: "
      f"{story.get('pods', 'api')['status']['containerStatuses'][0]['restartCount']}")
print("retry  at (s)   next try after")
for n, r in enumerate(failed[:8] + failed[-2:], 1):
    print(f"{n:>5}  {r.time - began:8.0f}  {r.detail['backoff']:.0f}s")

# %%
SVG(retry_timeline_svg([(r.time - began, r.detail["backoff"]) for r in failed],
                       title="ImagePullBackOff: the window before the next pull, per failed pull"))

# %% [markdown]
# Both axes of the chart are logarithmic, so each doubling of the window is one equal step up:
# 10 s, 20 s, 40 s, ... After six failures the window stops growing at 5 minutes, and the rest
# of the 15 hours is one flat line of about 180 pulls, each one a request to the registry. In
# between, the container waits with reason `ImagePullBackOff` and message `Back-off pulling
# image "registry.example.com/shop/api:2.3": ErrImagePull: ...401 Unauthorized`. Nothing in the
# control plane was involved: the retry loop lives in the kubelet.
# (`kubectl describe` would show few of these events: like client-go, the event recorder lets
# 25 through per object, then one every 5 minutes.)

# %%
print("\n".join(story.kubectl("describe pod api").split("Events:")[1].splitlines()[:6]))

# %% [markdown]
# ## 6. Liveness vs readiness
#
# Two copies of an application that stops answering its health check 40 s after starting. One
# has a **readiness** probe: it is taken out of service (Ready=False) and left running. The other
# has a **liveness** probe: after `failureThreshold` (3) failures in a row it is killed and
# restarted, and since it fails again 40 s later, it ends up in a crash loop of its own.

# %%
PROBED = """
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  annotations: {{kubelab.dev/behavior: unhealthy=40}}
spec:
  nodeName: node-1
  containers:
  - name: app
    image: "nginx:1.27"
    {kind}Probe: {{httpGet: {{path: /healthz, port: 8080}}, periodSeconds: 5}}
"""
c.apply(PROBED.format(name="ready-probe", kind="readiness"))
c.apply(PROBED.format(name="live-probe", kind="liveness"))
print(" after   ready-probe: Ready  restarts   live-probe: Ready  restarts")
began = c.clock.now
for _ in range(12):
    c.run(15)
    row = []
    for name in ("ready-probe", "live-probe"):
        p = c.get("pods", name)["status"]
        ready = next((x["status"] for x in p.get("conditions", []) if x["type"] == "Ready"), "-")
        row.append(f"{ready:>5} {p.get('containerStatuses', [{}])[0].get('restartCount', 0):>9}")
    print(f"{c.clock.now - began:5.0f}s {'':14}{row[0]} {'':15}{row[1]}")
for name in ("ready-probe", "live-probe"):
    print(name, [e["message"] for e in c.events() if e["involvedObject"]["name"] == name
                 and e["reason"] in ("Unhealthy", "Killing")][:2])

# %% [markdown]
# ## 7. Graceful deletion
#
# `kubectl delete pod` does not delete at once: the API server only sets `deletionTimestamp`
# (now + `terminationGracePeriodSeconds`, 30 s by default). The kubelet sees it, sends SIGTERM
# (event `Killing`, `Stopping container app`), waits for the containers to exit, or SIGKILLs them
# when the grace period is over, and then deletes the pod for good, with grace period 0. This
# one ignores SIGTERM.
#
# **Predict, then run.** With `terminationGracePeriodSeconds: 20` and a container that ignores
# SIGTERM, how long after the delete is the pod gone, and with which exit code?
#
# <details><summary>Answer</summary>
#
# 20 s: the grace period runs out, and the kubelet sends SIGKILL. The exit code is 137, that is
# 128 + 9 (SIGKILL). Two deletes show in the audit log: yours, which only set
# `deletionTimestamp`, and the kubelet's final one.
#
# </details>

# %%
c.apply("""
apiVersion: v1
kind: Pod
metadata:
  name: stubborn
  annotations: {kubelab.dev/behavior: shutdown=never}
spec:
  nodeName: node-1
  terminationGracePeriodSeconds: 20
  containers:
  - {name: app, image: "nginx:1.27"}
""")
c.run(10)
c.client.delete("pods", "stubborn")
deleted_at = c.clock.now
print(c.kubectl("get pod stubborn"))
c.run_until(lambda: not c.exists("pods", "stubborn"), timeout=60)
print(f"gone {c.clock.now - deleted_at:.1f} s after the delete")
exit_record = c.trace.filter(component="runtime/node-1", verb="exit")[-1]
print("the container's exit code:", exit_record.detail["code"], "(137 = SIGKILL)")
final = [a for a in c.apiserver.audit if a.verb == "delete" and a.name == "stubborn"]
print([(a.user, a.code) for a in final])

# %% [markdown]
# ## 8. The data plane is not the control plane
#
# Crash the API server for five minutes. The kubelet cannot report anything, its informer
# retries with back-off, its Lease is not renewed, `kubectl` gets nothing but errors. But the
# containers keep running, and the crash-looping ones keep being restarted: that loop lives on
# the node. When the API server comes back, the kubelet relists and writes the statuses it kept.
#
# **Predict, then run.** `crasher` keeps crash-looping while the API server is down. Once it is
# back, does the RESTARTS column count the restarts made during the outage?
#
# <details><summary>Answer</summary>
#
# Yes. The kubelet counted them on the node, and it reports its count once it can write again.
# It needs the API server to hear about *new* pods and to report, not to run the pods it has.
#
# </details>

# %%
web_container = c.get("pods", "web")["status"]["containerStatuses"][0]["containerID"]
crashed_at = c.clock.now
c.faults.crash("apiserver")
c.run(300)
still_running = any(x.id == web_container for x in c.runtimes["node-1"].running())
restarts = len([r for r in c.trace.filter(component="runtime", verb="start") if r.time > crashed_at])
print("API server down for 5 minutes:", c.kubectl("get pods"))
print(f"web's container, the same one all along, still running: {still_running}")
print(f"containers the kubelets restarted meanwhile, on their own: {restarts}")
c.faults.restart("apiserver")
c.run(30)
print(c.kubectl("get pods"))

# %% [markdown]
# **What a dead API server looks like from outside.** A request to an API server that does not
# run is refused before any HTTP is spoken, so no status code comes back. kubectl says
# `The connection to the server <host>:<port> was refused - did you specify the right host or
# port?`, with the address from your kubeconfig. There is no `Error from server (...)`: that
# prefix means a server answered. kubectl says the same when the kubeconfig points at the wrong
# address, so check the address first, then whether the API server runs. Meanwhile
# `kubectl get` knows nothing, but the node still runs its containers.
#
# ## 9. When a node dies
#
# Now the whole control plane: scheduler, controller manager (with the node lifecycle and taint
# eviction controllers) and three kubelets. A Deployment runs three replicas; we kill the node of
# one of them and follow what happens, from the trace and the events:
# 1. no more Lease renewals; after `node-monitor-grace-period` (50 s) without one, the node's
#    `Ready` becomes `Unknown` and its pods are marked not ready;
# 2. the node gets the taint `node.kubernetes.io/unreachable:NoExecute` (and `:NoSchedule`);
# 3. every pod tolerates that taint for 300 s (added by the API server's DefaultTolerationSeconds
#    admission), then the taint eviction controller deletes it;
# 4. the ReplicaSet controller creates a replacement and the scheduler puts it on a healthy node.

# %%
full = {"scheduler", "controller-manager"} <= set(COMPONENTS)
d = Cluster(nodes=3, seed=3)
d.apply("""
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: app, image: "nginx:1.27"}]
""" if full else """
apiVersion: v1
kind: Pod
metadata: {name: web-1}
spec:
  nodeName: node-1
  containers: [{name: app, image: "nginx:1.27"}]
""")
d.run(30)
victim = d.get("pods")[0]["spec"]["nodeName"]
killed = d.clock.now
d.faults.kill_node(victim)
d.run(420)
WANTED = {"NodeNotReady", "TaintManagerEviction", "SuccessfulCreate", "Scheduled", "Started"}
print(f"node {victim} killed at t={killed:.0f}s; what followed:")
for e in d.events():
    after = parse_time(e["lastTimestamp"]) - killed
    if e["reason"] in WANTED and after >= 0:
        print(f"+{after:4.0f}s  {e['reason']:<21} {e['involvedObject']['name']:<22} {e['message'][:60]}")
taint = next(t for t in d.get("nodes", victim)["spec"]["taints"] if t["effect"] == "NoExecute")
print("\ntaint:", taint)
print(d.kubectl("get pods -o wide"))

# %% [markdown]
# The pod on the dead node stays `Terminating`: only its kubelet can confirm that its containers
# stopped, and that kubelet is gone. It disappears when the node comes back (or when someone
# force-deletes it with `--grace-period=0 --force`). If *every* node goes silent at once, the
# controller assumes the problem is on its side of the network and evicts nothing.
#
# ## 10. Break it yourself
#
# Kill, revive or partition a node, break the registry for one image or all of them, crash a
# container, and let time pass. Watch the Lease age, the node's taints and the pods.

# %%
panel_cluster = Cluster(nodes=3, seed=11)
if full:
    panel_cluster.apply("""
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: app, image: "nginx:1.27"}]
""")
panel_cluster.run(20)
KubeletPanel(panel_cluster)

# %% [markdown]
# ## 11. Volumes: from a claim to a mounted directory
#
# Before SyncPod starts a single container, the kubelet's **volume manager** mounts every volume
# the pod names: an `emptyDir` (a scratch directory shared by the pod's containers), a
# `configMap` or `secret` (its keys as files), `downwardAPI` and `projected` files, and a
# `persistentVolumeClaim`, which is a claim on storage that someone else must first find or
# create. Three other parts take part in that last one, none of them the kubelet:
# - the **PV controller** in the controller manager binds a claim to a PersistentVolume;
# - kind's **local-path provisioner** creates a volume when the claim's StorageClass asks for it;
# - the scheduler's **VolumeBinding** plugin decides *where*, because a local volume lives on
#   one node.
#
# kind's default StorageClass `standard` says `volumeBindingMode: WaitForFirstConsumer`.
# **Predict:** you create a claim of 1Gi and nothing else. After five seconds, is there a
# PersistentVolume? What is the claim's STATUS?

# %%
s = Cluster(nodes=2, seed=31)
print(s.kubectl("get storageclass"))  # kind's default class, part of every cluster
s.apply("""
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
""")
s.run(5)
print(s.kubectl("get pvc,pv"))
print([e["message"] for e in s.events() if e["involvedObject"]["name"] == "data"])

# %% [markdown]
# No volume: the claim waits "for first consumer to be created before binding". A volume on
# `node-1` would be useless to a pod that cannot run there (no room, a taint, a node selector),
# so nothing is created before a pod needs the claim and the scheduler has chosen its node.
# The claim got the class `standard` without asking: the DefaultStorageClass admission plugin
# filled in the default.
#
# Now a pod that mounts the claim *and* a ConfigMap that does not exist yet.
# **Predict:** will the pod be scheduled? Will the claim be bound? What will
# `kubectl get pods` say?

# %%
s.apply("""
apiVersion: v1
kind: Pod
metadata: {name: db}
spec:
  containers:
  - name: db
    image: postgres:16
    volumeMounts:
    - {name: data, mountPath: /var/lib/postgresql/data}
    - {name: config, mountPath: /etc/db}
  volumes:
  - {name: data, persistentVolumeClaim: {claimName: data}}
  - {name: config, configMap: {name: db-config}}
""")
s.run(20)
print(s.kubectl("get pvc,pv"))
print(s.kubectl("get pods"))
for e in s.events():
    if e["involvedObject"]["name"] in ("db", "data") and e["reason"] != "WaitForFirstConsumer":
        print(f"{e['reason']:<22} {e['message'][:100]}")

# %% [markdown]
# Read the events in order. The scheduler's VolumeBinding plugin found that the claim could be
# provisioned on either node, picked one, and wrote the annotation
# `volume.kubernetes.io/selected-node` on the claim (its PreBind step); then it *waited*. The PV
# controller handed the claim to the external provisioner named by the class
# (`ExternalProvisioning`), the provisioner created `pvc-<uid>`, a directory on that node with
# node affinity pinning it there, and the PV controller bound the two. Only then did the
# scheduler bind the pod, to the volume's node.
#
# The pod is `ContainerCreating`, and will stay so: the kubelet retries the ConfigMap with a
# back-off (0.5 s doubling up to 2m2s), each failure a `FailedMount` event, and starts no
# container while a volume is missing. Create the ConfigMap and watch the pod heal by itself:

# %%
s.kubectl("create configmap db-config --from-literal=postgresql.conf=max_connections=20")
s.run(60)
print(s.kubectl("get pods"))
db = s.get("pods", "db")
volumes = s.components[f"kubelet/{db['spec']['nodeName']}"].volume_manager
volumes.write_file(db, "db", "/var/lib/postgresql/data/PG_VERSION", b"16")
print(volumes.container_files(db, "db"))

# %% [markdown]
# `container_files` is what the container can read: the ConfigMap's key as a file under
# `/etc/db`, and what the database wrote to its volume. A claim's data belongs to the node's
# disk, not to the pod: delete the pod, and a new pod that mounts the same claim reads the same
# file (and, with `WaitForFirstConsumer` done, lands on the same node: the volume's node
# affinity says so). Deleting the claim while a pod uses it only marks it `Terminating`: the
# `kubernetes.io/pvc-protection` finalizer waits for the pod to go. Try it:
# `s.kubectl("delete pvc data --wait=false")`, then `s.kubectl("get pvc")`.
#
# On a real kind cluster: `kubectl get sc`, `kubectl describe pvc data` (the same annotations
# and events), and `docker exec kind-worker ls /var/local-path-provisioner` shows the directory.

# %% [markdown]
# An `emptyDir` is *one* directory, mounted into every container of the pod that names it, so
# two containers can hand files to each other: the classic log shipper. The app below appends
# the date to `/var/log/app.log` every 2 s; a sidecar mounts the same emptyDir at `/logs` and
# runs `tail -f` on the file. The app also mounts the ConfigMap at `/etc/config`.
# **Predict:** after 10 s, what does the sidecar's log hold? And what does `echo x >
# /etc/config/x` do in the app's container?

# %%
s.apply("""
apiVersion: v1
kind: Pod
metadata: {name: shipper}
spec:
  volumes:
  - {name: logs, emptyDir: {}}
  - {name: config, configMap: {name: db-config}}
  containers:
  - name: app
    image: busybox:1.36
    command: [sh, -c, "while true; do date >> /var/log/app.log; sleep 2; done"]
    volumeMounts:
    - {name: logs, mountPath: /var/log}
    - {name: config, mountPath: /etc/config}
  - name: shipper
    image: busybox:1.36
    command: [sh, -c, "touch /logs/app.log; tail -f /logs/app.log"]
    volumeMounts: [{name: logs, mountPath: /logs}]
""")
s.run(10)
print(s.kubectl("logs shipper -c shipper --tail=3"))
print(s.kubectl("exec shipper -c app -- sh -c 'echo x > /etc/config/x'"))

# %% [markdown]
# The sidecar prints what the app wrote, a second or so later: busybox's `tail -f` looks at
# the file once a second, and the file is the same one, because the runtime bind-mounts the
# volume's directory into both containers (the kubelet's `makeMounts` turns each
# `volumeMount` into a CRI mount). A configMap, secret, downwardAPI or projected volume is
# always mounted read-only, so the write fails as it would on Linux, with EROFS. With
# `kubelab serve`, `kubectl cp shipper:/var/log/app.log ./app.log -c app` copies the file out
# the way kubectl does everywhere: it runs `tar cf -` in the container through exec.

# %% [markdown]
# ### Growing a claim
#
# The database needs more room. A bound claim may ask for more storage only if its StorageClass
# says `allowVolumeExpansion: true`; the API server's PersistentVolumeClaimResize admission
# plugin checks. **Predict:** kind's `standard` sets nothing. What does a patch to 2Gi get?

# %%
from kubelab.api.errors import ApiError

bigger = {"spec": {"resources": {"requests": {"storage": "2Gi"}}}}
try:
    s.client.patch("persistentvolumeclaims", "data", bigger)
except ApiError as err:
    print(err.message)

# %% [markdown]
# Refused, as on kind: local-path is a directory, there is nothing to grow. Storage that can
# grow is usually a **CSI** driver: a volume the driver creates (`spec.csi`), with sidecars that
# act for it in the API. kind installs none, so kubelab has a simulated one for this lesson,
# `hostpath.csi.k8s.io` (csi-driver-host-path), with its example class `csi-hostpath-sc`
# (`allowVolumeExpansion: true`). An expansion takes two halves: the **external-resizer**
# grows the volume (the controller half) and the **kubelet** that mounts it grows the file system
# (the node half). **Predict:** right after the patch, what is the claim's CAPACITY?

# %%
from kubelab.controllers.volume.csi_hostpath import CSI_HOSTPATH_STORAGE_CLASS

s.apply(CSI_HOSTPATH_STORAGE_CLASS)
s.apply("""
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: logs}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: csi-hostpath-sc
  resources: {requests: {storage: 1Gi}}
""")
s.run(5)  # an Immediate class: the driver provisions before any pod asks
s.apply("""
apiVersion: v1
kind: Pod
metadata: {name: logger}
spec:
  containers:
  - {name: logger, image: busybox, command: [sleep, "3600"], volumeMounts: [{name: logs, mountPath: /logs}]}
  volumes:
  - {name: logs, persistentVolumeClaim: {claimName: logs}}
""")
s.run(20)
print(s.kubectl("get pod logger"))
s.client.patch("persistentvolumeclaims", "logs", {"spec": {"resources": {"requests": {"storage": "3Gi"}}}})
s.run(1)
logs = s.get("persistentvolumeclaims", "logs")
print(s.kubectl("get pvc logs"))
print("the volume:", s.get("persistentvolumes", logs["spec"]["volumeName"])["spec"]["capacity"])
print([c["type"] for c in logs["status"]["conditions"]], logs["status"]["allocatedResourceStatuses"])
s.run(70)  # the kubelet's next sync of the pod
print(s.kubectl("get pvc logs"))
for e in s.events():
    if e["involvedObject"]["name"] in ("logs", "logger") and e["reason"] in (
            "Resizing", "FileSystemResizeRequired", "FileSystemResizeSuccessful"):
        print(f"{e['reason']:<28} {e['message'][:90]}")

# %% [markdown]
# The volume grew first (the PV says 3Gi) while the claim still said 1Gi, with the condition
# `FileSystemResizePending` and `allocatedResourceStatuses: NodeResizePending`: the file system
# had not grown yet. At its next sync of the pod the kubelet ran NodeExpandVolume and wrote the
# new capacity.
#
# Before any of that, the volume was **attached**: a CSI volume is a disk that must be connected
# to the node before the kubelet can mount it. The attach/detach controller (in the controller
# manager) created a **VolumeAttachment** for the volume on the pod's node, the driver's
# external-attacher marked it `attached`, and the kubelet waited for that before mounting. A
# driver that needs no attaching says `attachRequired: false` in its CSIDriver object; without
# one, attaching is assumed.

# %%
print(s.kubectl("get volumeattachments"))
print([e["message"] for e in s.events() if e["reason"] == "SuccessfulAttachVolume"])

# %% [markdown]
# ## Pitfalls
#
# - **`Running` is not `Ready`.** A running pod whose readiness probe fails gets no Service
#   traffic. Look at the READY column and at the `Ready` condition, not only at STATUS.
# - **A liveness probe must check only the process itself.** If it checks a database and the
#   database goes down, every replica is restarted, again and again, and that fixes nothing. Use
#   a readiness probe for dependencies, and a startup probe for slow starts.
# - **`CrashLoopBackOff` is a symptom.** The cause is in `kubectl logs <pod> --previous` and in
#   `kubectl describe pod`'s `Last State`: its reason and exit code. 137 means SIGKILL (the
#   reason says `OOMKilled` when memory ran out); 1 is usually the application's own error.
# - **A fixed image pull is not retried at once.** After you repair the credential or the tag,
#   the next attempt can be up to 5 minutes away. Delete the pod to retry now: a Deployment's
#   pod comes back at once, and pulls again.
# - **Force-delete only a node you know is dead.** `--grace-period=0 --force` removes the pod
#   from the API, not from the node. If that node is only cut off, its container keeps running
#   next to the replacement (try challenge 3).
#
# ## On a real cluster
#
# In a kind cluster (notebook 00). The nodes are Docker containers, and `crictl` inside a node
# shows what containerd runs there:
#
# ```bash
# kubectl run web --image=nginx:1.27; kubectl get pod web --watch   # Pending, ContainerCreating, Running
# kubectl describe pod web                  # Conditions; Events: Scheduled, Pulling, Pulled, Created, Started
# kubectl get leases -n kube-node-lease     # one Lease per node, renewed every 10 s
# kubectl run crasher --image=busybox:1.36 -- sh -c 'echo bye; exit 1'
# kubectl get pod crasher --watch           # Error, CrashLoopBackOff, RESTARTS climbing
# kubectl logs crasher --previous           # "bye": the output of the last crashed container
# kubectl run t --image=busybox --restart=Never -- echo hi; kubectl logs t    # hi (also here)
# kubectl exec web -- cat /etc/resolv.conf  # the kubelet's DNS settings (also here)
# kubectl port-forward pod/web 8080:80 &   # then: curl localhost:8080 (also with kubelab serve)
# kubectl debug web -it --image=busybox --target=web   # an ephemeral container in its pod
# kubectl run api --image=registry.example.com/shop/api:2.3    # ErrImagePull, then ImagePullBackOff
# docker exec learn-worker crictl ps        # the containers on learn-worker
# docker exec learn-control-plane mv /etc/kubernetes/manifests/kube-apiserver.yaml /root/   # API server stops
# kubectl get pods                          # no answer (see section 8)
# docker exec learn-worker crictl ps        # the same containers, still running
# docker exec learn-control-plane mv /root/kube-apiserver.yaml /etc/kubernetes/manifests/
# docker stop learn-worker2; kubectl get nodes --watch   # NotReady after about 50 s, evictions 300 s later
# ```
#
# With kind, kubectl reaches the API server through a port that Docker forwards from the
# control-plane container. So while the API server is down, you may read `Unable to connect to
# the server: EOF` instead of `... was refused`. It means the same thing: nothing answered.
#
# Where kubelab simplifies: there are no processes, cgroups or real images. A container follows
# the script in its annotation, the registry knows only image names and sizes, and a probe is a
# verdict from that script, not an HTTP request. CPU and memory limits are not enforced; an OOM
# kill is a script (`oom=<s>`). The sandbox is only an IP address from the node's pod CIDR.
#
# ## Challenge
#
# Work in new cells below this one.
#
# 1. In `c`, two pods with `restartPolicy: Never` on node-1, one annotated
#    `kubelab.dev/behavior: "exit=5,code=0"` and one `"exit=5,code=1"`. Predict their STATUS and
#    phase 30 s later.
# 2. In `c`, break the registry for `nginx:1.28` with mode `notfound`, then start a pod with that image.
#    Which waiting reason and message does it show, and how do they differ from the 401 story?
# 3. Build a fresh cluster with the web Deployment, as section 9 does (its first lines, up to
#    `d.run(30)`). This time *partition* a node (`d.faults.partition(node)`) instead of killing
#    it, and run 420 s. Count the web containers that really run (`d.runtimes[node].running()`
#    on each node). Then `d.faults.heal(node)` and run 60 s.
#
# <details><summary>Hints</summary>
#
# 1. `Completed` (phase `Succeeded`) and `Error` (phase `Failed`). Nothing restarts them.
# 2. `ImagePullBackOff` with `... code = NotFound ... not found`: a wrong tag, not a credential.
#    The kubelet retries it with the same back-off. It heals only if someone pushes that tag.
# 3. Four copies run for a while. The evicted pod's container still runs on the cut-off node,
#    and only its kubelet could stop it. After the heal, that kubelet sees the deletion, stops
#    the container and removes the pod.
#
# </details>

# %% [markdown]
# ## Summary
#
# - The kubelet watches only the pods bound to its node, runs them through the container runtime
#   (sandbox, image, create, start) and reports status and events; it never knows why a pod exists.
# - A pod is `Pending` until all its containers have started, then `Running`; `Succeeded` and
#   `Failed` depend on exit codes and `restartPolicy`. Waiting reasons tell why a container is not running.
# - Crash loops and failed pulls back off: 10 s doubling to 5 min, forgotten after 10 quiet minutes.
#   The 15-hour ImagePullBackOff healed itself because that retry loop never stops.
# - Readiness failures take a pod out of service; liveness failures restart the container.
# - Deletion is graceful: SIGTERM, the grace period, SIGKILL, then the kubelet's delete with grace 0.
# - Heartbeats are a Lease every 10 s; silence for 50 s → Unknown → NoExecute taint → eviction after
#   300 s → the ReplicaSet replaces the pod elsewhere.
# - Running containers need neither the API server nor the scheduler.
#
# **Exercises.** Open [exercises/ex06_kubelet.py](../exercises/ex06_kubelet.py): 6.1 the
# image-pull back-off, 6.2 a readiness probe's thresholds.
#
# ## Check your work
#
# The cell below grades exercises 6.1 and 6.2 in
# [exercises/ex06_kubelet.py](../exercises/ex06_kubelet.py), as `kubelab grade 6.1 6.2` does in a
# terminal (`kubelab grade 6` adds exercise 6.3 of notebook 06b). It takes a few seconds. Save
# the file, then run the cell again after each change: the grader reads the file from disk, so
# there is nothing to re-import.
#
# Nothing solved yet? Then the report says `0/20 points`, and each check says `FAIL ... not
# implemented yet (NotImplementedError: ...)`. That is the starting point, not an error. Open
# the file, replace a `raise NotImplementedError(...)` with your code, save, and run the cell.
# A failed check says what it expected, what it got, a hint, and a `replay:` command that reruns
# just that check. `grade(["6.1", "6.2"], verbose=True)` also shows what your code printed and the end of
# the cluster's trace. `kubelab grade` in a terminal grades all six notebooks' exercises at once.
#
# **Next:** [06b · troubleshooting](06b_troubleshooting.ipynb) puts what you now know to work on
# broken clusters: Pending pods, failing containers, a Service with no endpoints, a silent node.

# %%
from kubelab.grading import grade

grade(["6.1", "6.2"])

# %% [markdown]
# Run the cell above again after each change you save (Shift+Enter moves here, so no empty cell
# is added). In a workshop, your instructor's report shows as a `note:` at the top of its output.
