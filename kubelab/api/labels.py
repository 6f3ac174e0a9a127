"""Label selectors: "app=web,tier!=db,env in (prod,staging),!canary".

Every controller finds the objects it owns with a label selector, and every list or watch can
carry one, so this small language sits at the heart of the control plane. Follows apimachinery
pkg/labels/selector.go (the lexer, the parser, Requirement, String) and
pkg/apis/meta/v1/helpers.go (LabelSelectorAsSelector), with their error messages.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from kubelab.api.errors import ParseError
from kubelab.api.validation import is_label_key as _label_key_errors
from kubelab.api.validation import is_valid_label_value as _label_value_errors

__all__ = [
    "Operator",
    "Requirement",
    "Selector",
    "everything",
    "new_requirement",
    "nothing",
    "parse_selector",
    "selector_from_label_selector",
    "selector_from_set",
]


class Operator(StrEnum):
    """selection.Operator: the relation between a label and the requirement's values."""

    DoesNotExist = "!"
    Equals = "="
    DoubleEquals = "=="
    In = "in"
    NotEquals = "!="
    NotIn = "notin"
    Exists = "exists"
    GreaterThan = "gt"
    LessThan = "lt"


_BINARY = [Operator.In, Operator.NotIn, Operator.Equals, Operator.DoubleEquals,
           Operator.NotEquals, Operator.GreaterThan, Operator.LessThan]
_VALID = [*_BINARY, Operator.Exists, Operator.DoesNotExist]
_EQUALITY = (Operator.In, Operator.Equals, Operator.DoubleEquals)
_INEQUALITY = (Operator.NotIn, Operator.NotEquals)
_INT64_RE = re.compile(r"[+-]?[0-9]+")


