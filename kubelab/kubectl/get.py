"""`kubectl get` and `kubectl delete`, and the output formats of get.

get follows k8s.io/kubectl pkg/cmd/get/get.go: one or more types (`pods,deployments`, the
`all` category) or `type/name` pairs. For the human-readable output (none, or `-o wide`) it
asks the API server for Tables (transformRequests: the Accept header, and includeObject=Object
to sort with --sort-by, as get/sorter.go's TableSorter sorts the rows by their objects) and
prints them (tableprinter.py), one per kind, with the kind before each name
(`deployment.apps/web`) when several kinds print, a blank line between them. `-o
json|yaml|name|jsonpath=...|custom-columns=...` fetch the objects: a single named object prints
as itself in JSON, several as a List.
"""

from __future__ import annotations

import argparse
import re
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.jsonpath import JSONPathError, execute, parse, relaxed
from kubelab.api.resources import ResourceInfo
from kubelab.client.client import Client
from kubelab.kubectl.common import (
    KubectlError,
    Printed,
    Verb,
    check_errors,
    get_object,
    namespace_of,
    prefix,
    resource_args,
)
from kubelab.kubectl.jsonpathprinter import print_jsonpath
from kubelab.kubectl.printers import to_json, to_yaml
from kubelab.kubectl.tableprinter import PrintOptions, decorate_table, print_table

__all__ = ["VERBS", "print_objects", "print_tables"]

_NO_TYPE = ('You must specify the type of resource to get. Use "kubectl api-resources" for a complete '
            "list of supported resources.\n\nerror: Required resource not specified.\nUse \"kubectl "
            'explain <resource>" for a detailed description of that resource (e.g. kubectl explain '
            "pods).\nSee 'kubectl get -h' for help and examples")


def _get(client: Client, args: argparse.Namespace, now: float, stdin: str) -> str:
    if not args.args:
        raise Printed(_NO_TYPE)
    groups = resource_args(client, args.args)
    human = args.output in ("", "wide")  # IsHumanReadablePrinter: ask for Tables
    include = "Object" if args.sort_by else ""
    found: list[tuple[ResourceInfo, Object]] = []  # a Table (human) or a List per kind
    missing: list[str] = []  # get.go goes on past a missing object and reports it at the end
    for info, names in groups:
        ns = namespace_of(args, info)
        if names:
            got = []
            for n in names:
                try:
                    got.append(get_object(client, info, n, ns or "default", as_table=human,
                                          include_object=include))
                except ApiError as err:
                    if err.code != 404 or len(names) + len(groups) == 2:
                        raise
                    missing.append(err.kubectl_message())
            listing: Object = {"columnDefinitions": got[0]["columnDefinitions"] if got else [],
                               "rows": [r for t in got for r in t["rows"]]} if human else {"items": got}
        else:
            listing = client.list(info.resource, ns, label_selector=args.selector,
                                  field_selector=args.field_selector, as_table=human,
                                  include_object=include)
        rows = listing["rows"] if human else listing["items"]
        if args.sort_by and (len(rows) > 1 or not human):  # SortingPrinter sorts a Table of 2+
            objects = [row.get("object") or {} for row in rows] if human else rows
            try:
                path = _sort_path(args.sort_by, table=human, objects=objects)
            except KubectlError:
                if not human:
                    raise
                # get.go's Run ignores what the Table's SortingPrinter returns: the Table is
                # not printed, and kubectl goes on (to "No resources found" when it was alone).
                continue
            order = sorted(range(len(rows)), key=lambda i: _sort_key(objects[i], path))
            rows[:] = [rows[i] for i in order]
        found.append((info, listing))
    single = len(groups) == 1 and len(groups[0][1]) == 1
    with_kind = len(groups) > 1 or args.args[0].split("/")[0] == "all"
    if human:
        text = print_tables(found, wide=args.output == "wide", with_kind=with_kind,
                            all_namespaces=args.all_namespaces, no_headers=args.no_headers)
    else:
        text = print_objects([(info, listing["items"]) for info, listing in found], args.output,
                             single=single, no_headers=args.no_headers)
    if missing:
        raise Printed("\n".join([text or "", *missing]).lstrip("\n"))
    if text is None:
        ns = "" if args.all_namespaces or not groups[0][0].namespaced else args.namespace
        return f"No resources found in {ns} namespace." if ns else "No resources found"
    return text


def print_tables(found: list[tuple[ResourceInfo, Object]], *, wide: bool = False,
                 with_kind: bool = False, all_namespaces: bool = False,
                 no_headers: bool = False) -> str | None:
    """The Tables the server sent, one per kind; None when every one is empty."""
    tables = []
    for info, table in found:
        options = PrintOptions(no_headers=no_headers, wide=wide,
                               with_namespace=all_namespaces and info.namespaced,
                               with_kind=with_kind, kind=prefix(info))
        text = print_table(decorate_table(table, options), options)
        if text:
            tables.append(text)
    return "\n\n".join(tables) if tables else None


