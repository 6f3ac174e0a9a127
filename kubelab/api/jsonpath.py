"""kubectl's JSONPath templates: `-o jsonpath='{.items[*].metadata.name}'`.

Follows k8s.io/client-go/util/jsonpath (parser.go, jsonpath.go): text outside braces is
printed as it is; inside, a path of fields (`.metadata.name`, `['app.kubernetes.io/name']`),
array indexes and slices (`[0]`, `[-1]`, `[1:3]`, `[*]`), recursive descent (`..name`),
filters (`[?(@.type=="Ready")]`), string literals (`{"\\n"}`) and `{range ...}...{end}`.
Several results of one expression are joined by a space; a string prints bare, a map or list
as JSON (json.Marshal's: keys sorted, `<`, `>` and `&` escaped), a number as Go prints it
(`1e+06`). kubectl allows missing keys: a path that finds nothing prints nothing.

What execute still refuses at run time is a JSONPathRuntimeError in jsonpath.go's words
(evalArray, evalFilter): an index or slice out of bounds (`array index out of bounds: index 5,
length 2`, with Go's slice arithmetic), `starting index 2 is greater than ending index 1`,
`step must be > 0`, an index into what is not a list (`string is not array or slice`, the Go
type unstructured JSON decodes to) and a filter over what is not a list.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any

__all__ = ["JSONPathError", "JSONPathRuntimeError", "execute", "go_float", "go_type", "go_value",
           "parse", "relaxed"]

# json.Marshal's HTMLEscape, and its escapes of the two line separators JavaScript refuses.
_JSON_ESCAPES = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026",
                 0x2028: "\\u2028", 0x2029: "\\u2029"}


class JSONPathError(ValueError):
    """A template the parser refuses, in client-go's words."""


class JSONPathRuntimeError(JSONPathError):
    """A template that parses but cannot be executed on this data (jsonpath.go Execute)."""


_TOKEN = re.compile(r"""\.\.|\.|\[\?\((?P<filter>[^)]*)\)\]|\[(?P<bracket>[^\]]*)\]|
                        (?P<field>[^.\[\]]+)""", re.X)
_FILTER = re.compile(r"""^\s*@(?P<path>[^=!<>\s]*)\s*(?:(?P<op>==|!=|<=|>=|<|>)\s*(?P<value>.+?))?\s*$""")


def relaxed(template: str) -> str:
    """RelaxedJSONPathExpression (custom-columns): `.a.b` and `a.b` become `{.a.b}`."""
    text = template.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    return "{" + (text if text.startswith(".") else "." + text) + "}"


def parse(template: str) -> None:
    """Raise JSONPathError if the parser refuses the template (jsonpath.Parse)."""
    _parse(template)


def execute(template: str, data: Any) -> str:
    """The text the template prints for data."""
    nodes = _parse(template)
    out: list[str] = []
    _run(nodes, [data], out)
    return "".join(out)


def go_type(value: Any) -> str:
    """The Go type unstructured JSON decodes a value to, as reflect's Type prints it."""
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, list):
        return "[]interface {}"
    if isinstance(value, bool):
        return "bool"
    return {str: "string", int: "int64", float: "float64"}.get(type(value), "interface {}")


def go_float(value: float) -> str:
    """%v of a float64 (strconv.FormatFloat 'g', -1): the shortest digits, in %e form when
    the exponent is < -4 or >= 6 (`1e+06`)."""
    if value != value or value in (float("inf"), float("-inf")):
        return {"nan": "NaN", "inf": "+Inf", "-inf": "-Inf"}[repr(value)]
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    assert isinstance(exponent, int)
    text = "".join(map(str, digits)) or "0"
    exp = len(text) + exponent - 1
    if exp < -4 or exp >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        out = f"{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    else:
        out = format(Decimal(repr(value)).normalize(), "f")
    return ("-" if sign and not out.startswith("-") else "") + out


