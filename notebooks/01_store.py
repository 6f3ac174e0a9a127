# %% [markdown]
# # 01 · The store: etcd, the cluster's single source of truth
#
# Everything a Kubernetes cluster knows (every Pod, Deployment, Node, Secret, role) lives in
# one place: etcd. The API server is stateless and keeps nothing of its own; controllers,
# the scheduler and kubelets keep only caches. If you back up etcd you have backed up the
# cluster, and if etcd is slow, everything is slow.
#
# In this notebook you drive `kubelab.store.Store`, our etcd stand-in, by hand, with the
# semantics the real one has.
#
# **Learning goals.** By the end you can
# - explain etcd's global *revision* and the per-key `create_revision`, `mod_revision` and `version`;
# - update a key safely when someone else may write it too (compare-and-swap, *optimistic concurrency*);
# - watch a prefix from a past revision and say what *compaction* does to a late watcher;
# - take a snapshot, restore it, and see a damaged snapshot refused;
# - follow the chain "slow disk → slow etcd → slow API → slow cluster".
#
# **Prerequisites.** Python basics; you have run `make lab`. No Kubernetes experience needed.
#
# **Time.** About 30 minutes.

# %%
import tempfile
from pathlib import Path

from kubelab.sim import Clock, Trace
from kubelab.store import CompactedError, Compare, PutRequest, RangeRequest, SnapshotError, Store

clock = Clock()                      # virtual time: nothing here waits for the wall clock
trace = Trace(lambda: clock.now)
store = Store(clock, trace=trace)
store

# %% [markdown]
# ## 1. Keys, values and revisions
#
# etcd is a key-value store. Kubernetes uses keys like `/registry/pods/<namespace>/<name>`
# and stores each object encoded (JSON here, protobuf in a real cluster) as the value. The part
# after `/registry/` is usually the resource's plural, but not always: nodes live under
# `/registry/minions/` (their name before they were called nodes) and Services under
# `/registry/services/specs/`.
#
# Every change to the store gets the next number of one global counter, the **revision**. An
# empty store is at revision 1; the first write makes it 2. Each key also remembers the
# revision that created it (`create_revision`), the revision of its last change
# (`mod_revision`) and how many times it was written since it was created (`version`).
#
# **Predict, then run.** The cell writes `colour`, then `size`, then `colour` again, into the
# empty store. Which revision does each write get? What are `colour`'s `create_revision`,
# `mod_revision` and `version` afterwards?
#
# <details><summary>Answer</summary>
#
# Revisions 2, 3 and 4 (an empty store is at 1). `colour`: created at 2, last modified at 4,
# version 2. `size`: 3, 3, 1. The revision counts every change in the store, the version only
# the changes of one key.
#
# </details>

# %%
r1 = store.put("/registry/configmaps/default/colour", b'{"data": {"colour": "blue"}}')
r2 = store.put("/registry/configmaps/default/size", b'{"data": {"size": "M"}}')
r3 = store.put("/registry/configmaps/default/colour", b'{"data": {"colour": "green"}}')
print("revisions of the three writes:", r1.revision, r2.revision, r3.revision)
for kv in store.range("/registry/configmaps/", prefix=True).kvs:
    print(kv.key, "create", kv.create_revision, "mod", kv.mod_revision, "version", kv.version)

# %% [markdown]
# The store keeps history: you can read the world as it was at an older revision. This is
# what lets a watcher that was away ask "what changed since revision N?".

# %%
then = store.range("/registry/configmaps/default/colour", revision=r1.revision).kvs[0]
now = store.range("/registry/configmaps/default/colour").kvs[0]
print("at revision", r1.revision, "->", then.value)
print("now         ->", now.value)

# %% [markdown]
# In Kubernetes, an object's `metadata.resourceVersion` *is* this `mod_revision`: the API server
# copies it from etcd. You will see it again in notebook 02.
#
# ## 2. Two writers, one key: optimistic concurrency
#
# Two controllers read the same object, each changes it, each writes it back. Without care the
# second write silently erases the first (a *lost update*). Kubernetes does not lock. Each
# writer says instead: "write this **only if** the key's `mod_revision` is still the one I read".
# etcd checks and writes in one step, a transaction (`txn`). The loser finds out and retries
# from a fresh read.

