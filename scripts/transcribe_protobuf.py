"""Transcribe the protobuf field tables of kubelab/apiserver/endpoints/protobuf/ from upstream.

    python scripts/transcribe_protobuf.py --api DIR --apimachinery DIR [--tag v0.34.0] [--check]

DIR are git clones of k8s.io/api and k8s.io/apimachinery (github.com/kubernetes/api and
/apimachinery). Each struct's fields are read from types.go at the tag: the protobuf struct tag
gives the field number, the json tag the JSON name (and `,inline`), the Go type the table's type
(a pointer keeps its zero value). Starting from the kinds the package decodes (its KINDS), every
message they reach is written, one module per API group, and each table is checked against
the group's generated.proto (same field numbers, same names). --check writes nothing and exits
1 if a module would change. Run it when the pinned release moves.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "kubelab" / "apiserver" / "endpoints" / "protobuf"
# module -> (repository, package path, what its docstring says). Order matters: the first group
# to define a struct name keeps it (meta's Preconditions, core's EndpointPort, authentication's
# TokenRequest), and autoscaling/v2 comes before v1 (whose Scale is the only one kept).
GROUPS: dict[str, tuple[str, list[str], str]] = {
    "meta": ("apimachinery", ["pkg/apis/meta/v1"],
             "meta/v1: ObjectMeta, LabelSelector, DeleteOptions and the other messages every kind embeds"),
    "core": ("api", ["core/v1"], "core/v1: Pod (all of PodSpec, for `kubectl run` and `debug`), Service, "
                                 "ConfigMap, Secret, Namespace, ServiceAccount, ResourceQuota"),
    "apps": ("api", ["apps/v1"], "apps/v1: Deployment"),
    "batch": ("api", ["batch/v1"], "batch/v1: Job and CronJob"),
    "networking": ("api", ["networking/v1"], "networking/v1: Ingress"),
    "policy": ("api", ["policy/v1"], "policy/v1: PodDisruptionBudget and Eviction"),
    "rbac": ("api", ["rbac/v1"], "rbac/v1: Role, ClusterRole and their bindings"),
    "autoscaling": ("api", ["autoscaling/v2", "autoscaling/v1"],
                    "autoscaling: HorizontalPodAutoscaler (v2) and Scale (v1)"),
    "scheduling": ("api", ["scheduling/v1"], "scheduling/v1: PriorityClass"),
    "authorization": ("api", ["authorization/v1"],
                      "authorization/v1: the self subject access and rules reviews"),
    "authentication": ("api", ["authentication/v1"], "authentication/v1: TokenRequest and SelfSubjectReview"),
    "certificates": ("api", ["certificates/v1"],
                     "certificates/v1: CertificateSigningRequest (`kubectl certificate approve|deny`)"),
}
SPECIAL = {"resource.Quantity": "quantity", "Time": "time", "intstr.IntOrString": "intstr",
           "FieldsV1": "raw", "types.UID": "str"}
SCALARS = {"string": "str", "bool": "bool", "int32": "int", "int64": "int", "int": "int"}
Table = dict[int, tuple[str, str, str]]


def show(repo: Path, tag: str, path: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "show", f"{tag}:{path}"], capture_output=True,
                          text=True, check=True).stdout


def read_types(src: str) -> tuple[dict[str, list[tuple[int, str, str, bool]]], dict[str, str]]:
    """A types.go's structs (number, JSON name, Go type, inline) and its other named types."""
    src = re.sub(r"//.*", "", src)
    named = {m[1]: m[2].strip() for m in re.finditer(r"^type (\w+) (?!struct)(\S.*)$", src, re.M)}
    structs = {}
    for m in re.finditer(r"^type (\w+) struct \{\n(.*?)^\}", src, re.M | re.S):
        fields = []
        for line in m[2].splitlines():
            f = re.match(r"^\s*(?:\w+\s+)?([\w.*\[\]]+)\s+`(.*)`", line)
            tags = dict(re.findall(r'(\w+):"([^"]*)"', f[2])) if f else {}
            pb = tags.get("protobuf", "").split(",")
            if f and len(pb) >= 3:
                js = tags.get("json", "").split(",")
                fields.append((int(pb[1]), js[0], f[1], "inline" in js[1:]))
        structs[m[1]] = fields
    return structs, named


