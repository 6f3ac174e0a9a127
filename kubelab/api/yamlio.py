"""YAML in and out, as `kubectl apply -f` reads it.

Multi-document files, `kind: List`, and paths, text, dicts or lists all become a list of objects.
Like sigs.k8s.io/yaml, YAML is converted to JSON-compatible data: timestamps stay strings and
non-string keys become strings. Errors name the document and use kubectl's words.

YAML is scanned and parsed by libyaml (PyYAML's C parser) where PyYAML was built with it
(`yaml.__with_libyaml__`), and the nodes are composed in Python, where go-yaml's limits on
nesting and aliasing are counted; without libyaml the pure-Python parser does the same. The
pure-Python scanner is slow (a 200 KB body takes seconds): the API server reads a YAML body
only after authentication and authorization (apiserver/server.py).

Departure: libyaml's own nesting limit (1000 levels) and its words for a syntax error are
libyaml's, not go-yaml's; both are past the 200 levels we stop at anyway.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

from kubelab.api.errors import ParseError

__all__ = ["dump", "dump_all", "load_document", "load_objects"]


# Go's YAML decoder (sigs.k8s.io/yaml over go-yaml v2) nests at most 10000 levels; Python's
# stack is smaller, and the API server's decoder stops at 200 (apiserver/endpoints/decode.py MAX_DEPTH),
# so YAML stops there too. No manifest comes near: a Deployment is about 10 levels deep.
MAX_DEPTH = 200
# One JSON value takes at least one byte: a document that expands to more values than the API
# server accepts bytes (3 MiB, server config.go MaxRequestBodyBytes) cannot be sent.
MAX_VALUES = 3 * 1024 * 1024


def _parser_base() -> Any:
    """libyaml's scanner and parser (C), or PyYAML's own when it was built without libyaml."""
    if yaml.__with_libyaml__:
        from yaml._yaml import CParser
        return CParser
    from yaml.parser import Parser  # pragma: no cover
    from yaml.reader import Reader
    from yaml.scanner import Scanner

    class PurePython(Reader, Scanner, Parser):  # pragma: no cover
        def __init__(self, stream: Any) -> None:
            Reader.__init__(self, stream)
            Scanner.__init__(self)
            Parser.__init__(self)

    return PurePython


_Parser: Any = _parser_base()
WITH_LIBYAML = _Parser.__name__ == "CParser"


class _Loader(Composer, _Parser, SafeConstructor, Resolver):  # type: ignore[misc]
    """A safe loader (libyaml's parser when there is one, Python's composer) without the
    timestamp resolver (`2025-01-01` stays a string, as in JSON),
    with go-yaml's limits on nesting and on alias expansion (billion laughs).

    PyYAML shares an aliased node instead of copying it, so reading is cheap; the cost comes
    when the shared value is turned into JSON, once per use. go-yaml v2 decode.go counts
    every value it decodes and those that come from aliases, and refuses a document whose
    share of aliased values is too high ("document contains excessive aliasing"); we count
    the same way, while composing, before anything is expanded."""

    def __init__(self, stream: Any) -> None:
        _Parser.__init__(self, stream)
        Composer.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)

    def compose_document(self) -> Any:
        self._depth, self._decoded, self._aliased = 0, 0, 0
        self._open: set[str] = set()   # anchors whose value is being composed
        self._sizes: dict[str, int] = {}  # anchor -> values its value expands to
        return super().compose_document()

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        anchor = event.anchor
        if isinstance(event, yaml.AliasEvent):
            if anchor in self._open:
                raise _GoYAMLError(f"anchor '{anchor}' value contains itself")
            node = super().compose_node(parent, index)
            size = self._sizes.get(anchor, 1)
            self._decoded += 1 + size
            self._aliased += size
            self._check_aliasing()
            return node
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise _GoYAMLError(f"line {event.start_mark.line + 1}: exceeded max depth of "
                               f"{MAX_DEPTH}")
        before = self._decoded
        self._decoded += 1
        if anchor is not None:
            self._open.add(anchor)
        node = super().compose_node(parent, index)
        if anchor is not None:
            self._open.discard(anchor)
            self._sizes[anchor] = self._decoded - before
        self._depth -= 1
        self._check_aliasing()
        return node

    def _check_aliasing(self) -> None:
        decoded, aliased = self._decoded, self._aliased
        if aliased > 100 and decoded > 1000 and aliased / decoded > _allowed_alias_ratio(decoded):
            raise _GoYAMLError("document contains excessive aliasing")
        if decoded > MAX_VALUES:
            raise _GoYAMLError("document contains excessive aliasing")


def _allowed_alias_ratio(decoded: int) -> float:
    """go-yaml v2 decode.go allowedAliasRatio: 99 % of a small document may come from
    aliases, 10 % of a large one (4 million values), linearly in between."""
    low, high = 400_000, 4_000_000
    if decoded <= low:
        return 0.99
    if decoded >= high:
        return 0.10
    return 0.99 - 0.89 * (decoded - low) / (high - low)


class _GoYAMLError(yaml.YAMLError):
    """A limit of go-yaml's, in its words (no mark: the message has what go-yaml says)."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _jsonable(value: Any, budget: list[int], depth: int = 0) -> Any:
    """value as JSON data: string keys, strings for exotic YAML types. budget[0] counts the
    values left (a Python object, like YAML, can share a value many times)."""
    budget[0] -= 1
    if budget[0] < 0:
        raise _GoYAMLError("document contains excessive aliasing")
    if isinstance(value, (dict, list, tuple)) and depth >= MAX_DEPTH:
        raise _GoYAMLError(f"exceeded max depth of {MAX_DEPTH}")
    if isinstance(value, dict):
        return {(k if isinstance(k, str) else json.dumps(k, default=str)):
                _jsonable(v, budget, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, budget, depth + 1) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)  # binary and other exotic YAML types


