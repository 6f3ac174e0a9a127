"""Resource quantities: "100m" of CPU, "1Gi" of memory.

Kubernetes never stores a resource amount as a float: a Quantity is an exact decimal that
remembers which kind of suffix it was written with, and prints itself in a canonical form.
The scheduler adds and compares these numbers for every pod and node, so they must be exact.

Follows apimachinery pkg/api/resource: quantity.go (ParseQuantity, CanonicalizeBytes, Add,
Value), suffix.go (the suffix tables) and amount.go (rounding). We hold the value in a
decimal.Decimal instead of upstream's int64Amount / inf.Dec pair; the numbers are the same.
"""

from __future__ import annotations

import decimal
import functools
import re
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum

from kubelab.api.errors import ParseError

__all__ = ["Format", "Quantity", "canonical_quantity", "parse_quantity"]


class Format(StrEnum):
    """How a quantity prints; decided by the suffix it was parsed with (quantity.go)."""

    DecimalExponent = "DecimalExponent"  # 12e6
    BinarySI = "BinarySI"  # 12Mi = 12 * 2^20
    DecimalSI = "DecimalSI"  # 12M = 12 * 10^6


# Upstream's three parse errors, word for word (quantity.go).
_SPLIT_RE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
_ERR_FORMAT_WRONG = f"quantities must match the regular expression '{_SPLIT_RE}'"
_ERR_NUMERIC = "unable to parse numeric part of quantity"
_ERR_SUFFIX = "unable to parse quantity's suffix"

# suffix.go: suffix -> (base, exponent).
_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12,
                     "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_BY_EXPONENT = {e: s for s, e in _DECIMAL_SUFFIXES.items()}
_BINARY_BY_POWER = {e // 10: s for s, e in _BINARY_SUFFIXES.items()}  # power of 1024

_MAX_INT64 = 2**63 - 1
_NANO = Decimal("1e-9")
_INT64_RE = re.compile(r"[+-]?[0-9]+")
# Exact arithmetic: precision and exponent range as large as the decimal module allows.
_EXACT = decimal.Context(prec=decimal.MAX_PREC, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)


@functools.total_ordering
@dataclass(frozen=True, eq=False)
class Quantity:
    """An exact amount plus the Format it prints in. Immutable; compares by value only,
    so parse_quantity("1Gi") == parse_quantity("1024Mi") and "1" == "1000m"."""

    amount: Decimal
    format: Format = Format.DecimalSI

    @staticmethod
    def parse(text: str | int | float) -> Quantity:
        """ParseQuantity: "500m", "1.5Gi", "2e3"; raises ParseError naming the text."""
        return _parse(text if isinstance(text, str) else str(text))

    @staticmethod
    def from_milli(milli: int, fmt: Format = Format.DecimalSI) -> Quantity:
        """NewMilliQuantity: from_milli(1500) is "1500m"."""
        return Quantity(Decimal(milli).scaleb(-3, _EXACT), fmt)

    def as_decimal(self) -> Decimal:
        return self.amount

    def value(self) -> int:
        """Value(): rounded up, away from zero, to a whole number ("1500m" -> 2)."""
        return _scaled_value(self.amount, 0)

    def milli_value(self) -> int:
        """MilliValue(): thousandths, rounded up away from zero ("1n" -> 1)."""
        return _scaled_value(self.amount, 3)

    def is_zero(self) -> bool:
        return self.amount.is_zero()

    def cmp(self, other: Quantity) -> int:
        """Cmp(): -1, 0 or 1."""
        return (self.amount > other.amount) - (self.amount < other.amount)

    # Add/Sub: a zero receiver takes the other operand's format (quantity.go).
    def __add__(self, other: Quantity) -> Quantity:
        if not isinstance(other, Quantity):
            return NotImplemented
        fmt = other.format if self.is_zero() else self.format
        return Quantity(_EXACT.add(self.amount, other.amount), fmt)

    def __sub__(self, other: Quantity) -> Quantity:
        if not isinstance(other, Quantity):
            return NotImplemented
        fmt = other.format if self.is_zero() else self.format
        return Quantity(_EXACT.subtract(self.amount, other.amount), fmt)

    def __neg__(self) -> Quantity:
        return Quantity(_EXACT.minus(self.amount), self.format)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.amount == other.amount

    def __lt__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.amount < other.amount

    def __hash__(self) -> int:
        return hash(self.amount)  # equal values hash equally: Decimal("1") and Decimal("1.000")

    def __str__(self) -> str:
        return _canonical(self.amount, self.format)

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"


def parse_quantity(text: str | int | float) -> Quantity:
    """ParseQuantity (quantity.go): the Quantity written as text, or ParseError."""
    return Quantity.parse(text)


@functools.lru_cache(maxsize=4096)
def canonical_quantity(text: str | int | float) -> str:
    """What the API server sends back for a quantity it decoded: Quantity.MarshalJSON writes
    String(), the canonical form, so "1.5" comes back "1500m", "0.5Gi" "512Mi" and "1024Mi"
    "1Gi" (a typed decode keeps the number, not the text). Raises ParseError as parse does."""
    return str(_parse(text if isinstance(text, str) else str(text)))


@functools.lru_cache(maxsize=4096)
def _parse(text: str) -> Quantity:
    # Safe to cache: a Quantity is immutable. The message wording is MustParse's.
    try:
        return _parse_quantity(text)
    except _Error as err:
        raise ParseError(f"cannot parse '{text}': {err}") from None


class _Error(Exception):
    pass


def _scan(text: str) -> tuple[bool, str, str, str]:
    """parseQuantityString: (positive, integer digits, fraction digits, suffix).

    Deliberately as permissive as upstream: leading zeros are dropped, "1." and ".5" are
    numbers, and a missing number counts as 0 (upstream parses "m" and "-Ki" as zero)."""
    positive, pos, end = True, 0, len(text)
    if text[:1] in ("+", "-"):
        positive, pos = text[0] == "+", 1
    while pos < end and text[pos] == "0":
        pos += 1
    start = pos
    while pos < end and text[pos] in "0123456789":
        pos += 1
    num = text[start:pos]
    denom = ""
    if pos < end and text[pos] == ".":
        start = pos = pos + 1
        while pos < end and text[pos] in "0123456789":
            pos += 1
        denom = text[start:pos]
    suffix = text[pos:]
    # The suffix is letters from a fixed set, then an optional sign and digits, then nothing.
    rest = suffix.lstrip("eEinumkKMGTP")
    rest = rest[1:] if rest[:1] in ("+", "-") else rest
    if rest.strip("0123456789"):
        raise _Error(_ERR_FORMAT_WRONG)
    return positive, num, denom, suffix


def _interpret(suffix: str) -> tuple[int, int, Format]:
    """suffixer.interpret: suffix -> (base, exponent, format)."""
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], Format.DecimalSI
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], Format.BinarySI
    if len(suffix) > 1 and suffix[0] in "eE" and _INT64_RE.fullmatch(suffix[1:]):
        parsed = int(suffix[1:])
        if -(2**63) <= parsed <= _MAX_INT64:
            # Upstream parses an int64 and then keeps only an int32: big exponents wrap.
            return 10, (parsed + 2**31) % 2**32 - 2**31, Format.DecimalExponent
    raise _Error(_ERR_SUFFIX)