@dataclass(frozen=True)
class Requirement:
    """One condition on one label key, such as `env in (prod,staging)`.

    Build it with new_requirement(), which validates as upstream NewRequirement does."""

    key: str
    operator: Operator
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Requirement.Matches: the switch on the operator of selector.go."""
        op = self.operator
        if op in _EQUALITY:
            return self.key in labels and labels[self.key] in self.values  # hasValue
        if op in _INEQUALITY:
            return self.key not in labels or labels[self.key] not in self.values
        if op is Operator.Exists:
            return self.key in labels
        if op is Operator.DoesNotExist:
            return self.key not in labels
        # Gt/Lt compare as int64; a label that is not an integer never matches.
        have = _parse_int64(labels[self.key]) if self.key in labels else None
        want = _parse_int64(self.values[0]) if len(self.values) == 1 else None
        if have is None or want is None:
            return False
        return have > want if op is Operator.GreaterThan else have < want

    def __str__(self) -> str:
        op = self.operator
        if op is Operator.Exists:
            return self.key
        if op is Operator.DoesNotExist:
            return "!" + self.key
        values = ",".join(sorted(self.values))  # sorted on output only, as upstream
        if op in (Operator.In, Operator.NotIn):
            return f"{self.key} {op} ({values})"
        symbol = {Operator.GreaterThan: ">", Operator.LessThan: "<"}.get(op, str(op))
        return f"{self.key}{symbol}{values}"


@dataclass(frozen=True)
class Selector:
    """An AND of requirements, kept sorted by key (so String() is deterministic).

    Selector() is everything(): it matches every object. nothing() matches none."""

    requirements: tuple[Requirement, ...] = ()
    # labels.Nothing(): matches no object and prints as "" (a nil LabelSelector means this).
    matches_nothing: bool = False

    def __post_init__(self) -> None:
        ordered = tuple(sorted(self.requirements, key=lambda r: r.key))  # stable, like upstream
        object.__setattr__(self, "requirements", ordered)

    def matches(self, labels: Mapping[str, str]) -> bool:
        """internalSelector.Matches: every requirement matches (nothing() matches none)."""
        if self.matches_nothing:
            return False
        for requirement in self.requirements:  # noqa: SIM110 (the loop of selector.go)
            if not requirement.matches(labels):
                return False
        return True

    def empty(self) -> bool:
        """True when the selector does not restrict anything (everything())."""
        return not self.matches_nothing and not self.requirements

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


def everything() -> Selector:
    return Selector()


def nothing() -> Selector:
    return Selector(matches_nothing=True)


def selector_from_set(labels: Mapping[str, str] | None) -> Selector:
    """SelectorFromSet: key=value for each label. Not validated, as upstream."""
    return Selector(tuple(Requirement(k, Operator.Equals, (v,)) for k, v in (labels or {}).items()))


def new_requirement(key: str, operator: str, values: Sequence[str] | None) -> Requirement:
    """NewRequirement: validate, then build. Raises ParseError with upstream's aggregate
    of field errors. values=None stands for Go's nil slice, shown as `null` in messages."""
    errs = []
    if problems := _label_key_errors(key):
        errs.append(f"key: {_invalid(key, '; '.join(problems))}")
    vals = list(values or [])
    shown: object = None if values is None else vals
    if operator in (Operator.In, Operator.NotIn) and not vals:
        errs.append(f"values: {_invalid(shown, _NEEDS_VALUES)}")
    elif operator in (Operator.Equals, Operator.DoubleEquals, Operator.NotEquals) \
            and len(vals) != 1:
        errs.append(f"values: {_invalid(shown, 'exact-match compatibility requires one single value')}")
    elif operator in (Operator.Exists, Operator.DoesNotExist) and vals:
        errs.append(f"values: {_invalid(shown, 'values set must be empty for exists and does not exist')}")
    elif operator in (Operator.GreaterThan, Operator.LessThan):
        if len(vals) != 1:
            errs.append(f"values: {_invalid(shown, _NEEDS_ONE_INT)}")
        errs += [f"values[{i}]: {_invalid(v, _MUST_BE_INT)}"
                 for i, v in enumerate(vals) if _parse_int64(v) is None]
    elif operator not in _VALID:
        supported = ", ".join(json.dumps(str(o)) for o in _VALID)
        errs.append(f"operator: Unsupported value: {json.dumps(operator, ensure_ascii=False)}: "
                    f"supported values: {supported}")
    for i, v in enumerate(vals):
        if problems := _label_value_errors(v):
            errs.append(f"values[{i}][{key}]: {_invalid(v, '; '.join(problems))}")
    if errs:
        raise ParseError(_aggregate(errs))
    return Requirement(key, Operator(operator), tuple(vals))


_NEEDS_VALUES = "for 'in', 'notin' operators, values set can't be empty"
_NEEDS_ONE_INT = "for 'Gt', 'Lt' operators, exactly one value is required"
_MUST_BE_INT = "for 'Gt', 'Lt' operators, the value must be an integer"


@functools.lru_cache(maxsize=1024)
def parse_selector(text: str) -> Selector:
    """labels.Parse: the selector written as text, or ParseError. Cached: Selector is immutable.

    The message is metav1.ParseToLabelSelector's: `couldn't parse the selector string "...":`
    followed by the parser's own error, e.g. `unable to parse requirement: ...`."""
    try:
        return Selector(tuple(_Parser(text).parse()))
    except ParseError as err:
        raise ParseError(f'couldn\'t parse the selector string "{text}": {err}') from None


