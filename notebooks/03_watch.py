# %% [markdown]
# # 03 · Watch: list-watch, informers, the workqueue and the controller loop
#
# Every component in Kubernetes "watches": the scheduler watches pods, the ReplicaSet
# controller watches ReplicaSets and pods, each kubelet watches the pods bound to its node.
# None of them polls. They all use the same machinery from client-go, which this notebook
# builds up piece by piece: **list** once, then **watch** from that list's resourceVersion;
# keep a local **cache**; turn events into **keys** on a **workqueue**; **reconcile** each key
# from the cache. Every later component (notebooks 04-06) stands on this.
#
# **Learning goals.** By the end you can
# - say what a Reflector sends to the API server, and why a watch starts from a resourceVersion;
# - explain why an informer's cache answers reads with zero API calls, and why its objects are read-only;
# - show how the workqueue turns a burst of 100 updates into one reconcile;
# - explain *level-triggered* reconciliation and watch an edge-triggered controller stay wrong;
# - recognise `410 Gone` and the relist it forces, and reason about watch fan-out cost.
#
# **Prerequisites.** Notebooks 01 (store: revisions, watch, compaction) and 02 (API server).
#
# **Time.** About 40 minutes.

# %%
from kubelab.client.delta_fifo import DeltaFIFO
from kubelab.client.reflector import Reflector
from kubelab.client.shared_informer import SharedInformerFactory
from kubelab.cluster import Cluster
from kubelab.samples.sample_controller import ConfigMapCopier, EdgeTriggeredCopier, copies_match


def configmap(name, value, namespace="default"):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace}, "data": {"value": value}}


c = Cluster(nodes=0, seed=3, components=[])  # just the store and the API server so far
for name in ("red", "green", "blue"):
    c.client.create(configmap(name, "1"))
c

# %% [markdown]
# ## 1. Why not just poll?
#
# Suppose 30 controllers each ask "give me every pod" once a second in a cluster of 5,000 pods:
# 150,000 objects serialised per second, almost all unchanged. A **watch** turns this around:
# the client opens a long-lived request and the API server pushes only what changed.
#
# ## 2. List, then watch from the list's resourceVersion
#
# A `Reflector` does two things. First a LIST, which returns the objects *and* the store
# revision they were read at (the list's `resourceVersion`). Then a WATCH from exactly that
# revision, so nothing that happens in between is missed. It writes what it learns into a
# `DeltaFIFO`: per object, the list of changes ("deltas") not yet processed.

# %%
fifo = DeltaFIFO()
demo = c.client_for("demo", ["system:masters"])   # its own identity, so we can find its requests
reflector = Reflector(demo, "configmaps", fifo, c.clock, trace=c.trace, name="demo-reflector")
reflector.run()
c.client.create(configmap("yellow", "1"))
c.client.patch("configmaps", "red", {"data": {"value": "2"}})
c.run(1)

print("What the reflector asked the API server for (from the audit log):")
for record in c.apiserver.audit:
    if record.user == "demo":
        print(f"  t={record.time:.1f}s {record.verb:<5} {record.object}  code={record.code}")
print("and what it noted in the trace:")
print(c.trace.text(c.trace.filter(component="demo-reflector")))
print()
for key in fifo.list_keys():
    deltas, _ = fifo.get_by_key(key)
    print(f"{key:<16}", [str(d.type) for d in deltas])

# %% [markdown]
# `red` shows `Replaced` (from the LIST) then `Updated` (from the WATCH): two deltas for one
# key, kept in order. `yellow` arrived through the watch only.
#
# ## 3. The informer: a cache that answers with zero API calls
#
# A `SharedIndexInformer` pops the DeltaFIFO, keeps an **indexer** (the local cache) current,
# and calls your handlers: `on_add`, `on_update`, `on_delete`. Listers read the indexer, never
# the API server. A `SharedInformerFactory` makes sure all controllers in one process share
# one informer, and so one LIST+WATCH, per resource.