def _parse_quantity(text: str) -> Quantity:
    if not text:
        raise _Error(_ERR_FORMAT_WRONG)
    positive, num, denom, suffix = _scan(text)
    base, exponent, fmt = _interpret(suffix)
    has_digits = any(ch in "0123456789" for ch in text[: len(text) - len(suffix)])
    if not has_digits and not _int64_fast_path(base, exponent, denom):
        # Upstream's slow (inf.Dec) path needs at least one digit ("Pi" fails, "Ti" is 0).
        raise _Error(_ERR_NUMERIC)
    amount = Decimal(f"{num or '0'}.{denom}")
    if base == 10:
        amount = amount.scaleb(exponent, _EXACT)
    else:
        amount = _EXACT.multiply(amount, Decimal(2**exponent))
    if int(amount.as_tuple().exponent) < -9:
        # Round non-zero values up to a whole nano: "if you want some resources, you
        # should get some resources, even if you asked for way too small of an amount".
        amount = amount.quantize(_NANO, decimal.ROUND_UP, _EXACT)
    if fmt is Format.BinarySI and amount > _MAX_INT64:
        amount = Decimal(_MAX_INT64)  # the only cap upstream applies at parse time
    if fmt is Format.BinarySI and 0 < amount < 1:
        fmt = Format.DecimalSI
    return Quantity(amount if positive else _EXACT.minus(amount), fmt)


def _int64_fast_path(base: int, exponent: int, denom: str) -> bool:
    """Whether ParseQuantity takes its int64 path for a number with no digits (counted as
    "0"); its inf.Dec path would reject it. Upstream's precision estimate decides."""
    if base == 2:
        return not denom and 15 - 1 - exponent * 3 // 10 - 1 >= 0
    return 18 - 1 - len(denom) >= 0 and exponent - len(denom) >= -9


def _scaled_value(amount: Decimal, shift: int) -> int:
    # amount.go rounds up, away from zero, when it drops digits.
    scaled = amount.scaleb(shift, _EXACT)
    return int(scaled.to_integral_value(decimal.ROUND_UP, _EXACT))


def _canonical(amount: Decimal, fmt: Format) -> str:
    """CanonicalizeBytes (quantity.go): no fractional digits, the largest suffix possible."""
    if amount.is_zero():
        return "0"
    if fmt is Format.BinarySI:
        if -1024 < amount < 1024 or amount != amount.to_integral_value():
            fmt = Format.DecimalSI  # small or fractional: shown in DecimalSI, not rounded
        else:
            sign, mantissa, power = "-" if amount < 0 else "", abs(int(amount)), 0
            while mantissa % 1024 == 0 and power < max(_BINARY_BY_POWER):
                mantissa, power = mantissa // 1024, power + 1
            if mantissa % 1024 != 0 or power == 0:
                return f"{sign}{mantissa}{_BINARY_BY_POWER.get(power, '')}"
            # Beyond Ei: base 10 exponent form, as upstream since kubernetes#140459.
            fmt = Format.DecimalExponent
    sign_bit, digit_tuple, exp = amount.as_tuple()
    digits = "".join(map(str, digit_tuple))
    stripped = digits.rstrip("0")
    exponent = int(exp) + len(digits) - len(stripped)
    while exponent % 3:
        stripped, exponent = stripped + "0", exponent - 1
    number = ("-" if sign_bit else "") + stripped
    if fmt is Format.DecimalSI and exponent in _DECIMAL_BY_EXPONENT:
        return number + _DECIMAL_BY_EXPONENT[exponent]
    # DecimalExponent, and DecimalSI beyond "E" (upstream printed "1" for 1e21 until #140459).
    return number + (f"e{exponent}" if exponent else "")