def selector_from_label_selector(ls: Mapping[str, Any] | None) -> Selector:
    """metav1.LabelSelectorAsSelector: None selects nothing, {} selects everything."""
    if ls is None:
        return nothing()
    ls = _typed(ls, Mapping, "", "v1.LabelSelector")
    match_labels = _typed(ls.get("matchLabels") or {}, Mapping, "matchLabels", "map[string]string")
    expressions = _typed(ls.get("matchExpressions") or [], list, "matchExpressions",
                         "[]v1.LabelSelectorRequirement")
    if not match_labels and not expressions:
        return everything()
    reqs = []
    # Go ranges over the map in random order; we sort, so the first error is deterministic.
    for key, value in sorted(match_labels.items(), key=lambda item: str(item[0])):
        reqs.append(new_requirement(_typed(key, str, "matchLabels", "string"), Operator.Equals,
                                    [_typed(value, str, "matchLabels", "string")]))
    for expr in expressions:
        expr = _typed(expr, Mapping, "matchExpressions", "v1.LabelSelectorRequirement")
        operator = _typed(expr.get("operator", ""), str, "matchExpressions.operator", "string")
        if operator not in _EXPRESSION_OPERATORS:
            raise ParseError(f"{json.dumps(operator, ensure_ascii=False)} "
                             "is not a valid label selector operator")
        key = _typed(expr.get("key", ""), str, "matchExpressions.key", "string")
        values = _typed(expr.get("values") or [], list, "matchExpressions.values", "[]string")
        values = [_typed(v, str, "matchExpressions.values", "string") for v in values]
        # Go's append([]string(nil), values...) is nil when empty: messages show `null`.
        reqs.append(new_requirement(key, _EXPRESSION_OPERATORS[operator], values or None))
    return Selector(tuple(reqs))


_EXPRESSION_OPERATORS = {"In": Operator.In, "NotIn": Operator.NotIn,
                         "Exists": Operator.Exists, "DoesNotExist": Operator.DoesNotExist}


# ---------------------------------------------------------------- the parser (selector.go)

_SPECIAL = "=!(),><"
_WHITESPACE = " \t\r\n"
_ID_STOP = _SPECIAL + _WHITESPACE + "\0"
_TOKENS = {")", ",", "!", "==", "=", ">", "in", "<", "!=", "notin", "("}
_IDENT, _EOS = "identifier", "end of string"  # token kinds besides the literal ones


def _lex(text: str) -> list[tuple[str, str]]:
    """Lexer.Lex until the end: (token kind, literal). A NUL ends the text, as upstream."""
    items, pos, end = [], 0, len(text)
    while True:
        while pos < end and text[pos] in _WHITESPACE:
            pos += 1
        if pos >= end or text[pos] == "\0":
            items.append((_EOS, ""))
            return items
        start = pos
        if text[pos] in _SPECIAL:  # the longest operator: "!=" rather than "!"
            while pos < end and text[start:pos + 1] in _TOKENS:
                pos += 1
        else:
            while pos < end and text[pos] not in _ID_STOP:
                pos += 1
        literal = text[start:pos]
        items.append((literal if literal in _TOKENS else _IDENT, literal))
        if text[pos:pos + 1] == "\0":
            pos += 1  # upstream's read() swallows a NUL that ends a token; lexing goes on


