# %% [markdown]
# # 07b · A real etcd behind the API server, and a quorum you can kill
#
# Since notebook 01, kubelab's API server has stored every object in `kubelab.store.Store`, an
# etcd stand-in on the simulated clock. The API server only ever used a small slice of etcd's v3
# API: range, txn with a compare on `mod_revision`, watch from a revision with `prev_kv`, and
# compaction. So the same API server can store into a **real etcd**: Debian's `etcd-server` 3.4,
# which `make` installs, running on loopback.
#
# In this lab you put one Deployment on both stores, find its bytes in etcd with `etcdctl`, then
# run a real three-member etcd cluster, kill its leader, kill a second member, and bring them
# back. Notebook 07 simulates the same Raft quorum on the virtual clock; the last section puts
# the two side by side.
#
# **Learning goals.** By the end you can
# - show where a Kubernetes object lives in etcd (`/registry/<resource>/<namespace>/<name>`,
#   nodes under `/registry/minions/`) and that its `resourceVersion` is the key's `mod_revision`;
# - read `etcdctl endpoint status -w table`: the leader, the Raft term and the Raft index;
# - say what happens when one of three members dies (a new leader within about 1-2 s, writes go
#   on) and when two die (writes time out after 7 s, running pods keep running);
# - explain why a member that comes back catches up by itself;
# - tell which behaviours of notebook 07's simulated Raft match a real etcd and which timings
#   differ, and why.
#
# **Prerequisites.** Notebooks 01 (the store) and 02 (the API server); notebook 07 helps for the
# last section. etcd must be installed: `make` does it as root, or
# `sudo apt-get install etcd-server etcd-client`; `make doctor` says whether it is there.
#
# **Time.** About 25 minutes. A real etcd runs on the wall clock, so a few cells wait for real:
# the election after a leader's death (1-2 s) and the write that times out without a quorum (7 s).

# %%
import json
import shutil
import time

from kubelab import Cluster
from kubelab.etcd import INSTALL_HINT

if shutil.which("etcd") is None or shutil.which("etcdctl") is None:
    raise RuntimeError(INSTALL_HINT)

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "nginx:1.27"}]}
"""


def running(c):
    """How many web pods are Running, as `kubectl get pods` would say."""
    return sum(p["status"].get("phase") == "Running" for p in c.get("pods", label_selector="app=web"))


def wait_for_leader(etcd, other_than=None, timeout=10.0):
    """Poll each member's status until they agree on a leader (not `other_than`)."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        leader = etcd.leader()
        if leader is not None and leader != other_than:
            return leader, time.monotonic() - start
        time.sleep(0.05)
    raise TimeoutError(f"no new leader within {timeout} s")


# %% [markdown]
# ## 1. The same Deployment on two stores
#
# `Cluster()` stores into the embedded store, as in every notebook so far. `Cluster(store="etcd")`
# starts one real `etcd` process (kubelab picks free loopback ports and a temporary data
# directory) and hands the API server a backend that talks to it. Nothing else changes: the same
# API server, scheduler, controllers and kubelets.
#
# A real etcd cannot pause while the simulation thinks, so that cluster runs on the **real-time
# clock**: virtual time follows the wall clock, `c.run(1)` takes one real second, and
# `c.run_until(...)` waits up to its timeout in real seconds. The price is determinism: two runs
# no longer give the same trace.
#
# **Predict, then run.** Both clusters get the same Deployment. Which of these will differ
# between them: the pod names, the nodes the pods land on, the `resourceVersion`s?
#
# <details><summary>Answer</summary>
#
# Often nothing you can see in `get pods`: the names come from the cluster's seeded generator and
# the scheduler's tie-break is seeded too. But the order in which things happen on the real-time
# clock can differ, so names and nodes are not guaranteed to match, and the resourceVersions are
# etcd's revisions, which depend on every write the cluster made, heartbeats included, in real
# time.
#
# </details>

# %%
embedded = Cluster(nodes=3, seed=0)
embedded.apply(DEPLOYMENT)
embedded.run_until(lambda: running(embedded) == 3, timeout=60)
print(embedded.kubectl("get pods -o wide"))

# %% [markdown]
# Now the same on a real etcd. The pods take a few real seconds: the image pulls and container
# starts that took virtual seconds above now take as many seconds of wall time.

# %%
c = Cluster(nodes=3, seed=0, store="etcd")
print(c.etcd)
c.apply(DEPLOYMENT)
took = c.run_until(lambda: running(c) == 3, timeout=30)
print(f"3 pods Running after {took:.1f} s of wall time\n")
print(c.kubectl("get pods -o wide"))

