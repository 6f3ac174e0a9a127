"""Errors in Kubernetes' words.

ApiError carries a metav1.Status (code, reason, message, details) exactly as the API server
returns it; the constructors below follow apimachinery's pkg/api/errors/errors.go (NewNotFound,
NewAlreadyExists, NewConflict, NewInvalid, NewForbidden, ...) and reproduce its message wording.
FieldError follows pkg/util/validation/field/errors.go.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar

__all__ = [
    "ApiError",
    "ConnectionFailed",
    "FieldError",
    "ParseError",
    "already_exists",
    "bad_request",
    "conflict",
    "field_duplicate",
    "field_forbidden",
    "field_invalid",
    "field_not_supported",
    "field_required",
    "field_too_long",
    "forbidden",
    "gone",
    "internal_error",
    "invalid",
    "method_not_supported",
    "not_found",
    "qualified",
    "request_entity_too_large",
    "resource_expired",
    "server_not_found",
    "service_unavailable",
    "too_many_requests",
    "unauthorized",
]


class ParseError(ValueError):
    """Input text that cannot be parsed (a quantity, a selector, a YAML document).

    The message names the offending text, in the upstream library's wording.
    """


class ApiError(Exception):
    """An error the API server returns: a Status object with an HTTP code."""

    def __init__(
        self, code: int, reason: str, message: str, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details or {}

    @property
    def status(self) -> dict[str, Any]:
        """The metav1.Status object, as `kubectl get --raw` would show it: its fields in the
        Go struct's order, the empty ones left out (omitempty)."""
        status: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                  "status": "Failure"}
        fields = {"message": self.message, "reason": self.reason, "details": self.details}
        status.update((key, value) for key, value in fields.items() if value)
        status["code"] = self.code
        return status

    def kubectl_message(self) -> str:
        """What kubectl prints for this error (k8s.io/kubectl pkg/cmd/util/helpers.go checkErr
        and StandardErrorMessage): `Error from server (NotFound): ...`, the invalid-object
        form `The Pod "web" is invalid: ...` for 422, and the login hint for 401."""
        if self.reason == "Invalid":
            return _invalid_message(self.details, self.message)
        if self.reason == "Unauthorized":
            return f"error: You must be logged in to the server ({self.message})"
        if self.reason:
            return f"Error from server ({self.reason}): {self.message}"
        return f"Error from server: {self.message}"

    def __repr__(self) -> str:
        return f"ApiError({self.code}, {self.reason!r}, {self.message!r})"


class ConnectionFailed(ApiError):
    """No server answered (the connect failed), so there is no Status: code 0, no reason. In Go
    this is a *url.Error from the transport: `Get "https://...": dial tcp ...: connection refused`.
    In-process clients (a crashed API server) and the HTTPS transport raise it alike."""

    def __init__(self, method: str, url: str, host: str, cause: str) -> None:
        super().__init__(0, "", f'{method} "{url}": {cause}')
        self.host, self.cause = host, cause

    def kubectl_message(self) -> str:
        """kubectl's StandardErrorMessage (k8s.io/kubectl pkg/cmd/util/helpers.go)."""
        if "connection refused" in self.cause:
            return (f"The connection to the server {self.host} was refused - did you specify the "
                    "right host or port?")
        return f"Unable to connect to the server: {self.cause}"


def _invalid_message(details: dict[str, Any], message: str) -> str:
    """checkErr's IsInvalid case: the kind and name from the Status details, then each cause
    as `field: message` (duplicates once), one inline or several as a bulleted list; a Status
    without details (a JSON patch that does not apply) is the request's, with its message."""
    head = "The request is invalid"
    if not details:
        return f"{head}: {message}"
    if details.get("kind") or details.get("name"):
        head = f'The {details.get("kind", "")} "{details.get("name", "")}" is invalid'
    causes: list[str] = []
    for cause in details.get("causes") or ():
        text = f'{cause.get("field", "")}: {cause.get("message", "")}'
        if text not in causes:
            causes.append(text)
    if not causes:
        return head
    if len(causes) == 1:  # MultilineError: one error on the same line
        return f"{head}: {causes[0]}"
    return f"{head}: \n" + "\n".join(f"* {c}" for c in causes)


def qualified(resource: str, group: str = "") -> str:
    """schema.GroupResource.String(): `pods`, `deployments.apps`."""
    return f"{resource}.{group}" if group else resource


def _details(resource: str, group: str, name: str, **more: Any) -> dict[str, Any]:
    details: dict[str, Any] = {"kind": resource}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    details.update(more)
    return details


def not_found(resource: str, name: str, group: str = "") -> ApiError:
    return ApiError(404, "NotFound", f'{qualified(resource, group)} "{name}" not found',
                    _details(resource, group, name))


def server_not_found() -> ApiError:
    """A path the server does not serve, such as an unknown resource type."""
    return ApiError(404, "NotFound", "the server could not find the requested resource",
                    {"causes": [{"reason": "UnexpectedServerResponse", "message": "404 page not found"}]})