Source = str | Path | dict[str, Any] | Iterable[dict[str, Any]]


def load_objects(source: Source) -> list[dict[str, Any]]:
    """Objects from a path, YAML/JSON text, one dict or a list of dicts.

    A string with no line break that names an existing file, or ends in .yaml/.yml/.json, is
    a path (`kubectl apply -f` takes only paths; kubelab also takes the text itself)."""
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
    elif isinstance(source, Iterable) and not isinstance(source, (bytes, bytearray)):
        docs = list(source)
    else:
        # kubectl apply with nothing to read: "error: must specify one of -f and -k".
        raise ParseError("must specify one of -f and -k" if source is None else
                         f"cannot read objects from a {type(source).__name__}: give a path, "
                         "YAML or JSON text, a dict or a list of dicts")
    budget = [MAX_VALUES]
    objects: list[dict[str, Any]] = []
    for index, doc in enumerate(docs):
        if doc is None:
            continue  # an empty document between `---` lines
        where = f'error validating "{name}"' + (f" (document {index + 1})" if len(docs) > 1 else "")
        if not isinstance(doc, dict):
            raise ParseError(f"{where}: error validating data: the document is a "
                             f"{type(doc).__name__}, not an object")
        try:
            doc = _jsonable(doc, budget)
        except _GoYAMLError as err:
            raise ParseError(f"error parsing {name}: error converting YAML to JSON: yaml: "
                             f"{err}") from None
        missing = [f"{f} not set" for f in ("apiVersion", "kind") if not doc.get(f)]
        if missing:
            raise ParseError(f"{where}: error validating data: [{', '.join(missing)}]"
                             if len(missing) > 1 else f"{where}: error validating data: {missing[0]}")
        if doc["kind"] == "List" or (str(doc["kind"]).endswith("List") and "items" in doc):
            items = doc.get("items")
            if items is not None and not isinstance(items, list):
                # The unstructured list decoder (apimachinery unstructured.go decodeToList).
                raise ParseError(f'unable to decode "{name}": json: cannot unmarshal '
                                 f"{_json_type(items)} into Go struct field decodeList.items "
                                 "of type []json.RawMessage")
            objects.extend(load_objects(items or []))
        else:
            objects.append(doc)
    return objects


def load_document(text: str) -> Any:
    """One YAML (or JSON) document as JSON-compatible data, with go-yaml's limits and wording:
    a request body sent as application/yaml or as an apply patch."""
    try:
        return _jsonable(yaml.load(text, Loader=_Loader), [MAX_VALUES])
    except _GoYAMLError as err:
        raise ParseError(f"error converting YAML to JSON: yaml: {err}") from None
    except yaml.YAMLError as err:
        raise ParseError(f"error converting YAML to JSON: yaml: {_yaml_problem(err)}") from None


def _json_type(value: Any) -> str:
    return {str: "string", bool: "bool", int: "number", float: "number",
            dict: "object"}.get(type(value), "value")


def _read(source: str | Path) -> tuple[str, str]:
    if isinstance(source, Path) or ("\n" not in source and (
            source.endswith((".yaml", ".yml", ".json")) or _is_file(source))):
        path = Path(source)
        try:
            return path.read_text(encoding="utf-8"), str(path)
        except FileNotFoundError:
            raise ParseError(f'the path "{path}" does not exist') from None
        except (OSError, UnicodeDecodeError, ValueError) as err:  # ValueError: a NUL byte
            raise ParseError(f'error reading "{path}": {err}') from None
    return source, "<input>"


def _is_file(text: str) -> bool:
    """Whether text names a file; text that cannot be a path (too long a name, a NUL) is text."""
    try:
        return Path(text).is_file()
    except (OSError, ValueError):
        return False


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
