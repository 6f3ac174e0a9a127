"""The DaemonSet controller (pkg/controller/daemon): daemon_controller.py syncs, update.py
rolls out and keeps the ControllerRevisions, util.py is daemonset_util.go."""

from kubelab.controllers.daemon.daemon_controller import DaemonSetsController

__all__ = ["DaemonSetsController"]
