"""Label selectors, checked against apimachinery pkg/labels/selector_test.go and
pkg/apis/meta/v1/helpers_test.go."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubelab.api import labels
from kubelab.api.errors import ParseError
from kubelab.api.labels import (
    Operator,
    Requirement,
    Selector,
    everything,
    new_requirement,
    nothing,
    parse_selector,
    selector_from_label_selector,
    selector_from_set,
)

VALUE_RULE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
KEY_RULE = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
BINARY = "in, notin, =, ==, !=, gt, lt"


@pytest.mark.parametrize(("text", "canonical"), [
    # TestSelectorParse: good strings print back without their spaces.
    ("x=a,y=b,z=c", "x=a,y=b,z=c"), ("", ""), ("x!=a,y=b", "x!=a,y=b"), ("x=", "x="),
    ("x= ", "x="), ("x=,z= ", "x=,z="), ("x= ,z= ", "x=,z="), ("!x", "!x"), ("x>1", "x>1"),
    ("x>1,z<5", "x>1,z<5"),
    # TestSetSelectorParser
    ("\rx", "x"),
    ("this-is-a-dns.domain.com/key-with-dash", "this-is-a-dns.domain.com/key-with-dash"),
    ("0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)",
     "0.1.2.domain/99 notin (10.10.100.1,tick.tack.clock)"),
    ("foo  in\t (abc)", "foo in (abc)"), ("x notin\n (abc)", "x notin (abc)"),
    ("x in (abc,)", "x in (,abc)"), ("x in (abc,abc)", "x in (abc)"), ("x in ()", "x in ()"),
    ("x in (a,,,,,,)", "x in (,a)"), ("x in (a,,a,,a,,a,,)", "x in (,a)"),
    ("x notin (abc,,def),bar,z in (),w", "bar,w,x notin (,abc,def),z in ()"),
    ("x,y in (a)", "x,y in (a)"), ("x notin ( )", "x notin ()"), ("x notin (, a)", "x notin (,a)"),
    ("a ", "a"), ("a in (x,y,notin, z,in)", "a in (in,notin,x,y,z)"),
    # TestDeterministicParse, "==" kept as written, keywords as keys and values.
    ("x=a,a=x", "a=x,x=a"), ("x==a", "x==a"), ("notin=in", "notin=in"), ("in in (in)", "in in (in)"),
    ("a=1,a!=2", "a=1,a!=2"), ("k!=", "k!="), ("a \0b=c", "a"),  # NUL ends the text
])
def test_parse_and_canonical_string(text: str, canonical: str) -> None:
    selector = parse_selector(text)
    assert str(selector) == canonical
    assert str(parse_selector(canonical)) == canonical


@pytest.mark.parametrize(("text", "error"), [
    ("x=a||y=b", f'unable to parse requirement: values[0][x]: Invalid value: "a||y": {VALUE_RULE}'),
    ("x==a==b", "found '==', expected: ',' or 'end of string'"),
    ("!x=a", "found '=', expected: ',' or 'end of string'"),
    ("x<a", "unable to parse requirement: values[0]: Invalid value: \"a\": "
            "for 'Gt', 'Lt' operators, the value must be an integer"),
    ("x,,y", "found ',', expected: identifier after ','"),
    (",x,y", "found ',', expected: !, identifier, or 'end of string'"),
    ("x nott in (y)", f"unable to parse requirement: found 'nott', expected: {BINARY}"),
    ("a in (xyz),", "found '', expected: identifier after ','"),
    ("a in (xyz)b notin ()", "found 'b', expected: ',' or 'end of string'"),
    ("a in (xyz abc)", "unable to parse requirement: found 'abc', expected: ',' or ')'"),
    ("a notin(", "unable to parse requirement: found '', expected: ',', ')' or identifier"),
    ("a (", f"unable to parse requirement: found '(', expected: {BINARY}"),
    ("(", "found '(', expected: !, identifier, or 'end of string'"),
    ("!", "unable to parse requirement: found '', expected: identifier"),
    ("x in (a", "unable to parse requirement: found '', expected: ',' or ')'"),
    ("x in a", "unable to parse requirement: found 'a' expected: '('"),
    ("x in (a=)", "unable to parse requirement: found '=', expected: ',' or ')'"),
    ("x in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier"),
    ("x in (,=)", "unable to parse requirement: found '=', expected: ',', or identifier"),
    ("x= =", "unable to parse requirement: found '=', expected: identifier"),
    ("a/b/c", 'unable to parse requirement: <nil>: Invalid value: "a/b/c": a valid label key '
              f"{KEY_RULE} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"),
    ("/a", 'unable to parse requirement: <nil>: Invalid value: "/a": prefix part must be non-empty'),
    ("a" * 64, f'unable to parse requirement: <nil>: Invalid value: "{"a" * 64}": '
               "name part must be no more than 63 characters"),
    ("x=-1", f'unable to parse requirement: values[0][x]: Invalid value: "-1": {VALUE_RULE}'),
])
def test_parse_errors_are_upstreams(text: str, error: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_selector(text)
    assert str(info.value) == f'couldn\'t parse the selector string "{text}": {error}'


@pytest.mark.parametrize(("text", "labels_", "want"), [
    # TestSelectorMatches
    ("", {"x": "y"}, True), ("x=y", {"x": "y"}, True), ("x=y,z=w", {"x": "y", "z": "w"}, True),
    ("x!=y,z!=w", {"x": "z", "z": "a"}, True), ("notin=in", {"notin": "in"}, True),
    ("x", {"x": "z"}, True), ("!x", {"y": "z"}, True), ("x>1", {"x": "2"}, True),
    ("x<1", {"x": "0"}, True), ("x=z", {}, False), ("x=y", {"x": "z"}, False),
    ("x=y,z=w", {"x": "w", "z": "w"}, False), ("x!=y,z!=w", {"x": "z", "z": "w"}, False),
    ("x", {"y": "z"}, False), ("!x", {"x": "z"}, False), ("x>1", {"x": "0"}, False),
    ("x<1", {"x": "2"}, False),
    # TestRequirementSelectorMatching
    ("x in (foo),y notin (alpha)", {"x": "foo", "y": "baz"}, True),
    ("x in (foo),y in (alpha)", {"x": "foo", "y": "baz"}, False),
    ("x notin (),y", {"y": ""}, True), ("!x,y", {"y": ""}, True),
    ("x notin (),!y", {"y": ""}, False), ("x in ()", {"y": "baz"}, False),
    ("x in ()", {"x": ""}, True), ("z>1", {"z": "v2"}, False), ("z<1", {"z": "-5"}, True),
    ("x!=y", {}, True), ("x=", {"x": ""}, True), ("x=", {}, False),
    ("z<10", {"z": "99999999999999999999"}, False),  # not an int64: never matches
])
def test_matches(text: str, labels_: dict[str, str], want: bool) -> None:
    assert parse_selector(text).matches(labels_) is want


def test_everything_nothing_and_sets() -> None:
    assert everything().matches({"x": "y"}) and everything().empty()
    assert str(everything()) == "" and parse_selector("").empty()
    assert not nothing().matches({}) and not nothing().empty() and str(nothing()) == ""
    assert selector_from_set(None).empty() and selector_from_set({}).empty()
    selector = selector_from_set({"foo": "bar", "baz": "blah"})
    assert str(selector) == "baz=blah,foo=bar"
    assert selector.matches({"foo": "bar", "baz": "blah", "x": "y"})
    assert not selector.matches({"foo": "bar"})


def test_requirements_print_sorted_and_stay_sorted_by_key() -> None:
    # TestToString
    selector = Selector((new_requirement("z", Operator.DoesNotExist, []),
                         new_requirement("x", Operator.NotIn, ["def", "abc"]),
                         new_requirement("y", Operator.NotEquals, ["jkl"])))
    assert str(selector) == "x notin (abc,def),y!=jkl,!z"
    assert [r.key for r in selector.requirements] == ["x", "y", "z"]
    assert selector.requirements[0] == Requirement("x", Operator.NotIn, ("def", "abc"))
    assert str(Selector((new_requirement("x", "gt", ["2"]), new_requirement("y", "lt", ["8"]),
                         new_requirement("z", "exists", [])))) == "x>2,y<8,z"


@pytest.mark.parametrize(("key", "op", "values", "error"), [
    # TestRequirementConstructor
    ("x1", "in", [], "values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty"),
    ("x2", "notin", None,
     "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty"),
    ("x5", "=", ["bar", "foo"],
     'values: Invalid value: ["bar","foo"]: exact-match compatibility requires one single value'),
    ("x8", "exists", ["foo"],
     'values: Invalid value: ["foo"]: values set must be empty for exists and does not exist'),
    ("x13", "gt", [], "values: Invalid value: []: for 'Gt', 'Lt' operators, exactly one value is required"),
    ("x14", "gt", ["bar"],
     "values[0]: Invalid value: \"bar\": for 'Gt', 'Lt' operators, the value must be an integer"),
    ("x16", "=", ["a" * 64],
     f'values[0][x16]: Invalid value: "{"a" * 64}": must be no more than 63 characters'),
    ("x17", "=", ["a b"], f'values[0][x17]: Invalid value: "a b": {VALUE_RULE}'),
    ("x18", "unsupportedOp", [], 'operator: Unsupported value: "unsupportedOp": supported values: '
     '"in", "notin", "=", "==", "!=", "gt", "lt", "exists", "!"'),
    ("", "exists", [], f'key: Invalid value: "": name part must be non-empty; name part {KEY_RULE}'),
    ("a b", "=", ["c d"], f'[key: Invalid value: "a b": name part {KEY_RULE}, '
     f'values[0][a b]: Invalid value: "c d": {VALUE_RULE}]'),
    ("Example.com/x", "exists", [], 'key: Invalid value: "Example.com/x": prefix part a lowercase '
     "RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
     "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation "
     r"is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
])
def test_new_requirement_errors(key: str, op: str, values: list[str] | None, error: str) -> None:
    with pytest.raises(ParseError) as info:
        new_requirement(key, op, values)
    assert str(info.value) == error


def test_label_selector_as_selector() -> None:
    # TestLabelSelectorAsSelector
    assert selector_from_label_selector(None) == nothing()
    assert selector_from_label_selector({}) == everything()
    assert selector_from_label_selector({"matchLabels": {}, "matchExpressions": []}).empty()
    expressions = [{"key": "baz", "operator": "In", "values": ["qux", "norf"]}]
    assert str(selector_from_label_selector({"matchLabels": {"foo": "bar"}})) == "foo=bar"
    assert str(selector_from_label_selector({"matchExpressions": expressions})) == "baz in (norf,qux)"
    both = selector_from_label_selector({"matchLabels": {"foo": "bar"}, "matchExpressions": expressions})
    assert str(both) == "baz in (norf,qux),foo=bar"
    assert both.matches({"foo": "bar", "baz": "qux"}) and not both.matches({"foo": "bar"})
    exists = selector_from_label_selector({"matchExpressions": [
        {"key": "a", "operator": "Exists"}, {"key": "b", "operator": "DoesNotExist", "values": []},
        {"key": "c", "operator": "NotIn", "values": ["x", "x"]}]})
    assert str(exists) == "a,!b,c notin (x,x)"  # values are not de-duplicated, only sorted


@pytest.mark.parametrize(("ls", "error"), [
    ({"matchExpressions": [{"key": "baz", "operator": "In", "values": []}]},
     "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty"),
    ({"matchExpressions": [{"key": "baz", "operator": "Exists", "values": ["qux", "norf"]}]},
     'values: Invalid value: ["qux","norf"]: values set must be empty for exists and does not exist'),
    ({"matchExpressions": [{"key": "baz", "operator": "Gt", "values": ["1"]}]},
     '"Gt" is not a valid label selector operator'),
    ({"matchLabels": {"app": "a b"}}, f'values[0][app]: Invalid value: "a b": {VALUE_RULE}'),
    ({"matchLabels": {"app": 1}},
     "json: cannot unmarshal number into Go struct field LabelSelector.matchLabels of type string"),
    ({"matchLabels": ["app"]}, "json: cannot unmarshal array into Go struct field "
                               "LabelSelector.matchLabels of type map[string]string"),
    ({"matchExpressions": [{"key": "a", "operator": ["In"]}]}, "json: cannot unmarshal array "
     "into Go struct field LabelSelector.matchExpressions.operator of type string"),
    ({"matchExpressions": [{"key": "a", "operator": "In", "values": "x"}]}, "json: cannot unmarshal "
     "string into Go struct field LabelSelector.matchExpressions.values of type []string"),
    ({"matchExpressions": ["a"]}, "json: cannot unmarshal string into Go struct field "
                                  "LabelSelector.matchExpressions of type v1.LabelSelectorRequirement"),
    ("app=web", "json: cannot unmarshal string into Go value of type v1.LabelSelector"),
])
def test_label_selector_errors(ls: object, error: str) -> None:
    with pytest.raises(ParseError) as info:
        selector_from_label_selector(ls)  # type: ignore[arg-type]
    assert str(info.value) == error


def test_all_is_curated() -> None:
    assert set(labels.__all__) == {
        "Operator", "Requirement", "Selector", "everything", "new_requirement", "nothing",
        "parse_selector", "selector_from_label_selector", "selector_from_set"}
    assert all(hasattr(labels, name) for name in labels.__all__)


# A random selector, written with random spacing: the canonical string must survive a re-parse.
KEYS = ["a", "app", "x.y", "k8s.io/name", "Tier", "in", "notin", "z-1"]
VALUES = ["", "a", "web", "in", "1", "v1.2", "x_y", "99"]
requirement_texts = st.one_of(
    st.builds(lambda k: k, st.sampled_from(KEYS)),
    st.builds(lambda k: "!" + k, st.sampled_from(KEYS)),
    st.builds(lambda k, op, v: f"{k}{op}{v}", st.sampled_from(KEYS),
              st.sampled_from(["=", "==", "!=", " = ", " != "]), st.sampled_from(VALUES)),
    st.builds(lambda k, op, n: f"{k}{op}{n}", st.sampled_from(KEYS), st.sampled_from([">", "<"]),
              st.integers(0, 99)),
    st.builds(lambda k, op, vs: f"{k} {op} ({', '.join(vs)})", st.sampled_from(KEYS),
              st.sampled_from(["in", "notin"]), st.lists(st.sampled_from(VALUES), max_size=4)),
)
label_sets = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=5)


@settings(deadline=None)
@given(st.lists(requirement_texts, max_size=5), st.lists(label_sets, min_size=1, max_size=5))
def test_selector_round_trip(parts: list[str], samples: list[dict[str, str]]) -> None:
    selector = parse_selector(",".join(parts))
    again = parse_selector(str(selector))
    assert str(again) == str(selector)
    for sample in samples:
        assert again.matches(sample) == selector.matches(sample)


@settings(deadline=None)
@given(st.one_of(st.text(max_size=20), st.text(alphabet="ab=!(),<> \tinot01-/.", max_size=20)))
def test_parse_succeeds_or_raises_parse_error(text: str) -> None:
    try:
        selector = parse_selector(text)
    except ParseError as err:
        assert f'"{text}"' in str(err)
    else:
        assert str(parse_selector(str(selector))) == str(selector)
