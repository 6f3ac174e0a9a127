"""YAML in and out, as `kubectl apply -f` reads it.

Multi-document files, `kind: List`, and paths, text, dicts or lists all become a list of objects.
Like sigs.k8s.io/yaml, YAML is converted to JSON-compatible data: timestamps stay strings and
non-string keys become strings. Errors name the document and use kubectl's words.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from kubelab.api.errors import ParseError

__all__ = ["dump", "dump_all", "load_objects"]


class _Loader(yaml.SafeLoader):
    """SafeLoader without the timestamp resolver: `2025-01-01` stays a string, as in JSON."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {(k if isinstance(k, str) else json.dumps(k)): _jsonable(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)  # binary and other exotic YAML types


def load_objects(source: str | Path | dict[str, Any] | Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Objects from a path, YAML/JSON text, one dict or a list of dicts.

    A string that names an existing file (or ends in .yaml/.yml/.json) is read as a path.
    """
    name = "<input>"
    if isinstance(source, dict):
        docs: list[Any] = [source]
    elif isinstance(source, (str, Path)):
        text, name = _read(source)
        try:
            docs = list(yaml.load_all(text, Loader=_Loader))
        except yaml.YAMLError as err:
            raise ParseError(f"error parsing {name}: error converting YAML to JSON: yaml: "
                             f"{_yaml_problem(err)}") from None
    else:
        docs = list(source)
    objects: list[dict[str, Any]] = []
    for index, doc in enumerate(docs):
        if doc is None:
            continue  # an empty document between `---` lines
        where = f'error validating "{name}"' + (f" (document {index + 1})" if len(docs) > 1 else "")
        if not isinstance(doc, dict):
            raise ParseError(f"{where}: error validating data: the document is a "
                             f"{type(doc).__name__}, not an object")
        doc = _jsonable(doc)
        missing = [f"{f} not set" for f in ("apiVersion", "kind") if not doc.get(f)]
        if missing:
            raise ParseError(f"{where}: error validating data: [{', '.join(missing)}]"
                             if len(missing) > 1 else f"{where}: error validating data: {missing[0]}")
        if doc["kind"] == "List" or (str(doc["kind"]).endswith("List") and "items" in doc):
            objects.extend(load_objects(doc.get("items") or []))
        else:
            objects.append(doc)
    return objects


def _read(source: str | Path) -> tuple[str, str]:
    if isinstance(source, Path) or (
        "\n" not in source and (source.endswith((".yaml", ".yml", ".json")) or Path(source).is_file())
    ):
        path = Path(source)
        try:
            return path.read_text(encoding="utf-8"), str(path)
        except FileNotFoundError:
            raise ParseError(f'the path "{path}" does not exist') from None
        except (OSError, UnicodeDecodeError) as err:
            raise ParseError(f'error reading "{path}": {err}') from None
    return source, "<input>"


def _yaml_problem(err: yaml.YAMLError) -> str:
    mark = getattr(err, "problem_mark", None)
    problem = getattr(err, "problem", None) or str(err)
    return f"line {mark.line + 1}: {problem}" if mark is not None else str(problem)


def dump(obj: Any) -> str:
    """One object as YAML, keys in the order the object has them (as kubectl -o yaml)."""
    return yaml.safe_dump(obj, sort_keys=False, default_flow_style=False, allow_unicode=True)


def dump_all(objects: Iterable[Any]) -> str:
    return yaml.safe_dump_all(list(objects), sort_keys=False, default_flow_style=False,
                              allow_unicode=True)
