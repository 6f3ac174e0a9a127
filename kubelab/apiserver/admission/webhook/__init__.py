"""Admission webhooks (k8s.io/apiserver pkg/admission/plugin/webhook): the API server calls
out, with an AdmissionReview, to code that runs outside it.

- generic.py: the hooks of the configurations, ShouldCallHook (rules, selectors, matchConditions);
- client.py: the call (a service reference through its endpoints, a url through the HTTPS edge),
  on the virtual clock;
- request.py: the AdmissionReview v1 request and the reading of its response;
- errors.py: ErrCallingWebhook, ErrWebhookRejection, ToStatusErr;
- mutating.py, validating.py: the two plugins, with reinvocation for the mutating one.

The kinds themselves (MutatingWebhookConfiguration, ValidatingWebhookConfiguration) are
validated in apis/validation/admissionregistration.py and defaulted in
apis/defaults_admissionregistration.py.
"""

from kubelab.apiserver.admission.webhook.client import Reply, WebhookClient
from kubelab.apiserver.admission.webhook.mutating import MutatingAdmissionWebhook
from kubelab.apiserver.admission.webhook.validating import ValidatingAdmissionWebhook

__all__ = ["MutatingAdmissionWebhook", "Reply", "ValidatingAdmissionWebhook", "WebhookClient"]