def go_value(value: Any) -> str:
    """Go's %v of a decoded JSON value: `map[a:1 b:[x y]]`, keys sorted as fmt sorts them."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_value(v)}" for k, v in sorted(value.items())) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_value(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    return _text(value)


def _parse(template: str) -> list[Any]:
    """Text pieces and ("expr", path) / ("range", path, body) nodes."""
    nodes: list[Any] = []
    stack: list[list[Any]] = [nodes]
    pos = 0
    while pos < len(template):
        start = template.find("{", pos)
        if start < 0:
            stack[-1].append(template[pos:])
            break
        if start > pos:
            stack[-1].append(template[pos:start])
        end = _closing(template, start)
        inner = template[start + 1:end].strip()
        pos = end + 1
        if inner == "end":
            if len(stack) == 1:
                raise JSONPathError("not in range, nothing to end")
            stack.pop()
        elif inner.startswith("range "):
            body: list[Any] = []
            stack[-1].append(("range", inner[6:].strip(), body))
            stack.append(body)
        elif inner[:1] in ("'", '"') and inner[-1:] == inner[:1] and len(inner) > 1:
            stack[-1].append(json.loads('"' + inner[1:-1].replace('"', '\\"') + '"')
                             if inner[0] == '"' else inner[1:-1])
        else:
            stack[-1].append(("expr", inner))
    if len(stack) > 1:
        raise JSONPathError("unclosed action")
    return nodes


def _closing(template: str, start: int) -> int:
    quote = ""
    for i in range(start + 1, len(template)):
        ch = template[i]
        if quote:
            quote = "" if ch == quote and template[i - 1] != "\\" else quote
        elif ch in ("'", '"'):
            quote = ch
        elif ch == "}":
            return i
    raise JSONPathError("unclosed action")


def _run(nodes: list[Any], scope: list[Any], out: list[str]) -> None:
    for node in nodes:
        if isinstance(node, str):
            out.append(node)
        elif node[0] == "range":
            for item in _eval(node[1], scope[-1], strict=True):
                _run(node[2], [*scope, item], out)
        else:
            out.append(" ".join(_text(v) for v in _eval(node[1], scope[-1], strict=True)))


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):  # json.Marshal: keys sorted, UTF-8, HTML escaped
        return json.dumps(value, separators=(",", ":"), sort_keys=True,
                          ensure_ascii=False).translate(_JSON_ESCAPES)
    if isinstance(value, float):
        return go_float(value)
    return str(value)


def _eval(path: str, data: Any, *, strict: bool = False) -> list[Any]:
    """The values `path` (".a[0].b", "@.x", "..name") finds in data; strict: an index or a
    filter on what is not a list is an error, as in jsonpath.go (else it finds nothing)."""
    path = path.strip()
    if path in ("", "@", "."):
        return [data]
    current, recursive = [data], False
    for m in _TOKEN.finditer(path.removeprefix("@").removeprefix("$")):
        token = m.group(0)
        if token == "..":
            recursive = True
            continue
        if token == ".":
            continue
        if recursive:
            current = [v for c in current for v in _descendants(c)]
            recursive = False
        if m.group("filter") is not None:
            if strict:
                for c in current:
                    if not isinstance(c, list):
                        raise JSONPathRuntimeError(f"{go_value(c)} is not array or slice and "
                                                   "cannot be filtered")
            current = [item for c in current for item in _items(c) if _matches(m.group("filter"), item)]
        elif m.group("bracket") is not None:
            current = [v for c in current if c is not None
                       for v in _bracket(m.group("bracket").strip(), c, strict)]
        else:
            field = token.strip()
            current = [c[field] for c in current if isinstance(c, dict) and field in c] \
                if field != "*" else [v for c in current for v in _items(c)]
    return current


def _items(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    return [value[k] for k in sorted(value)] if isinstance(value, dict) else []


def _descendants(value: Any) -> list[Any]:
    found = [value]
    for child in _items(value):
        found += _descendants(child)
    return found


def _bracket(spec: str, value: Any, strict: bool = False) -> list[Any]:
    if spec == "*":
        return _items(value)
    if spec[:1] in ("'", '"'):
        keys = [k.strip()[1:-1] for k in spec.split(",")]
        return [value[k] for k in keys if isinstance(value, dict) and k in value]
    if not isinstance(value, list):
        if strict:
            raise JSONPathRuntimeError(f"{go_type(value)} is not array or slice")
        return []
    try:
        parts = [int(p) if p.strip() else None for p in spec.split(":")]
    except ValueError:
        raise JSONPathError(f"invalid array index {spec}") from None
    return _slice(value, parts)


def _slice(value: list[Any], parts: list[int | None]) -> list[Any]:
    """evalArray: [i] is [i:i+1] (its end "derived"), negative bounds count from the end, and
    whatever still falls outside the list is an error; a slice of nothing is allowed."""
    length = len(value)
    start = parts[0] if parts[0] is not None else 0
    derived = len(parts) == 1
    end: int = start + 1 if derived else (parts[1] if parts[1] is not None else length)
    step = parts[2] if len(parts) > 2 else None
    if start < 0:
        start += length
    if end < 0 or (end == 0 and derived):
        end += length
    if end == start:
        return []
    if not 0 <= start < length:
        raise JSONPathRuntimeError(f"array index out of bounds: index {start}, length {length}")
    if not 0 <= end <= length:
        raise JSONPathRuntimeError(f"array index out of bounds: index {end - 1}, length {length}")
    if start > end:
        raise JSONPathRuntimeError(f"starting index {start} is greater than ending index {end}")
    if step is not None and step <= 0:
        raise JSONPathRuntimeError("step must be > 0")
    return value[start:end:step or 1]


def _matches(expression: str, item: Any) -> bool:
    m = _FILTER.match(expression)
    if m is None:
        raise JSONPathError(f"unrecognized filter: {expression}")
    found = _eval(m.group("path") or "@", item)
    if m.group("op") is None:
        return bool(found)
    raw = m.group("value").strip()
    want: Any = raw[1:-1] if raw[:1] in ("'", '"') else json.loads(raw) if raw else ""
    ops = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
           ">": lambda a, b: a > b, "<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b}
    try:
        return any(ops[m.group("op")](value, want) for value in found)
    except TypeError:
        return False
