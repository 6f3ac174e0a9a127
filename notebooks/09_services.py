# %% [markdown]
# # 09 · Services: EndpointSlices, kube-proxy's rules, cluster DNS
#
# A Deployment without a Service is not reachable: its pods come and go, and each new one has a
# new IP. A **Service** gives them one stable virtual IP (the ClusterIP) and a DNS name. Four
# parts make that work, and none of them calls another:
#
# - the **API server** allocates the ClusterIP (and NodePorts) when the Service is created;
# - the **EndpointSlice controller** lists the pods behind the Service, with their readiness;
# - **kube-proxy**, on every node, turns Services and EndpointSlices into iptables rules;
# - **cluster DNS** answers `web.default.svc.cluster.local` with the ClusterIP.
#
# A request to the name lands on one ready pod because the packet walks those rules on the
# client's node. This is where the readiness probes of notebook 06 finally change something a
# user can feel.
#
# **Learning goals.** By the end you can
# - create a Service and say where its ClusterIP and NodePort come from, and what errors look like;
# - read an EndpointSlice: addresses, ports, and the ready, serving and terminating conditions;
# - read a node's `iptables-save` and follow a packet through KUBE-SERVICES, KUBE-SVC and KUBE-SEP;
# - explain the probability ladder that spreads requests evenly;
# - measure dropped requests during a rollout, and remove them with a readiness probe and a
#   preStop delay;
# - predict what a crashed kube-proxy does to traffic;
# - resolve Service names with the search path, and use a headless Service;
# - isolate pods with a default-deny NetworkPolicy, let one client through, and read why a
#   packet was dropped.
#
# **Prerequisites.** Notebooks 03 (informers), 05 (controllers, Deployments) and 06 (probes,
# graceful deletion).
#
# **Time.** About 55 minutes.

# %%
import copy

from IPython.display import SVG

from kubelab.api.errors import ApiError
from kubelab.cluster import Cluster
from kubelab.cluster.dns import candidates
from kubelab.viz import plot_traffic

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
      containers:
      - name: web
        image: "nginx:1.27"
        ports: [{name: http, containerPort: 80}]
"""
SERVICE = """
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: http}]
"""

# %% [markdown]
# ## 1. Expose the Deployment
#
# Three nodes, every component, and a `client` pod to send requests from. `port: 80` is what
# clients use; `targetPort: http` is the container port *named* http (80, where nginx listens),
# looked up in each pod.

# %%
c = Cluster(nodes=3, seed=0)
c.apply(WEB)
print(c.apply(SERVICE))
c.apply("""
apiVersion: v1
kind: Pod
metadata: {name: client}
spec:   # `sleep`: busybox's own command, sh, would exit at once without a terminal
  containers: [{name: sh, image: "busybox:1.36", command: [sleep, "3600"]}]
""")
c.run(30)
print(c.kubectl("get svc,pods -o wide"))

# %% [markdown]
# The API server picked `CLUSTER-IP` from the service range, 10.96.0.0/12, at random above the
# first 256 addresses (those are kept for addresses you choose yourself). Nothing on any node
# *has* that address: it exists only as rules, as you will see.
#
# **Predict, then run.** A second Service asks for the same ClusterIP. What happens, and in
# whose words?
#
# <details><summary>Answer</summary>
#
# The create is refused with 422 Invalid and nothing is stored: `spec.clusterIPs: Invalid value:
# [...]: failed to allocate IP ...: provided IP is already allocated`. Each address belongs to
# one Service; the API server's allocator holds them, and rebuilds them from the stored Services
# when it restarts.
#
# </details>

# %%
taken = c.get("services", "web")["spec"]["clusterIP"]
for spec in ({"clusterIP": taken, "ports": [{"port": 80}]},
             {"type": "NodePort", "ports": [{"port": 80, "nodePort": 29999}]}):
    try:
        c.client.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web2"}, "spec": spec})
    except ApiError as err:
        print(err.code, err.message)

# %% [markdown]
# ## 2. The EndpointSlice
#
# The EndpointSlice controller (in kube-controller-manager) watches Services and pods. For each
# Service with a selector it writes EndpointSlices named `<service>-<random>`, labelled
# `kubernetes.io/service-name`, owned by the Service, with at most 100 endpoints each.

# %%
print(c.kubectl("get endpointslices"))
eps = c.get("endpointslices", label_selector="kubernetes.io/service-name=web")[0]
print("ports:", eps["ports"])
for e in eps["endpoints"]:
    print(e["addresses"], e["conditions"], e["targetRef"]["name"], e["nodeName"])

# %% [markdown]
# `ports` holds the *resolved* target port: the number the pods give the name `http`, not the
# Service's port (both are 80 here; a pod template may change its number and the Service follows).
# Each endpoint carries three conditions: **ready** (the pod's Ready condition, and not
# terminating), **serving** (the Ready condition alone) and **terminating** (the pod is being
# deleted).
#
# ## 3. A pod turns unready: the slice, then the rules
#
# A pod joins the Service by its labels alone. This one has the label `app: web`, a readiness
# probe every second, and a script that makes the probe fail after 20 s. On a real cluster a
# change takes a moment to reach every node (watch deliveries, the sync itself); here we say
# so with a fault: kube-proxy's watch events arrive 1 s late.

# %%
c.apply("""
apiVersion: v1
kind: Pod
metadata:
  name: flaky
  labels: {app: web}
  annotations: {kubelab.dev/behavior: "unready=20"}
