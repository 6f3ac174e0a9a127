"""The Deployment controller (kubernetes/kubernetes pkg/controller/deployment/).

Read controller.py first (event handlers and sync_deployment), then rolling.py, recreate.py,
sync.py (scaling, the new ReplicaSet, status), progress.py, rollback.py, and util.py /
replicas.py (deployment_util.go).
"""

from kubelab.controllers.deployment.controller import DeploymentController

__all__ = ["DeploymentController"]
