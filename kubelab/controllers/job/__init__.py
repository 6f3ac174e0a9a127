"""The Job controller (kubernetes/kubernetes pkg/controller/job/): read job_controller.py,
then manage_job.py, tracking.py, backoff_utils.py, pod_failure_policy.py, indexed_job_utils.py."""

from kubelab.controllers.job.job_controller import JobController
from kubelab.controllers.job.util import JOB_TRACKING_FINALIZER

__all__ = ["JOB_TRACKING_FINALIZER", "JobController"]
