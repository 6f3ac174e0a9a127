"""CEL's type check and static cost estimate, for the types a schema declares.

Upstream, cel-go's checker (checker/checker.go) types every expression against the declared
variables before it runs, and its cost estimator (checker/cost.go, with Kubernetes' sizes from
k8s.io/apiserver pkg/cel/common/schemas.go and library/cost.go) bounds what the expression can
cost from the schema's maxItems, maxProperties and maxLength. A list, map or string without a
bound is as large as the largest request could make it (3 MiB, MaxRequestSizeBytes, divided by
the smallest JSON its items take). The apiextensions validation (pkg/apis/apiextensions/
validation/validation.go) refuses a rule that does not type-check, does not evaluate to a
bool, or whose estimate, times the number of times it can run (its node's cardinality), is
over StaticEstimatedCostLimit; and a CRD whose rules together estimate over
StaticEstimatedCRDCostLimit.

kubelab's checker knows the types kubelab serves: a schema's objects (their declared fields:
`undefined field 'x'` for any other), lists, maps, strings, numbers, booleans, and the
formats date-time (timestamp), duration and byte; int-or-string and anything else is `dyn`,
checked when it runs. It reports an undeclared variable and an expression whose type is known
not to be bool. Departures: the estimator has cel-go's shape (a select or an identifier costs
1, a call 1, string functions a tenth of the string's length, a comprehension its range's size
times its body and the loop's own steps), not its exact numbers; syntax errors carry celpy's
description of the problem, not ANTLR's.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any

import celpy
import lark
from celpy.celparser import CELParseError

__all__ = [
    "DYN",
    "MAX_REQUEST_SIZE_BYTES",
    "PER_CALL_LIMIT",
    "RUNTIME_CEL_COST_BUDGET",
    "CelCheckError",
    "CelType",
    "Checked",
    "check",
    "environment",
    "schema_type",
]

# k8s.io/apiserver pkg/apis/cel/config.go
PER_CALL_LIMIT = 1_000_000
RUNTIME_CEL_COST_BUDGET = 10_000_000
MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024

STRING_TRAVERSAL_COST_FACTOR = 0.1  # cel-go common.StringTraversalCostFactor
LIST_CREATE_BASE_COST, MAP_CREATE_BASE_COST = 10, 30
MACROS = {"all", "exists", "exists_one", "map", "filter"}
_BOOL_RESULT = {"contains", "startsWith", "endsWith", "matches", "isSorted", "has"}
_STRING_RESULT = {"lowerAscii", "upperAscii", "trim", "replace", "substring", "charAt", "join",
                  "find", "string"}
_INT_RESULT = {"size", "indexOf", "lastIndexOf", "int"}
_PRIMITIVES = {"bool", "int", "uint", "double", "string", "bytes"}
_OPERATORS = {"relation_lt": "<", "relation_le": "<=", "relation_gt": ">", "relation_ge": ">=",
              "relation_eq": "==", "relation_ne": "!=", "relation_in": "in",
              "addition_add": "+", "addition_sub": "-", "multiplication_mul": "*",
              "multiplication_div": "/", "multiplication_mod": "%"}
_STRING_COST = {"contains", "startsWith", "endsWith", "matches", "lowerAscii", "upperAscii",
                "trim", "replace", "split", "indexOf", "lastIndexOf", "find", "findAll"}


class CelCheckError(ValueError):
    """The expression does not compile or type-check; str() is cel-go's issues text."""


@dataclass(frozen=True)
class CelType:
    """A CEL type; `size` is the most items (list, map) or characters (string) it can hold."""

    kind: str  # bool int uint double string bytes null_type list map object dyn duration timestamp
    elem: CelType | None = None  # a list's items, a map's values
    fields: dict[str, CelType] | None = field(default=None, compare=False)
    size: int = 0

    def __str__(self) -> str:
        if self.kind == "list":
            return f"list({self.elem})"
        if self.kind == "map":
            return f"map(string, {self.elem})"
        if self.kind in ("duration", "timestamp"):
            return f"google.protobuf.{self.kind.title()}"
        return self.kind