# %% [markdown]
# ## 2. Where the objects live
#
# The API server writes each object to the key `/registry/<resource>/<namespace>/<name>` (a
# cluster-scoped object: `/registry/<resource>/<name>`), with the prefixes kube-apiserver uses.
# `c.etcd.etcdctl(...)` runs the real `etcdctl` with `ETCDCTL_API=3` and the members' endpoints,
# and prints the command it ran, so you can type it yourself in a terminal.

# %%
print(c.etcd.etcdctl("get /registry/deployments/ --prefix --keys-only"))
print(c.etcd.etcdctl("get /registry/pods/default/ --prefix --keys-only"))
print(c.etcd.etcdctl("get /registry/minions/ --prefix --keys-only"))
keys = c.etcd.etcdctl("get /registry/ --prefix --keys-only", show=False).split()
print(f"{len(keys)} keys under /registry/, by prefix:",
      sorted({k.split("/")[2] for k in keys}))

# %% [markdown]
# The nodes are not under `/registry/nodes/`: kube-apiserver keeps them under `minions`, the
# name nodes had in the first releases, because renaming a prefix would strand every existing
# cluster's data. The storage factory keeps a short table of such names
# (SpecialDefaultResourcePrefixes in pkg/kubeapiserver/default_storage_factory_builder.go:
# Services are `services/specs`, Endpoints `services/endpoints`); every other resource is its
# plural, without its API group, so Deployments are `/registry/deployments/`. CRDs and custom
# resources, served by apiextensions-apiserver, do carry the group:
# `/registry/apiextensions.k8s.io/customresourcedefinitions/<name>`, `/registry/<group>/<plural>/`.

# %% [markdown]
# **Predict, then run.** `kubectl` shows the Deployment's `metadata.resourceVersion`. Which etcd
# number is it: the key's `create_revision`, its `mod_revision`, or the store's current revision?
#
# <details><summary>Answer</summary>
#
# The key's `mod_revision`: the revision of the last write to that key. The store's revision
# (the response header's) is newer, because the kubelets and controllers have written other keys
# since. That is why a client may compare resourceVersions for equality but should not do
# arithmetic on them.
#
# </details>

# %%
rv = c.kubectl("get deployment web -o jsonpath={.metadata.resourceVersion}")
stored = json.loads(c.etcd.etcdctl("get /registry/deployments/default/web -w json", show=False))
kv = stored["kvs"][0]
print(f"kubectl resourceVersion: {rv}")
print(f"etcd: create_revision={kv['create_revision']} mod_revision={kv['mod_revision']} "
      f"version={kv['version']}; store revision {stored['header']['revision']}")
value = json.loads(c.etcd.etcdctl("get /registry/deployments/default/web --print-value-only",
                                  show=False))
print("stored spec.replicas:", value["spec"]["replicas"],
      "| resourceVersion stored:", "resourceVersion" in value["metadata"])

# %% [markdown]
# The stored object has no `resourceVersion`: the API server sets it from `mod_revision` on every
# read, as k8s.io/apiserver's etcd3 storage does (docs/ARCHITECTURE.md section 2). A real
# kube-apiserver stores most kinds as protobuf, not JSON; kubelab stores JSON so that you can
# read it.
#
# ## 3. Three real members
#
# `Cluster(store="etcd", etcd_members=3)` starts three `etcd` processes, one cluster (one
# `--initial-cluster-token`), each with its own client and peer port on 127.0.0.1. Every write
# goes to the leader, which appends it to its Raft log and commits it once a majority (2 of 3)
# has it on disk.
#
# etcd's timing defaults: a heartbeat every 100 ms (`--heartbeat-interval`); a follower that
# hears nothing for its election timeout (`--election-timeout` 1000 ms, randomised up to twice
# that) campaigns; a proposal that cannot commit fails after 5 s + 2 x the election timeout = 7 s
# with `etcdserver: request timed out`.

# %%
c.close()  # stops the single etcd (by its PID) and removes its data
h = Cluster(nodes=2, seed=0, store="etcd", etcd_members=3)
print(h.etcd)
h.apply(DEPLOYMENT)
took = h.run_until(lambda: running(h) == 3, timeout=30)
print(f"3 pods Running after {took:.1f} s")

# %%
print(h.etcd.etcdctl("endpoint status --cluster -w table"))

# %% [markdown]
# IS LEADER names the leader; RAFT TERM counts elections; RAFT INDEX is the position in the
# replicated log, the same on every member once they have caught up.
#
# **Predict, then run.** The next cell kills the leader's process (SIGKILL, as a crash). How long
# until the two others agree on a new leader? Does `kubectl scale` work afterwards?
#
# <details><summary>Answer</summary>
#
# Usually between 1 and 2 s: a follower waits one randomised election timeout (1-2 s) without a
# heartbeat, campaigns, and wins with the other survivor's vote (2 of 3 is still a majority). The
# term goes up by one. Writes then go on as before: kubelab's backend, like clientv3, moves to
# the next endpoint when one refuses the connection.
#
# </details>