def print_objects(found: list[tuple[ResourceInfo, list[Object]]], output: str, *,
                  single: bool = False, no_headers: bool = False) -> str | None:
    """What get prints of the objects found per kind with -o json|yaml|jsonpath|name|
    custom-columns; None when custom-columns would print an empty table."""
    objects = [o for _, objs in found for o in objs]
    if output in ("json", "yaml", "jsonpath") or output.startswith("jsonpath="):
        data: Any = objects[0] if single and objects else {
            "apiVersion": "v1", "kind": "List", "items": objects, "metadata": {"resourceVersion": ""}}
        if output == "json":
            return to_json(data)
        if output == "yaml":
            return to_yaml(data)
        return print_jsonpath(output.removeprefix("jsonpath").removeprefix("="), data)
    if output == "name":
        return "\n".join(f"{prefix(info)}/{o['metadata']['name']}" for info, objs in found for o in objs)
    if output.startswith("custom-columns="):
        return _custom_columns(output.removeprefix("custom-columns="), objects, no_headers) \
            if objects else None
    raise KubectlError(f'unable to match a printer suitable for the output format "{output}", '
                       "allowed formats are: custom-columns,custom-columns-file,go-template,"
                       "go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,name,"
                       "template,templatefile,wide,yaml")


def _custom_columns(spec: str, objects: list[Object], no_headers: bool) -> str:
    """-o custom-columns=NAME:.metadata.name,NODE:.spec.nodeName (customcolumn.go)."""
    columns = []
    for part in spec.split(","):
        header, sep, path = part.partition(":")
        if not sep or not header:
            raise KubectlError(f"unexpected custom-columns spec: {part}, expected <header>:<json-path-expr>")
        columns.append((header, relaxed(path)))
    rows = [[header for header, _ in columns]] if not no_headers else []
    for obj in objects:
        rows.append([execute(path, obj).replace(" ", ",") or "<none>" for _, path in columns])
    widths = [max(len(r[i]) for r in rows) for i in range(len(columns))]
    return "\n".join("   ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
                     for r in rows)


# printers.RelaxedJSONPathExpression: `a.b`, `.a.b`, `{a.b}` or `{.a.b}`.
_RELAXED = re.compile(r"^\{\.?([^{}]+)\}$|^\.?([^{}]+)$")


def _sort_path(sort_by: str, *, table: bool, objects: list[Object]) -> list[str]:
    """--sort-by's field as sorter.go reads it: relaxed, parsed, and found in at least one of
    the objects (SortObjects for objects; NewTableSorter for a Table's rows, which takes the
    field as given when it is not a relaxed path and calls a parse error a sorting error)."""
    m = _RELAXED.match(sort_by)
    if m is None and not table:
        raise KubectlError("unexpected path string, expected a 'name1.name2' or '.name1.name2' or "
                           "'{name1.name2}' or '{.name1.name2}'")
    field = "{." + (m.group(1) or m.group(2)) + "}" if m else sort_by
    try:
        parse(field)
    except JSONPathError as err:
        raise KubectlError(f"sorting error: {err}" if table else str(err)) from None
    path = field[1:-1].lstrip(".").split(".")
    if objects and not any(_lookup(obj, path) is not None for obj in objects):
        raise KubectlError(f'couldn\'t find any field with path "{field}" in the list of objects')
    return path


def _lookup(obj: Object, path: list[str]) -> Any:
    value: Any = obj
    for part in path:
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _sort_key(obj: Object, path: list[str]) -> tuple[int, Any]:
    value = _lookup(obj, path)
    return (0, value) if isinstance(value, (int, float)) else (1, str(value or ""))


def _delete(client: Client, args: argparse.Namespace, now: float, stdin: str) -> str:
    if not args.args:
        # delete.go's own error, not a usage error: no pointer to the help
        raise KubectlError("You must provide one or more resources by argument or filename.\n"
                           "Example resource specifications include:\n   '-f rsrc.yaml'\n   "
                           "'--filename=rsrc.json'\n   '<resource> <name>'\n   '<resource>'")
    lines: list[str] = []
    errors: list[Exception] = []
    for info, names in resource_args(client, args.args):
        ns = namespace_of(args, info) or "default"
        if not names and args.selector:
            names = [o["metadata"]["name"] for o in
                     client.list(info.resource, ns, label_selector=args.selector)["items"]]
        elif not names:
            raise KubectlError('resource(s) were provided, but no name was specified')
        # delete.go: --now is --grace-period=1, and without --force a 0 becomes 1 as well
        grace = 1 if args.now or args.grace_period == 0 else args.grace_period
        policy = args.cascade.capitalize()
        for name in names:  # ContinueOnError: a name not found is reported after the others
            try:
                client.delete(info.resource, name, ns, propagation_policy=policy,
                              grace_period_seconds=grace)
            except ApiError as err:
                errors.append(err)
                continue
            # kubectl 1.34 names the namespace of what it deleted
            where = f" from {ns} namespace" if info.namespaced else ""
            lines.append(f'{prefix(info)} "{name}" deleted{where}')
    if not lines and not errors:
        return "No resources found"
    return check_errors(lines, errors)


VERBS: dict[str, Verb] = {"get": _get, "delete": _delete}