# %%
reflector.stop()
client = c.client_for("curious-reader", ["system:masters"])
factory = SharedInformerFactory(client, c.clock, name="reader")
informer = factory.informer_for("configmaps")
factory.start()
c.run(1)
print("synced:", informer.has_synced())
requests_before = client.requests
for _ in range(1000):
    informer.lister.by_namespace("default").get("green")
print("1000 reads from the cache cost", client.requests - requests_before, "API requests")
print("cached:", sorted(o["metadata"]["name"] for o in informer.lister.list()))

# %% [markdown]
# The objects the cache hands out are shared by every handler and lister in the process:
# treat them as **read-only** and `deep_copy` before changing one (client-go asks the same).
#
# ## 4. The workqueue: a burst of updates becomes one reconcile
#
# A controller's event handlers do almost nothing: they put the object's key
# (`namespace/name`) on a **workqueue**. The queue holds each key once, and never hands the same
# key to two workers at once. A worker takes a key and calls `sync_handler(key)`, which reads the
# *current* state from the cache and does whatever is needed. This is the loop of
# kubernetes/sample-controller, and `ConfigMapCopier` below is one: for every ConfigMap `x` it
# keeps a copy `x-copy`.
#
# **Predict, then run.** Once the copier runs, `red` is patched 100 times in a row. About how
# many times does the copier reconcile `default/red`?
#
# <details><summary>Answer</summary>
#
# Once or twice (here 2), not 100. While the key waits in the queue, adding it again changes
# nothing; when a worker takes it, the reconcile reads the newest `red` from the cache.
#
# </details>

# %%
c.add_component("copier", lambda ctx: ConfigMapCopier(ctx, namespace="default"))
c.run(2)
copier = c.components["copier"]
print("syncs so far:", copier.controller.syncs, "| copies match:", copies_match(c.get("configmaps")))

def red_events():
    return sum(1 for r in c.trace.filter(verb="watch-event") if r.object == "configmaps/default/red")

syncs_before, deliveries_before = copier.controller.syncs, red_events()
for i in range(100):
    c.client.patch("configmaps", "red", {"data": {"value": str(100 + i)}})
c.run(5)
deliveries = red_events() - deliveries_before
print(f"100 updates -> {deliveries} watch events delivered -> "
      f"{copier.controller.syncs - syncs_before} reconcile(s) of default/red")
print("the copy has the last value:", c.get("configmaps", "red-copy")["data"])

# %% [markdown]
# The burst arrived as events to every watcher, but the copier's queue already held
# `default/red`, so the key was reconciled once or twice, with the newest state. That is only
# correct because the reconcile looks at the *level* (current state), not at the events.
#
# ## 5. Level-triggered versus edge-triggered
#
# An *edge-triggered* controller acts on each event: "on add, create a copy; on update, copy the
# new data". Here is one next to the level-triggered copier, each in its own namespace. Both are
# down while a source changes, so neither ever sees that update event.
#
# **Predict, then run.** After both restart and 30 s pass, which copy shows `value: 2`?
#
# <details><summary>Answer</summary>
#
# Only the level-triggered one, in `default`. The copy in `edge` keeps `value: 1`, and it stays
# wrong for as long as the source does not change again.
#
# </details>

# %%
c.client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "edge"}})
c.add_component("edge", lambda ctx: EdgeTriggeredCopier(ctx, namespace="edge"))
c.client.create(configmap("shared", "1", "edge"))
c.client.create(configmap("shared", "1"))
c.run(2)
for component in ("edge", "copier"):
    c.faults.crash(component)
for namespace in ("edge", "default"):
    c.client.patch("configmaps", "shared", {"data": {"value": "2"}}, namespace)
for component in ("edge", "copier"):
    c.faults.restart(component)
c.run(30)
for namespace in ("default", "edge"):
    print(f"{namespace:<8} source={c.get('configmaps', 'shared', namespace=namespace)['data']} "
          f"copy={c.get('configmaps', 'shared-copy', namespace=namespace)['data']}")

