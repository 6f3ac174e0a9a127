# %% [markdown]
# # 07 · Failures and high availability
#
# A production control plane runs several copies of everything. The question is not *whether* a
# part dies but *what stops* when it does. The answer differs by part, and for a reason.
#
# - **API servers are active-active.** They keep no state of their own (it is all in etcd), so
#   three of them behind a load balancer all serve at once. Losing one is felt by nobody.
# - **The scheduler and the controller manager are active-standby.** They make decisions, and
#   two schedulers deciding at once would each bind the same pod. So the replicas hold an
#   election on a **Lease** object, and only the holder works. When it dies, another takes over,
#   but only once the Lease has expired.
# - **etcd is a Raft quorum.** Every write goes through its leader and counts only once a
#   majority of members has it. Three members survive one loss, five survive two. Four survive
#   only one, like three, while every write must now reach three members.
# - **The data plane is not the control plane.** Kubelets and container runtimes run on the
#   nodes. When the whole control plane is down, running pods keep running and keep serving. One
#   of the stories this course grew from is an outage in which the control plane answered 503
#   while the Ingress kept answering on ports 80 and 443.
#
# In this notebook you build that control plane (three API servers, two schedulers, two
# controller managers, three etcd members), break one part at a time, and measure what stops.
#
# **Learning goals.** By the end you can
# - read a Lease and say who leads, since when, and how often it changed hands;
# - explain leader election's timing (LeaseDuration 15 s, RenewDeadline 10 s, RetryPeriod 2 s),
#   and predict how long a takeover takes;
# - say why a too-short RenewDeadline turns a slow API server into no leader at all;
# - follow a client from a dead API server to a live one, its watches resuming where they were;
# - explain Raft's quorum: why one of three etcd members may die, why two may not, and what a
#   client sees (`etcdserver: request timed out`);
# - fill in, and defend, the death matrix: which part's death stops which work.
#
# **Prerequisites.** Notebook 01 (etcd's revisions and watch), 03 (informers and their relists),
# 04 (the scheduler), 05 (controllers) and 06 (the kubelet and node failure).
#
# **Time.** About 50 minutes.

# %%
from collections import Counter

from IPython.display import SVG, display

from kubelab.client.leaderelection import (
    JITTER_FACTOR,
    LeaderCallbacks,
    LeaderElectionConfig,
    LeaseLock,
    new_leader_elector,
)
from kubelab.cluster import Cluster
from kubelab.viz.death_matrix import HA_ROWS, DeathMatrix
from kubelab.widgets.raft_panel import RaftPanel

