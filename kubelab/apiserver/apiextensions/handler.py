"""What the API server does with a custom object because of its CRD's schema.

apiextensions-apiserver's crdHandler builds, per served version, a codec that prunes and
defaults (pkg/apiserver/customresource_handler.go, schema/pruning, schema/defaulting) and a
strategy whose Validate runs the schema and the CEL rules (pkg/registry/customresource/
strategy.go, validator.go). CustomResourceSchema is that, for the storage version:

- decode(obj): on create and update, before admission. A field the schema does not specify
  is refused as a Strict decoder refuses it (kubelab decodes Strict always, see
  docs/ARCHITECTURE.md section 9), then the defaults are filled in;
- validate(obj, old): after admission's mutation, the schema's rules and then the CEL rules
  (transition rules with oldSelf only on update).
"""

from __future__ import annotations

import json
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import FieldError, bad_request, field_invalid, method_not_supported
from kubelab.api.resources import ResourceInfo
from kubelab.apiserver.apiextensions.schema import apply_defaults, prune, validate_rules, validate_value

__all__ = ["CustomResourceSchema"]

UNCHECKED = ("some validation rules were not checked because the object was invalid; correct "
             "the existing errors to complete validation")


class CustomResourceSchema:
    def __init__(self, kind: str, version: str, schema: dict[str, Any] | None,
                 scale: dict[str, Any] | None = None,
                 printer_columns: list[dict[str, Any]] | None = None,
                 terminating: bool = False, storage_api_version: str = "",
                 served: bool = True) -> None:
        self.kind, self.version = kind, version
        self.served = served                     # the version's `served` flag
        self.storage_api_version = storage_api_version  # what the store holds: group/version
        self.terminating = terminating           # the CRD is being deleted: no new objects
        self.scale = scale                       # subresources.scale: the replicas paths
        self.printer_columns = printer_columns or []
        self.schema: dict[str, Any] = schema if isinstance(schema, dict) else \
            {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        self.has_rules = "x-kubernetes-validations" in json.dumps(self.schema)
        self.has_defaults = _has_default(self.schema)

    def decode(self, obj: Object, info: ResourceInfo, creating: bool = False) -> None:
        """Prune (refusing what would be pruned, as Strict does), then default, in place.
        No object is created while the CRD terminates (customresource_handler.go)."""
        if creating and self.terminating:
            err = method_not_supported(info.resource, "create", info.group)
            err.message = "create not allowed while custom resource definition is terminating"
            raise err
        dropped = prune(obj, self.schema)
        if dropped:
            fields = ", ".join(f'unknown field "{p}"' for p in dropped)
            raise bad_request(f'{self.kind} in version "{self.version}" cannot be handled as a '
                              f"{self.kind}: strict decoding error: {fields}")
        apply_defaults(obj, self.schema)

    def storage_form(self, obj: Object) -> Object:
        """obj as the store holds it: apiVersion is the storage version's (conversion None)."""
        if not self.storage_api_version or obj.get("apiVersion") == self.storage_api_version:
            return obj
        return {**obj, "apiVersion": self.storage_api_version}

    def validate(self, obj: Object, old: Object | None) -> list[FieldError]:
        errs = validate_value(self.schema, obj)
        if not self.has_rules:
            return errs
        if any(e.type == "Invalid value" and " must be of type " in e.detail for e in errs):
            # hasBlockingErr: the rules cannot run on a value of the wrong type.
            return [*errs, field_invalid("<nil>", "null", UNCHECKED)]
        return errs + (validate_rules(self.schema, obj) if old is None else
                       validate_rules(self.schema, obj, old))

    # ---------------------------------------------------------------- the scale subresource
    # pkg/registry/customresource/etcd.go: scaleFromCustomResource and ScaleREST.Update read
    # and write the replicas at the CRD's specReplicasPath, statusReplicasPath and
    # labelSelectorPath (".spec.replicas" style paths).

    def scale_of(self, obj: Object) -> Object:
        scale = self.scale or {}
        meta = obj["metadata"]
        spec = _nested(obj, scale.get("specReplicasPath"))
        status = _nested(obj, scale.get("statusReplicasPath"))
        selector = _nested(obj, scale.get("labelSelectorPath"))
        return {
            "kind": "Scale", "apiVersion": "autoscaling/v1",
            "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion",
                                              "creationTimestamp") if k in meta},
            "spec": {"replicas": spec if isinstance(spec, int) else 0},
            "status": {"replicas": status if isinstance(status, int) else 0,
                       **({"selector": selector} if isinstance(selector, str) else {})},
        }

    def set_replicas(self, obj: Object, replicas: int) -> None:
        path = str((self.scale or {}).get("specReplicasPath") or ".spec.replicas")
        parts = path.lstrip(".").split(".")
        node = obj
        for part in parts[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[parts[-1]] = replicas


def _has_default(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    return "default" in schema or any(_has_default(s) for s in (
        *(schema.get("properties") or {}).values(), schema.get("items"),
        schema.get("additionalProperties")))


def _nested(obj: Object, path: Any) -> Any:
    node: Any = obj
    for part in str(path or "").lstrip(".").split(".") if path else []:
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node if path else None