DYN = CelType("dyn", size=MAX_REQUEST_SIZE_BYTES)
BOOL, INT, UINT, DOUBLE = CelType("bool"), CelType("int"), CelType("uint"), CelType("double")
STRING = CelType("string", size=MAX_REQUEST_SIZE_BYTES)


def _min_size_json(s: dict[str, Any]) -> int:
    """estimateMinSizeJSON: the fewest bytes a value of this schema takes."""
    if s.get("x-kubernetes-int-or-string"):
        return 1
    return {"boolean": 4, "number": 1, "integer": 1, "string": 2, "array": 2,
            "object": 2}.get(str(s.get("type") or ""), 1)


def _max_items(s: dict[str, Any], item: dict[str, Any]) -> int:
    bound = s.get("maxItems")
    if isinstance(bound, int):
        return bound
    return (MAX_REQUEST_SIZE_BYTES - 2) // (_min_size_json(item) + 1)


def _max_properties(s: dict[str, Any], value: dict[str, Any]) -> int:
    bound = s.get("maxProperties")
    if isinstance(bound, int):
        return bound
    # a key takes at least `"":`, and every entry but the last a comma
    return (MAX_REQUEST_SIZE_BYTES - 2) // (_min_size_json(value) + 4)


def schema_type(s: Any, root: bool = False) -> CelType:
    """SchemaDeclType: the CEL type of a value of schema s (root: with apiVersion, kind and
    metadata.name/generateName, WithTypeAndObjectMeta)."""
    if not isinstance(s, dict) or s.get("x-kubernetes-int-or-string"):
        return DYN
    kind = s.get("type")
    if kind == "object":
        additional = s.get("additionalProperties")
        if isinstance(additional, dict) and not s.get("properties"):
            return CelType("map", schema_type(additional), size=_max_properties(s, additional))
        if additional is True:
            return CelType("map", DYN, size=_max_properties(s, {}))
        fields = {k: schema_type(v) for k, v in (s.get("properties") or {}).items()
                  if isinstance(v, dict)}
        if root or s.get("x-kubernetes-embedded-resource"):
            fields.setdefault("apiVersion", STRING)
            fields.setdefault("kind", STRING)
            fields["metadata"] = CelType("object", fields={"name": STRING, "generateName": STRING})
        if s.get("x-kubernetes-preserve-unknown-fields") and not fields:
            return DYN
        return CelType("object", fields=fields)
    if kind == "array":
        items = s.get("items")
        item_schema: dict[str, Any] = items if isinstance(items, dict) else {}
        return CelType("list", schema_type(item_schema), size=_max_items(s, item_schema))
    if kind == "string":
        fmt = s.get("format")
        if fmt == "date-time":
            return CelType("timestamp")
        if fmt == "duration":
            return CelType("duration")
        bound = s.get("maxLength")
        size = bound if isinstance(bound, int) else MAX_REQUEST_SIZE_BYTES - 2
        return CelType("bytes" if fmt == "byte" else "string", size=size)
    return {"integer": INT, "number": DOUBLE, "boolean": BOOL}.get(str(kind), DYN)


@dataclass
class Checked:
    """What the checker knows of a compiled expression."""

    output: CelType
    max_cost: int


@functools.cache
def environment() -> celpy.Environment:
    """The one CEL environment (celpy builds its LALR parser when the first is made: about a
    second, so not when kubelab is imported, only when a first rule is compiled)."""
    return celpy.Environment()