# %%
first = h.etcd.leader()
pid = h.etcd.kill(first)
print(f"killed {first} (pid {pid})")
second, took = wait_for_leader(h.etcd, other_than=first)
print(f"new leader {second} after {took:.2f} s")
print(h.kubectl("scale deployment web --replicas=4"))
h.run_until(lambda: running(h) == 4, timeout=30)
print(h.kubectl("get pods"))

# %% [markdown]
# ## 4. Two of three gone: no quorum
#
# **Predict, then run.** Now kill the new leader too. One member is left. What does
# `kubectl scale` answer, and after how long? What happens to the running pods?
#
# <details><summary>Answer</summary>
#
# After 7 s: `error: no objects passed to scale etcdserver: request timed out`, the words a
# real cluster's kubectl prints, because one member of three cannot commit anything, nor serve
# a read that must be current: scale's first request, its read of the Deployment, times out
# (a plain `kubectl get` prints `Error from server: etcdserver: request timed out`). The pods'
# containers keep running: the kubelets and the container runtime do not need etcd to keep what
# already runs.
#
# </details>

# %%
h.etcd.kill(second)
start = time.monotonic()
print(h.kubectl("scale deployment web --replicas=5"))
print(f"... after {time.monotonic() - start:.1f} s")
for node, runtime in h.runtimes.items():
    print(f"{node} still runs {len(runtime.running())} container(s):",
          ", ".join(f"{ct.name} ({ct.state})" for ct in runtime.running()))

# %% [markdown]
# The surviving member still answers a *serializable* read from its own copy (possibly stale),
# which is what `etcdctl --consistency=s` asks for; a linearizable read would need a leader.

# %%
print(h.etcd.etcdctl("get /registry/deployments/default/web --keys-only --consistency=s"))

# %% [markdown]
# ## 5. A member comes back and catches up
#
# A restarted member reads its write-ahead log from its data directory, rejoins with the same
# identity, and the leader sends it what it missed. Two of three are up again: there is a quorum.

# %%
h.etcd.restart(first)
h.etcd.wait_healthy(names=[first])
leader, took = wait_for_leader(h.etcd)
print(f"{first} is back; leader {leader} after {took:.2f} s")
print(h.kubectl("scale deployment web --replicas=5"))
h.run_until(lambda: running(h) == 5, timeout=30)
h.etcd.restart(second)
h.etcd.wait_healthy(names=[second])
time.sleep(0.5)  # let the leader send the last entries
print(h.etcd.etcdctl("endpoint status --cluster -w table"))