WEB = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "nginx:1.27"}]
"""


def running_containers(c):
    """What the nodes run, read from their container runtimes, not through the API."""
    return sum(len(runtime.running()) for runtime in c.runtimes.values() if runtime.powered)


def members(c):
    """c.etcd.status() as a table, like `etcdctl endpoint status -w table` (and a bit more)."""
    rows = [("MEMBER", "ROLE", "TERM", "LEADER", "COMMIT", "APPLIED", "REVISION", "PARTITIONED")]
    rows += [(m.name, m.role, m.term, m.leader, m.commit, m.applied, m.revision, m.partitioned)
             for m in c.etcd.status()]
    return "\n".join("  ".join(f"{v!s:<11}" for v in row).rstrip() for row in rows)


# %% [markdown]
# ## 1. Two schedulers, one leader
#
# `replicas=` runs several copies of a component, named `scheduler-1`, `scheduler-2` and so on.
# Each copy starts a leader elector (client-go's `tools/leaderelection`) on the Lease named after
# its component in `kube-system`. Whoever writes its identity into `holderIdentity` first leads.
# The holder renews the Lease every RetryPeriod (2 s); the others re-read it just as often.

# %%
c = Cluster(nodes=3, seed=1, replicas={"scheduler": 2, "controller-manager": 2})
c.apply(WEB)
c.run(10)
print(c.kubectl("get leases -n kube-system"))
print()
print("leaders:", c.leader("scheduler"), "and", c.leader("controller-manager"))
print("the scheduler Lease's spec:", c.get("leases", "kube-scheduler", namespace="kube-system")["spec"])

# %% [markdown]
# The identity is `<hostname>_<a fresh UUID>`, as kube-scheduler builds it. A new process gets
# a new UUID, so a restarted replica is a *new* candidate. The follower does nothing at all:
# upstream's kube-scheduler starts its informers while it waits, but schedules nothing.
#
# **Predict, then run.** We kill the leading scheduler right after it renewed the Lease. How
# long until the other one leads? Is it 15 s (the LeaseDuration), less, or more?
#
# <details><summary>Answer</summary>
#
# A little more than 15 s: the cell prints how long it took here, and the bounds. A candidate
# never trusts the times written in the Lease, because another machine's clock wrote them. It
# notes its *own* time whenever it sees the record change (the **observed time**). It takes
# over only when LeaseDuration has passed since then with no change. It looks every
# RetryPeriod, jittered by up to 120 % (client-go's JitterFactor 1.2: each wait is 2 s to
# 4.4 s). It may see the last renewal up to one such wait late, and look again up to one wait
# after the Lease expired: the takeover comes between 15 s and 15 + 2 × 4.4 s after the last
# renewal. Meanwhile no pod is scheduled. The running ones do not notice.
#
# </details>

# %%
killed = c.faults.crash_leader("scheduler")
took = c.run_until(lambda: c.leader("scheduler") not in (None, killed), timeout=60)
print(f"{killed} crashed; {c.leader('scheduler')} leads {took:.1f} s later")
lease_duration = LeaderElectionConfig.lease_duration  # the core components' defaults
longest_wait = LeaderElectionConfig.retry_period * (1 + JITTER_FACTOR)
print(f"the bounds: {lease_duration:g} s to {lease_duration + 2 * longest_wait:.1f} s "
      f"(LeaseDuration, plus two RetryPeriods of up to {longest_wait:.1f} s each)")
print(c.kubectl("get leases -n kube-system"))
lease = c.get("leases", "kube-scheduler", namespace="kube-system")["spec"]
print("leaseTransitions:", lease["leaseTransitions"], " acquireTime:", lease["acquireTime"])
for event in c.events("kube-system"):
    if event["reason"] == "LeaderElection":
        print(f"  event LeaderElection: {event['message']}")

# %% [markdown]
# `leaseTransitions` counts changes of holder. The `LeaderElection` events are what
# `kubectl get events -n kube-system` shows on a real cluster after a failover.
#
# ### The same failover, as kube-system shows it
#
# On kind (and any kubeadm cluster) the control plane runs as **static pods**: the kubelet of
# each control-plane node reads their manifests from /etc/kubernetes/manifests and starts them,
# and their mirror pods show in `kube-system`, named `<component>-<node>`. A kind cluster with
# three control-plane nodes calls them `control-plane`, `control-plane2` and `control-plane3`
# (prefixed with the cluster's name, `kind-` by default); kubelab's `Cluster` has no name.
# Below: three API servers, three schedulers, three controller managers and three etcd members,
# one of each on each control-plane node (kubeadm's stacked topology), and two workers.
#
# **Predict, then run.** We crash the leading scheduler again. What does
# `kubectl get pods -n kube-system` show for its pod half a minute later? And once the process
# can run again?
#
# <details><summary>Answer</summary>
#
# Its pod stays, `0/1` and `CrashLoopBackOff`: the kubelet restarts the container, each try
# dies at once, and it waits longer after each (10 s, 20 s, 40 s, ... up to 5 minutes). The
# RESTARTS column counts the tries. Once the binary can run, the kubelet's next try succeeds
# (it may wait out the back-off first): `1/1 Running`, RESTARTS one more. Meanwhile the Lease
# names a holder on another node, `control-planeN_<uuid>`: the identity is the hostname.
#
# </details>

# %%
k = Cluster(nodes=2, seed=3, etcd_members=3,
            replicas={"apiserver": 3, "scheduler": 3, "controller-manager": 3})
k.run(10)
print(k.kubectl("get nodes"))
print(k.kubectl("get pods -n kube-system -l tier=control-plane -o wide"))
print(k.kubectl("get leases -n kube-system kube-scheduler kube-controller-manager"))

# %%
crashed = k.faults.crash_leader("scheduler")
k.run(30)
print(f"crashed {crashed}; 30 s later:")
print(k.kubectl("get pods -n kube-system -l component=kube-scheduler -o wide"))
print(k.kubectl("get lease kube-scheduler -n kube-system"))
k.faults.restart(crashed)
back = k.run_until(lambda: "1/1" in str(k.kubectl("get pods -n kube-system kube-scheduler-control-plane")),
                   timeout=300)
print(f"restarted; {back:.1f} s later the kubelet's next try runs:")
print(k.kubectl("get pods -n kube-system -l component=kube-scheduler"))
print(k.kubectl("get events -n kube-system --field-selector reason=BackOff"))
print(k.kubectl("get lease kube-scheduler -n kube-system"))

# %% [markdown]
# The restarted scheduler is a follower now: the Lease stays with the one that took it. A
# component that *loses* its Lease (its renewals fail for RenewDeadline) does the same as a
# crash, in kube-scheduler's own words: it exits (`leaderelection lost`), and its static pod's
# container restart brings it back as a new candidate.
#
# ### Who may do what: the components' own users
#
# Each component talks to the API server as a user of its own: `system:kube-scheduler`,
# `system:kube-controller-manager`, each node's `system:node:<node>`. RBAC gives each exactly
# what its job needs (upstream's bootstrap policy, plugin/pkg/auth/authorizer/rbac/
# bootstrappolicy/policy.go). `kubectl auth can-i --list --as=...` shows it, through
# impersonation: `--as` asks the API server to answer as that user would be answered.
#
# **Predict, then run.** May the scheduler create a pod? Bind one? Take the controller
# manager's Lease?
#
# <details><summary>Answer</summary>
#
# It may bind (`create` on `pods/binding`) but not create pods: making pods is the
# controllers' job, placing them the scheduler's. It may `get` and `update` only the Lease
# named `kube-scheduler` (the resource name limits the rule), and only `create` Leases in
# general, since it cannot name one it has not made yet. So a scheduler cannot hold the
# controller manager's Lease: even a misconfigured component cannot do another's job.
#
# </details>

# %%
print(k.kubectl("auth can-i --list --as=system:kube-scheduler"))
for question in ("create pods", "create pods --subresource=binding",
                 "update leases/kube-scheduler -n kube-system",
                 "update leases/kube-controller-manager -n kube-system",
                 "update leases -n kube-system"):
    answer = str(k.kubectl(f"auth can-i {question} --as=system:kube-scheduler")).strip()
    print(f"can system:kube-scheduler {question}? {answer}")


# %% [markdown]
# The last answer is `no` although a rule names `update` on leases: `can-i` without a name asks
# about *every* Lease, and the rule covers one. The scheduler may also patch `pods/status` (the
# `PodScheduled=False` condition of a pod it cannot place, notebook 04) and delete pods (the
# victims of preemption).
#
# ## 2. RenewDeadline, and a slow API server
#
# The leader must renew within **RenewDeadline** (10 s). If it cannot, it stops leading, even
# if nobody else has taken over yet. RenewDeadline is shorter than LeaseDuration on purpose: the
# old leader gives up *before* anyone else may decide that its Lease has expired. Nothing else
# fences it off (no token, no lock in etcd). Safety rests on those two durations alone.
#
# Each renewal is one request with a timeout of RenewDeadline / 2. When the API server answers
# slowly, the requests time out. Below, two candidates run with the defaults, then with a
# RenewDeadline of 4 s (so a 2 s timeout), while the API server takes 2.5 s to answer for a
# minute. This is the seeds' chain: load slows the API server, a healthy leader loses its
# Lease, and a slowdown becomes an outage.

# %%
def election(renew_deadline, slow=2.5):
    """Two candidates on a Lease `demo`; the API server slow from t=20 s to t=80 s. Each change
    of leader: (time, candidate, "starts" or "stops")."""
    d = Cluster(nodes=1, seed=2, components=[])
    log = []
    for name in ("a", "b"):
        client = d.client_for(f"candidate-{name}", ["system:masters"])
        lock = LeaseLock(client, "default", "demo", f"candidate-{name}", timeout=renew_deadline / 2)
        callbacks = LeaderCallbacks(lambda n=name: log.append((d.clock.now, n, "starts")),
                                    lambda n=name: log.append((d.clock.now, n, "stops")))
        new_leader_elector(LeaderElectionConfig(lock, callbacks, 15, renew_deadline, 2),
                           d.clock, d.rand, trace=d.trace).run()
    d.run(20)
    d.faults.slow_apiserver(slow)
    d.run(60)
    d.faults.slow_apiserver(0)
    d.run(40)
    return log


for deadline in (10, 4):
    log = election(deadline)
    print(f"RenewDeadline {deadline} s:", *(f"t={t:5.1f}s  {who} {what} leading" for t, who, what in log),
          sep="\n  ")
gave_up = next(t for t, _, what in log if what == "stops")
next_leader = next(t for t, _, what in log if what == "starts" and t > gave_up)
print(f"with 4 s: the leader gives up {gave_up - 20:.0f} s into the slowdown; nobody leads for "
      f"{next_leader - gave_up:.0f} s, until {next_leader - 80:.0f} s after the slowdown ended")

# %% [markdown]
# With the defaults, a 2.5 s answer is still within the 5 s timeout, so nothing happens. With
# a 4 s deadline, `a` gives up a few seconds into the slowdown. And `b` cannot take over: its
# own requests time out too. Nobody leads for longer than the slowdown lasts (the last line
# says how long). Keep the defaults unless you can show why.
# If you change them, keep LeaseDuration > RenewDeadline > RetryPeriod × 1.2. The config
# refuses anything else, with upstream's messages:

# %%
lock = LeaseLock(c.client, "default", "demo", "me")
for durations in ((10, 10, 2), (15, 2, 2)):
    try:
        new_leader_elector(LeaderElectionConfig(lock, LeaderCallbacks(), *durations), c.clock, c.rand)
    except ValueError as err:
        print(f"LeaseDuration, RenewDeadline, RetryPeriod = {durations}: {err}")

# %% [markdown]
# ## 3. Three API servers behind a load balancer
#
# kubeadm's `controlPlaneEndpoint` is an address in front of every API server: HAProxy, a
# cloud load balancer. Each client holds one connection (HTTP/2 keeps it open) to the server
# it got when it connected. When that server dies, the client's watches break, and its next
# request connects to another one. Its reflectors watch again **from the resourceVersion
# they had**, so nothing is listed again unless the new server's watch cache cannot replay it
# (then 410 and a relist, notebook 03).

# %%
h = Cluster(nodes=3, seed=4, replicas={"apiserver": 3})
h.apply(WEB)
h.run(20)


def server_of(component):
    """The API server a component's connection reaches (through its node's link, for a kubelet)."""
    api = component.ctx.client.api
    while not hasattr(api, "backend"):
        api = api.api
    return api.backend.name if api.backend else "-"


print(Counter(server_of(comp) for comp in h.components.values()))
# a kube-proxy connected to the server we crash: its watches are the ones that break
proxy = sorted(name for name, comp in h.components.items()
               if name.startswith("kube-proxy/") and server_of(comp) == "apiserver-1")[0]
crashed_at = h.clock.now
h.faults.crash("apiserver-1")
h.run(5)
for record in h.trace:
    if record.time >= crashed_at and (record.component in ("faults", "loadbalancer")
                                      or record.component == f"{proxy}/reflector"):
        print(record.text())
print(Counter(server_of(comp) for comp in h.components.values()))
print(proxy, "now watches through", server_of(h.components[proxy]))
print(h.kubectl("scale deployment web --replicas=5"))
h.run(10)
print(h.kubectl("get deployment web"))

# %% [markdown]
# The kube-proxy's watches (nodes, services, endpointslices) closed, each at its
# resourceVersion, and it watched again from exactly there, on the server the cell printed: no
# relist. Its node's kubelet, connected to the same server, did the same. kubectl did not notice
# anything.
# The real kubectl through `c.serve()` does not either: the HTTPS edge sends every request
# through the same load balancer.
#
# ## 4. etcd: a Raft quorum
#
# `etcd_members=3` runs three simulated etcd members (`kubelab/store/raft/`, after etcd-io/raft).
# Each member has its own log and its own MVCC store. A member that hears no heartbeat for an
# election timeout becomes a candidate: 1 s, randomized up to 2 s, with a heartbeat every
# 100 ms, etcd's defaults. A candidate with votes from a majority leads for its **term**. An
# entry is committed once a majority has it in its log, and only then applied to the stores.
# A read is answered by the leader, after one heartbeat round confirms that it still leads
# (ReadIndex).
#
# **Predict, then run.** We crash the leader, then (after a scale) a second member. Which
# `kubectl scale` works? And what happens to the running pods?
#
# <details><summary>Answer</summary>
#
# The first one works: two of three members are a majority. They elect a new leader within
# about a second, at term 2, and then commit. After the second crash, one member is left. It
# cannot commit anything, so each request waits until etcd's request timeout. `kubectl scale`
# reads the Deployment before it scales it, and that read fails first: it prints `error: no
# objects passed to scale etcdserver: request timed out`, as the real kubectl does (`kubectl
# get` prints `Error from server: etcdserver: request timed out`). The pods keep running: the
# kubelets need etcd only to hear about changes.
#
# </details>

# %%
e = Cluster(nodes=3, seed=6, etcd_members=3)
e.apply(WEB)
e.run(20)
print(members(e))
leader = e.faults.crash_etcd_leader()
e.run(3)
print(f"\ncrashed {leader}; three seconds later:\n{members(e)}")
print(e.kubectl("scale deployment web --replicas=4"))
e.run(10)
follower = next(m.name for m in e.etcd.status() if m.role == "follower")
e.faults.crash_etcd_member(follower)
e.run(3)
print(f"\ncrashed {follower} too")
print(e.kubectl("scale deployment web --replicas=5"))
print(e.kubectl("get pods"))
print("containers running on the nodes:", running_containers(e))

# %% [markdown]
# `kubectl get` fails too: kube-apiserver reads with quorum (a linearizable read through the
# leader), unless a client asks for `resourceVersion=0`. Now bring the first member back. It
# rejoins as a follower and catches up from the leader's log. The lone survivor's **term** has
# grown meanwhile: it kept calling elections it could not win. etcd 3.5's pre-vote (off here)
# keeps a cut-off member from doing that.

# %%
e.run(60)
e.faults.restart_etcd_member(leader)
e.run(5)
print(members(e))
print(e.kubectl("scale deployment web --replicas=5"))
e.run(10)
print(e.kubectl("get deployment web"))
print(*(f"t={t:5.1f}s  {what}" for t, what in e.etcd.timeline[-4:]), sep="\n")

# %% [markdown]
# The panel shows the members live. Crash and partition members, write through the API server,
# and watch the roles, terms and commit indexes move.

# %%
RaftPanel(Cluster(nodes=3, seed=7, etcd_members=3))

# %% [markdown]
# ## 5. The death matrix
#
# Now all of it at once: three API servers, two schedulers, two controller managers, three etcd
# members. For each row, a fresh cluster runs `web` (three replicas), one part is killed, and
# then, once a virtual second, we try what users need:
# - are the containers that ran before still running (asked of the nodes, not the API)?
# - does a new pod start?
# - can `web` scale to four, with a pod lost with a node replaced?
# - does kubectl work (a read and a write)?
#
# Each cell says `yes` (as fast as on a healthy cluster), `no` (not within the time watched), or
# how long it took. Then the part is repaired, and the last column is how long it took until a
# new pod, the scale and kubectl all worked again. The last two columns are the kube-system view
# of the killed part's pods, read while it was broken and once its pods were ready again: the
# static pod of a component, the DaemonSet pods (kube-proxy, kindnet) of a node whose kubelet
# or whole self died. When kubectl fails, nothing can be listed, and the cell shows what
# `crictl ps` on that node would still list: the containers its runtime runs. The table is
# measured, not typed. The two cells below take a few seconds together.
#
# **Predict, then run.** Fill in the matrix yourself before you run it. Which rows stop new
# pods, and for how long?
#
# <details><summary>Answer</summary>
#
# For good (until the repair): the etcd quorum and all the API servers. For a while: the etcd
# leader (an election, seconds) and the scheduler leader (the Lease: a little more than its
# 15 s, as in section 1). Not at all:
# one API server and the controller-manager leader, which stops only scaling, for about as long
# as the scheduler's takeover. A kubelet or a node: a new pod bound there before the node is
# marked `NotReady` never starts, but the next one goes elsewhere, so new pods start, at worst
# one retry later.
#
# </details>

# %%
matrix = DeathMatrix.run(HA_ROWS[:4], title="the death matrix, measured")

# %%
matrix.extend(HA_ROWS[4:])
display(matrix)
SVG(matrix.timeline())

# %% [markdown]
# Row by row:
#
# - **etcd member.** Losing the leader costs an election, a few seconds in which writes time
#   out. Then everything works again.
# - **etcd quorum.** No writes, and no quorum reads, so kubectl fails and nothing can change.
#   But every container keeps running. When a member comes back, the quorum is back within
#   seconds; the clients' back-off decides when everything works again.
# - **One API server.** Nobody notices: the clients move to the other two.
# - **All API servers.** The control plane is gone: no kubectl, no new pods, no scaling. The
#   data plane runs on. After the restart, recovery takes a while: every informer backs off
#   (up to 30 s, jittered to twice that) before it lists again.
# - **Scheduler leader.** New pods wait for the standby scheduler to take the Lease (the cell's
#   "after" time, a little more than the 15 s LeaseDuration); kubectl works throughout.
# - **Controller-manager leader.** A bare pod starts at once (the scheduler and kubelets need
#   no controller), but scaling waits for the standby controller manager.
# - **A kubelet.** Its containers keep running; nothing on that node changes. The node stays
#   `Ready` for 50 s, so a new pod may be bound to it and never start. The probe then does what
#   a user would: after 10 s it creates another pod, which the scheduler puts on another node
#   (the first counts against this one). So a cell "after N s" here is that retry, not the
#   cluster refusing new pods. After 300 s more, the node's pods are evicted: a Deployment's
#   pod comes back elsewhere, a bare pod does not.
# - **A whole node.** Its pods die with it, and the Deployment gets them back only after
#   eviction, about 6 minutes later. That is `node-monitor-grace-period` (50 s) plus
#   `tolerationSeconds` (300 s), notebook 06.
#
# And the kube-system columns: a crashed component's static pod is `0/1 CrashLoopBackOff`
# while it is down, and `1/1 Running` with one more restart after. Without an API server, or
# without etcd's quorum, kubectl lists nothing, yet the node's runtime still runs the other
# control-plane containers: on a real node `crictl ps` is where you look then. A dead kubelet's
# or node's DaemonSet pods still say `1/1 Running`: that is the last status their kubelet
# reported, and nobody else writes it (the node lifecycle controller marks only their `Ready`
# condition false; DaemonSet pods tolerate the NoExecute taints, so they are not evicted).
#
# ## Pitfalls
#
# - **An even number of etcd members buys nothing.** Four members need three for a quorum and
#   survive one loss, like three, but every write must reach three of them. Use 3 or 5.
# - **A slow etcd disk is an outage waiting to happen.** Every write waits for fsync on a
#   majority. A slow disk delays the leader's heartbeats, members call elections, and a healthy
#   leader is replaced while writes stop. Look at etcd's disk latency first when a cluster is slow.
# - **Leader election is not a lock.** Nothing stops an old leader that is only paused (a long
#   GC pause, a frozen VM) from acting once it wakes up. Only RenewDeadline < LeaseDuration
#   keeps it safe. Do not shorten the durations to speed up failover without measuring your API
#   server's latency under load.
# - **Stacked control planes lose two things at once.** With etcd on the control-plane nodes
#   (kubeadm's default), losing a node takes an API server *and* an etcd member. An external
#   etcd costs more machines and limits the blast radius.
# - **"The API server is down" is not "the cluster is down".** Check whether the workloads still
#   answer before you restart anything. Usually they do.
#
# ## On a real cluster
#
# ```bash
# kubectl get pods -n kube-system -l tier=control-plane -o wide   # the static pods, per node
# kubectl get leases -n kube-system                 # kube-scheduler, kube-controller-manager, holders
# kubectl get lease kube-scheduler -n kube-system -o yaml   # holderIdentity, leaseTransitions, ...
# kubectl get events -n kube-system --field-selector reason=LeaderElection
# kubectl get --raw='/readyz?verbose'                 # one API server's view of itself, etcd included
# ETCDCTL_API=3 etcdctl --endpoints=https://172.18.0.2:2379,https://172.18.0.3:2379,https://172.18.0.4:2379 \
#   --cacert=/etc/kubernetes/pki/etcd/ca.crt --cert=/etc/kubernetes/pki/etcd/server.crt \
#   --key=/etc/kubernetes/pki/etcd/server.key endpoint status -w table   # leader, term, raft index
# kubectl auth can-i --list --as=system:kube-scheduler   # a component's RBAC, by impersonation
# docker exec kind-control-plane crictl ps          # the node's containers, API server or not
# ```
#
# In a kind cluster with `--config` asking for three control-plane nodes (kind names them
# `kind-control-plane`, `kind-control-plane2`, `kind-control-plane3`; the workers
# `kind-worker`, `kind-worker2`, ...), `docker stop` one of them and watch the Leases move. To
# crash one component, move its manifest out of /etc/kubernetes/manifests on its node
# (`docker exec kind-control-plane mv /etc/kubernetes/manifests/kube-scheduler.yaml /tmp`): the
# kubelet stops the static pod, and moving it back starts it again. The etcd endpoints on kind
# are the control-plane nodes' addresses, port 2379 (etcdctl runs in the etcd pods:
# `kubectl exec -n kube-system etcd-kind-control-plane -- etcdctl ...`). Notebook
# [07b](07b_real_etcd.ipynb) runs three real etcd processes behind kubelab's API server and
# kills them one by one.
#
# Where kubelab simplifies: etcd's Raft is simulated. Its messages take 1 ms, and a request that
# cannot reach a quorum fails at once, carrying etcd's 7 s timeout as its latency, instead of
# blocking a goroutine. Pre-vote is off. API servers share one token file. The load balancer is
# round-robin, with no health checks: it knows at once which server is down. The static pods'
# containers stand for kubelab's components: `c.faults.crash` kills the component and its
# container, and the kubelet's restarts fail until `c.faults.restart` (a real crash would be a
# bug or a bad flag; the kubelet's retries are the same).
#
# ## Challenge
#
# Work in new cells below this one.
#
# 1. Run the death matrix on a cluster without replicas:
#    `DeathMatrix.run(SINGLE_ROWS, single_cluster)` (both from `kubelab.viz.death_matrix`).
#    Which cells change, and which do not?
# 2. In a `Cluster(etcd_members=5)`, partition two members with `c.faults.partition_etcd(...)`.
#    Do writes work? Then partition three. Which side of the partition keeps the leader?
# 3. Give the scheduler replicas a slow API server:
#    `Cluster(replicas={"apiserver": 2, "scheduler": 2})`, then
#    `c.faults.slow_apiserver(6, "apiserver-1")`. Does leadership move? To which server is the
#    new leader connected?
#
# <details><summary>Hints</summary>
#
# 1. Each part is a single point of failure now: what needs it says `no` until the repair,
#    where the HA matrix said `yes` or "after N s". Without the API server only the running
#    pods work; without the scheduler no new pod starts, but kubectl works; without the
#    controller manager a bare pod still starts, but nothing scales. In the kubelet and node
#    rows new pods still start (at once, or after one retry if the first probe was bound to
#    the broken node), because HA is about the control plane; whether scaling waits for the
#    eviction depends on where the new replica was put.
# 2. Three of five is a quorum, so with two cut off, writes go on. With three cut off, the two
#    left are a minority: writes time out on both sides, and the majority side elects the leader.
# 3. A leader connected to the slow server cannot renew within 5 s, so it gives up. The other
#    replica can take over if its own connection goes to the healthy server.
#
# </details>

# %% [markdown]
# ## Summary
#
# - API servers are stateless and active-active: three behind a load balancer, and a dead one
#   is a reconnect, with watches resuming from their resourceVersion.
# - The scheduler and the controller manager are active-standby through a Lease: LeaseDuration
#   15 s, RenewDeadline 10 s, RetryPeriod 2 s. A takeover takes a little over 15 s, judged by
#   each candidate's own observed time. Nothing but time fences an old leader.
# - etcd commits an entry once a majority has it. Three members tolerate one loss, five tolerate
#   two. Without a quorum, writes and quorum reads fail with `etcdserver: request timed out`.
# - When any control-plane part dies, running pods keep running. New pods, scaling and
#   self-healing stop, each depending on which part died.
#
# **Exercises.** Open [exercises/ex07_ha.py](../exercises/ex07_ha.py): 7.1 `try_acquire_or_renew`
# on a Lease, 7.2 Raft's vote and commit rules.
#
# ## Check your work
#
# The cell below grades exercises 7.1 and 7.2 in
# [exercises/ex07_ha.py](../exercises/ex07_ha.py), as `kubelab grade 7` does in a terminal. It
# takes a few seconds. Save the file, then run the cell again after each change: the grader
# reads the file from disk, so there is nothing to re-import.
#
# Nothing solved yet? Then the report says `0/20 points`, and each check says `FAIL ... not
# implemented yet (NotImplementedError: ...)`. That is the starting point, not an error. Open
# the file, replace a `raise NotImplementedError(...)` with your code, save, and run the cell.

# %%
from kubelab.grading import grade

grade("7")

# %% [markdown]
# Run the cell above again after each change you save (Shift+Enter moves here, so no empty cell
# is added). In a workshop, your instructor's report shows as a `note:` at the top of its output.
