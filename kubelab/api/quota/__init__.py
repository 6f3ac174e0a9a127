"""Quota evaluation, shared by the ResourceQuota admission plugin (kubelab.apiserver) and the
resourcequota controller (kubelab.controllers), as k8s.io/apiserver pkg/quota/v1 and
kubernetes pkg/quota/v1/evaluator/core are shared upstream."""

from kubelab.api.quota.core import new_evaluators
from kubelab.api.quota.generic import Evaluator, ObjectCountEvaluator, calculate_usage

__all__ = ["Evaluator", "ObjectCountEvaluator", "calculate_usage", "new_evaluators"]