spec:
  containers:
  - name: web
    image: "nginx:1.27"
    ports: [{name: http, containerPort: 80}]
    readinessProbe: {httpGet: {path: /, port: 80}, periodSeconds: 1, failureThreshold: 1}
""")
c.faults.delay_watch_events(1.0, user="system:serviceaccount:kube-system:kube-proxy")
c.run(10)
ip = c.get("pods", "flaky")["status"]["podIP"]


def seen(c, ip):
    ready = next(x["status"] for x in c.get("pods", "flaky")["status"]["conditions"] if x["type"] == "Ready")
    in_slice = any(e["addresses"] == [ip] and e["conditions"]["ready"] for s in c.get("endpointslices")
                   for e in s["endpoints"])
    in_rules = f"--to-destination {ip}:80" in c.node("node-1").iptables_save()
    return ready, in_slice, in_rules


last = None
for _ in range(300):
    c.run(0.05)
    now = seen(c, ip)
    if now != last:
        print(f"t={c.clock.now:6.2f}s  pod Ready={now[0]:<5}  ready in slice={now[1]!s:<5}  "
              f"in node-1's rules={now[2]}")
        last = now
c.faults.heal_watch_events()

# %% [markdown]
# **Predict, then run.** In the output above, the pod went unready, then the slice said so, then
# node-1's rules dropped it. What would a client on node-1 have seen in the gap?
#
# <details><summary>Answer</summary>
#
# Requests still DNATed to the unready pod until node-1's kube-proxy heard of the change and
# synced: here the second of watch latency. kube-proxy also syncs at most once per
# `min-sync-period` (1 s) after a burst of two, so a busy cluster adds up to a second more. A
# readiness probe is not instantaneous either: `periodSeconds` × `failureThreshold` passes
# before the pod is even marked unready.
#
# </details>
#
# ## 4. EndpointSlices: who is behind the Service
#
# The controller keeps churn low: a changed endpoint updates its slice in place; new endpoints
# fill slices that have room; an emptied slice is deleted, except the last one (a Service with
# no pods keeps one empty slice). Its reconciler is a plain function of the Service, its pods and
# its slices (`kubelab.controllers.endpointslice.reconcile`), so we can ask it about 250 made-up
# pods without running them.

# %%
from kubelab.controllers.endpointslice import reconcile

print(c.kubectl("delete pod flaky"))
service = c.get("services", "web")
template = c.get("pods", label_selector="app=web")[0]


def fake_pod(i, ready=True):
    pod = copy.deepcopy(template)
    pod["metadata"].update(name=f"web-{i:03d}", uid=f"uid-{i}")
    pod["status"]["podIP"] = f"10.244.{1 + i // 200}.{i % 200 + 2}"
    pod["status"]["podIPs"] = [{"ip": pod["status"]["podIP"]}]
    pod["status"]["conditions"] = [{"type": "Ready", "status": "True" if ready else "False"}]
    return pod


plan = reconcile(service, [fake_pod(i) for i in range(250)], [])
print("create:", [len(s["endpoints"]) for s in plan.create], "update:", len(plan.update))
slices = plan.create
for i, s in enumerate(slices):  # what the API server would make of them
    s["metadata"].update(name=f"web-s{i}", uid=f"s{i}")
again = reconcile(service, [fake_pod(i, ready=i != 7) for i in range(250)], slices)
print("pod 7 unready -> create:", len(again.create), "update:", [s["metadata"]["name"] for s in again.update],
      "delete:", len(again.delete))

# %% [markdown]
# Exercise 9.1 asks you to write this reconcile: ready and terminating pods, at most 100 per
# slice, as few writes as you can.
#
# ## 5. kube-proxy's rules on one node
#
# kube-proxy runs on every node: a DaemonSet pod in kube-system (`kube-proxy-<suffix>`), which
# kubelab's component `kube-proxy/node-1` stands for, with the identity kubeadm gives it, the
# ServiceAccount `system:serviceaccount:kube-system:kube-proxy`. It watches Services and
# EndpointSlices and keeps its own chains in the node's `nat` and `filter` tables.
# `iptables_save()` is what `iptables-save` prints logged into the node: the kernel's tables,
# each rule given back in iptables-save's own form. Read it:

# %%
print(c.node("node-1"))
print(c.node("node-1").iptables_save())

# %% [markdown]
# Most of it is the `nat` table. Read it top down, as a packet does:
# - `PREROUTING` (packets from pods) and `OUTPUT` (the node's own) jump to **KUBE-SERVICES**;
# - **KUBE-SERVICES** matches the ClusterIP and port: `-d <ClusterIP> --dport 80 -j KUBE-SVC-...`;
# - **KUBE-SVC-…** first marks traffic from outside the pod network for masquerade
#   (`KUBE-MARK-MASQ`), then picks an endpoint: `-m statistic --mode random --probability`;
# - **KUBE-SEP-…** (one per endpoint) DNATs to `ip:80`.
#
# The chain names are 16 characters of base32(sha256("default/web:http" + "tcp")): stable, so
# a sync that changes nothing rewrites the same names. The `filter` table holds the rest: the
# REJECT of a Service without endpoints (none here yet), KUBE-FORWARD (accept what is marked
# for masquerade), and the jumps into kube-proxy's chains from INPUT, FORWARD and OUTPUT. The
# KUBE-PROXY-CANARY chains are empty on purpose: kube-proxy creates them at start and checks
# they still exist, to notice when something flushed the tables.
#
# That is not the text kube-proxy wrote. Each sync it feeds iptables-restore its own chains
# only (the jumps from the built-in chains it adds one by one, before), and the kernel keeps
# each rule as fields and matches, not as words. Compare the KUBE-SVC chain in both:

# %%
node = c.node("node-1")
svc_chain = next(line.split()[1] for line in node.iptables_restore_input().splitlines()
                 if line.startswith("-A KUBE-SVC-"))
for title, text in (("what kube-proxy restored", node.iptables_restore_input()),
                    ("what iptables-save shows", node.iptables_save())):
    print(title)
    print("\n".join(line for line in text.splitlines() if line.startswith(f"-A {svc_chain} ")))

# %% [markdown]
# - the address and protocol live in the rule's entry, so iptables-save prints them first
#   (`! -s 10.244.0.0/16 -d <ClusterIP>/32 -p tcp`, with the prefix length), then the matches
#   in the order given: kube-proxy wrote `-m comment ... -m tcp -p tcp -d <ClusterIP> --dport 80`;
# - `-m statistic` stores the probability as a 32-bit fraction of 2³¹: kube-proxy writes
#   `%0.10f` (0.3333333333), which comes back as 0.33333333349;
# - targets come back with their defaults: `-j REJECT` as
#   `-j REJECT --reject-with icmp-port-unreachable`, `MARK --or-mark 0x4000` as
#   `MARK --set-xmark 0x4000/0x4000`; comments are quoted only when they hold more than
#   letters, digits, `_` and `-` (`"default/web:http"`).
#
# On a real node you meet both: `iptables-save` over SSH, and the restore input in kube-proxy's
# log at `-v=9` ("Restoring iptables"), or in the expected text of upstream's proxier tests.
#
# **Predict, then run.** With three endpoints kube-proxy writes the probabilities
# 0.3333333333, 0.5000000000 and nothing (the node shows 0.33333333349 and 0.50000000000). Why
# not 1/3 on every rule?
#
# <details><summary>Answer</summary>
#
# The rules are tried in order and the first match wins. The first catches 1/3 of all packets;
# the second sees only the remaining 2/3, and must take half of *those* (1/3 of all); the last
# takes whatever is left (1/3). With 1/3 on every rule the shares would be 1/3, 2/9 and 4/9.
# Exercise 9.2 asks you to write this ladder.
#
# </details>

# %%
route = c.route("web", from_pod="client")
print(route)

# %%
from collections import Counter

print(Counter(c.route("web", from_pod="client").pod for _ in range(600)))


# %% [markdown]
# ## 6. A rollout, as users feel it
#
# `c.traffic(...)` is a load generator: 10 requests a second to the Service from every node in
# turn, each walked through that node's rules to a pod, and counted as failed when nothing
# serves there. We roll a new image three times: without a readiness probe, with one, and with
# one plus a `preStop` sleep. The containers take 3 s to start answering (`startup=3`), and we
# give endpoint changes a second to reach each kube-proxy, as a real cluster's watch latency
# does (`delay_watch_events`).

# %%
def rollout(probe, pre_stop):
    d = Cluster(nodes=2, seed=0)
    container = {"name": "web", "image": "nginx:1.27", "ports": [{"name": "http", "containerPort": 80}]}
    template = {"metadata": {"labels": {"app": "web"}, "annotations": {"kubelab.dev/behavior": "startup=3"}},
                "spec": {"containers": [container]}}
    manifest = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": template}}
    if probe:
        container["readinessProbe"] = {"httpGet": {"path": "/", "port": 80}, "periodSeconds": 1}
    if pre_stop:
        container["lifecycle"] = {"preStop": {"sleep": {"seconds": 5}}}
    d.apply(manifest)
    d.apply(SERVICE)
    d.run(20)
    d.faults.delay_watch_events(1.0, user="system:serviceaccount:kube-system:kube-proxy")
    traffic = d.traffic("web", rate=10)
    d.run(5)
    new = copy.deepcopy(manifest)
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.28"
    d.apply(new)
    d.run(50)
    traffic.stop()
    return traffic


plain = rollout(probe=False, pre_stop=False)
print(plain.summary())
SVG(plot_traffic(plain).svg)

# %% [markdown]
# Two kinds of failure. *The application does not answer yet*: without a readiness probe a pod
# is Ready the moment its container starts, so it gets traffic during its 3 s start-up. *No
# route to host*: an old pod was deleted, its container stopped at once (SIGTERM), and the
# rules still sent traffic there until every kube-proxy heard of the change.

# %%
probed = rollout(probe=True, pre_stop=False)
print(probed.summary())

# %% [markdown]
# **Predict, then run.** The readiness probe removed the start-up failures. What will a 5 s
# `preStop` sleep do to the rest?
#
# <details><summary>Answer</summary>
#
# The kubelet runs the preStop hook *before* SIGTERM. For those 5 s the old container keeps
# serving while the pod is already terminating: the EndpointSlice says `ready: false,
# terminating: true` and every kube-proxy drops it. When SIGTERM finally comes, no rule points
# there any more. Zero failures. This is the classic zero-downtime recipe: readiness probe,
# preStop delay longer than the propagation, and a `terminationGracePeriodSeconds` that covers
# both.
#
# </details>

# %%
both = rollout(probe=True, pre_stop=True)
print(both.summary())

# %% [markdown]
# ## 7. A crashed kube-proxy: stale rules
#
# kube-proxy's rules live in the node's kernel, not in kube-proxy. Crash it on node-1, then scale
# the Deployment down: node-1 keeps sending traffic to pods that are gone.

# %%
c.apply(SERVICE)
t = c.traffic("web", rate=30)
c.run(5)
c.faults.crash("kube-proxy/node-1")
print(c.kubectl("scale deployment web --replicas=1"))
c.run(20)
print(t.summary())
print(c.node("node-1"))

# %%
c.faults.restart("kube-proxy/node-1")
c.run(10)
t.stop()
print(t.summary())
SVG(plot_traffic(t).svg)

# %% [markdown]
# Only requests that entered through node-1 failed: the other nodes' kube-proxies rewrote their
# rules at once. A restarted kube-proxy lists everything and syncs, and the errors stop.
#
# ## 8. DNS and a headless Service
#
# Every pod's `/etc/resolv.conf` (dnsPolicy ClusterFirst) points at the cluster DNS and searches
# its own namespace first. The kubelet writes it into each container (its `clusterDNS` and
# `clusterDomain` settings, pkg/kubelet/network/dns); here is the `client` pod's:

# %%
print(c.kubectl("exec client -- cat /etc/resolv.conf"))
for name in ("web", "web.default", "web.default.svc.cluster.local", "nope"):
    print(c.resolve(name))
external = candidates("example.com", "default")  # what a pod's resolver tries, in order
print(f"example.com: {len(external) - 1} failed lookups ({', '.join(external[:-1])}), then {external[-1]}")

# %% [markdown]
# `options ndots:5`: a name with fewer than 5 dots is tried with each search suffix first, so
# `web` costs one lookup and `example.com` one failed lookup per search domain before the real
# one (the cell's last line counts them).
#
# A **headless** Service (`clusterIP: None`) has no virtual IP and no rules: DNS answers with
# the ready pods' own addresses, and the client picks one.

# %%
c.apply("""
apiVersion: v1
kind: Service
metadata: {name: web-direct}
spec:
  clusterIP: None
  selector: {app: web}
  ports: [{name: http, port: 80}]