# %%
key = "/registry/configmaps/default/counter"
store.put(key, b"0")

def read(key):
    kv = store.range(key).kvs[0]
    return int(kv.value), kv.mod_revision

# Both writers read the same state...
a_value, a_rev = read(key)
b_value, b_rev = read(key)
# ...writer A commits first, on the condition that nobody wrote since it read.
a = store.txn([Compare.mod_revision(key, "=", a_rev)], [PutRequest(key, str(a_value + 1).encode())])
# Writer B tries the same thing with its now-stale revision.
b = store.txn([Compare.mod_revision(key, "=", b_rev)], [PutRequest(key, str(b_value + 1).encode())],
              [RangeRequest(key)])
print("A succeeded:", a.succeeded, "| B succeeded:", b.succeeded)
print("B's failure branch read the current value:", b.responses[0].kvs[0].value)


# %% [markdown]
# B lost, and was told so. The fix is a loop: read again, apply the change again, try again.
# The API server turns a failed compare into `409 Conflict` ("the object has been modified;
# please apply your changes to the latest version and try again"), and client-go's
# `retry_on_conflict` is exactly this loop.

# %%
def increment(key):
    attempts = 0
    while True:
        attempts += 1
        value, rev = read(key)
        result = store.txn([Compare.mod_revision(key, "=", rev)], [PutRequest(key, str(value + 1).encode())])
        if result.succeeded:
            return attempts

print("B retried and needed", increment(key), "attempt(s); counter is now", read(key)[0])

# %% [markdown]
# No locks means nobody can die while holding one. The price: every writer must be ready to
# lose and try again.
#
# ## 3. Watch: "tell me what changes"
#
# Polling ("give me every pod, every second") from dozens of controllers would crush etcd.
# Instead a client opens a **watch** on a key or prefix. With a `start_revision` in the past,
# etcd first replays history from there, then streams new changes as they happen, in order,
# with nothing missing.
#
# Watch events arrive *later*, on the clock, never inside the writer's call: in the real
# system they travel over the network.
#
# **Predict, then run.** Two watchers, one from revision 2 (`r1`) and one from now; then `size`
# is deleted. What has each heard right after the delete, and what after one virtual second?
#
# <details><summary>Answer</summary>
#
# Right after the delete, nothing: no event has been delivered yet. One second later the late
# joiner has heard the whole history from revision 2 (every put, then the delete), in revision
# order. The live watcher has heard only the delete.
#
# </details>

# %%
heard = {"late-joiner": [], "live": []}

def listener(name):
    def on_response(response):
        if response.canceled:
            heard[name].append(f"CANCELED (compacted at {response.compact_revision})")
        for event in response.events:
            heard[name].append(f"{event.type} {event.kv.key.rsplit('/', 1)[-1]}@{event.kv.mod_revision}")
    return on_response

store.watch("/registry/configmaps/", prefix=True, start_revision=r1.revision,
            callback=listener("late-joiner"))
store.watch("/registry/configmaps/", prefix=True, callback=listener("live"))
store.delete_range("/registry/configmaps/default/size")
print("right after the delete:", heard)
clock.run(until=clock.now + 1)
for name, lines in heard.items():
    print(name, "heard:", lines)

# %% [markdown]
# The late joiner heard the whole story from revision 2; the live watcher heard only the delete.
#
# ## 4. Compaction: history is not kept forever
#
# etcd cannot keep every old revision forever, so history is **compacted**: everything older
# than a revision is forgotten (each key keeps its latest value). A watcher that asks to start
# from before that point cannot be served: etcd cancels the watch and says where history now
# begins. In Kubernetes this surfaces as `410 Gone: too old resource version`, and the client
# must **relist** (notebooks 02 and 03).

# %%
compact_at = store.revision
store.compact(compact_at)
try:
    store.range("/registry/configmaps/default/colour", revision=r1.revision)
except CompactedError as err:
    print("reading the past:", err)

heard["too-late"] = []
store.watch("/registry/configmaps/", prefix=True, start_revision=r1.revision,
            callback=listener("too-late"))
clock.run(until=clock.now + 1)
print("too-late heard:", heard["too-late"])

