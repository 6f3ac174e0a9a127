"""Status errors and field errors in upstream wording (apimachinery pkg/api/errors)."""

from __future__ import annotations

import json

import pytest

from kubelab.api import errors as e


@pytest.mark.parametrize(
    ("err", "code", "reason", "message"),
    [
        (e.not_found("pods", "web-1"), 404, "NotFound", 'pods "web-1" not found'),
        (e.not_found("deployments", "web", group="apps"), 404, "NotFound",
         'deployments.apps "web" not found'),
        (e.already_exists("pods", "web-1"), 409, "AlreadyExists", 'pods "web-1" already exists'),
        (e.conflict("pods", "web-1"), 409, "Conflict",
         'Operation cannot be fulfilled on pods "web-1": the object has been modified; '
         "please apply your changes to the latest version and try again"),
        (e.forbidden("pods", "", 'User "bob" cannot list resource "pods" in API group "" in '
                     'the namespace "default"'), 403, "Forbidden",
         'pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the '
         'namespace "default"'),
        (e.forbidden("pods", "web", "x"), 403, "Forbidden", 'pods "web" is forbidden: x'),
        (e.unauthorized(), 401, "Unauthorized", "Unauthorized"),
        (e.bad_request("bad"), 400, "BadRequest", "bad"),
        (e.gone("gone"), 410, "Gone", "gone"),
        (e.resource_expired("too old resource version: 5 (12)"), 410, "Expired",
         "too old resource version: 5 (12)"),
        (e.request_entity_too_large("limit is 3145728"), 413, "RequestEntityTooLarge",
         "Request entity too large: limit is 3145728"),
        (e.method_not_supported("pods", "patch"), 405, "MethodNotAllowed",
         'patch is not supported on resources of kind "pods"'),
        (e.server_not_found(), 404, "NotFound", "the server could not find the requested resource"),
        (e.service_unavailable(), 503, "ServiceUnavailable",
         "the server is currently unable to handle the request"),
    ],
)
def test_status_errors(err: e.ApiError, code: int, reason: str, message: str) -> None:
    assert (err.code, err.reason, err.message, str(err)) == (code, reason, message, message)
    status = err.status
    assert status["kind"] == "Status" and status["status"] == "Failure"
    assert (status["code"], status["reason"], status["message"]) == (code, reason, message)
    # kubectl's StandardErrorMessage: a 401 gets the login hint instead of "Error from server".
    assert err.kubectl_message() == (f"error: You must be logged in to the server ({message})"
                                     if reason == "Unauthorized" else
                                     f"Error from server ({reason}): {message}")


def test_not_found_details_name_the_object() -> None:
    details = e.not_found("deployments", "web", group="apps").status["details"]
    assert details == {"name": "web", "kind": "deployments", "group": "apps"}


def test_status_json_keeps_the_go_struct_order() -> None:
    # The official Python client's create_from_yaml compares the body's text (test_utils.py's
    # test_create_from_multi_resource_yaml_with_multi_conflicts): StatusDetails is name, group,
    # kind, ..., causes; each StatusCause reason, message, field.
    body = json.dumps(e.already_exists("deployments", "triple-nginx", group="apps").status,
                      separators=(",", ":"))
    assert body == ('{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
                    '"message":"deployments.apps \\"triple-nginx\\" already exists",'
                    '"reason":"AlreadyExists","details":{"name":"triple-nginx","group":"apps",'
                    '"kind":"deployments"},"code":409}')
    invalid = e.invalid("Pod", "web", [e.field_required("spec.containers")]).status["details"]
    assert list(invalid) == ["name", "kind", "causes"]
    assert list(invalid["causes"][0]) == ["reason", "message", "field"]


def test_field_error_bodies_match_field_errors_go() -> None:
    assert str(e.field_required("metadata.name", "name or generateName is required")) == (
        "metadata.name: Required value: name or generateName is required")
    assert str(e.field_required("spec.containers")) == "spec.containers: Required value"
    assert str(e.field_invalid("spec.replicas", -1, "must be greater than or equal to 0")) == (
        "spec.replicas: Invalid value: -1: must be greater than or equal to 0")
    assert str(e.field_invalid("metadata.name", "Web", "bad")) == (
        'metadata.name: Invalid value: "Web": bad')
    assert str(e.field_not_supported("spec.restartPolicy", "Sometimes",
                                     ["Always", "OnFailure", "Never"])) == (
        'spec.restartPolicy: Unsupported value: "Sometimes": supported values: '
        '"Always", "OnFailure", "Never"')
    assert str(e.field_forbidden("spec.x", "may not be set")) == "spec.x: Forbidden: may not be set"
    assert str(e.field_too_long("metadata.annotations", 262144)) == (
        "metadata.annotations: Too long: may not be more than 262144 bytes")
    assert str(e.field_duplicate("spec.containers[1].name", "app")) == (
        'spec.containers[1].name: Duplicate value: "app"')


def test_invalid_aggregates_like_upstream() -> None:
    one = e.invalid("Pod", "web", [e.field_required("spec.containers")])
    assert one.code == 422 and one.reason == "Invalid"
    assert one.message == 'Pod "web" is invalid: spec.containers: Required value'
    two = e.invalid("Deployment", "web", [e.field_required("spec.selector"),
                                          e.field_invalid("spec.replicas", -1, "must be >= 0")],
                    group="apps")
    assert two.message == ('Deployment.apps "web" is invalid: [spec.selector: Required value, '
                           "spec.replicas: Invalid value: -1: must be >= 0]")
    causes = two.status["details"]["causes"]
    assert causes[0] == {"reason": "FieldValueRequired", "message": "Required value",
                         "field": "spec.selector"}
    assert causes[1]["reason"] == "FieldValueInvalid"