# %% [markdown]
# After the restart, the edge-triggered controller's fresh informer reports `shared` as
# *added*; it tries to create the copy, gets `AlreadyExists`, and has no reason to look again.
# The level-triggered one compares what should be with what is, and fixes the copy. A
# controller written this way does not care whether it saw every event, only that it eventually
# looks at every key.
#
# ## 6. Lost events, a stale cache, `410 Gone` and the relist
#
# Now the watch itself misbehaves: we drop most events on their way to clients. While that
# lasts, the informer's cache is stale and even a level-triggered controller cannot know.
# When the fault heals, kubelab ends each watch that lost something with `410 Expired` (a
# teaching device: see below), and its reflector does the only safe thing: it lists again.

# %%
c.faults.drop_watch_events(0.9)
for name in ("red", "green", "blue"):
    c.client.patch("configmaps", name, {"data": {"value": "lost"}})
c.run(5)
print("while dropping: copies match?", copies_match(c.get("configmaps")))
c.faults.heal_watch_events()
c.run(30)
print("after healing:  copies match?", copies_match(c.get("configmaps")))
print(c.trace.text([r for r in c.trace.filter(component="copier/reflector")][-4:]))

# %% [markdown]
# **That 410 is kubelab's teaching device, not the API server's.** A real API server cannot
# know that a client missed an event: a watch is one ordered stream on one connection, and the
# server keeps no record of what arrived. Real watches do not lose events one by one. The
# connection breaks, and the reflector watches again from the last resourceVersion it saw,
# getting every later change (or a `410` if that history is compacted). kubelab's
# `drop_watch_events` loses events silently so that you can see a stale cache; on healing it
# ends the starved watches with 410 so that they relist. A real client whose cache goes stale
# for another reason, such as a bug in its own code, stays stale until it relists: when it
# restarts or its watch ends. An informer's *resync* does not help: it replays the local cache
# and asks the server nothing.
#
# The real `410` looks the same. It comes when a watcher falls so far behind that the store has
# *compacted* the history it would resume from (notebook 01). Relists are expensive (every
# object, again), which is why a cluster where controllers relist in a loop feels slow.

# %%
lists_before = c.components["copier"].factory.informer_for("configmaps").reflector.lists
c.faults.break_watches()          # the connection drops...
c.client.create(configmap("purple", "1"))
c.faults.compact()                # ...and the history it would resume from is gone
c.run(30)
reflector = c.components["copier"].factory.informer_for("configmaps").reflector
print("relists caused by the compaction:", reflector.lists - lists_before)
print("copies match:", copies_match(c.get("configmaps")))


# %% [markdown]
# ## 7. The cost of watching: subscribers × changes
#
# The API server keeps one watch on the store per resource and fans each change out to every
# interested watcher. So its work grows with *(number of watchers) × (number of changes)*.
# Count it in the trace: ten more informers, twenty more changes.
#
# **Predict, then run.** Ten new informers start, then `blue` changes 20 times. How many watch
# deliveries of `blue` does the trace record?
#
# <details><summary>Answer</summary>
#
# 240, not 200: 12 watchers × 20 changes. The copier's informer and the `curious-reader` from
# section 3 watch ConfigMaps too.
#
# </details>

# %%
def deliveries():
    return sum(1 for r in c.trace.filter(verb="watch-event") if r.object == "configmaps/default/blue")

watchers = []
for i in range(10):
    f = SharedInformerFactory(c.client_for(f"watcher-{i}", ["system:masters"]), c.clock, name=f"w{i}")
    f.informer_for("configmaps")
    f.start()
    watchers.append(f)
c.run(1)
before = deliveries()
for i in range(20):
    c.client.patch("configmaps", "blue", {"data": {"value": f"fan-{i}"}})
c.run(2)
delivered = deliveries() - before
print(f"20 changes to blue -> {delivered} deliveries = {delivered // 20} watchers x 20 changes")
for f in watchers:
    f.stop()

