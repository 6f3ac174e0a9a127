"""OpenAPI v3: the documents kubectl reads to validate, to patch and to explain.

kube-apiserver publishes one OpenAPI 3.0 document per group version (/openapi/v3/apis/apps/v1)
and an index of them (/openapi/v3), as k8s.io/kube-openapi's handler3 does. kubectl asks for
them before it sends `fieldValidation=Strict` (k8s.io/cli-runtime resource/
query_param_verifier_v3.go: the PATCH operation of the kind's path must list that query
parameter) and for `kubectl explain`.

kubelab builds them from the light schema its strict decoder uses (kubelab/apiserver/
schema.py): every field the decoder knows, with its JSON type; fields whose insides kubelab
does not check are `x-kubernetes-preserve-unknown-fields`. There are no field descriptions:
`kubectl explain` shows the structure and the types, and the Kubernetes API reference is the
place for the prose.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable

from kubelab.api import Object
from kubelab.api.resources import ResourceInfo
from kubelab.apiserver.apis.schema import SCHEMAS, ListOf, MapOf, Scalar, Struct, Type

__all__ = ["group_version_document", "index", "swagger_document"]

_SCALARS: dict[str, Object] = {
    "string": {"type": "string"}, "bool": {"type": "boolean"},
    "int32": {"type": "integer", "format": "int32"}, "int64": {"type": "integer", "format": "int64"},
    "float64": {"type": "number", "format": "double"},
    "resource.Quantity": {"type": "string", "x-kubernetes-int-or-string": True},
    "intstr.IntOrString": {"type": "string", "x-kubernetes-int-or-string": True, "format": "int-or-string"},
    "[]uint8": {"type": "string", "format": "byte"},
}
_WRITE_PARAMS = [{"name": name, "in": "query", "schema": {"type": "string"}, "uniqueItems": True}
                 for name in ("dryRun", "fieldManager", "fieldValidation")]


def _gv_path(group: str, version: str) -> str:
    return f"api/{version}" if not group else f"apis/{group}/{version}"


def _prefix(info: ResourceInfo) -> str:
    short = info.group.split(".")[0] if info.group else "core"
    return f"io.k8s.api.{short}.{info.version}"


class _Builder:
    """The schemas of one group version, each struct once, referenced by $ref."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.schemas: dict[str, Object] = {}

    def ref(self, struct: Struct) -> Object:
        name = f"{self.prefix}.{struct.name}"
        if name not in self.schemas:
            self.schemas[name] = {}  # claimed first: a struct may contain itself
            self.schemas[name] = {"type": "object",
                                  "properties": {k: self.schema(t) for k, t in struct.fields.items()}}
        return {"$ref": f"#/components/schemas/{name}"}

    def schema(self, t: Type) -> Object:
        if isinstance(t, Struct):
            return {"allOf": [self.ref(t)], "default": {}}
        if isinstance(t, ListOf):
            return {"type": "array", "items": self.schema(t.item)}
        if isinstance(t, MapOf):
            return {"type": "object", "additionalProperties": self.schema(t.value)}
        assert isinstance(t, Scalar)
        return dict(_SCALARS.get(t.go, {"x-kubernetes-preserve-unknown-fields": True}))


def _operation(info: ResourceInfo, action: str, ref: Object) -> Object:
    op: Object = {
        "operationId": f"{action}{info.kind}",
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": {"group": info.group, "version": info.version, "kind": info.kind},
        "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": ref}}}},
    }
    if action in ("post", "put", "patch"):
        op["parameters"] = _WRITE_PARAMS + ([{"name": "force", "in": "query", "schema": {"type": "boolean"}}]
                                            if action == "patch" else [])
    return op


def _paths(info: ResourceInfo, ref: Object) -> dict[str, Object]:
    base = "/" + _gv_path(info.group, info.version)
    scope = f"{base}/namespaces/{{namespace}}" if info.namespaced else base
    collection, item = f"{scope}/{info.resource}", f"{scope}/{info.resource}/{{name}}"
    paths = {
        collection: {"get": _operation(info, "list", ref), "post": _operation(info, "post", ref)},
        item: {verb: _operation(info, verb, ref) for verb in ("get", "put", "patch", "delete")},
    }
    for sub in info.subresources:
        if sub in ("status", "scale"):
            paths[f"{item}/{sub}"] = {verb: _operation(info, verb, ref) for verb in ("get", "put", "patch")}
    return paths


CustomSchema = Callable[[ResourceInfo], "Object | None"]