def already_exists(resource: str, name: str, group: str = "") -> ApiError:
    return ApiError(409, "AlreadyExists", f'{qualified(resource, group)} "{name}" already exists',
                    _details(resource, group, name))


OPTIMISTIC_LOCK_MESSAGE = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


def conflict(resource: str, name: str, err: str = OPTIMISTIC_LOCK_MESSAGE, group: str = "") -> ApiError:
    return ApiError(
        409, "Conflict",
        f'Operation cannot be fulfilled on {qualified(resource, group)} "{name}": {err}',
        _details(resource, group, name),
    )


def forbidden(resource: str, name: str, err: str, group: str = "") -> ApiError:
    what = qualified(resource, group)
    message = f'{what} "{name}" is forbidden: {err}' if name else f"{what} is forbidden: {err}"
    return ApiError(403, "Forbidden", message, _details(resource, group, name))


def unauthorized(message: str = "Unauthorized") -> ApiError:
    return ApiError(401, "Unauthorized", message)


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def method_not_supported(resource: str, action: str, group: str = "") -> ApiError:
    return ApiError(
        405, "MethodNotAllowed",
        f'{action} is not supported on resources of kind "{qualified(resource, group)}"',
        {"kind": resource, **({"group": group} if group else {})},
    )


def gone(message: str) -> ApiError:
    return ApiError(410, "Gone", message)


def resource_expired(message: str) -> ApiError:
    """What a watch from a compacted resourceVersion gets: 410 with reason Expired."""
    return ApiError(410, "Expired", message)


def request_entity_too_large(message: str) -> ApiError:
    return ApiError(413, "RequestEntityTooLarge", f"Request entity too large: {message}")


def too_many_requests(message: str = "Too many requests, please try again later.") -> ApiError:
    return ApiError(429, "TooManyRequests", message)


def service_unavailable(message: str = "the server is currently unable to handle the request") -> ApiError:
    return ApiError(503, "ServiceUnavailable", message)


def internal_error(err: str) -> ApiError:
    return ApiError(500, "InternalError",
                    f"Internal error occurred: {err}", {"causes": [{"message": err}]})


# ---------------------------------------------------------------- field errors and Invalid


@dataclass(frozen=True)
class FieldError:
    """One field's problem, e.g. `metadata.name: Required value`."""

    type: str       # "Invalid value", "Required value", "Unsupported value", ...
    field: str      # JSON path, e.g. "spec.replicas" or "spec.containers[0].image"
    bad_value: Any = None
    detail: str = ""

    _REASONS: ClassVar[dict[str, str]] = {
        "Not found": "FieldValueNotFound",
        "Required value": "FieldValueRequired",
        "Duplicate value": "FieldValueDuplicate",
        "Invalid value": "FieldValueInvalid",
        "Unsupported value": "FieldValueNotSupported",
        "Forbidden": "FieldValueForbidden",
        "Too long": "FieldValueTooLong",
        "Too many": "FieldValueTooMany",
        "Internal error": "InternalError",
    }

    @property
    def reason(self) -> str:
        return self._REASONS.get(self.type, "FieldValueInvalid")

    def body(self) -> str:
        # field.Error.ErrorBody: these types never print the value.
        if self.type in ("Required value", "Forbidden", "Too long", "Internal error"):
            return f"{self.type}: {self.detail}" if self.detail else self.type
        text = f"{self.type}: {_value_repr(self.bad_value)}"
        return f"{text}: {self.detail}" if self.detail else text

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"


def _value_repr(value: Any) -> str:
    # Go's %q for strings, %d for numbers, %v otherwise (field/errors.go).
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return str(value)
    if not isinstance(value, (dict, list, tuple)):  # a fmt.Stringer (a Quantity) prints bare
        return str(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def field_invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError("Invalid value", path, value, detail)


def field_required(path: str, detail: str = "") -> FieldError:
    return FieldError("Required value", path, None, detail)


def field_forbidden(path: str, detail: str) -> FieldError:
    return FieldError("Forbidden", path, None, detail)


def field_not_supported(path: str, value: Any, supported: list[str]) -> FieldError:
    detail = "supported values: " + ", ".join(json.dumps(s) for s in supported)
    return FieldError("Unsupported value", path, value, detail)


def field_duplicate(path: str, value: Any) -> FieldError:
    return FieldError("Duplicate value", path, value)


def field_too_long(path: str, max_length: int) -> FieldError:
    return FieldError("Too long", path, None, f"may not be more than {max_length} bytes")


def invalid(kind: str, name: str, errors: list[FieldError], group: str = "") -> ApiError:
    """422 Invalid: `Pod "web" is invalid: [metadata.name: Required value, ...]`."""
    what = f"{kind}.{group}" if group else kind
    # utilerrors.Aggregate prints one error bare and several in brackets.
    summary = str(errors[0]) if len(errors) == 1 else "[" + ", ".join(str(e) for e in errors) + "]"
    causes = [{"reason": e.reason, "message": e.body(), "field": e.field} for e in errors]
    return ApiError(422, "Invalid", f'{what} "{name}" is invalid: {summary}',
                    {"name": name, "kind": kind, **({"group": group} if group else {}),
                     "causes": causes})