""")
c.kubectl("scale deployment web --replicas=3")
c.run(20)
print(c.kubectl("get svc"))
print(c.resolve("web-direct"))
print("in node-1's rules:", "web-direct" in c.node("node-1").iptables_save())

# %% [markdown]
# ### The answers come from the coredns pods
#
# Who listens at the `nameserver` address? On kind, as on any kubeadm cluster, **CoreDNS**: a
# Deployment `coredns` of two pods in `kube-system`, behind a Service still called `kube-dns`
# (after the DNS server CoreDNS replaced, so that old manifests keep working). kubeadm gives
# that Service a fixed ClusterIP, the tenth address of the service range, and tells every
# kubelet the same address. A lookup in a pod is a packet to that ClusterIP, which kube-proxy's
# rules send on to one of the coredns pods; CoreDNS watches Services and EndpointSlices and
# answers from them.

# %%
print(c.kubectl("get svc -n kube-system kube-dns"))
print(c.kubectl("get pods -n kube-system -l k8s-app=kube-dns -o wide"))
print(c.kubectl("get endpointslices -n kube-system -l kubernetes.io/service-name=kube-dns"))
print(c.kubectl("exec client -- nslookup web"))


# %% [markdown]
# **Predict, then run.** Scale the coredns Deployment to zero. What do `nslookup web` and
# `wget web` print in `client` now? And a `wget` to web's ClusterIP?
#
# <details><summary>Answer</summary>
#
# The lookup gets no answer at all: the kube-dns Service has no endpoints, so the query goes
# nowhere and busybox gives up, `;; connection timed out; no servers could be reached`, and
# `wget` says `bad address 'web'`. The Service itself still works: its rules are on the nodes,
# and the ClusterIP answers. "The network is down" is often "DNS is down". As soon as one
# coredns pod is ready again, names resolve again.
#
# </details>

# %%
def first_line(out):
    """kubectl exec's output, an error message whole, or nginx's page as its <title> line."""
    lines = str(out).splitlines()
    title = [line for line in lines if "<title>" in line]
    return title[0] if title and out.exit_code == 0 else str(out).strip()


print(c.kubectl("scale deployment coredns -n kube-system --replicas=0"))
c.run(10)
print(c.kubectl("get pods -n kube-system -l k8s-app=kube-dns"))
print(c.kubectl("exec client -- nslookup web"))
print(first_line(c.kubectl("exec client -- wget -qO- -T 2 web")))
web_ip = c.get("services", "web")["spec"]["clusterIP"]
print(f"wget {web_ip}:", first_line(c.kubectl(f"exec client -- wget -qO- -T 2 {web_ip}")))
print(c.kubectl("scale deployment coredns -n kube-system --replicas=2"))
back = c.run_until(lambda: c.resolve("web").found, timeout=60)
print(f"names resolve again {back:.1f} s after the scale, once a coredns pod is ready:")
print(c.kubectl("get pods -n kube-system -l k8s-app=kube-dns -o wide"))
print(first_line(c.kubectl("exec client -- wget -qO- -T 2 web")))

# %% [markdown]
# ## 9. NetworkPolicy: kindnet drops what a policy denies
#
# Every pod can reach every other pod until a **NetworkPolicy** selects it. A policy isolates
# the pods its `podSelector` picks, for each of its `policyTypes` (Ingress, plus Egress when it
# has egress rules); an isolated pod accepts only what one rule of one of the policies
# selecting it allows. The API server only stores policies: the network plugin enforces them.
# kind's plugin, kindnet, runs kube-network-policies on every node: the first packet of each
# connection, after kube-proxy's DNAT, goes to it, and it drops the packet if the policies of
# the source pod (Egress) or of the destination pod (Ingress) deny it. A dropped packet is not
# refused: nothing answers, and the client times out.
#
# An `api` Service in front of one nginx pod (nginx listens on port 80), and a `frontend` pod
# beside `client`. Both clients reach it. Then a default deny for the namespace:
# `podSelector: {}` picks every pod, and no ingress rule allows anything.

# %%
c.apply("""
apiVersion: v1
kind: Pod
metadata: {name: frontend, labels: {role: frontend}}
spec:
  containers: [{name: sh, image: "busybox:1.36", command: [sleep, "3600"]}]
