"""The Common Expression Language, as the API server evaluates it for CRD validation rules
(x-kubernetes-validations) and ValidatingAdmissionPolicies.

Upstream uses cel-go with Kubernetes' libraries (k8s.io/apiserver pkg/cel/library). kubelab
uses cel-python (`celpy`, pure Python, on PyPI), which implements the CEL language and its
standard functions: field selection, `has()`, `size()`, the macros `all`, `exists`,
`exists_one`, `map`, `filter`, `in`, `matches`, `startsWith`, `endsWith`, `contains`, type
conversions and the duration/timestamp types. kubelab adds these Kubernetes library functions:
the strings extension's `lowerAscii`, `upperAscii`, `trim`, `split`, `join`, `replace`,
`indexOf`, `lastIndexOf`, `substring`, `charAt`, the regex library's `find` and `findAll`, and
the lists library's `isSorted`, `sum`, `min`, `max`. Not supported: `quantity`, `url`, `ip`,
`cidr`, `format`, optional types (`self.?x`). Types and the estimated cost are checked before
an expression is stored (cel_check.py); while it runs, every step (an identifier, a selection,
a call, an operator) costs one unit, and past PerCallLimit (10^6) the evaluation stops with
cel-go's "operation cancelled: actual cost limit exceeded". An unknown function is found when
the rule runs (`undeclared reference to 'f'`), not when the CRD or policy is written, as
cel-go's type-checker would.

Compiled programs are cached by their text, as upstream caches them per CRD.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import pairwise
from typing import Any

import lark
from celpy import celtypes
from celpy.adapter import json_to_cel
from celpy.celparser import CELParseError
from celpy.evaluation import CELEvalError, Evaluator

from kubelab.apiserver.cel_check import PER_CALL_LIMIT, environment

__all__ = ["CelCompileError", "CelCostError", "CelEvalError", "Program", "compile_expression", "to_cel"]


class CelCompileError(ValueError):
    """The expression does not compile; str() is the reason."""


class CelEvalError(RuntimeError):
    """The expression failed while it ran (no such key, division by zero, no such overload)."""


class CelCostError(CelEvalError):
    """The expression ran past its cost limit (cel-go: "operation cancelled: actual cost limit
    exceeded")."""


def _lower_ascii(s: celtypes.StringType) -> celtypes.StringType:
    return celtypes.StringType("".join(c.lower() if c.isascii() else c for c in s))


def _upper_ascii(s: celtypes.StringType) -> celtypes.StringType:
    return celtypes.StringType("".join(c.upper() if c.isascii() else c for c in s))


def _split(s: celtypes.StringType, sep: celtypes.StringType) -> celtypes.ListType:
    return celtypes.ListType([celtypes.StringType(p) for p in str(s).split(str(sep))])


def _join(items: celtypes.ListType, sep: celtypes.StringType | None = None) -> celtypes.StringType:
    return celtypes.StringType(str(sep or "").join(str(i) for i in items))


def _replace(s: celtypes.StringType, old: celtypes.StringType,
             new: celtypes.StringType) -> celtypes.StringType:
    return celtypes.StringType(str(s).replace(str(old), str(new)))


def _index_of(s: Any, item: Any) -> celtypes.IntType:
    if isinstance(s, str):
        return celtypes.IntType(str(s).find(str(item)))
    return celtypes.IntType(list(s).index(item) if item in s else -1)


def _values(items: celtypes.ListType) -> list[Any]:
    return list(items)


def _substring(s: celtypes.StringType, start: celtypes.IntType,
               end: celtypes.IntType | None = None) -> celtypes.StringType:
    text = str(s)
    if start < 0 or start > len(text) or (end is not None and not start <= end <= len(text)):
        raise ValueError(f"index out of range: {end if end is not None else start}")
    return celtypes.StringType(text[start:end])


def _find(s: celtypes.StringType, pattern: celtypes.StringType) -> celtypes.StringType:
    match = re.search(str(pattern), str(s))
    return celtypes.StringType(match.group(0) if match else "")


def _find_all(s: celtypes.StringType, pattern: celtypes.StringType,
              limit: celtypes.IntType | None = None) -> celtypes.ListType:
    found = [celtypes.StringType(m.group(0)) for m in re.finditer(str(pattern), str(s))]
    return celtypes.ListType(found if limit is None or limit < 0 else found[:limit])


def _is_sorted(items: celtypes.ListType) -> celtypes.BoolType:
    return celtypes.BoolType(all(a <= b for a, b in pairwise(_values(items))))


def _sum(items: celtypes.ListType) -> Any:
    total: Any = celtypes.IntType(0)
    for item in items:
        total = total + item
    return total


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "lowerAscii": _lower_ascii, "upperAscii": _upper_ascii,
    "trim": lambda s: celtypes.StringType(str(s).strip()),
    "split": _split, "join": _join, "replace": _replace, "indexOf": _index_of,
    "substring": _substring, "find": _find, "findAll": _find_all,
    "charAt": lambda s, i: celtypes.StringType(str(s)[i:i + 1]),
    "lastIndexOf": lambda s, sub: celtypes.IntType(str(s).rfind(str(sub))),
    "isSorted": _is_sorted, "sum": _sum,
    "min": lambda items: min(items), "max": lambda items: max(items),
}

