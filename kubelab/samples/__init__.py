"""The course's own controllers and operators, apart from kube-controller-manager's.

sample_controller.py is notebook 03's ConfigMap copier (after kubernetes/sample-controller);
settlement_job.py is notebook 08's operator (in kubelab.client.operator's controller-runtime
shape), database.py its Database operator (a StatefulSet, a Service and a backup CronJob per
Database) and crds.py the custom kinds of notebook 08's exercises. Like every component they import
only kubelab.api, kubelab.sim and kubelab.client.
"""

from kubelab.samples.sample_controller import ConfigMapCopier, EdgeTriggeredCopier, copies_match
from kubelab.samples.settlement_job import SettlementJobReconciler, settlement_job, settlement_operator

__all__ = [
    "ConfigMapCopier",
    "EdgeTriggeredCopier",
    "SettlementJobReconciler",
    "copies_match",
    "settlement_job",
    "settlement_operator",
]
