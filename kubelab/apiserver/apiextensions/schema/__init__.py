"""A CRD's openAPIV3Schema at work: what apiextensions-apiserver does with it.

Upstream (staging/src/k8s.io/apiextensions-apiserver):

- structural.py: is the schema structural, and the rest of the CRD schema rules
  (pkg/apiserver/schema/validation.go, pkg/apis/apiextensions/validation/validation.go);
- validate.py and formats.py: every custom object against its schema, in kube-openapi's words
  as apiextensions wraps them (pkg/apiserver/validation/validation.go,
  k8s.io/kube-openapi pkg/validation/validate and errors);
- defaulting.py: pruning of unknown fields and defaulting (pkg/apiserver/schema/pruning,
  pkg/apiserver/schema/defaulting);
- rules.py: the x-kubernetes-validations CEL rules (pkg/apiserver/schema/cel/validation.go),
  evaluated by kubelab/apiserver/cel.py.
"""

from kubelab.apiserver.apiextensions.schema.defaulting import apply_defaults, prune
from kubelab.apiserver.apiextensions.schema.rules import validate_rules
from kubelab.apiserver.apiextensions.schema.structural import validate_schema
from kubelab.apiserver.apiextensions.schema.validate import validate_value

__all__ = ["apply_defaults", "prune", "validate_rules", "validate_schema", "validate_value"]