# %% [markdown]
# Watchers that were already caught up lose nothing: compaction only removes history nobody
# still needs to replay.
#
# ## 5. Snapshots: the etcd backup *is* the cluster backup
#
# A snapshot writes the whole store to one file with a checksum. Restoring it brings back every
# object at the same revision. A damaged file is refused, and the running store is untouched.

# %%
folder = Path(tempfile.mkdtemp())
size = store.save_snapshot(folder / "backup.db")
restored = Store.restore(folder / "backup.db", clock)
print(f"snapshot: {size} bytes; restored store at revision {restored.revision} "
      f"(original {store.revision}) with {len(restored)} keys")

damaged = bytearray((folder / "backup.db").read_bytes())
damaged[len(damaged) // 2] ^= 0xFF
(folder / "broken.db").write_bytes(bytes(damaged))
try:
    Store.restore(folder / "broken.db", clock)
except SnapshotError as err:
    print("refused:", err)

# %% [markdown]
# ## 6. A slow disk makes everything slow
#
# etcd commits a write only after it is safely on disk (an `fsync`, on a majority of members).
# So disk latency *is* write latency. Turn the knob: each write now occupies the disk for half a
# virtual second, writes queue behind each other, and watchers hear about them late.
#
# **Predict, then run.** Four writes in a row with a 0.5 s disk: how long does each writer wait?
#
# <details><summary>Answer</summary>
#
# 0.5, 1.0, 1.5 and 2.0 s: each write waits for the ones before it to reach the disk. A burst of
# writes makes the last writer wait for all of them.
#
# </details>

# %%
store.latency = 0.5
heard["slow"] = []
store.watch("/registry/configmaps/", prefix=True, callback=listener("slow"))
start = clock.now
waits = [store.put(f"/registry/configmaps/default/burst-{i}", b"{}").latency for i in range(4)]
print("each writer waited:", waits)
clock.run(until=start + 1.0)
print("after 1 s the watcher has heard", len(heard["slow"]), "of 4 events")
clock.run(until=start + 2.5)
print("after 2.5 s:", len(heard["slow"]), "of 4")
store.latency = 0.0

# %% [markdown]
# The chain in a real cluster: slow disk → slow etcd writes → slow API responses → controllers
# and kubelets fall behind → the whole cluster feels slow. When a cluster is slow for no
# visible reason, look at etcd's disk latency first. In notebook 02 the same knob slows every
# API request.
#
# ## 7. Break it yourself
#
# Write a few keys, compact, raise the disk latency and run time forward. The list at the
# bottom shows what each watcher above has heard so far.

# %%
from kubelab.widgets import StorePanel

StorePanel(store, clock, heard=heard)

# %% [markdown]
# ## Pitfalls
#
# - **`resourceVersion` is opaque.** Here it is etcd's `mod_revision`, but clients may only
#   compare two of them for equality or hand one back to the API server. Do not compute with
#   it, or sort objects by it.
# - **A retry must read again.** Retrying a compare-and-swap with the revision you read first
#   fails again, forever. Every attempt starts from a fresh read.
# - **Compaction does not shrink the file.** It forgets history, and a `defrag` gives the disk
#   space back. etcd has a space quota (2 GiB by default, `--quota-backend-bytes`). When the
#   database outgrows it, etcd raises a `NOSPACE` alarm and serves only reads and deletes: no
#   object in the cluster can be created or changed.
# - **A snapshot holds every Secret.** Unless encryption at rest is configured, Secrets sit in
#   etcd and in its snapshots only base64-encoded. Protect backups like the keys they contain.
#
# ## On a real cluster
#
# In a kind cluster (notebook 00), etcd runs as a static pod on the control-plane node, and its
# image contains `etcdctl`:
#
# ```bash
# kubectl create configmap colour --from-literal=colour=blue
# kubectl get configmap colour -o jsonpath='{.metadata.resourceVersion}{"\n"}'
# ETCD="kubectl -n kube-system exec etcd-learn-control-plane -- etcdctl --endpoints=https://127.0.0.1:2379
#   --cacert=/etc/kubernetes/pki/etcd/ca.crt --cert=/etc/kubernetes/pki/etcd/server.crt
#   --key=/etc/kubernetes/pki/etcd/server.key"
# $ETCD get /registry/configmaps/default/colour -w json   # create_revision, mod_revision, version
# $ETCD get /registry/ --prefix --keys-only | head         # every object of the cluster, one key each
# $ETCD get /registry/minions/ --prefix --keys-only        # the nodes: kube-apiserver's old name
# $ETCD watch /registry/configmaps/ --prefix               # edit the ConfigMap from another terminal
# $ETCD endpoint status -w table                           # database size, raft term and index
# $ETCD snapshot save /var/lib/etcd/backup.db              # a backup; `etcdutl snapshot restore` reads it
# ```
#
# You never need to compact by hand: the API server compacts etcd every 5 minutes
# (`--etcd-compaction-interval`).
#
# Where kubelab simplifies: one etcd member, so there is no Raft, leader or quorum (a real
# cluster runs 3 or 5 members, and a write commits once a majority has it on disk). Values are
# JSON, not protobuf. Leases are recorded but never expire, and there is no quota, alarm or
# defrag. `latency` stands in for fsync time. The snapshot file is kubelab's own format (JSON,
# not etcd's bolt database), checked with a sha256 as etcd's is.
#
# ## Challenge
#
# Use `store` and `clock` from above, in new cells.
#
# 1. Give a key `version` 1 again without any compaction. What happened to its `create_revision`?
# 2. Write a **create** that fails when the key already exists, as the API server's create does:
#    one `txn` whose compare is `Compare.create_revision(key, "=", 0)`. Run it twice.
# 3. Compact at some revision `r`. Which reads still work: at `r - 1`, at `r`? Can a watch start at `r`?
#
# <details><summary>Hints</summary>
#
# 1. Delete the key and put it again: a new life. `version` is 1 and `create_revision` is the
#    revision of the new put.
# 2. A key that does not exist has create revision 0, so the first txn succeeds and the second
#    does not (`succeeded` is False). The API server answers that second create with
#    `409 AlreadyExists`.
# 3. Compacting at `r` keeps revision `r`: reads and watches from `r` on work, and from `r - 1`
#    they fail with `mvcc: required revision has been compacted`.
#
# </details>

# %% [markdown]
# ## Summary
#
# - etcd is the one place the cluster's state lives; Kubernetes keys look like `/registry/pods/ns/name`.
# - Every write gets the next global **revision**; keys carry `create_revision`, `mod_revision`, `version`.
# - **Optimistic concurrency**: write only if `mod_revision` is unchanged, else re-read and retry.
#   No locks.
# - A **watch** replays history from a revision, then streams changes in order.
# - **Compaction** forgets old history; a watcher that needs it is canceled and must start over (relist).
# - A **snapshot** is a full backup; a damaged one is refused.
# - A slow disk slows every write and every watcher: "etcd slow → everything slow".
#
# **Exercises.** Open [exercises/ex01_store.py](../exercises/ex01_store.py): 1.1 a
# compare-and-swap update that survives conflicting writers, 1.2 a watcher that resumes from a
# revision and relists after compaction.
#
# ## Check your work
#
# The cell below grades exercises 1.1 and 1.2 in
# [exercises/ex01_store.py](../exercises/ex01_store.py), as `kubelab grade 1` does in a
# terminal. It takes a few seconds. Save the file, then run the cell again after each change:
# the grader reads the file from disk, so there is nothing to re-import.
#
# Nothing solved yet? Then the report says `0/20 points`, and each check says `FAIL ... not
# implemented yet (NotImplementedError: ...)`. That is the starting point, not an error. Open
# the file, replace a `raise NotImplementedError(...)` with your code, save, and run the cell.
# A failed check says what it expected, what it got, a hint, and a `replay:` command that reruns
# just that check. `grade("1", verbose=True)` also shows what your code printed and the end of
# the cluster's trace.
#
# **Next:** [02 · The API server](02_apiserver.ipynb), the only door to this store.

# %%
from kubelab.grading import grade

grade("1")

# %% [markdown]
# Run the cell above again after each change you save (Shift+Enter moves here, so no empty cell
# is added). In a workshop, your instructor's report shows as a `note:` at the top of its output.