def check(text: str, variables: dict[str, CelType]) -> Checked:
    """Parse and check text with these variables; CelCheckError with cel-go's issue text."""
    try:
        ast = environment().compile(text)
    except CELParseError as err:
        line, column = err.line or 1, err.column or 1
        lines = text.splitlines() or [""]
        token = getattr(err.__context__, "token", None)  # lark's UnexpectedToken
        if token is not None and token.type == "$END":
            # at the end: cel-go's position is just past the last character
            found, line, column = "'<EOF>'", len(lines), len(lines[-1]) + 1
        else:
            found = f"'{token}'" if token is not None else "input"
        raise CelCheckError(_issue(text, line, column, f"Syntax error: mismatched input {found}"))\
            from None
    checker = _Checker(text, variables)
    output, cost = checker.visit(ast)
    return Checked(output, cost)


def _issue(text: str, line: int, column: int, message: str) -> str:
    """cel-go's Errors.ToDisplayString: the location, then the source line and a caret."""
    lines = text.splitlines() or [""]
    source = lines[min(line, len(lines)) - 1]
    return (f"ERROR: <input>:{line}:{column}: {message}\n | {source}\n | "
            f"{'.' * (column - 1)}^")


def _saturating(value: float) -> int:
    return int(min(value, 2**64 - 1))