class _Parser:
    def __init__(self, text: str) -> None:
        self.items = _lex(text)
        self.position = 0

    def lookahead(self, values: bool) -> tuple[str, str]:
        # In the Values context, "in" and "notin" are ordinary identifiers: `x in (in)`.
        tok, lit = self.items[self.position]
        return (_IDENT if values and tok in ("in", "notin") else tok), lit

    def consume(self, values: bool) -> tuple[str, str]:
        item = self.lookahead(values)
        self.position += 1
        return item

    def parse(self) -> list[Requirement]:
        requirements: list[Requirement] = []
        while True:
            tok, lit = self.lookahead(True)
            if tok == _EOS:
                return requirements
            if tok not in (_IDENT, "!"):
                raise ParseError(f"found '{lit}', expected: !, identifier, or 'end of string'")
            try:
                requirements.append(self.parse_requirement())
            except ParseError as err:
                raise ParseError(f"unable to parse requirement: {err}") from None
            tok, lit = self.consume(True)
            if tok == _EOS:
                return requirements
            if tok != ",":
                raise ParseError(f"found '{lit}', expected: ',' or 'end of string'")
            tok, lit = self.lookahead(True)
            if tok not in (_IDENT, "!"):
                raise ParseError(f"found '{lit}', expected: identifier after ','")

    def parse_requirement(self) -> Requirement:
        key, operator = self.parse_key_and_infer_operator()
        if operator is not None:
            return new_requirement(key, operator, [])
        tok, lit = self.consume(False)
        operator = _OPERATOR_TOKENS.get(tok)
        if operator is None:
            raise ParseError(f"found '{lit}', expected: {', '.join(_BINARY)}")
        values = self.parse_values() if operator in (Operator.In, Operator.NotIn) \
            else self.parse_exact_value()
        return new_requirement(key, operator, sorted(values))

    def parse_key_and_infer_operator(self) -> tuple[str, Operator | None]:
        """The key; the operator too when it is implied: `!key` or a bare `key`."""
        operator = None
        tok, lit = self.consume(True)
        if tok == "!":
            operator = Operator.DoesNotExist
            tok, lit = self.consume(True)
        if tok != _IDENT:
            raise ParseError(f"found '{lit}', expected: identifier")
        if problems := _label_key_errors(lit):  # upstream passes a nil path here
            raise ParseError(f"<nil>: {_invalid(lit, '; '.join(problems))}")
        if operator is None and self.lookahead(True)[0] in (_EOS, ","):
            operator = Operator.Exists
        return lit, operator

    def parse_values(self) -> set[str]:
        tok, lit = self.consume(True)
        if tok != "(":
            raise ParseError(f"found '{lit}' expected: '('")
        tok, lit = self.lookahead(True)
        if tok == ")":  # "()" is the set holding the empty string
            self.consume(True)
            return {""}
        if tok not in (_IDENT, ","):
            raise ParseError(f"found '{lit}', expected: ',', ')' or identifier")
        values = self.parse_identifiers_list()
        if self.consume(True)[0] != ")":
            raise ParseError(f"found '{lit}', expected: ')'")
        return values

    def parse_identifiers_list(self) -> set[str]:
        """A comma-separated list whose items may be empty: `(a,,b,)` is {"a", "", "b"}."""
        values: set[str] = set()
        while True:
            tok, lit = self.consume(True)
            if tok == _IDENT:
                values.add(lit)
                next_tok, next_lit = self.lookahead(True)
                if next_tok == ")":
                    return values
                if next_tok != ",":
                    raise ParseError(f"found '{next_lit}', expected: ',' or ')'")
            elif tok == ",":
                next_tok = self.lookahead(True)[0]
                if not values or next_tok in (")", ","):
                    values.add("")
                if next_tok == ")":
                    return values
            else:
                raise ParseError(f"found '{lit}', expected: ',', or identifier")

    def parse_exact_value(self) -> set[str]:
        if self.lookahead(True)[0] in (_EOS, ","):
            return {""}  # `key=` selects the empty value
        tok, lit = self.consume(True)
        if tok != _IDENT:
            raise ParseError(f"found '{lit}', expected: identifier")
        return {lit}


_OPERATOR_TOKENS = {"in": Operator.In, "=": Operator.Equals, "==": Operator.DoubleEquals,
                    ">": Operator.GreaterThan, "<": Operator.LessThan,
                    "notin": Operator.NotIn, "!=": Operator.NotEquals}


# ---------------------------------------------------------------- validation and messages

def _invalid(value: object, detail: str) -> str:
    """field.Invalid(...).ErrorBody(): the value as Go prints it (%q, or JSON)."""
    shown = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return f"Invalid value: {shown}: {detail}"


def _aggregate(messages: Iterable[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one message, or [a, b] without duplicates."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def _parse_int64(text: str) -> int | None:
    """strconv.ParseInt(text, 10, 64), or None."""
    if not _INT64_RE.fullmatch(text):
        return None
    number = int(text)
    return number if -(2**63) <= number < 2**63 else None


def _typed(value: Any, kind: type, field: str, go_type: str) -> Any:
    """value, if it has the JSON type a LabelSelector needs; else encoding/json's error."""
    if isinstance(value, kind):
        return value
    json_kind = {dict: "object", list: "array", str: "string", bool: "bool"}.get(
        type(value), "number")
    where = f"Go struct field LabelSelector.{field}" if field else "Go value"
    raise ParseError(f"json: cannot unmarshal {json_kind} into {where} of type {go_type}")