def resolve(gotype: str, structs: dict[str, str], named: dict[str, str]) -> tuple[str, str]:
    """A Go type as (type, how)."""
    ptr = "ptr" if gotype.startswith("*") else ""
    t = gotype.lstrip("*")
    if m := re.match(r"map\[[\w.]+\](.+)", t):
        return resolve(m[1], structs, named)[0], "map"
    if t.startswith("[]") and t != "[]byte":
        return resolve(t[2:], structs, named)[0], "rep"
    if t == "[]byte":
        return "bytes", ptr
    if t in SPECIAL:
        return SPECIAL[t], ptr
    b = t.split(".")[-1] if t.split(".")[0] in ("metav1", "v1", "corev1", "apiv1") else t
    if b in SPECIAL:
        return SPECIAL[b], ptr
    if b in structs:
        return b, ptr
    if b in named:
        under = named[b]
        return resolve(under if under.startswith(("map[", "[]")) else ("*" if ptr else "") + under,
                       structs, named)
    if b in SCALARS:
        return SCALARS[b], ptr
    raise SystemExit(f"transcribe_protobuf: no table type for the Go type {gotype}")


def proto_fields(src: str) -> dict[str, dict[int, str]]:
    src = re.sub(r"//.*", "", src)
    return {m[1]: {int(n): name for name, n in re.findall(r"(\w+)\s*=\s*(\d+);", m[2])}
            for m in re.finditer(r"message (\w+) \{(.*?)\n\}", src, re.S)}


def emit(module: str, what: str, repo: str, paths: list[str], tag: str, tables: dict[str, Table]) -> str:
    group, kinds = what.split(": ", 1)
    lines = [f'"""The protobuf field tables of {group}.', "",
             *textwrap.wrap(f"Its kinds: {kinds}.", 96), "",
             f"Transcribed from k8s.io/{repo} {' and '.join(p + '/generated.proto' for p in paths)},",
             f"release {tag}, with each field's Go type from types.go beside it (by",
             "scripts/transcribe_protobuf.py): message -> {field number: (JSON name, type, how)}.",
             "Types and hows are explained in kubelab/apiserver/endpoints/protobuf/__init__.py.",
             '"""', "", "from __future__ import annotations", "",
             "MESSAGES: dict[str, dict[int, tuple[str, str, str]]] = {"]
    for name in sorted(tables):
        head = f'    "{name}": {{'
        items = [f'{n}: ("{k}", "{t}", "{h}")' for n, (k, t, h) in sorted(tables[name].items())]
        line = head
        for i, item in enumerate(items):
            piece = item + ("}," if i == len(items) - 1 else ", ")
            if len(line) + len(piece.rstrip()) > 108 and line != head:
                lines.append(line.rstrip())
                indent = " " * len(head)
                line = indent if len(indent) + len(piece.rstrip()) <= 108 else " " * 8
            line += piece
        lines.append(line.rstrip() if items else head + "},")
    return "\n".join([*lines, "}"]) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--api", type=Path, required=True)
    parser.add_argument("--apimachinery", type=Path, required=True)
    parser.add_argument("--tag", default="v0.34.0")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from kubelab.apiserver.endpoints.protobuf import KINDS

    repos = {"api": args.api, "apimachinery": args.apimachinery}
    structs: dict[str, tuple[str, list[tuple[int, str, str, bool]]]] = {}
    named: dict[str, str] = {}
    protos: dict[str, dict[int, str]] = {}
    for module, (repo, paths, _) in GROUPS.items():
        for path in paths:
            types, others = read_types(show(repos[repo], args.tag, f"{path}/types.go"))
            for name, fields in types.items():
                structs.setdefault(name, (module, fields))
            for name, under in others.items():
                named.setdefault(name, under)
            for name, numbers in proto_fields(show(repos[repo], args.tag, f"{path}/generated.proto")).items():
                protos.setdefault(f"{module}.{name}", numbers)
    kinds = {name: module for name, (module, _) in structs.items()}
    tables: dict[str, Table] = {}
    todo = sorted(KINDS)
    while todo:
        name = todo.pop()
        if name in tables:
            continue
        table: Table = {}
        for number, key, gotype, inline in structs[name][1]:
            kind, how = resolve(gotype, kinds, named)
            table[number] = ("", kind, "inline") if inline else (key, kind, how)
            if kind in structs:
                todo.append(kind)
        # generated.proto names its fields as JSON does, but for case (BoundObjectReference's uID)
        proto = protos[f"{structs[name][0]}.{name}"]
        if {n: k.lower() for n, (k, _, h) in table.items() if h != "inline"} != {
                n: k.lower() for n, k in proto.items() if table.get(n, ("", "", ""))[2] != "inline"}:
            raise SystemExit(f"transcribe_protobuf: {name} differs from its generated.proto")
        tables[name] = table
    changed = []
    for module, (repo, paths, what) in GROUPS.items():
        text = emit(module, what, repo, paths, args.tag,
                    {n: t for n, t in tables.items() if structs[n][0] == module})
        target = OUT / f"{module}.py"
        if not target.exists() or target.read_text() != text:
            changed.append(target.name)
            if not args.check:
                target.write_text(text)
    print(f"transcribe_protobuf: {len(tables)} messages; "
          + (f"{'would change' if args.check else 'wrote'} {', '.join(changed)}" if changed else "unchanged"))
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