def group_version_document(table: Iterable[ResourceInfo], group: str, version: str,
                           custom_schema: CustomSchema = lambda info: None) -> Object | None:
    """custom_schema: a custom resource's openAPIV3Schema, from its CRD (None: unknown)."""
    infos = [i for i in table if i.group == group and i.version == version]
    if not infos:
        return None
    builder = _Builder(_prefix(infos[0]))
    paths: dict[str, Object] = {}
    for info in sorted(infos, key=lambda i: i.resource):
        struct = SCHEMAS.get(info.kind)
        gvk = [{"group": info.group, "version": info.version, "kind": info.kind}]
        if struct is not None:
            ref = builder.ref(struct)
            builder.schemas[ref["$ref"].rsplit("/", 1)[1]]["x-kubernetes-group-version-kind"] = gvk
        else:  # a custom resource: its structure is its CRD's schema, as apiextensions publishes it
            name = f"{'.'.join(reversed(info.group.split('.')))}.{info.version}.{info.kind}"
            schema = dict(custom_schema(info) or {"type": "object",
                                                  "x-kubernetes-preserve-unknown-fields": True})
            builder.schemas[name] = {**schema, "x-kubernetes-group-version-kind": gvk}
            ref = {"$ref": f"#/components/schemas/{name}"}
        paths.update(_paths(info, ref))
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.34.0"},
            "paths": paths, "components": {"schemas": builder.schemas}}


def index(table: Iterable[ResourceInfo], custom_schema: CustomSchema = lambda info: None) -> Object:
    """/openapi/v3: where each group version's document is, with a hash of its content."""
    paths: dict[str, Object] = {}
    for group, version in sorted({(i.group, i.version) for i in table}):
        doc = group_version_document(table, group, version, custom_schema)
        digest = hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:16].upper()
        path = _gv_path(group, version)
        paths[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest}"}
    return {"paths": paths}


# --- endpoints --- /openapi/v2
# The swagger 2.0 document of every group version in one (k8s.io/kube-openapi pkg/handler
# handler.go), which client-go's OpenAPISchema and `kubectl explain --output
# plaintext-openapiv2` read. Built from the same schemas as v3: definitions instead of
# components.schemas, a plain $ref instead of allOf, each response's schema and each query
# parameter's type inline, as swagger 2.0 has them.
_V3_REF, _V2_REF = "#/components/schemas/", "#/definitions/"
_PRODUCES = ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"]


def _v2_schema(value: object) -> object:
    if isinstance(value, list):
        return [_v2_schema(v) for v in value]
    if not isinstance(value, dict):
        return value
    all_of = value.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and set(value) <= {"allOf", "default"}:
        return _v2_schema(all_of[0])
    out = {k: _v2_schema(v) for k, v in value.items()}
    ref = out.get("$ref")
    if isinstance(ref, str):
        out["$ref"] = ref.replace(_V3_REF, _V2_REF)
    return out


def _v2_operation(op: Object) -> Object:
    out: Object = {k: v for k, v in op.items() if k not in ("responses", "parameters")}
    out.update({"consumes": ["*/*"], "produces": list(_PRODUCES), "schemes": ["https"]})
    if "parameters" in op:
        out["parameters"] = [{"name": p["name"], "in": p["in"], "type": p["schema"]["type"],
                              "uniqueItems": True} for p in op["parameters"]]
    out["responses"] = {
        code: {"description": r["description"],
               "schema": _v2_schema(r["content"]["application/json"]["schema"])}
        for code, r in op["responses"].items()}
    out["responses"]["401"] = {"description": "Unauthorized"}
    return out


def swagger_document(table: Iterable[ResourceInfo],
                     custom_schema: CustomSchema = lambda info: None) -> Object:
    """/openapi/v2: every served group version's paths and definitions in one document."""
    table = list(table)
    paths: dict[str, Object] = {}
    definitions: dict[str, Object] = {}
    for group, version in sorted({(i.group, i.version) for i in table}):
        doc = group_version_document(table, group, version, custom_schema)
        if doc is None:
            continue
        for name, schema in doc["components"]["schemas"].items():
            definitions[name] = _v2_schema(schema)  # type: ignore[assignment]
        for path, item in doc["paths"].items():
            paths[path] = {verb: _v2_operation(op) for verb, op in item.items()}
    return {"swagger": "2.0", "info": {"title": "Kubernetes", "version": "v1.34.0"},
            "paths": dict(sorted(paths.items())), "definitions": dict(sorted(definitions.items())),
            "securityDefinitions": {"BearerToken": {"type": "apiKey", "name": "authorization",
                                                    "in": "header",
                                                    "description": "Bearer Token authentication"}},
            "security": [{"BearerToken": []}]}
