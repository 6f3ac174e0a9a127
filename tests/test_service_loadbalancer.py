"""The simulated cloud-controller-manager: LoadBalancer Services get an address from the
pool, a finalizer that holds their deletion until the balancer is gone, and node membership
kept current; kube-proxy routes the load-balancer IP."""

from __future__ import annotations

from kubelab import Cluster


def test_load_balancer_lifecycle() -> None:
    c = Cluster(nodes=2)
    c.apply({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
             "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                      "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
                          {"name": "web", "image": "nginx:1.27"}]}}}})
    c.apply({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
             "spec": {"type": "LoadBalancer", "selector": {"app": "web"}, "ports": [{"port": 80}]}})
    c.run(10)
    assert "<pending>" in c.kubectl("get svc web")  # no cloud yet: pending forever, as upstream
    ccm = c.add_cloud_controller_manager()
    c.run(5)
    svc = c.get("services", "web")
    ip = svc["status"]["loadBalancer"]["ingress"][0]["ip"]
    assert ip.startswith("203.0.113.")
    assert "service.kubernetes.io/load-balancer-cleanup" in svc["metadata"]["finalizers"]
    assert ip in c.kubectl("get svc web")
    reasons = [e["reason"] for e in c.events() if e["involvedObject"]["name"] == "web"
               and e["involvedObject"]["kind"] == "Service"]
    assert reasons[:2] == ["EnsuringLoadBalancer", "EnsuredLoadBalancer"]
    lb = c.cloud.balancers[next(iter(c.cloud.balancers))]
    assert lb.hosts == ["node-1", "node-2"] and lb.ports == [svc["spec"]["ports"][0]["nodePort"]]
    # kube-proxy routes the load-balancer IP like the NodePort
    c.run(2)
    route = c.route(f"{ip}:80", from_node="node-1")
    assert route.ok and any("loadbalancer IP" in s.rule for s in route.walk.steps)
    # a node leaves the balancer when it is labelled out
    node = c.get("nodes", "node-2", namespace=None)
    node["metadata"].setdefault("labels", {})["node.kubernetes.io/exclude-from-external-load-balancers"] = ""
    c.client.update(node)
    c.run(2)
    assert lb.hosts == ["node-1"]
    # delete: the finalizer holds the Service until the balancer is gone
    c.client.delete("services", "web")
    c.run(5)
    assert not c.exists("services", "web") and not c.cloud.balancers
    assert repr(ccm).startswith("<CloudControllerManager running")