# What costs one unit when it runs: an identifier, a field selection, an index, a call, an
# operator, a list or map literal (cel-go's interpreter counts the same kinds of steps).
_COSTED = frozenset({
    "ident", "member_dot", "member_dot_arg", "member_index", "ident_arg", "dot_ident_arg",
    "list_lit", "map_lit", "unary_not", "unary_neg", "relation_lt", "relation_le", "relation_gt",
    "relation_ge", "relation_eq", "relation_ne", "relation_in", "addition_add", "addition_sub",
    "multiplication_mul", "multiplication_div", "multiplication_mod"})


class _CostLimitExceeded(BaseException):
    """Raised inside celpy's evaluator to stop it; Program.evaluate turns it into CelCostError."""


class _CostTracker:
    def __init__(self, limit: int | None) -> None:
        self.cost, self.limit = 0, limit


class _Evaluator(Evaluator):
    """celpy's evaluator with cel-go's cost tracking (cel.CostLimit): every costed step adds
    one, and past the limit the evaluation stops."""

    tracker: _CostTracker

    def sub_evaluator(self, ast: lark.Tree[Any]) -> Evaluator:
        nested = _Evaluator(ast, activation=self.activation)
        nested.tracker = self.tracker
        return nested

    def _visit_tree(self, tree: lark.Tree[Any]) -> Any:
        if tree.data in _COSTED:
            tracker = self.tracker
            tracker.cost += 1
            if tracker.limit is not None and tracker.cost > tracker.limit:
                raise _CostLimitExceeded
        return super()._visit_tree(tree)


class Program:
    """A compiled expression. `last_cost` is what its last evaluation cost."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.last_cost = 0
        try:
            ast = environment().compile(text)
        except CELParseError as err:
            raise CelCompileError(str(err).strip()) from None
        self._program = environment().program(ast, functions=FUNCTIONS)

    def evaluate(self, activation: dict[str, Any], cost_limit: int | None = PER_CALL_LIMIT) -> Any:
        """The expression's value (a plain Python value) with these variables (JSON values).
        Past cost_limit (upstream's PerCallLimit) it stops with CelCostError."""
        tracker = _CostTracker(cost_limit)
        evaluator = _Evaluator(ast=self._program.ast, activation=self._program.new_activation())
        evaluator.tracker = tracker
        try:
            result = evaluator.evaluate({k: to_cel(v) for k, v in activation.items()})
        except _CostLimitExceeded:
            raise CelCostError("operation cancelled: actual cost limit exceeded") from None
        except CELEvalError as err:
            raise CelEvalError(_eval_message(err)) from None
        except (TypeError, ValueError, ZeroDivisionError, KeyError, IndexError) as err:
            raise CelEvalError(str(err)) from None
        finally:
            self.last_cost = tracker.cost
        if isinstance(result, CELEvalError):
            raise CelEvalError(_eval_message(result))
        return _from_cel(result)


def _eval_message(err: Exception) -> str:
    """cel-go's words where kubelab can tell which error it is."""
    text = str(err.args[0]) if err.args else str(err)
    if text.startswith("undeclared reference to"):  # cel-go finds these when it compiles
        return text.split(" (in activation", 1)[0]
    if "no such member" in text or (len(err.args) > 1 and err.args[1] is KeyError):
        key = text.rsplit(":", 1)[-1].strip().strip("'")
        return f"no such key: {key}"
    if len(err.args) > 1 and err.args[1] is ZeroDivisionError:
        return "division by zero"
    if "no such overload" in text or (len(err.args) > 1 and err.args[1] is TypeError):
        return "no such overload"
    return text


_CACHE: dict[str, Program] = {}


def compile_expression(text: str) -> Program:
    """The compiled program for text (cached), or CelCompileError."""
    program = _CACHE.get(text)
    if program is None:
        if len(_CACHE) > 1024:
            _CACHE.clear()
        program = _CACHE[text] = Program(text)
    return program


def to_cel(value: Any) -> Any:
    if value is None:
        return None
    return json_to_cel(value)


def _from_cel(value: Any) -> Any:
    if isinstance(value, celtypes.BoolType):
        return bool(value)
    if isinstance(value, celtypes.IntType | celtypes.UintType):
        return int(value)
    if isinstance(value, celtypes.DoubleType):
        return float(value)
    if isinstance(value, celtypes.StringType):
        return str(value)
    if isinstance(value, celtypes.ListType):
        return [_from_cel(v) for v in value]
    if isinstance(value, celtypes.MapType):
        return {str(k): _from_cel(v) for k, v in value.items()}
    return value
