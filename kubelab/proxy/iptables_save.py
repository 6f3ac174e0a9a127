"""iptables-save's view of a rule: what `iptables-save` prints on a node for a rule that
kube-proxy restored, as the kernel gives it back (iptables/iptables-save.c and the
extensions' save functions in libxtables; iptables-save(8)).

The kernel keeps a rule as its ipt_entry (addresses, interfaces, protocol) and a list of
match and target blobs, not as the words that were restored, so iptables-save prints it
back in its own canonical form:
- the entry's fields first, in the order `-s -d -i -o -p` (each after its `!` when
  negated), addresses with their prefix length: `-d 10.96.0.10` comes back `-d 10.96.0.10/32`;
- then the matches in the order they were given (`-m comment`, `-m tcp`, ...), each with its
  own options in the extension's print order: `-m tcp` is printed where it was given, its
  `--dport` after it, and `-p tcp` has moved to the front;
- strings (the comment) are quoted only when they hold a character outside [A-Za-z0-9_-]
  (xtables_save_string): `--comment ns1/svc1:p80` comes back `--comment "ns1/svc1:p80"`;
- `-m statistic --probability p` is stored as the 32-bit fixed-point lround(p * 2^31) and
  printed back with %.11f of that over 2^31: 0.3333333333 comes back 0.33333333349;
- `-m recent` prints its defaults (`--mask 255.255.255.255 --rsource`) and puts `--name`
  after `--seconds`/`--reap`;
- targets print their defaults too: a bare `-j REJECT` comes back
  `-j REJECT --reject-with icmp-port-unreachable`, and MARK's `--or-mark 0x4000` and
  `--xor-mark 0x4000` are stored as `--set-xmark value/mask` (0x4000/0x4000, 0x4000/0x0).

Only the extensions kube-proxy uses are known; an unknown one prints its options as given.
"""

from __future__ import annotations

import ipaddress

__all__ = ["probability", "save_rule", "save_string"]

_NO_QUOTE = set("_-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_ENTRY = ("-s", "-d", "-i", "-o", "-p")            # ipt_entry fields, in save order
_LONG = {"--source": "-s", "--destination": "-d", "--in-interface": "-i",
         "--out-interface": "-o", "--protocol": "-p", "--src": "-s", "--dst": "-d"}
_RECENT_COMMANDS = ("--set", "--rcheck", "--update", "--remove")


def save_string(value: str) -> str:
    """xtables_save_string: bare when only [A-Za-z0-9_-], else in double quotes with \\, " and '
    escaped."""
    if value and all(ch in _NO_QUOTE for ch in value):
        return value
    escaped = "".join("\\" + ch if ch in "\"\\'" else ch for ch in value)
    return f'"{escaped}"'


def probability(text: str) -> str:
    """xt_statistic's round trip: lround(p * 0x80000000) stored, printed with %.11f."""
    fixed = int(float(text) * 0x80000000 + 0.5)    # lround, p >= 0
    return f"{fixed / 0x80000000:.11f}"


def _address(value: str) -> str:
    net = ipaddress.ip_network(value, strict=False)
    return f"{net.network_address}/{net.prefixlen}"


def save_rule(words: list[str]) -> str:
    """One restored rule's words (`-A CHAIN ...`, quotes already removed) -> iptables-save's line."""
    chain, rest = words[1], words[2:]
    entry: dict[str, tuple[bool, str]] = {}
    matches: list[tuple[str, list[tuple[bool, str, str]]]] = []   # (name, [(negated, opt, value)])
    target, target_opts = "", []
    i, negate = 0, False
    while i < len(rest):
        word = _LONG.get(rest[i], rest[i])
        value = rest[i + 1] if i + 1 < len(rest) else ""
        if word == "!":
            negate = True
        elif word in _ENTRY:
            entry[word], negate, i = (negate, value), False, i + 1
        elif word in ("-m", "--match"):
            matches.append((value, []))
            i += 1
        elif word in ("-j", "--jump"):
            target, target_opts = value, rest[i + 2:]
            break
        elif word.startswith("--"):
            has_value = i + 1 < len(rest) and not value.startswith("-") and value != "!"
            if not matches:
                matches.append(("", []))
            matches[-1][1].append((negate, word, value if has_value else ""))
            negate, i = False, i + (1 if has_value else 0)
        i += 1
    out = ["-A", chain]
    for option in _ENTRY:
        if option in entry:
            negated, value = entry[option]
            out += [*(["!"] if negated else []), option,
                    _address(value) if option in ("-s", "-d") else value]
    for name, options in matches:
        out += [*(["-m", name] if name else []), *_match_options(name, options)]
    if target:
        out += ["-j", target, *_target_options(target, target_opts)]
    return " ".join(out)


def _match_options(name: str, options: list[tuple[bool, str, str]]) -> list[str]:
    by_option = {opt: (negated, value) for negated, opt, value in options}
    if name == "recent":
        command = next((o for o in _RECENT_COMMANDS if o in by_option), "--rcheck")
        keys = [command, "--seconds", "--reap", "--hitcount", "--rttl"]
        out = _words(by_option, [k for k in keys if k in by_option])
        out += ["--name", by_option.get("--name", (False, "DEFAULT"))[1],
                "--mask", by_option.get("--mask", (False, "255.255.255.255"))[1],
                "--rdest" if "--rdest" in by_option else "--rsource"]
        return out
    if name == "comment":
        return ["--comment", save_string(by_option.get("--comment", (False, ""))[1])]
    if name == "statistic" and "--probability" in by_option:
        negated, value = by_option["--probability"]
        return ["--mode", "random", *(["!"] if negated else []), "--probability", probability(value)]
    if name in ("tcp", "udp", "sctp"):
        return _words(by_option, [k for k in ("--sport", "--dport") if k in by_option])
    if name == "addrtype":
        return _words(by_option, [k for k in ("--src-type", "--dst-type") if k in by_option])
    return _words(by_option, [opt for _n, opt, _v in options])


def _words(by_option: dict[str, tuple[bool, str]], keys: list[str]) -> list[str]:
    out: list[str] = []
    for key in keys:
        negated, value = by_option[key]
        out += [*(["!"] if negated else []), key, *([value] if value else [])]
    return out


def _target_options(target: str, words: list[str]) -> list[str]:
    args = dict(zip(words[::2], words[1::2], strict=False))
    if target == "REJECT":
        return ["--reject-with", args.get("--reject-with", "icmp-port-unreachable")]
    if target == "MARK":
        for option, mask in (("--or-mark", None), ("--xor-mark", "0x0"), ("--set-mark", "0xffffffff")):
            if option in args:
                value = args[option]
                return ["--set-xmark", f"{value}/{mask or value}"]
    return words