class _Checker:
    def __init__(self, text: str, variables: dict[str, CelType]) -> None:
        self.text = text
        self.scopes: list[dict[str, CelType]] = [dict(variables)]

    def error(self, token: Any, column_offset: int, message: str) -> CelCheckError:
        line = getattr(token, "line", 1) or 1
        column = max((getattr(token, "column", 1) or 1) + column_offset, 1)
        return CelCheckError(_issue(self.text, line, column, message))

    def lookup(self, name: str) -> CelType | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def visit(self, tree: Any) -> tuple[CelType, int]:
        if isinstance(tree, lark.Token):
            return DYN, 0
        kids = [c for c in tree.children if c is not None]
        method = getattr(self, "_" + tree.data, None)
        if method is not None:
            return method(tree, kids)  # type: ignore[no-any-return]
        if len(kids) == 1:
            return self.visit(kids[0])
        return self._binary(tree, kids)

    # ------------------------------------------------------------------ operators

    def _expr(self, tree: Any, kids: list[Any]) -> tuple[CelType, int]:
        if len(kids) == 1:
            return self.visit(kids[0])
        (_, cond), (then, c1), (other, c2) = (self.visit(k) for k in kids)
        return (then if then == other else DYN), cond + max(c1, c2)

    def _binary(self, tree: Any, kids: list[Any]) -> tuple[CelType, int]:
        op_tree, right = kids
        (lt, lc), (rt, rc) = self.visit(op_tree.children[0]), self.visit(right)
        op = op_tree.data
        if tree.data in ("conditionalor", "conditionaland"):
            return BOOL, lc + rc
        self.overload(op_tree, lt, rt)
        if op.startswith("relation_"):
            extra = 1
            if op in ("relation_eq", "relation_ne") and lt.kind in ("string", "bytes", "list"):
                extra += math.ceil(min(lt.size, rt.size or lt.size) *
                                   (STRING_TRAVERSAL_COST_FACTOR if lt.kind != "list" else 1))
            if op == "relation_in" and rt.kind in ("list", "map"):
                extra += rt.size if rt.kind == "list" else 0
            return BOOL, lc + rc + extra
        if op == "addition_add" and lt.kind == rt.kind and lt.kind in ("string", "list"):
            size = lt.size + rt.size
            return CelType(lt.kind, lt.elem, size=size), lc + rc + 1 + math.ceil(
                size * STRING_TRAVERSAL_COST_FACTOR if lt.kind == "string" else 0)
        if lt == rt and lt.kind in ("int", "uint", "double"):
            return lt, lc + rc + 1
        return DYN, lc + rc + 1

    def overload(self, op_tree: Any, lt: CelType, rt: CelType) -> None:
        """cel-go's "found no matching overload" for two primitives no operator takes."""
        symbol = _OPERATORS[op_tree.data]
        if lt.kind not in _PRIMITIVES or rt.kind not in _PRIMITIVES or lt.kind == rt.kind:
            return
        numbers = {"int", "uint", "double"}
        if op_tree.data.startswith("relation_") and op_tree.data != "relation_in" and \
                lt.kind in numbers and rt.kind in numbers:
            return  # cross-type numeric comparisons (Kubernetes' base environment)
        if op_tree.data == "relation_in":
            return
        meta = op_tree.meta
        column = (meta.end_column - len(symbol)) if not meta.empty else 1
        token = type("Position", (), {"line": meta.line if not meta.empty else 1,
                                      "column": column})()
        raise self.error(token, 0, f"found no matching overload for '_{symbol}_' applied to "
                         f"'({lt}, {rt})'")

    def _conditionalor(self, tree: Any, kids: list[Any]) -> tuple[CelType, int]:
        if len(kids) == 1:
            return self.visit(kids[0])
        (_, lc), (_, rc) = self.visit(kids[0]), self.visit(kids[1])
        return BOOL, lc + rc

    _conditionaland = _conditionalor

    def _unary(self, tree: Any, kids: list[Any]) -> tuple[CelType, int]:
        if len(kids) == 1:
            return self.visit(kids[0])
        kind, cost = self.visit(kids[1])
        return (BOOL if kids[0].data == "unary_not" else kind), cost + 1

    # ------------------------------------------------------------------ primaries

    def _literal(self, tree: Any, kids: list[Any]) -> tuple[CelType, int]:
        token = kids[0]
        kind = {"INT_LIT": INT, "UINT_LIT": UINT, "FLOAT_LIT": DOUBLE, "BOOL_LIT": BOOL,
                "NULL_LIT": CelType("null_type")}.get(token.type)
        if kind is None:  # strings and bytes
            kind = CelType("bytes" if token.type == "BYTES_LIT" else "string", size=len(token))
        return kind, 0

    def _ident(self, tree: Any, kids: list[Any]) -> tuple[CelType, int]:
        name = str(kids[0])
        kind = self.lookup(name)
        if kind is None:
            raise self.error(kids[0], 0, f"undeclared reference to '{name}' (in container '')")
        return kind, 1

    def _paren_expr(self, tree: Any, kids: list[Any]) -> tuple[CelType, int]:
        return self.visit(kids[0])

    def _list_lit(self, tree: Any, kids: list[Any]) -> tuple[CelType, int]:
        items = [self.visit(k) for k in (kids[0].children if kids else [])]
        kinds = {t for t, _ in items}
        elem = kinds.pop() if len(kinds) == 1 else DYN
        return CelType("list", elem, size=len(items)), LIST_CREATE_BASE_COST + sum(c for _, c in items)

    def _map_lit(self, tree: Any, kids: list[Any]) -> tuple[CelType, int]:
        items = [self.visit(k) for k in (kids[0].children if kids else [])]
        values = {t for t, _ in items[1::2]}
        elem = values.pop() if len(values) == 1 else DYN
        return CelType("map", elem, size=len(items) // 2), MAP_CREATE_BASE_COST + sum(c for _, c in items)

    def _member_dot(self, tree: Any, kids: list[Any]) -> tuple[CelType, int]:
        operand, name = kids
        kind, cost = self.visit(operand)
        return self.select(kind, name), cost + 1

    def select(self, kind: CelType, name: Any) -> CelType:
        if kind.kind == "object" and kind.fields is not None:
            if str(name) not in kind.fields:
                raise self.error(name, -1, f"undefined field '{name}'")
            return kind.fields[str(name)]
        if kind.kind == "map":
            return kind.elem or DYN
        if kind.kind == "dyn":
            return DYN
        raise self.error(name, -1, f"type '{kind}' does not support field selection")

    def _member_index(self, tree: Any, kids: list[Any]) -> tuple[CelType, int]:
        (kind, c1), (_, c2) = self.visit(kids[0]), self.visit(kids[1])
        elem = kind.elem if kind.kind in ("list", "map") and kind.elem else DYN
        return elem, c1 + c2 + 1

    def _member_object(self, tree: Any, kids: list[Any]) -> tuple[CelType, int]:
        return DYN, 1

    def _ident_arg(self, tree: Any, kids: list[Any]) -> tuple[CelType, int]:
        name, args = str(kids[0]), (kids[1].children if len(kids) > 1 else [])
        if name == "has" and len(args) == 1:
            inner = _unwrap(args[0])
            if getattr(inner, "data", "") != "member_dot":
                raise self.error(kids[0], 3, "invalid argument to has() macro")
            _, cost = self.visit(inner)
            return BOOL, cost
        typed = [self.visit(a) for a in args]
        return self.call(name, None, typed)

    def _dot_ident_arg(self, tree: Any, kids: list[Any]) -> tuple[CelType, int]:
        return self._ident_arg(tree, kids)

    def _member_dot_arg(self, tree: Any, kids: list[Any]) -> tuple[CelType, int]:
        operand, name = kids[0], str(kids[1])
        args = kids[2].children if len(kids) > 2 else []
        target, target_cost = self.visit(operand)
        if name in MACROS and len(args) == 2:
            return self.comprehension(name, target, target_cost, args)
        typed = [self.visit(a) for a in args]
        kind, cost = self.call(name, target, typed)
        return kind, cost + target_cost

    def call(self, name: str, target: CelType | None, args: list[tuple[CelType, int]]) -> tuple[CelType, int]:
        arg_cost = sum(c for _, c in args)
        subject = target if target is not None else (args[0][0] if args else DYN)
        cost = 1
        if name in _STRING_COST:
            cost += math.ceil(subject.size * STRING_TRAVERSAL_COST_FACTOR)
        elif name in ("isSorted", "sum", "min", "max", "join"):
            cost += subject.size
        if name in _BOOL_RESULT:
            return BOOL, arg_cost + cost
        if name in _STRING_RESULT:
            return CelType("string", size=subject.size or STRING.size), arg_cost + cost
        if name in _INT_RESULT:
            return INT, arg_cost + cost
        if name in ("split", "findAll"):
            return CelType("list", STRING, size=subject.size), arg_cost + cost
        if name in ("sum", "min", "max") and subject.kind == "list" and subject.elem:
            return subject.elem, arg_cost + cost
        if name == "double":
            return DOUBLE, arg_cost + cost
        if name in ("duration", "timestamp"):
            return CelType(name), arg_cost + cost
        return DYN, arg_cost + cost

    def comprehension(self, name: str, target: CelType, target_cost: int,
                      args: list[Any]) -> tuple[CelType, int]:
        var = _unwrap(args[0])
        if getattr(var, "data", "") != "ident":
            raise self.error(getattr(var, "meta", None), 0, "argument must be a simple name")
        if target.kind == "list":
            var_type = target.elem or DYN
        elif target.kind == "map":
            var_type = STRING
        else:
            var_type = DYN
        self.scopes.append({str(var.children[0]): var_type})
        try:
            body, body_cost = self.visit(args[1])
        finally:
            self.scopes.pop()
        # loop condition and step: the accumulator's identifier, @not_strictly_false or the
        # list append (a list creation for map and filter)
        step = 3 if name in ("all", "exists", "exists_one") else LIST_CREATE_BASE_COST + 3
        cost = target_cost + _saturating(target.size * (body_cost + step))
        if name == "map":
            return CelType("list", body, size=target.size), cost
        if name == "filter":
            return target, cost
        return BOOL, cost


def _unwrap(tree: Any) -> Any:
    """The node an expression is made of, without its one-child wrappers."""
    while isinstance(tree, lark.Tree) and len(tree.children) == 1 and \
            isinstance(tree.children[0], lark.Tree) and tree.data not in ("ident", "literal"):
        tree = tree.children[0]
    return tree
