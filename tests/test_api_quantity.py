"""Quantities, checked against tables ported from apimachinery pkg/api/resource/quantity_test.go."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubelab.api import quantity
from kubelab.api.errors import ParseError
from kubelab.api.quantity import Format, Quantity, parse_quantity

BIN, DEC, EXP = Format.BinarySI, Format.DecimalSI, Format.DecimalExponent
MAX_INT64 = 2**63 - 1


def q(mantissa: int, exponent: int, fmt: Format) -> Quantity:
    """quantity_test.go's decQuantity(mantissa, exponent, format)."""
    return Quantity(Decimal(mantissa).scaleb(exponent), fmt)


# TestQuantityParse: input -> exact value and remembered format.
PARSE_TABLE = [
    ("0", q(0, 0, DEC)), ("0n", q(0, 0, DEC)), ("0Ki", q(0, 0, BIN)), ("0T", q(0, 0, DEC)),
    ("1", q(1, 0, DEC)),
    ("1Ki", q(1024, 0, BIN)), ("7Mi", q(7 * 2**20, 0, BIN)), ("5Ti", q(5 * 2**40, 0, BIN)),
    ("3Ei", q(3 * 2**60, 0, BIN)), ("100Ti", q(100 * 2**40, 0, BIN)),
    ("5n", q(5, -9, DEC)), ("4u", q(4, -6, DEC)), ("3m", q(3, -3, DEC)), ("8k", q(8, 3, DEC)),
    ("50k", q(5, 4, DEC)), ("300T", q(3, 14, DEC)), ("2P", q(2, 15, DEC)), ("1E", q(1, 18, DEC)),
    ("1E-3", q(1, -3, EXP)), ("1e3", q(1, 3, EXP)), ("1E18", q(1, 18, EXP)),
    ("1e14", q(1, 14, EXP)), ("100.035k", q(100035, 0, DEC)),
    ("0.001", q(1, -3, DEC)), ("0.0005k", q(5, -1, DEC)), ("0.50000", q(5, -1, DEC)),
    ("0.5e0", q(5, -1, EXP)), ("0.5e-2", q(5, -3, EXP)), ("10.035M", q(10035, 3, DEC)),
    ("1.2e3", q(12, 2, EXP)), ("1.3E+6", q(13, 5, EXP)), ("1.53E12", q(153, 10, EXP)),
    ("9.01", q(901, -2, DEC)), ("6.987654321G", q(6987654321, 0, DEC)),
    ("2.5P", q(25, 14, DEC)), ("1.01E", q(101, 16, DEC)),
    # Things that saturate or round: sub-nano amounts round up to whole nanos.
    ("3.001n", q(4, -9, DEC)), ("1.1E-9", q(2, -9, EXP)), ("0.0000000001", q(1, -9, DEC)),
    ("0.5e-9", q(1, -9, EXP)), ("0.9n", q(1, -9, DEC)), ("0.00000012345", q(124, -9, DEC)),
    ("9Ei", q(MAX_INT64, 0, BIN)), ("9223372036854775807Ki", q(MAX_INT64, 0, BIN)),
    ("12E", q(12, 18, DEC)),
    # Fractional binary amounts are accepted.
    ("100.035Ki", q(10243584, -2, BIN)), ("0.5Mi", q(2**19, 0, BIN)),
    ("0.025Ti", q(274877906944, -1, BIN)),
    # "Things written by trolls".
    ("0.000000000001Ki", q(2, -9, DEC)), (".001", q(1, -3, DEC)), (".0001k", q(100, -3, DEC)),
    ("1.", q(1, 0, DEC)), ("1.G", q(1, 9, DEC)),
]


@pytest.mark.parametrize(("text", "want"), PARSE_TABLE)
def test_parse_value_and_format(text: str, want: Quantity) -> None:
    for sign, factor in (("", 1), ("+", 1), ("-", -1)):
        got = parse_quantity(sign + text)
        assert got.as_decimal() == factor * want.as_decimal(), sign + text
        assert got.format is want.format, sign + text


