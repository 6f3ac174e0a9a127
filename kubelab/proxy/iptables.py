"""A node's iptables, as kube-proxy sees it: the text it restores, the rules parsed back, and
a packet walked through them.

Chain names follow pkg/proxy/iptables/proxier.go: KUBE-SVC-/KUBE-SVL-/KUBE-EXT-/KUBE-SEP- and
16 characters of the base32 of a SHA-256 (portProtoHash, servicePortEndpointChainName).

The walk is the kernel's part, kept small: the nat table's PREROUTING (a pod's packet enters
the node from its veth; OUTPUT for the node's own processes), then the filter table's FORWARD
or INPUT when no DNAT happened. Matches understood: -d, -s (with !), -p/-m tcp/udp, --dport,
-m addrtype --dst-type/--src-type LOCAL, -m statistic --mode random --probability, -m recent
--rcheck/--set (session affinity) and -m mark. The rules live on the node, not in kube-proxy:
a crashed kube-proxy leaves them in place.
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import random
import re
from dataclasses import dataclass, field

__all__ = ["IPTables", "Rule", "Step", "Walk", "parse_rules", "port_proto_hash",
           "service_port_endpoint_chain_name"]

MASQ_MARK = "0x4000"


def port_proto_hash(service_port_name: str, protocol: str) -> str:
    """portProtoHash: base32(sha256(servicePortName + protocol))[:16]."""
    digest = hashlib.sha256((service_port_name + protocol).encode()).digest()
    return base64.b32encode(digest).decode()[:16]


def service_port_endpoint_chain_name(service_port_name: str, protocol: str, endpoint: str) -> str:
    """servicePortEndpointChainName: KUBE-SEP- + base32(sha256(name + protocol + ip:port))[:16]."""
    digest = hashlib.sha256((service_port_name + protocol + endpoint).encode()).digest()
    return "KUBE-SEP-" + base64.b32encode(digest).decode()[:16]


@dataclass
class Rule:
    """One `-A CHAIN ...` line, its matches parsed."""

    text: str
    chain: str
    target: str = ""
    matches: dict[str, tuple[bool, str]] = field(default_factory=dict)  # option -> (negated, value)
    target_args: dict[str, str] = field(default_factory=dict)

    @property
    def comment(self) -> str:
        return self.matches.get("--comment", (False, ""))[1]


def parse_rules(text: str) -> dict[str, dict[str, list[Rule]]]:
    """iptables-save text -> {table: {chain: [rules]}} (chains declared with `:` too)."""
    tables: dict[str, dict[str, list[Rule]]] = {}
    table: dict[str, list[Rule]] = {}
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("*"):
            table = tables.setdefault(line[1:], {})
        elif line.startswith(":"):
            table.setdefault(line[1:].split()[0], [])
        elif line.startswith("-A "):
            rule = _parse_rule(line)
            table.setdefault(rule.chain, []).append(rule)
    return tables


_WORD = re.compile(r'"([^"]*)"|(\S+)')


def _parse_rule(line: str) -> Rule:
    # iptables-save quotes only comments, and never escapes inside them: no need for shlex
    words = [quoted if quoted or bare == "" else bare for quoted, bare in _WORD.findall(line)]
    rule = Rule(line, words[1])
    i, negate, after_target = 2, False, False
    while i < len(words):
        word = words[i]
        if word == "!":
            negate = True
        elif word == "-j":
            rule.target, after_target = words[i + 1], True
            i += 1
        elif word.startswith("-"):
            value = ""
            if i + 1 < len(words) and not words[i + 1].startswith("-") and words[i + 1] != "!":
                value = words[i + 1]
                i += 1
            if after_target:
                rule.target_args[word] = value
            elif word != "-m":
                rule.matches[word] = (negate, value)
            negate = False
        i += 1
    return rule


@dataclass
class Step:
    table: str
    chain: str
    rule: str     # the rule's text, as iptables-save prints it


@dataclass
class Walk:
    """Where one packet went: the rules it matched, and what came of it."""

    steps: list[Step] = field(default_factory=list)
    verdict: str = "ACCEPT"         # DNAT, REJECT, DROP or ACCEPT (left as it was)
    destination: str = ""           # after DNAT: ip:port
    masquerade: bool = False

    @property
    def pod_ip(self) -> str:
        return self.destination.rsplit(":", 1)[0] if self.destination else ""


@dataclass
class Packet:
    src: str
    dst: str
    dport: int
    protocol: str = "tcp"
    mark: int = 0


class IPTables:
    """One node's tables: kube-proxy restores them, the walk reads them. They belong to the
    node (its kernel), so they outlive a kube-proxy crash; a reboot empties them."""

    def __init__(self, node: str, node_ip: str) -> None:
        self.node, self.node_ip = node, node_ip
        self.text = ""
        self.tables: dict[str, dict[str, list[Rule]]] = {}
        self.restored_at: float | None = None
        self.recent: dict[str, dict[str, float]] = {}   # xt_recent lists: name -> src -> seen

    def restore(self, text: str, now: float) -> None:
        """iptables-restore: the node's rules are now exactly text."""
        self.text, self.tables, self.restored_at = text, parse_rules(text), now

    def flush(self) -> None:
        """The node rebooted: the kernel's tables are empty until kube-proxy syncs again."""
        self.text, self.tables, self.restored_at = "", {}, None
        self.recent.clear()

    def iptables_save(self) -> str:
        return self.text

    # ------------------------------------------------------------------ the walk

    def walk(self, packet: Packet, rand: random.Random, now: float, *, local: bool = False) -> Walk:
        """Follow packet through nat PREROUTING (OUTPUT if local), then filter."""
        result = Walk()
        self._chain("nat", "OUTPUT" if local else "PREROUTING", packet, rand, now, result, 0)
        if result.verdict == "DNAT":
            return result
        self._chain("filter", "OUTPUT" if local else
                    ("INPUT" if self._is_local(packet.dst) else "FORWARD"), packet, rand, now, result, 0)
        return result

    def _chain(self, table: str, chain: str, packet: Packet, rand: random.Random, now: float,
               result: Walk, depth: int) -> bool:
        """True when a terminal target ended the walk."""
        if depth > 32:
            raise RuntimeError(f"iptables: chain loop at {chain}")
        for rule in self.tables.get(table, {}).get(chain, []):
            if not self._matches(rule, packet, rand, now):
                continue
            result.steps.append(Step(table, chain, rule.text))
            if "--set" in rule.matches:
                self.recent.setdefault(rule.matches["--name"][1], {})[packet.src] = now
            target = rule.target
            if target == "DNAT":
                result.verdict, result.destination = "DNAT", rule.target_args["--to-destination"]
                return True
            if target in ("REJECT", "DROP", "ACCEPT"):
                result.verdict = target
                return True
            if target == "RETURN":
                return False
            if target == "MARK":
                args = rule.target_args
                value = int(args.get("--or-mark") or args.get("--xor-mark") or "0", 16)
                packet.mark = packet.mark ^ value if "--xor-mark" in args else packet.mark | value
                continue
            if target == "MASQUERADE":
                result.masquerade = True
                continue
            if target and self._chain(table, target, packet, rand, now, result, depth + 1):
                return True
        return False

    def _matches(self, rule: Rule, packet: Packet, rand: random.Random, now: float) -> bool:
        m = rule.matches
        checks: list[bool] = []
        for option, value in (("-d", packet.dst), ("-s", packet.src)):
            if option in m:
                negated, cidr = m[option]
                checks.append(_in(value, cidr) != negated)
        if "-p" in m:
            checks.append(m["-p"][1] == packet.protocol)
        if "--dport" in m:
            checks.append(m["--dport"][1] == str(packet.dport))
        if "--dst-type" in m:
            checks.append(self._is_local(packet.dst))
        if "--src-type" in m:
            checks.append(self._is_local(packet.src))
        if "--mark" in m:
            negated, spec = m["--mark"]
            value, _, mask = spec.partition("/")
            checks.append(((packet.mark & int(mask or value, 16)) == int(value, 16)) != negated)
        if not all(checks):
            return False
        if "--rcheck" in m:
            seen = self.recent.get(m["--name"][1], {}).get(packet.src)
            seconds = float(m["--seconds"][1]) if "--seconds" in m else float("inf")
            if seen is None or now - seen > seconds:
                return False
        if "--probability" in m:  # drawn last, and only for a packet that matched the rest
            return rand.random() < float(m["--probability"][1])
        return True

    def _is_local(self, ip: str) -> bool:
        return ip in (self.node_ip, "127.0.0.1")


def _in(ip: str, cidr: str) -> bool:
    try:
        return ipaddress.ip_address(ip) in ipaddress.ip_network(cidr, strict=False)
    except ValueError:
        return False