# %% [markdown]
# This is why adding one more operator to a cluster is not free: its informers add watchers
# to every change of the resources it watches.
#
# ## 8. The same controller against another cluster, over HTTPS
#
# Nothing in `ConfigMapCopier` knows it lives in this notebook's simulation: it was handed a
# client, a clock and an informer factory. Hand it ones that speak HTTPS to a real API server
# and it works there unchanged. `kubelab.serve.spawn` starts a second cluster in its own process
# (`kubelab serve`); `kubelab.serve.connect` reads its kubeconfig and gives a client over HTTPS,
# a clock that follows the wall clock, and informers on both. Point `connect` at
# `~/.kube/config` and the same lines run against a kind cluster.
#
# **Predict, then run.** The copy is deleted behind the copier's back on the other cluster. What
# brings it back, and how many requests does the copier send to repair it?
#
# <details><summary>Answer</summary>
#
# The informer's watch reports the deletion; the event handler enqueues `default/settings`; the
# sync reads the source and the missing copy from the cache (no request) and creates the copy:
# one request. The controller is level-triggered over HTTPS exactly as in the simulation.
#
# </details>

# %%
import kubelab.serve

other = kubelab.serve.spawn(nodes=1, speed=4)      # another cluster, in its own process
remote = kubelab.serve.connect(other.kubeconfig)   # a client over HTTPS, a paced clock, informers
far_copier = ConfigMapCopier(remote.context("copier"), namespace="default")
remote.start()
far_copier.start()


def has_copy() -> bool:                            # asked of the copier's cache: no request
    return any(o["metadata"]["name"] == "settings-copy" for o in far_copier.informer.lister.list())


remote.client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"},
                      "data": {"colour": "green"}})
print("copy made over HTTPS:", await remote.wait_for(has_copy))
requests = remote.client.requests                  # (the copier shares this client)
remote.client.delete("configmaps", "settings-copy")   # behind the copier's back: 1 request of ours
await remote.wait_for(lambda: not has_copy(), timeout=2)
print("back again:", await remote.wait_for(has_copy),
      f"| the copier sent {remote.client.requests - requests - 1} request(s) to repair it")
far_copier.stop()
remote.stop()
print(other.stop().splitlines()[-1])               # kubelab: stopped

# %% [markdown]
# ## 9. Break it yourself
#
# Drop, delay, duplicate or reorder watch events, break the watches, compact the store, crash
# and restart the copier, then run time forward and see whether desired and actual meet again.

# %%
from kubelab.widgets.watch_panel import WatchPanel

WatchPanel(c, component="copier")

