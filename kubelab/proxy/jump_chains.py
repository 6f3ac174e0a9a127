"""The jumps from the built-in chains to kube-proxy's (pkg/proxy/iptables/proxier.go
iptablesJumpChains and iptablesKubeletJumpChains): not part of the iptables-restore input,
which only replaces kube-proxy's own chains, but ensured one by one (EnsureChain, then
EnsureRule with Prepend) at the start of each full sync. Prepending each in turn leaves them
in reverse order in the built-in chain: INPUT starts with the last one ensured.

The canary chains (KUBE-PROXY-CANARY in mangle, nat and filter) are the iptables Monitor's
(pkg/util/iptables monitor): created when kube-proxy starts, so that a flush of the tables
can be noticed.

kubelab departs: no kubelet creates KUBE-FIREWALL (and KUBE-KUBELET-CANARY) before kube-proxy
starts, so kube-proxy's duplicate jump to KUBE-FIREWALL is the one ensured last, first in INPUT
and OUTPUT; on a real node the kubelet's came first and stays last.
"""

from __future__ import annotations

from kubelab.proxy.iptables import IPTables

__all__ = ["CANARY_CHAIN", "JUMP_CHAINS", "KUBELET_JUMP_CHAINS", "ensure_canary_chains",
           "ensure_jump_chains"]

CANARY_CHAIN = "KUBE-PROXY-CANARY"
_NEW = ("-m", "conntrack", "--ctstate", "NEW")
# iptablesJumpChains: (table, dstChain, srcChain, comment, extraArgs)
JUMP_CHAINS: tuple[tuple[str, str, str, str, tuple[str, ...]], ...] = (
    ("filter", "KUBE-EXTERNAL-SERVICES", "INPUT", "kubernetes externally-visible service portals", _NEW),
    ("filter", "KUBE-EXTERNAL-SERVICES", "FORWARD", "kubernetes externally-visible service portals",
     _NEW),
    ("filter", "KUBE-NODEPORTS", "INPUT", "kubernetes health check service ports", ()),
    ("filter", "KUBE-SERVICES", "FORWARD", "kubernetes service portals", _NEW),
    ("filter", "KUBE-SERVICES", "OUTPUT", "kubernetes service portals", _NEW),
    ("filter", "KUBE-FORWARD", "FORWARD", "kubernetes forwarding rules", ()),
    ("filter", "KUBE-PROXY-FIREWALL", "INPUT", "kubernetes load balancer firewall", _NEW),
    ("filter", "KUBE-PROXY-FIREWALL", "OUTPUT", "kubernetes load balancer firewall", _NEW),
    ("filter", "KUBE-PROXY-FIREWALL", "FORWARD", "kubernetes load balancer firewall", _NEW),
    ("nat", "KUBE-SERVICES", "OUTPUT", "kubernetes service portals", ()),
    ("nat", "KUBE-SERVICES", "PREROUTING", "kubernetes service portals", ()),
    ("nat", "KUBE-POSTROUTING", "POSTROUTING", "kubernetes postrouting rules", ()),
)
# iptablesKubeletJumpChains: duplicates of the kubelet's (pkg/kubelet/kubelet_network_linux.go)
KUBELET_JUMP_CHAINS: tuple[tuple[str, str, str, str, tuple[str, ...]], ...] = (
    ("filter", "KUBE-FIREWALL", "INPUT", "", ()), ("filter", "KUBE-FIREWALL", "OUTPUT", "", ()))


def ensure_jump_chains(iptables: IPTables) -> None:
    """The start of a full sync: EnsureChain and EnsureRule (prepended) for each of
    iptablesJumpChains, then iptablesKubeletJumpChains, from the built-in chains to kube-proxy's."""
    for table, dst, src, comment, extra in (*JUMP_CHAINS, *KUBELET_JUMP_CHAINS):
        iptables.ensure_chain(table, dst)
        iptables.ensure_rule(True, table, src, *extra,
                             *(["-m", "comment", "--comment", comment] if comment else []), "-j", dst)


def ensure_canary_chains(iptables: IPTables) -> None:
    """Monitor's first step: the canary chain in each table it watches (mangle, nat, filter)."""
    for table in ("mangle", "nat", "filter"):
        iptables.ensure_chain(table, CANARY_CHAIN)