---
apiVersion: v1
kind: Pod
metadata: {name: api, labels: {app: api}}
spec:
  containers: [{name: nginx, image: "nginx:1.27", ports: [{name: http, containerPort: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: api}
spec:
  selector: {app: api}
  ports: [{port: 80, targetPort: http}]
""")
c.run(10)


def wget_api(source):
    """busybox's wget in pod `source`: the page's title, or wget's error."""
    out = str(c.kubectl(f"exec {source} -- wget -qO- http://api"))
    return next(line for line in out.splitlines() if "<title>" in line or line.startswith("wget:"))


for source in ("client", "frontend"):
    print(source, "->", wget_api(source))
DENY = """
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: default-deny-ingress}
spec:
  podSelector: {}
  policyTypes: [Ingress]
"""
print(c.apply(DENY))
c.run(1)
print(c.kubectl("get networkpolicy"))
print(c.route("api", from_pod="client"))
print(c.kubectl("exec client -- wget -qO- http://api"))

# %% [markdown]
# The route walks kube-proxy's rules as before, to a pod, then kindnet names the policy that
# dropped the packet. busybox's wget waits for an answer that never comes and gives up.
# `kubectl describe networkpolicy` says how the API server understood a policy: which pods it
# selects, what each rule allows, and which directions it does not affect at all.
#
# **Predict, then run.** Now a second policy selects the `api` pod and allows ingress from pods
# labelled `role=frontend` on the port named `http`. Out of 20 requests each, how many from
# `frontend` and how many from `client` get through? Does the default deny still matter?
#
# <details><summary>Answer</summary>
#
# All 20 from `frontend`, none from `client`. Policies add up: the `api` pod is isolated by
# both, and one rule of either that matches lets the packet through; `client` matches none.
# The default deny still isolates every other pod of the namespace (the `web` pods, and
# `client` and `frontend` themselves, accept nothing now).
#
# </details>

# %%
print(c.apply("""
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: allow-frontend}
spec:
  podSelector: {matchLabels: {app: api}}
  ingress:
  - from: [{podSelector: {matchLabels: {role: frontend}}}]
    ports: [{port: http}]
"""))
c.run(1)
print(c.kubectl("describe networkpolicy allow-frontend"))
for source in ("frontend", "client"):
    routes = [c.route("api", from_pod=source) for _ in range(20)]
    print(f"from {source}: {sum(r.ok for r in routes)} of {len(routes)} got through")
print(c.route("api", from_pod="frontend"))
for source in ("client", "frontend"):
    print(source, "->", wget_api(source))

# %% [markdown]
# A `podSelector` alone in `from` picks pods of the policy's own namespace; add a
# `namespaceSelector` to reach across namespaces, or an `ipBlock` (with `except`) for addresses
# outside the cluster. `ports` takes numbers, names (looked up in the protected pod, as
# `targetPort` is) and ranges (`endPort`). Delete both policies and everything flows again:

# %%
print(c.kubectl("delete networkpolicy default-deny-ingress allow-frontend"))
c.run(1)
print("client reaches api again:", c.route("api", from_pod="client").ok)

# %% [markdown]
# ## Pitfalls
#
# - **A Service selects by labels only.** Any pod with matching labels joins it, even one you
#   started by hand for debugging (the `flaky` pod above). Check `kubectl get endpointslices -l
#   kubernetes.io/service-name=web` when traffic goes somewhere odd.
# - **`targetPort` by name must match a container port's name.** A pod without that port name
#   is left out of the slice's ports; a typo gives a Service with endpoints and no port.
# - **Running is not Ready, and Ready is not instant.** Without a readiness probe a pod gets
#   traffic while it starts; with one, it leaves the Service only after `periodSeconds` ×
#   `failureThreshold`, plus the propagation to every node.
# - **Deletion races the rules.** SIGTERM reaches the container before every node's kube-proxy
#   has forgotten the pod. Use a `preStop` sleep (a few seconds) and handle SIGTERM gracefully.
# - **A crashed kube-proxy fails silently.** Nothing in the API looks wrong; only traffic through
#   that node misbehaves. Watch kube-proxy's health on every node.
# - **A NetworkPolicy is silent.** A denied connection times out; nothing is logged in the API.
#   And a default deny on Egress also blocks DNS (UDP 53 to kube-dns) unless a rule allows it.
# - **`ndots:5` multiplies lookups of external names.** Write `example.com.` (a final dot) or
#   lower ndots in `dnsConfig` for pods that call many external hosts.
#
# ## On a real cluster
#
# In a kind cluster (notebook 00):
#
# ```bash
# kubectl create deployment web --image=nginx:1.27 --replicas=3
# kubectl expose deployment web --port=80 --target-port=80     # a ClusterIP Service
# kubectl get svc web; kubectl get endpointslices -l kubernetes.io/service-name=web -o yaml
# kubectl run client --rm -it --image=busybox:1.36 -- sh        # then: wget -qO- web; cat /etc/resolv.conf
# kubectl -n kube-system get svc kube-dns; kubectl -n kube-system get pods -l k8s-app=kube-dns -o wide
# kubectl -n kube-system scale deployment coredns --replicas=0   # then nslookup web times out; back to 2
# docker exec learn-worker iptables-save -t nat | grep -E 'KUBE-(SERVICES|SVC|SEP)'   # the rules
# kubectl -n kube-system get pods -l k8s-app=kube-proxy -o wide   # one per node (a DaemonSet)
# kubectl -n kube-system logs -l k8s-app=kube-proxy | grep -i sync
# kubectl create service clusterip web-direct --clusterip=None --tcp=80:80   # headless
# kubectl apply -f deny.yaml; kubectl run x --rm -it --image=busybox:1.36 -- wget -T 5 -qO- web   # times out
# kubectl -n kube-system logs -l app=kindnet | grep -i policy    # kindnet's network-policy controller
# ```
#
# Where kubelab simplifies: there are no packets, conntrack or real DNS server. A route is a
# walk over the rules kube-proxy wrote, with seeded draws for `-m statistic`; a pod "answers"
# when its simulated container runs and its script would pass a readiness probe. DNS lookups are
# not packets either: with a coredns pod ready, the resolver reads the API when it is asked
# (CoreDNS would watch it, with a cache), and with none it times out at once, where busybox
# would wait for its retries. kube-proxy writes all of its chains on
# each sync, IPv4 only, without the firewall chains for `loadBalancerSourceRanges`; a node's
# `iptables-save` has no packet counters (always `[0:0]`), no `# Generated by` lines and none of
# the kubelet's chains (KUBE-KUBELET-CANARY, KUBE-IPTABLES-HINT); ClusterIPs
# are kept in the API server's memory (rebuilt from the Services at start) instead of
# IPAddress objects. kindnet's policy verdicts read pods, namespaces and policies through the
# API when a packet comes, not from informers on each node; DNS lookups are not packets here, so
# an Egress default deny does not stop them as it would on kind.
#
# ## Challenge
#
# Work in new cells below this one.
#
# 1. Make `web` a `NodePort` Service with `externalTrafficPolicy: Local` and scale it to 1.
#    Walk a packet from node-1 to each node's IP and the NodePort
#    (`c.route(f"{c.node(n).ip}:{port}", from_node="node-1")`). Which nodes answer, and why is
#    that the point of `Local`?
# 2. Set `sessionAffinity: ClientIP` on `web` and route 20 requests from `client`. How many
#    different pods answer? Find the `-m recent` rules in node-1's table.
# 3. Drop kube-proxy's watch events
#    (`c.faults.drop_watch_events(user="system:serviceaccount:kube-system:kube-proxy")`),
#    scale `web` to 5 and run 30 s. What do the rules show? Heal with `c.faults.heal_watch_events()`.
# 4. Isolate `client` for egress. A NetworkPolicy selects pods by label, not by name, so
#    label it first (`c.kubectl("label pod client role=client")`), then select
#    `role=client` with `policyTypes: [Egress]` and no rules. Which direction does
#    `c.route("api", from_pod="client")` name? Then add an egress rule to pods `app=api` on
#    port 80 and route again.
#
# <details><summary>Hints</summary>
#
# 1. The node with the pod DNATs to it; the others DROP it (`has no local endpoints`), except
#    node-1 itself, whose own traffic is sent to the cluster-wide chain ("route LOCAL traffic").
#    `Local` keeps the client's source address and skips a second hop, at the price of uneven
#    spread.
# 2. One: the first request picks an endpoint and `-m recent --set` remembers the client; later
#    ones match `--rcheck` first, for 10800 s.
# 3. The rules still list the old endpoints: kube-proxy never heard of the new pods. After the
#    heal its watch ends with 410 Gone, it relists, and the next sync adds them.
# 4. Egress: `no rule allows egress from pod default/client`, judged on the source pod before
#    the destination's Ingress. The rule `egress: [{to: [{podSelector: {matchLabels: {app: api}}}],
#    ports: [{port: 80}]}]` lets it out again (the port is the pod's, 80, not the Service's).
#    On kind the egress deny would also stop DNS lookups (UDP 53); kubelab's DNS is not packets.
#
# </details>

# %% [markdown]
# ## Summary
#
# - A Service is a stable virtual IP and name for the pods its selector picks; the API server
#   allocates the ClusterIP (10.96.0.0/12) and NodePorts (30000-32767) and refuses taken ones.
# - The EndpointSlice controller lists the pods behind it, at most 100 per slice, with ready,
#   serving and terminating; it updates in place and writes as little as it can.
# - kube-proxy turns Services and slices into iptables rules on every node: KUBE-SERVICES →
#   KUBE-SVC (the 1/n, 1/(n-1), … ladder) → KUBE-SEP (DNAT). It syncs at most once a second
#   after a burst, so changes reach traffic with a lag.
# - Zero-downtime rollouts need a readiness probe and a preStop delay: the rules learn late.
# - A crashed kube-proxy leaves stale rules; only its node's traffic suffers.
# - DNS: `<svc>.<ns>.svc.cluster.local`, search path from the pod's namespace, ndots 5; a headless
#   Service answers with the ready pods' addresses.
# - A NetworkPolicy isolates the pods it selects; their traffic is then only what a rule of one
#   of their policies allows. The network plugin (kindnet) drops the rest, and clients time out.
#
# **Exercises.** Open [exercises/ex09_services.py](../exercises/ex09_services.py): 9.1 the
# EndpointSlice reconcile, 9.2 the KUBE-SVC probability ladder.
#
# ## Check your work
#
# The cell below grades exercises 9.1 and 9.2 in
# [exercises/ex09_services.py](../exercises/ex09_services.py), as `kubelab grade 9` does in a
# terminal. It takes a few seconds. Save the file, then run the cell again after each change:
# the grader reads the file from disk, so there is nothing to re-import.
#
# Nothing solved yet? Then the report says `0/20 points`, and each check says `FAIL ... not
# implemented yet (NotImplementedError: ...)`. That is the starting point, not an error. Open
# the file, replace a `raise NotImplementedError(...)` with your code, save, and run the cell.
# A failed check says what it expected, what it got, a hint, and a `replay:` command that reruns
# just that check. `grade("9", verbose=True)` also shows what your code printed and the end of
# the cluster's trace.

# %%
from kubelab.grading import grade

grade("9")

# %% [markdown]
# Run the cell above again after each change you save (Shift+Enter moves here, so no empty cell
# is added). In a workshop, your instructor's report shows as a `note:` at the top of its output.