# %% [markdown]
# ## Pitfalls
#
# - **Objects from the cache are shared: never change them.** Take a `deep_copy` first.
#   Changing a cached object changes it for every handler and lister in the process, and the
#   cache no longer matches the server.
# - **Act on the state, not on the event.** Handlers only enqueue keys; `sync_handler` reads the
#   current state and works out what to do. Logic in `on_update` breaks the first time an event
#   is missed, as the edge-triggered copier did.
# - **Wait for the caches to sync.** A controller that acts before `has_synced()` sees a
#   half-filled cache. Pods that exist look missing, and it creates them again.
# - **Resync is not relist.** An informer's resync period replays its own cache to the
#   handlers. Only a LIST asks the API server again.
# - **Relists are expensive.** After an API server restart, many clients relist at once. Each
#   extra informer on a busy resource adds to every change's fan-out.
#
# ## On a real cluster
#
# In a kind cluster (notebook 00):
#
# ```bash
# kubectl get configmaps --watch --output-watch-events   # the list, then ADDED / MODIFIED / DELETED
# kubectl get configmaps --watch -v=6                    # a LIST, then ?resourceVersion=N&watch=true
# kubectl get --raw /api/v1/namespaces/default/configmaps | jq .metadata.resourceVersion
# kubectl get --raw '/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=<that number>'
# kubectl get --raw /metrics | grep apiserver_longrunning_requests           # open watches, per resource
# ```
#
# Every client-go controller also exports its queue as metrics: `workqueue_depth`,
# `workqueue_adds_total`, `workqueue_retries_total`, one series per queue. kubelab's controller
# manager counts them too: `print(c.scrape("controller-manager"))` in a cluster that runs one
# (`c.scrape("scheduler")`, `c.scrape("apiserver")` likewise).
#
# Where kubelab simplifies: a watch here is a callback on the virtual clock, not a chunked HTTP
# stream. The reflector always LISTs first: newer client-go can instead ask the watch itself
# to stream the initial state (`sendInitialEvents=true`, the WatchList feature). Event loss is
# a fault you switch on; real watches break as a whole and are resumed (see the note in
# section 6).
#
# ## Challenge
#
# Use `c` from above, in new cells.
#
# 1. Break the watches without compacting (`c.faults.break_watches()`), change a source and run
#    30 s. Does the copier relist? Count its reflector's `lists` before and after.
# 2. The copy in `edge` is still wrong. Make it right without restarting anything or touching the
#    controller's code.
# 3. Make one new `SharedInformerFactory` and ask it for the `configmaps` informer five times,
#    then start it. How many LIST and WATCH requests does its user send (`c.apiserver.audit`)?
#
# <details><summary>Hints</summary>
#
# 1. No relist: after a broken connection, the reflector watches again from the last
#    resourceVersion it saw. Only a `410` makes it LIST.
# 2. Change the source in `edge` once more: the edge-triggered copier handles that update event
#    and copies the new data. It is right again, until the next event it misses.
# 3. One LIST and one WATCH: a factory hands out one shared informer per resource.
#
# </details>

# %% [markdown]
# ## Summary
#
# - A **Reflector** LISTs, then WATCHes from the list's resourceVersion; on a broken watch it
#   resumes from the last version it saw, on `410 Gone` it relists, and it backs off on errors.
# - A **DeltaFIFO** keeps, per key, the changes not yet processed; a **SharedIndexInformer**
#   applies them to its **indexer** and calls the handlers. Listers read the cache: zero API calls.
# - Handlers only **enqueue keys**. The **workqueue** holds a key once and never gives it to two
#   workers at once; failures come back with exponential backoff (5 ms doubling to 1000 s).
# - `sync_handler(key)` is **level-triggered**: it compares desired with actual from the cache, so
#   lost, duplicated or reordered events are repaired by the next look at the key.
# - Watch cost grows with watchers × changes; relists are the expensive recovery path.
# - The same controller runs against any API server over HTTPS (`kubelab.serve.connect`): it only
#   ever held a client, a clock and informers.
#
# **Exercises.** Open [exercises/ex03_watch.py](../exercises/ex03_watch.py): 3.1 the
# workqueue's add/get/done semantics, 3.2 a reflector that recovers from `410 Gone`.
#
# ## Check your work
#
# The cell below grades exercises 3.1 and 3.2 in
# [exercises/ex03_watch.py](../exercises/ex03_watch.py), as `kubelab grade 3` does in a
# terminal. It takes a few seconds. Save the file, then run the cell again after each change:
# the grader reads the file from disk, so there is nothing to re-import.
#
# Nothing solved yet? Then the report says `0/20 points`, and each check says `FAIL ... not
# implemented yet (NotImplementedError: ...)`. That is the starting point, not an error. Open
# the file, replace a `raise NotImplementedError(...)` with your code, save, and run the cell.
# A failed check says what it expected, what it got, a hint, and a `replay:` command that reruns
# just that check. `grade("3", verbose=True)` also shows what your code printed and the end of
# the cluster's trace.
#
# **Next:** [04 · The scheduler](04_scheduler.ipynb), the first real component built on this machinery.

# %%
from kubelab.grading import grade

grade("3")

# %% [markdown]
# Run the cell above again after each change you save (Shift+Enter moves here, so no empty cell
# is added). In a workshop, your instructor's report shows as a `note:` at the top of its output.
