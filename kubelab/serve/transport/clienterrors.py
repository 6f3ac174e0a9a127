"""What client-go makes of an answer that is not a success (k8s.io/client-go rest/request.go).

- An error response whose body is a Failure metav1.Status becomes that Status's ApiError:
  the same code, reason, message and details the API server built (transformResponse).
- Any other error body gets client-go's generic words for its code
  (apimachinery pkg/api/errors/errors.go NewGenericServerResponse, newUnstructuredResponseError).
- No answer at all (the connect failed) is a *url.Error in Go: ConnectionFailed, code 0, no
  Status, and kubectl's own sentence for it.
"""

from __future__ import annotations

import json
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ApiError, ConnectionFailed
from kubelab.api.request import Request

__all__ = ["ConnectionFailed", "error_from", "generic_error"]

_MAX_UNSTRUCTURED_TEXT = 2048  # rest/request.go maxUnstructuredResponseTextBytes



def generic_error(code: int, method: str, resource: str, name: str, body: str,
                  group: str = "") -> ApiError:
    """errors.go NewGenericServerResponse, as rest/request.go builds it for a body that is not
    a Status (newUnstructuredResponseError): client-go's words for the code."""
    reason, message = {
        400: ("BadRequest", "the server rejected our request for an unknown reason"),
        401: ("Unauthorized", "the server has asked for the client to provide credentials"),
        403: ("Forbidden", body),
        404: ("NotFound", "the server could not find the requested resource"),
        405: ("MethodNotAllowed", "the server does not allow this method on the requested resource"),
        409: ("AlreadyExists" if method == "POST" else "Conflict", "the server reported a conflict"),
        415: ("UnsupportedMediaType", body),
        422: ("Invalid", "the server rejected our request due to an error in our request"),
        429: ("TooManyRequests", "the server has received too many requests and has asked us to "
                                 "try again later"),
        503: ("ServiceUnavailable", "the server is currently unable to handle the request"),
        504: ("Timeout", "the server was unable to return a response in the time allotted, but may "
                         "still be processing the request"),
    }.get(code, ("", f"the server responded with the status code {code} but did not return "
                     "more information"))
    if not reason and code >= 500:
        reason = "InternalError"
        message = f"an error on the server ({json.dumps(body)}) has prevented the request from succeeding"
    if resource:
        what = f"{resource}.{group}" if group else resource
        message += f" ({method.lower()} {what}{' ' + name if name else ''})"
    details: Object = {**({"name": name} if name else {}), **({"group": group} if group else {}),
                       "kind": resource,
                       "causes": [{"reason": "UnexpectedServerResponse", "message": body}]}
    return ApiError(code, reason or "Unknown", message, details)


def error_from(code: int, obj: Any, method: str, request: Request, data: bytes,
               content_type: str = "") -> ApiError:
    """The ApiError of an error response: its Status when it is a Failure Status
    (rest/request.go transformResponse), else client-go's generic words for the code, with
    the body itself only when it is text (isTextResponse)."""
    if isinstance(obj, dict) and obj.get("kind") == "Status" and obj.get("status") == "Failure":
        return ApiError(int(obj.get("code") or code), str(obj.get("reason") or ""),
                        str(obj.get("message") or ""), obj.get("details") or {})
    text = "unknown"
    if not content_type or content_type.startswith("text/"):
        text = data[:_MAX_UNSTRUCTURED_TEXT].decode("utf-8", "replace").strip()
    return generic_error(code, method, request.resource, request.name, text, request.group)
