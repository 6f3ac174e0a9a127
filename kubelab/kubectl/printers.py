"""`-o json` and `-o yaml` as kubectl writes them (k8s.io/cli-runtime/pkg/printers json.go,
yaml.go).

kubectl holds what it prints as unstructured maps, and Go marshals a map with its keys sorted:
both outputs list every object's fields alphabetically, whatever order the server sent.
JSON is json.MarshalIndent with four spaces, non-ASCII text as it is, and <, > and & escaped
as \\u003c, \\u003e and \\u0026 (Go's HTML-safe default). YAML is sigs.k8s.io/yaml (yaml.v2):
a string that cannot stand plain is double-quoted ("2025-01-01T00:00:00Z", "80", "true"), and
one with a newline is a literal block (`|`, as last-applied-configuration shows).
"""

from __future__ import annotations

import json
from typing import Any

import yaml

__all__ = ["to_json", "to_yaml"]

_HTML_SAFE = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028",
              "\u2029": "\\u2029"}


def to_json(obj: Any) -> str:
    text = json.dumps(obj, indent=4, sort_keys=True, ensure_ascii=False)
    return "".join(_HTML_SAFE.get(ch, ch) for ch in text) if any(
        ch in text for ch in _HTML_SAFE) else text


class _Emitter(yaml.emitter.Emitter):
    def choose_scalar_style(self) -> str:
        style: str = super().choose_scalar_style()
        return '"' if style == "'" else style


class _Dumper(_Emitter, yaml.serializer.Serializer, yaml.representer.SafeRepresenter,
              yaml.resolver.Resolver):
    def __init__(self, stream: Any, **kwargs: Any) -> None:
        _Emitter.__init__(self, stream, allow_unicode=True)
        yaml.serializer.Serializer.__init__(self)
        yaml.representer.SafeRepresenter.__init__(self, default_flow_style=False, sort_keys=True)
        yaml.resolver.Resolver.__init__(self)


def _represent_str(dumper: yaml.representer.SafeRepresenter, data: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|" if "\n" in data else None)


_Dumper.add_representer(str, _represent_str)


def to_yaml(obj: Any) -> str:
    return yaml.dump(obj, Dumper=_Dumper)
