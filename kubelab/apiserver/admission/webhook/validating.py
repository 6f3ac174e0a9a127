"""ValidatingAdmissionWebhook: the webhooks that may refuse a request, after validation.

Follows k8s.io/apiserver pkg/admission/plugin/webhook/validating/dispatcher.go. Every
ValidatingWebhookConfiguration's webhooks that match (generic.py) are called with the request's
AdmissionReview; an answer `allowed: false` refuses it with the webhook's Status
(`admission webhook "<name>" denied the request: <message>`); a call that fails (no endpoints,
a timeout, a bad answer) is ignored under failurePolicy Ignore and is a 500 under Fail
(`Internal error occurred: failed calling webhook "<name>": failed to call webhook: ...`).

Departure: upstream calls the validating webhooks in parallel and returns one of the errors;
kubelab calls them one after another in their order and returns the first, so a trace is the
same on every run. Warnings go on the plugin's `warnings` as the ValidatingAdmissionPolicy's do.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from kubelab.api.errors import internal_error
from kubelab.apiserver.admission.chain import AdmissionPlugin, Attributes
from kubelab.apiserver.admission.webhook.client import CallError
from kubelab.apiserver.admission.webhook.errors import (
    ErrCallingWebhook,
    ErrWebhookRejection,
    to_status_err,
)
from kubelab.apiserver.admission.webhook.generic import (
    Hook,
    dry_run_unsupported,
    exempt,
    hooks,
    should_call_hook,
)
from kubelab.apiserver.admission.webhook.request import (
    AdmissionResponse,
    create_admission_review,
    verify_admission_response,
)

__all__ = ["ValidatingAdmissionWebhook", "call_hook"]

RESOURCE = "validatingwebhookconfigurations"
KEPT = 1000  # warnings and audit annotations kept on the plugin


def call_hook(hook: Hook, attrs: Attributes, mutating: bool) -> AdmissionResponse:
    """callHook: send the AdmissionReview, read the answer; ErrCallingWebhook when there is
    none, ErrWebhookRejection when it says no."""
    client = attrs.lister.webhook_client()  # type: ignore[attr-defined]
    uid = client.new_uid()
    review = create_admission_review(uid, attrs)
    try:
        answer = client.call(hook.spec, review, attrs)
    except CallError as err:
        raise ErrCallingWebhook(hook.name, f"failed to call webhook: {err}") from None
    try:
        result = verify_admission_response(uid, mutating, answer)
    except ValueError as err:
        raise ErrCallingWebhook(hook.name, f"received invalid webhook response: {err}") from None
    if not result.allowed:
        raise ErrWebhookRejection(to_status_err(hook.name, result.result))
    return result


class ValidatingAdmissionWebhook(AdmissionPlugin):
    name = "ValidatingAdmissionWebhook"

    def __init__(self) -> None:
        # The latest ones (upstream: the response's Warning headers and the audit events).
        self.warnings: deque[str] = deque(maxlen=KEPT)
        self.audit_annotations: deque[dict[str, str]] = deque(maxlen=KEPT)

    def validate(self, attrs: Attributes) -> None:
        if exempt(attrs):
            return
        for index, hook in enumerate(hooks(attrs.lister, RESOURCE)):
            if not should_call_hook(hook, attrs):
                continue
            unsupported = dry_run_unsupported(hook, attrs)
            if unsupported is not None:
                raise unsupported
            try:
                result = call_hook(hook, attrs, mutating=False)
            except ErrCallingWebhook as err:
                if hook.failure_policy == "Ignore":
                    self._failed_open(index, hook)
                    continue
                raise internal_error(str(err)) from None
            except ErrWebhookRejection as err:
                raise err.status from None
            self._passed_on(result)

    def _failed_open(self, index: int, hook: Hook) -> None:
        self.audit_annotations.append({
            f"failed-open.validating.webhook.admission.k8s.io/round_0_index_{index}": hook.name})

    def _passed_on(self, result: Any) -> None:
        self.warnings.extend(result.warnings)
        if result.audit_annotations:
            self.audit_annotations.append(dict(result.audit_annotations))
