"""The two ways a webhook call fails, and the Status a denial becomes.

Follows k8s.io/apiserver pkg/util/webhook/error.go (ErrCallingWebhook, ErrWebhookRejection) and
pkg/admission/plugin/webhook/errors/statuserror.go (ToStatusErr). A call that did not give an
answer (no endpoints, a timeout, a refused connection, a malformed AdmissionReview) is an
ErrCallingWebhook: the webhook's failurePolicy decides (Ignore: go on; Fail: 500
`Internal error occurred: failed calling webhook "<name>": ...`). An answer that says no is an
ErrWebhookRejection: the webhook's own Status, its message prefixed with
`admission webhook "<name>" denied the request`.
"""

from __future__ import annotations

from typing import Any

from kubelab.api.errors import ApiError

__all__ = ["ErrCallingWebhook", "ErrWebhookRejection", "to_status_err"]

class ErrCallingWebhook(Exception):
    """The webhook could not be called, or its answer could not be read."""

    def __init__(self, webhook_name: str, reason: str) -> None:
        super().__init__(f'failed calling webhook "{webhook_name}": {reason}')
        self.webhook_name, self.reason = webhook_name, reason


class ErrWebhookRejection(Exception):
    """The webhook answered allowed: false; status is the error the client gets."""

    def __init__(self, status: ApiError) -> None:
        super().__init__(status.message)
        self.status = status


def to_status_err(webhook_name: str, result: Any) -> ApiError:
    """ToStatusErr: the webhook's Status (code at least 400, status Failure), its message
    prefixed with who denied the request."""
    result = result if isinstance(result, dict) else {}
    denied_by = f'admission webhook "{webhook_name}" denied the request'
    code = result.get("code")
    code = code if isinstance(code, int) and code >= 400 else 400
    message, reason = str(result.get("message") or ""), str(result.get("reason") or "")
    if message:
        text = f"{denied_by}: {message}"
    elif reason:
        text = f"{denied_by}: {reason}"
    else:
        text = f"{denied_by} without explanation"
    details = result.get("details") if isinstance(result.get("details"), dict) else {}
    return ApiError(code, reason, text, dict(details))
