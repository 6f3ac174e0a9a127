"""Admission (k8s.io/apiserver pkg/admission): the checks and changes between authorization and
storage. chain.py is the plugin interface and the chain that runs it; plugins.py the built-in
plugins in the order kube-apiserver runs them; policy.py and policy_match.py
ValidatingAdmissionPolicy (pkg/admission/plugin/policy/validating); webhook/ the mutating and
validating admission webhooks (pkg/admission/plugin/webhook).
"""

from kubelab.apiserver.admission.chain import (
    AdmissionChain,
    AdmissionPlugin,
    Attributes,
    Lister,
    admission_forbidden,
)

__all__ = ["AdmissionChain", "AdmissionPlugin", "Attributes", "Lister", "admission_forbidden"]
