"""A CRD's openAPIV3Schema at work: what apiextensions-apiserver does with it.

Upstream (staging/src/k8s.io/apiextensions-apiserver):

- structural.py and junctors.py: is the schema structural (pkg/apiserver/schema/validation.go,
  completeness.go), and the rest of the CRD schema rules
  (pkg/apis/apiextensions/validation/validation.go);
- validate.py and formats.py: every custom object against its schema, in kube-openapi's words
  as apiextensions wraps them (pkg/apiserver/validation/validation.go,
  k8s.io/kube-openapi pkg/validation/validate and errors);
- defaulting.py: pruning of unknown fields and defaulting (pkg/apiserver/schema/pruning,
  pkg/apiserver/schema/defaulting);
- rules.py: the x-kubernetes-validations CEL rules (pkg/apiserver/schema/cel/validation.go),
  evaluated by kubelab/apiserver/cel.py within the runtime cost budget;
- compilation.py: the rules compiled when the CRD is written, type-checked and their cost
  estimated (pkg/apiserver/schema/cel/compilation.go, with kubelab/apiserver/cel_check.py).
"""

from kubelab.apiserver.apiextensions.schema.defaulting import apply_defaults, prune
from kubelab.apiserver.apiextensions.schema.rules import validate_rules
from kubelab.apiserver.apiextensions.schema.structural import validate_custom_resource_definition_validation
from kubelab.apiserver.apiextensions.schema.validate import validate_value

__all__ = ["apply_defaults", "prune", "validate_custom_resource_definition_validation",
           "validate_rules", "validate_value"]