INVALID = ["", "1.1.M", "1+1.0M", "0.1mi", "0.1am", "aoeu", ".5i", "1i", "-3.01i", "-3.01e-",
           " 1", "1 ", "1K", "1KiB", "Non-Numeric", "1e", "1e+", "1Mi5", "e-10", "Pi"]


@pytest.mark.parametrize("text", INVALID)
def test_invalid_quantities_name_the_text(text: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_quantity(text)
    assert f"cannot parse '{text}': " in str(info.value)


def test_parse_error_messages_are_upstreams() -> None:
    with pytest.raises(ParseError, match=r"^cannot parse '1K': unable to parse quantity's suffix$"):
        parse_quantity("1K")
    with pytest.raises(ParseError) as info:
        parse_quantity("1.1.M")
    assert str(info.value).endswith(
        "quantities must match the regular expression "
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    with pytest.raises(ParseError, match=r"unable to parse numeric part of quantity$"):
        parse_quantity("e-10")


def test_upstream_permissiveness_is_kept() -> None:
    # parseQuantityString treats a missing number as 0, so these parse (and "Pi" does not:
    # upstream's int64 fast path accepts "Ti" but its inf.Dec path needs a digit).
    for text in ("m", "-Ki", ".", "-.", "Ti", "00", "+0"):
        assert parse_quantity(text).is_zero(), text


# TestQuantityString: value -> canonical String(), and an alternate spelling of it.
STRING_TABLE = [
    (q(2**30, 0, BIN), "1Gi", "1024Mi"), (q(300 * 2**20, 0, BIN), "300Mi", "307200Ki"),
    (q(6 * 1024, 0, BIN), "6Ki", ""), (q(1001 * 2**30, 0, BIN), "1001Gi", "1025024Mi"),
    (q(2**40, 0, BIN), "1Ti", "1024Gi"), (q(5, 0, BIN), "5", "5000m"),
    (q(500, -3, BIN), "500m", "0.5"), (q(1, 9, DEC), "1G", "1000M"),
    (q(1000, 6, DEC), "1G", "0.001T"), (q(1000000000, 0, DEC), "1G", ""),
    (q(1, -3, DEC), "1m", "1000u"), (q(80, -3, DEC), "80m", ""),
    (q(1080, -3, DEC), "1080m", "1.08"), (q(108, -2, DEC), "1080m", "1080000000n"),
    (q(10800, -4, DEC), "1080m", ""), (q(300, 6, DEC), "300M", ""), (q(1, 12, DEC), "1T", ""),
    (q(1234567, 6, DEC), "1234567M", ""), (q(1234567, -3, BIN), "1234567m", ""),
    (q(3, 3, DEC), "3k", ""), (q(1025, 0, BIN), "1025", ""), (q(0, 0, DEC), "0", ""),
    (q(0, 0, BIN), "0", ""), (q(1, 9, EXP), "1e9", ".001e12"), (q(1, -3, EXP), "1e-3", "0.001e0"),
    (q(1, -9, EXP), "1e-9", "1000e-12"), (q(80, -3, EXP), "80e-3", ""),
    (q(300, 6, EXP), "300e6", ""), (q(3, 3, EXP), "3e3", ""), (q(0, 0, EXP), "0", "00"),
    (q(1, -9, DEC), "1n", ""), (q(108, -8, DEC), "1080n", ""), (q(1080, -6, DEC), "1080u", ""),
    # Beyond the suffix tables: exponent form (kubernetes#140459; older upstream dropped it).
    (q(1, 21, DEC), "1e21", "1000E"), (q(1, 70, BIN), "10e69", ""),
]


@pytest.mark.parametrize(("value", "canonical", "alternate"), STRING_TABLE)
def test_canonical_string(value: Quantity, canonical: str, alternate: str) -> None:
    assert str(value) == canonical
    assert str(parse_quantity(canonical)) == canonical
    if alternate:
        assert str(parse_quantity(alternate)) == canonical
    if not value.is_zero():
        assert str(-value) == "-" + canonical  # never "-0"


@pytest.mark.parametrize(("text", "canonical"), [
    # TestQuantityParseEmit, and the cases a course meets first.
    ("1Ki", "1Ki"), ("1024Mi", "1Gi"), ("1000M", "1G"), (".001Ki", "1024m"),
    (".000001Ki", "1024u"), (".000000001Ki", "1024n"), (".000000000001Ki", "2n"),
    ("100m", "100m"), ("1.5", "1500m"), ("0.5Gi", "512Mi"), ("1000m", "1"), ("1e3", "1e3"),
    ("0.1", "100m"), ("12e6", "12e6"), ("1.5Gi", "1536Mi"), ("1.5Ki", "1536"),
    ("0.1m", "100u"), ("1e-10", "1e-9"), ("+1", "1"), ("01", "1"), ("1.001", "1001m"),
])
def test_parse_then_print(text: str, canonical: str) -> None:
    assert str(parse_quantity(text)) == canonical
    assert str(parse_quantity("-" + text.lstrip("+"))) == "-" + canonical


def test_int32_exponent_wraps_like_upstream() -> None:
    # suffix.go parses the exponent as int64 but keeps an int32.
    assert parse_quantity("1e2147483648") == parse_quantity("1n")
    with pytest.raises(ParseError, match="suffix"):
        parse_quantity("1e9223372036854775808")


def test_numbers_parse_like_their_text() -> None:
    assert parse_quantity(2) == parse_quantity("2")
    assert str(parse_quantity(1.5)) == "1500m"
    assert str(parse_quantity(1e-07)) == "100e-9"
    assert Quantity.parse(10**20) == parse_quantity("100E")


def test_value_and_milli_value_round_away_from_zero() -> None:
    assert parse_quantity("1500m").value() == 2
    assert parse_quantity("-1500m").value() == -2
    assert parse_quantity("1n").milli_value() == 1
    assert parse_quantity("2").milli_value() == 2000
    assert parse_quantity("1Gi").value() == 2**30
    assert parse_quantity("9Ei").value() == MAX_INT64


@pytest.mark.parametrize(("milli", "fmt", "canonical"), [
    # TestMilliNewSet
    (1, DEC, "1m"), (1000, DEC, "1"), (1234000, DEC, "1234"), (1024, BIN, "1024m"),
    (1024 * 1024, BIN, "1048576m"),
])
def test_from_milli(milli: int, fmt: Format, canonical: str) -> None:
    made = Quantity.from_milli(milli, fmt)
    assert str(made) == canonical
    assert made.milli_value() == milli


def test_comparison_is_by_value_only() -> None:
    assert parse_quantity("1Gi") == parse_quantity("1024Mi") == Quantity(Decimal(2**30))
    assert parse_quantity("1") == parse_quantity("1000m")
    assert len({parse_quantity("1"), parse_quantity("1000m"), parse_quantity("1e0")}) == 1
    assert parse_quantity("10000T") > parse_quantity("100Gi")
    assert parse_quantity("50m").cmp(parse_quantity("100m")) == -1
    assert parse_quantity("0").cmp(parse_quantity("0m")) == 0
    assert sorted(map(parse_quantity, ["1Gi", "1", "100m"])) == list(
        map(parse_quantity, ["100m", "1", "1Gi"]))
    assert parse_quantity("1") != "1"


def test_add_and_sub_keep_the_receivers_format_unless_it_is_zero() -> None:
    zero = parse_quantity("0")
    for text in ("100m", "1Gi"):
        value = parse_quantity(text)
        assert str(value + zero) == str(zero + value) == str(value - zero) == text
        assert str(zero - value) == "-" + text
    assert (parse_quantity("10") - parse_quantity("1")).format is DEC
    assert (q(10, 0, BIN) + q(1, 0, DEC)).format is BIN
    assert str(parse_quantity("1Gi") + parse_quantity("512Mi")) == "1536Mi"
    assert str(parse_quantity("4Ei") + parse_quantity("4Ei")) == "8Ei"  # past int64, exact
    total = sum((parse_quantity(t) for t in ["100m", "250m", "1"]), start=zero)
    assert str(total) == "1350m"


def test_quantities_are_immutable() -> None:
    value = parse_quantity("1")
    with pytest.raises(AttributeError):
        value.amount = Decimal(2)  # type: ignore[misc]


def test_all_is_curated() -> None:
    assert set(quantity.__all__) == {"Format", "Quantity", "canonical_quantity", "parse_quantity"}
    assert all(hasattr(quantity, name) for name in quantity.__all__)


SUFFIXES = ["", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
quantity_texts = st.builds(
    lambda sign, whole, frac, suffix: f"{sign}{whole}{frac}{suffix}",
    st.sampled_from(["", "+", "-"]),
    st.from_regex(r"[0-9]{1,20}", fullmatch=True),
    st.one_of(st.just(""), st.from_regex(r"\.[0-9]{0,12}", fullmatch=True)),
    st.one_of(st.sampled_from(SUFFIXES),
              st.integers(-40, 40).map(lambda e: f"e{e}"), st.integers(0, 9).map(lambda e: f"E+{e}")),
)


@settings(deadline=None)
@given(quantity_texts)
def test_canonical_string_round_trips(text: str) -> None:
    value = parse_quantity(text)
    canonical = str(value)
    again = parse_quantity(canonical)
    assert again == value
    assert str(again) == canonical  # the canonical form is a fixpoint
    assert "." not in canonical


@settings(deadline=None)
@given(st.one_of(st.text(max_size=12), st.text(alphabet="0123456789.+-eEinumkKMGTP ", max_size=12)))
def test_parse_succeeds_or_raises_parse_error(text: str) -> None:
    try:
        value = parse_quantity(text)
    except ParseError as err:
        assert f"'{text}'" in str(err)
    else:
        assert parse_quantity(str(value)) == value


@settings(deadline=None)
@given(st.integers(-(10**15), 10**15), st.integers(-(10**15), 10**15))
def test_arithmetic_is_exact(a: int, b: int) -> None:
    x, y = Quantity.from_milli(a), Quantity.from_milli(b)
    assert (x + y).milli_value() == a + b
    assert (x - y) + y == x
    assert (x < y) == (a < b)


# ---------------------------------------------------------------- read back through the API server


def test_the_api_server_returns_quantities_in_canonical_form() -> None:
    """A typed decode keeps the number and Quantity.MarshalJSON writes String(): what was
    written as 1.5 CPUs comes back as 1500m, on create, update and patch alike."""
    import kubelab

    c = kubelab.Cluster(nodes=1, components=[])
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
           "spec": {"containers": [{"name": "web", "image": "nginx", "resources": {
               "requests": {"cpu": "1.5", "memory": "0.5Gi"}, "limits": {"cpu": 2, "memory": "1024Mi"}}}]}}
    created = c.client.create(pod)
    resources = created["spec"]["containers"][0]["resources"]
    assert resources == {"requests": {"cpu": "1500m", "memory": "512Mi"},
                         "limits": {"cpu": "2", "memory": "1Gi"}}
    assert c.get("pods", "web")["spec"]["containers"][0]["resources"] == resources
    patch = {"spec": {"overhead": None}, "metadata": {"labels": {"a": "b"}}}
    c.client.patch("pods", "web", patch)
    node = c.get("nodes", "node-1")
    node["status"]["capacity"]["memory"] = "8192Mi"
    assert c.client.update_status(node)["status"]["capacity"]["memory"] == "8Gi"
    patched = c.client.patch("nodes", "node-1", {"status": {"allocatable": {"cpu": "0.5"}}},
                             "", subresource="status")
    assert patched["status"]["allocatable"]["cpu"] == "500m"
