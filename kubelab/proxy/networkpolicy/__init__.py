"""kindnet's NetworkPolicy enforcement, in kube-network-policies' pkg/networkpolicy shape:
networkpolicy.py (the policy evaluator), controller.py (evaluatePacket: the verdict on a
connection's first packet, after kube-proxy's DNAT). It sits in kubelab.proxy beside the
node's iptables because both are the node's packet path; the wiring
(kubelab/cluster/network.py) asks it about every packet it walks."""

from kubelab.proxy.networkpolicy.controller import Packet, Verdict, evaluate_packet, get_pod_assigned_to_ip
from kubelab.proxy.networkpolicy.networkpolicy import Listers

__all__ = ["Listers", "Packet", "Verdict", "evaluate_packet", "get_pod_assigned_to_ip"]
