"""Kubernetes-shaped objects and the vocabulary around them.

The bottom layer of kubelab: imports nothing else from kubelab (docs/ARCHITECTURE.md section 1).
"""

from kubelab.api.errors import ApiError, FieldError, ParseError
from kubelab.api.fields import FieldSelector, parse_field_selector
from kubelab.api.labels import (
    Selector,
    everything,
    nothing,
    parse_selector,
    selector_from_label_selector,
    selector_from_set,
)
from kubelab.api.meta import Object, deep_copy, namespace_key, split_key
from kubelab.api.quantity import Quantity, parse_quantity
from kubelab.api.request import API, Request, WatchEvent, WatchHandle
from kubelab.api.resources import BUILTIN_RESOURCES, ResourceInfo, ResourceTable
from kubelab.api.validation import is_dns1123_label, is_dns1123_subdomain
from kubelab.api.yamlio import dump, dump_all, load_objects

__all__ = [
    "API",
    "BUILTIN_RESOURCES",
    "ApiError",
    "FieldError",
    "FieldSelector",
    "Object",
    "ParseError",
    "Quantity",
    "Request",
    "ResourceInfo",
    "ResourceTable",
    "Selector",
    "WatchEvent",
    "WatchHandle",
    "deep_copy",
    "dump",
    "dump_all",
    "everything",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "load_objects",
    "namespace_key",
    "nothing",
    "parse_field_selector",
    "parse_quantity",
    "parse_selector",
    "selector_from_label_selector",
    "selector_from_set",
    "split_key",
]
