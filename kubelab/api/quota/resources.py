"""ResourceList arithmetic for quota (k8s.io/apiserver pkg/quota/v1/resources.go).

A ResourceList here is a dict of resource name -> Quantity. Equals, LessThanOrEqual, Max, Add,
Subtract, Mask, ResourceNames, Contains, Intersection, Difference and IsZero keep upstream's
names and meaning; `parse_resource_list` reads the JSON form ({"pods": "2"}) and
`to_json` writes it back in canonical quantities.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kubelab.api.errors import ParseError
from kubelab.api.quantity import Quantity, parse_quantity

__all__ = ["ResourceList", "add", "contains", "difference", "equals", "intersection", "is_zero",
           "less_than_or_equal", "mask", "max_", "parse_resource_list", "pretty_print",
           "resource_names", "subtract", "to_json"]

ResourceList = dict[str, Quantity]
ZERO = parse_quantity(0)


def parse_resource_list(value: Any) -> ResourceList:
    """A status.hard/used or spec.hard map as Quantities; what does not parse is left out."""
    result: ResourceList = {}
    for name, text in (value or {}).items() if isinstance(value, dict) else ():
        try:
            result[str(name)] = parse_quantity(text)
        except (ParseError, TypeError):
            continue
    return result


def to_json(resources: Mapping[str, Quantity]) -> dict[str, str]:
    return {name: str(q) for name, q in sorted(resources.items())}


def equals(a: Mapping[str, Quantity], b: Mapping[str, Quantity]) -> bool:
    """Equals: the same names with the same values."""
    return len(a) == len(b) and all(name in b and q.cmp(b[name]) == 0 for name, q in a.items())


def less_than_or_equal(a: Mapping[str, Quantity], b: Mapping[str, Quantity]
                       ) -> tuple[bool, list[str]]:
    """LessThanOrEqual: is a <= b for every name b has; and the names where a exceeds b."""
    exceeded = [name for name, q in a.items() if name in b and q.cmp(b[name]) > 0]
    return not exceeded, exceeded


def max_(a: Mapping[str, Quantity], b: Mapping[str, Quantity]) -> ResourceList:
    result = dict(a)
    for name, q in b.items():
        if name not in result or q.cmp(result[name]) > 0:
            result[name] = q
    return result


def add(a: Mapping[str, Quantity], b: Mapping[str, Quantity]) -> ResourceList:
    result = dict(a)
    for name, q in b.items():
        result[name] = result[name] + q if name in result else q
    return result


def subtract(a: Mapping[str, Quantity], b: Mapping[str, Quantity]) -> ResourceList:
    result = dict(a)
    for name, q in b.items():
        result[name] = result.get(name, ZERO) - q
    return result


def mask(resources: Mapping[str, Quantity], names: Iterable[str]) -> ResourceList:
    """Mask: only the given names."""
    keep = set(names)
    return {name: q for name, q in resources.items() if name in keep}


def resource_names(resources: Mapping[str, Any]) -> list[str]:
    return list(resources)


def contains(names: Iterable[str], item: str) -> bool:
    return item in set(names)


def intersection(a: Iterable[str], b: Iterable[str]) -> list[str]:
    keep = set(b)
    return sorted({name for name in a if name in keep})


def difference(a: Iterable[str], b: Iterable[str]) -> list[str]:
    drop = set(b)
    return sorted({name for name in a if name not in drop})


def is_zero(resources: Mapping[str, Quantity]) -> bool:
    return all(q.is_zero() for q in resources.values())


def pretty_print(resources: Mapping[str, Quantity]) -> str:
    """prettyPrint (admission controller.go): sorted `name=value` pairs, comma-separated."""
    return ",".join(f"{name}={resources[name]}" for name in sorted(resources))
