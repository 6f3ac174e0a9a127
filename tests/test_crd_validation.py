"""The CRD itself: structural schemas and the other CRD rules, in upstream's words
(pkg/apiserver/schema/validation.go, pkg/apis/apiextensions/validation/validation.go)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from test_apiserver_support import Env
from test_crd_schema import crd

Object = dict[str, Any]
P = "spec.versions[0].schema.openAPIV3Schema"


def refused(definition: Object) -> str:
    env = Env()
    err = env.error("create", "customresourcedefinitions", namespace="",
                    body=copy.deepcopy(definition), group="apiextensions.k8s.io")
    assert err.code == 422, err.message
    assert env.req("list", "customresourcedefinitions", namespace="",
                   group="apiextensions.k8s.io")["items"] == []
    return err.message.split(" is invalid: ", 1)[1]


def with_root(root: Any) -> Object:
    definition = crd({"type": "object"})
    definition["spec"]["versions"][0]["schema"] = {"openAPIV3Schema": root}
    return definition


CASES = [
    (with_root(None), f"{P}: Required value: schemas are required"),
    (with_root({"properties": {"spec": {"type": "object"}}}),
     f"{P}.type: Required value: must not be empty at the root"),
    (with_root({"type": "string"}), f'{P}.type: Invalid value: "string": must be object at the root'),
    (crd({"properties": {"x": {"type": "string"}}}),
     f"{P}.properties[spec].type: Required value: must not be empty for specified object fields"),
    (crd({"type": "array"}), f"{P}.properties[spec].items: Required value: must be specified"),
    (crd({"type": "array", "items": {}}),
     f"{P}.properties[spec].items.type: Required value: must not be empty for specified array items"),
    (with_root({"type": "object", "additionalProperties": {"type": "string"}}),
     f"{P}.additionalProperties: Forbidden: must not be used at the root"),
    (crd({"type": "object", "properties": {"a": {"type": "string"}},
          "additionalProperties": {"type": "string"}}),
     f"{P}.properties[spec].additionalProperties: Forbidden: additionalProperties and properties "
     "are mutual exclusive"),
    (crd({"type": "array", "items": {"type": "string"}, "uniqueItems": True}),
     f"{P}.properties[spec].uniqueItems: Forbidden: uniqueItems cannot be set to true since the "
     "runtime complexity becomes quadratic"),
    (crd({"type": "object", "x-kubernetes-preserve-unknown-fields": False}),
     f"{P}.properties[spec].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be "
     "true or undefined"),
    (crd({"x-kubernetes-int-or-string": True, "x-kubernetes-preserve-unknown-fields": True}),
     f"{P}.properties[spec].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be "
     "false if x-kubernetes-int-or-string is true"),
    (crd({"type": "string", "x-kubernetes-embedded-resource": True,
          "x-kubernetes-preserve-unknown-fields": True}),
     f'{P}.properties[spec].type: Invalid value: "string": must be object if '
     "x-kubernetes-embedded-resource is true"),
    (with_root({"type": "object", "properties": {"metadata": {
        "type": "object", "properties": {"labels": {"type": "object"}}}}}),
     f"{P}.properties[metadata]: Forbidden: must not specify anything other than name and "
     "generateName, but metadata is implicitly specified"),
    (crd({"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "bag"}),
     f'{P}.properties[spec].x-kubernetes-list-type: Unsupported value: "bag": supported values: '
     '"atomic", "set", "map"'),
    (crd({"type": "array", "items": {"type": "object"}, "x-kubernetes-list-type": "map"}),
     f"{P}.properties[spec].x-kubernetes-list-map-keys: Required value: must not be empty if "
     "x-kubernetes-list-type is map"),
    (crd({"type": "string", "pattern": "("}),
     f'{P}.properties[spec].pattern: Invalid value: "(": must be a valid regular expression, '
     "but isn't: missing ), unterminated subpattern at position 0"),
    (crd({"type": "integer", "minimum": 0, "default": -1}),
     f"{P}.properties[spec].default: Invalid value: -1: {P}.properties[spec].default in body "
     "should be greater than or equal to 0"),
    (crd({"type": "object", "properties": {"a": {"type": "string"}},
          "anyOf": [{"type": "object", "required": ["a"]}]}),
     f"{P}.properties[spec].anyOf[0].type: Forbidden: must be empty to be structural"),
    (crd({"type": "object", "properties": {"a": {"type": "string"}},
          "oneOf": [{"properties": {"b": {"minLength": 1}}}]}),
     f"{P}.properties[spec].properties[b]: Required value: because it is defined in "
     f"{P}.properties[spec].oneOf[0].properties[b]"),
    (crd({"type": "object", "not": {"description": "x"}}),
     f"{P}.properties[spec].not.description: Forbidden: must be empty to be structural"),
    # validateValueValidation checks a pattern inside a junctor too.
    (crd({"type": "string", "anyOf": [{"pattern": "("}]}),
     f'{P}.properties[spec].anyOf[0].pattern: Invalid value: "(": must be a valid regular '
     "expression, but isn't: missing ), unterminated subpattern at position 0"),
    # Only allOf[0]'s anyOf may be the IntOrString pattern: allOf[0] itself has no type.
    (crd({"x-kubernetes-int-or-string": True, "allOf": [
        {"type": "integer", "anyOf": [{"type": "integer"}, {"type": "string"}]}]}),
     f"{P}.properties[spec].allOf[0].type: Forbidden: must be empty to be structural"),
    (crd({"type": "array", "items": {"type": "string", "x-kubernetes-validations": [
        {"rule": "self == oldSelf"}]}}),
     f'{P}.properties[spec].items.x-kubernetes-validations[0].rule: Invalid value: "self == '
     'oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within '
     f"{P}.properties[spec]"),
    (crd({"type": "object", "x-kubernetes-validations": [{"rule": " "}]}),
     f"{P}.properties[spec].x-kubernetes-validations[0].rule: Required value: rule is not specified"),
    (crd({"type": "object", "x-kubernetes-validations": [{"rule": "self.a", "reason": "Nope"}]}),
     f'{P}.properties[spec].x-kubernetes-validations[0].reason: Unsupported value: "Nope": '
     'supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", '
     '"FieldValueRequired"'),
    (crd({"type": "object"}, additionalPrinterColumns=[{"name": "Size", "type": "float",
                                                        "jsonPath": ".spec.size"}]),
     'spec.versions[0].additionalPrinterColumns[0].type: Unsupported value: "float": supported '
     'values: "integer", "number", "string", "boolean", "date"'),
    (crd({"type": "object"}, subresources={"scale": {"specReplicasPath": "spec.replicas",
                                                     "statusReplicasPath": ".status.replicas"}}),
     'spec.versions[0].subresources.scale.specReplicasPath: Invalid value: "spec.replicas": '
     "should be a json path under .spec"),
]


@pytest.mark.parametrize(("definition", "message"), CASES, ids=[str(i) for i in range(len(CASES))])
def test_each_crd_mistake_is_refused_in_upstream_words(definition: Object, message: str) -> None:
    assert refused(definition) == message


def test_a_rule_that_does_not_compile_is_refused() -> None:
    message = refused(crd({"type": "object", "x-kubernetes-validations": [{"rule": "self.a =="}]}))
    assert message.startswith(f"{P}.properties[spec].x-kubernetes-validations[0].rule: Invalid value")
    assert "compilation failed" in message


def test_two_storage_versions_are_refused() -> None:
    definition = crd({"type": "object"})
    definition["spec"]["versions"].append({**definition["spec"]["versions"][0], "name": "v2"})
    assert refused(definition).startswith("spec.versions: Invalid value")
    assert refused(definition).endswith("must have exactly one version marked as storage version")


def test_the_int_or_string_pattern_kubebuilder_writes_is_structural() -> None:
    env = Env()
    pattern = {"anyOf": [{"type": "integer"}, {"type": "string"}],
               "x-kubernetes-int-or-string": True}
    definition = crd({"type": "object", "properties": {"maxUnavailable": pattern}})
    env.create("customresourcedefinitions", definition, namespace="", group=GROUP)


GROUP = "apiextensions.k8s.io"
