"""kubectl explain for custom kinds: the CRD's schema, as kubectl prints it.

Follows k8s.io/kubectl pkg/explain/v2/templates/plaintext.tmpl: GROUP, KIND and VERSION, then
for a field path `FIELD: <name> <type>`, the DESCRIPTION (wrapped at 76 columns) and the
FIELDS, sorted, each with its type guess (`<Object>`, `<[]string>`, `<map[string]integer>`),
`-required-`, its enum and its description. apiVersion, kind and metadata get the
descriptions apiextensions-apiserver's OpenAPI builder gives every custom kind. Built-in kinds
have no descriptions in kubelab's light schema, so kubelab's kubectl explains custom kinds
only; the served OpenAPI gives real kubectl the same CRD schemas.
"""

from __future__ import annotations

import argparse
import textwrap
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.resources import BUILTIN_RESOURCES
from kubelab.client.client import Client
from kubelab.kubectl.common import KubectlError

__all__ = ["explain", "explain_schema"]

CONVENTIONS = "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md"
STANDARD = {
    "apiVersion": {"type": "string", "description": (
        "APIVersion defines the versioned schema of this representation of an object. Servers "
        "should convert recognized schemas to the latest internal value, and may reject "
        f"unrecognized values. More info: {CONVENTIONS}#resources")},
    "kind": {"type": "string", "description": (
        "Kind is a string value representing the REST resource this object represents. Servers "
        "may infer this from the endpoint the client submits requests to. Cannot be updated. In "
        f"CamelCase. More info: {CONVENTIONS}#types-kinds")},
    "metadata": {"$ref": "ObjectMeta", "description": (
        f"Standard object's metadata. More info: {CONVENTIONS}#metadata")},
}


def _wrap(text: str, width: int, indent: int) -> str:
    lines = []
    for paragraph in text.split("\n"):
        lines += textwrap.wrap(paragraph, width, break_long_words=False,
                               break_on_hyphens=False) or [""]
    return "\n".join(" " * indent + line if line else "" for line in lines)


def _type(schema: dict[str, Any]) -> str:
    """typeGuess."""
    if isinstance(schema.get("items"), dict):
        return "[]" + _type(schema["items"])
    if isinstance(schema.get("additionalProperties"), dict):
        return "map[string]" + _type(schema["additionalProperties"])
    if "$ref" in schema:
        return str(schema["$ref"])
    kind = schema.get("type") or ""
    return "Object" if kind in ("object", "") else str(kind)


def _enum(schema: dict[str, Any], indent: int) -> str:
    values = schema.get("enum")
    if not values:
        return ""
    shown = ['""' if v == "" else str(v) for v in values[:4]]
    return "\n" + " " * indent + "enum: " + ", ".join(shown) + (", ...." if len(values) > 4 else "")


def _fields(schema: dict[str, Any]) -> str:
    properties = schema.get("properties") or {}
    if isinstance(schema.get("items"), dict):
        return _fields(schema["items"])
    if isinstance(schema.get("additionalProperties"), dict) and not properties:
        return _fields(schema["additionalProperties"])
    out = []
    for name in sorted(properties):
        sub = properties[name]
        required = " -required-" if name in (schema.get("required") or []) else ""
        out.append(f"  {name}\t<{_type(sub)}>{required}{_enum(sub, 2)}\n"
                   f"{_wrap(sub.get('description') or '<no description>', 76, 4)}\n\n")
    return "".join(out)


def explain_schema(group: str, kind: str, version: str, root: dict[str, Any],
                   path: list[str]) -> str:
    """The text kubectl explain prints for the field path in a custom kind's schema."""
    schema: dict[str, Any] = {**root, "properties": {**STANDARD, **(root.get("properties") or {})}}
    out = f"GROUP:      {group}\nKIND:       {kind}\nVERSION:    {version}\n\n"
    for i, name in enumerate(path):
        while not (schema.get("properties") or {}).get(name):
            nested = schema.get("items") if isinstance(schema.get("items"), dict) else \
                schema.get("additionalProperties")
            if not isinstance(nested, dict):
                raise KubectlError(f'field "{name}" does not exist')
            schema = nested
        schema = schema["properties"][name]
        if i == len(path) - 1:
            values = ['""' if v == "" else str(v) for v in schema.get("enum") or []]
            enum = "ENUM:" + "".join(f"\n    {v}" for v in values) if values else ""
            out += f"FIELD: {name} <{_type(schema)}>\n{enum}\n\n"
    if "$ref" in schema:
        return out + "DESCRIPTION:\n" + _wrap(schema.get("description") or "<empty>", 76, 4) + "\n"
    description = schema.get("description") or ""
    nested = schema.get("items") if isinstance(schema.get("items"), dict) else None
    if nested is not None and nested.get("description"):
        description = (description + "\n" if description else "") + nested["description"]
    out += "DESCRIPTION:\n" + _wrap(description or "<empty>", 76, 4) + "\n"
    fields = _fields(schema)
    return out + ("FIELDS:\n" + fields if fields else "")


def explain(client: Client, args: argparse.Namespace, now: float, stdin: str) -> str:
    if not args.args:
        raise KubectlError("You must specify the type of resource to explain. Use \"kubectl "
                           "api-resources\" for a complete list of supported resources.")
    if len(args.args) > 1:
        raise KubectlError("We accept only this format: explain RESOURCE")
    kind, *path = args.args[0].split(".")
    info = client.resource(kind)
    if (info.group, info.resource) in {(i.group, i.resource) for i in BUILTIN_RESOURCES}:
        raise KubectlError(f"kubelab's kubectl explains custom resources only; {info.resource} "
                           "is built in (use `kubelab serve` and the real kubectl)")
    try:
        crd: Object = client.get("customresourcedefinitions", f"{info.resource}.{info.group}", "")
    except ApiError as err:
        raise KubectlError(f"couldn't find resource for \"{info.group}/{info.version}, "
                           f"Resource={info.resource}\"") from err
    for version in (crd.get("spec") or {}).get("versions") or []:
        if version.get("name") == info.version:
            root = ((version.get("schema") or {}).get("openAPIV3Schema")) or {}
            return explain_schema(info.group, info.kind, info.version, root, path)
    raise KubectlError(f"GVK {info.group}/{info.version}, Kind={info.kind} not found in OpenAPI schema")