# %% [markdown]
# All three members show the same RAFT INDEX: the restarted ones caught up from the leader, and
# nobody had to copy files.
#
# ## 6. Side by side with notebook 07's simulated Raft
#
# Notebook 07 runs the same quorum on the virtual clock: a Raft cluster of kubelab stores, each
# member a state machine whose messages, election timers and disk are callbacks on the simulated
# clock, so every election replays identically for a seed.
#
# | | notebook 07 (simulated Raft) | this notebook (real etcd 3.4) |
# |---|---|---|
# | one member of three lost | a new leader, writes go on | the same |
# | two lost | writes fail, running pods stay | the same, after etcd's 7 s request timeout |
# | a member returns | it catches up from the leader's log | the same (or from a snapshot) |
# | election time | the configured timeouts, exactly, in virtual time | 1-2 s of wall time, randomised |
# | a write's latency | the modelled disk and network delays | a real round trip and fsync: see `make bench` |
# | repeatability | the same seed, the same story | every run differs |
#
# (A real member far behind gets a snapshot instead of log entries, past `--snapshot-count`.
# The real timings also include the scheduling of three processes on a shared machine.)
#
# The rules are the same because both follow Raft: a majority commits, a leader needs a
# majority's votes, and a log entry once committed is never lost. The timings differ because the
# simulation decides every delay, while a real etcd waits for real timers, a real disk and an
# operating system that schedules three processes on a shared machine.
#
# ## Pitfalls
#
# - **An even number of members buys nothing.** Four members need three for a quorum, so they
#   survive one loss, like three. Run 3 or 5.
# - **`etcdctl` before 3.4 speaks the v2 API unless told.** Set `ETCDCTL_API=3`, as the helper
#   here does: a v2 `get` cannot see the v3 keys the API server wrote.
# - **A member's data directory is its identity.** Restart it on the same directory; a new empty
#   directory is a new member, which must be added with `etcdctl member add` first.
# - **Running pods are not a healthy cluster.** Without a quorum nothing can be scheduled,
#   scaled or healed: the next failure stays.
# - **A cluster on a real etcd is not reproducible.** Use the embedded store for experiments you
#   want to replay, and a real one to see real timings.
#
# ## On a real cluster
#
# On a kubeadm control-plane node, etcd runs as a static pod and needs its TLS certificates:
#
# ```bash
# kubectl -n kube-system get pods -l component=etcd -o wide       # one etcd per control-plane node
# export ETCDCTL_API=3 PKI=/etc/kubernetes/pki/etcd
# E="--cacert $PKI/ca.crt --cert $PKI/server.crt --key $PKI/server.key"
# etcdctl $E --endpoints https://127.0.0.1:2379 endpoint status --cluster -w table
# etcdctl $E get /registry/deployments/default/web --keys-only
# kubectl get deployment web -o jsonpath='{.metadata.resourceVersion}'   # that key's mod_revision
# etcdctl $E member list -w table
# ```
#
# In a kind cluster (notebook 00) there is one etcd, so a quorum lab needs three control-plane
# nodes (`kind create cluster --config` with three `control-plane` roles); kubectl then reports
# `Error from server: etcdserver: request timed out` after two of them are stopped.
#
# Where kubelab simplifies: the members talk plain HTTP on loopback, without TLS; the API server
# reaches etcd through etcd's own gRPC-JSON gateway rather than gRPC, and stores JSON rather
# than protobuf; kubelab's API server does no periodic compaction of its own
# (kube-apiserver compacts every 5 minutes); there is no leasing of keys and no etcd
# authentication.
#
# ## Challenge
#
# Work in new cells below this one (start from `h`, or a fresh `Cluster(store="etcd",
# etcd_members=3)`).
#
# 1. Kill a *follower* instead of the leader. Does the term change? Does `kubectl` notice?
# 2. Put a key with `h.etcd.etcdctl("put /registry/configmaps/default/rogue '{...}'")` holding a
#    ConfigMap's JSON. Does `kubectl get configmaps` show it? What is its resourceVersion?
# 3. Start `Cluster(store="etcd", etcd_members=5)` and find how many members you can kill before
#    writes stop.
# 4. A stalled disk: `h.etcd.pause(name)` stops a member with SIGSTOP (it keeps its sockets and
#    answers nothing); `h.etcd.resume(name)` lets it go on. Pause the leader and run
#    `h.kubectl("scale deployment web --replicas=2")` twice. What do you get, and when?
#
# <details><summary>Hints</summary>
#
# 1. No new term: the leader keeps its majority (2 of 3), and kubectl sees nothing at all.
# 2. Yes, once it is valid JSON of a ConfigMap: the API server reads whatever is under the key,
#    and its resourceVersion is that put's revision. This is why nobody should write to etcd
#    behind the API server's back: no validation, no admission, no audit.
# 3. Two. The third loss leaves 2 of 5, below the majority of 3.
# 4. If kubelab's client was talking to the paused member, the first command waits for the
#    client's deadline (9 s) on its read of the Deployment and prints `error: no objects passed
#    to scale Timeout: request did not complete within requested timeout - context deadline
#    exceeded`; the second goes to the next member, where the others have elected a new leader
#    meanwhile, and succeeds. If it was talking to another member, both succeed after at most
#    the election (1-2 s).
#
# </details>

# %% [markdown]
# ## Summary
#
# - kubelab's API server stores through one small interface, and a real etcd can stand behind
#   it: `Cluster(store="etcd")`, `etcd_members=3`, or `store="etcd://host:port"`.
# - Objects live under `/registry/<resource>/<namespace>/<name>` (nodes: `/registry/minions/`,
#   Services: `/registry/services/specs/`); `resourceVersion` is the key's `mod_revision`.
# - A real etcd forces the real-time clock: runs take wall time and are not reproducible.
# - Three members survive one loss (a new leader in 1-2 s); with two lost, writes fail after 7 s
#   with `etcdserver: request timed out`, while running pods keep running.
# - A member that returns catches up from the leader by itself.
# - The simulated Raft of notebook 07 keeps the same rules, with exact, repeatable timings.
#
# This lab has no graded exercise: it needs real processes, and the grader runs each check in a
# sandbox without them. Close the clusters when you are done; kubelab also stops the etcd
# processes when the kernel exits or restarts.

# %%
h.close()
embedded.close()  # nothing outside the process to release; close() is safe on any cluster
print("etcd members stopped:", h.etcd is None)
