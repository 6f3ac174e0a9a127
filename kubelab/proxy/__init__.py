"""kube-proxy in iptables mode: server.py (the component and its informers),
bounded_frequency_runner.py (when it syncs), changetrackers.py (what it knows of Services
and EndpointSlices), proxier.py (those maps to the iptables-restore input), jump_chains.py
(the jumps to kube-proxy's chains), iptables.py (a node's tables and the packet walk),
iptables_save.py (a rule as iptables-save prints it back). docs/ARCHITECTURE.md section 1:
a component like the others."""

from kubelab.proxy.iptables import IPTables, Walk, port_proto_hash, service_port_endpoint_chain_name
from kubelab.proxy.proxier import write_service_to_endpoint_rules
from kubelab.proxy.server import KubeProxy

__all__ = ["IPTables", "KubeProxy", "Walk", "port_proto_hash", "service_port_endpoint_chain_name",
           "write_service_to_endpoint_rules"]
