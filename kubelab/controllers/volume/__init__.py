"""The volume controllers of kube-controller-manager (kubernetes pkg/controller/volume/):
persistentvolume (the binder, pv_controller.py), pvcprotection and pvprotection
(protection.py); and kind's local-path provisioner, simulated (provisioner.py)."""

from kubelab.controllers.volume.protection import PVCProtectionController, PVProtectionController
from kubelab.controllers.volume.provisioner import LocalPathProvisioner
from kubelab.controllers.volume.pv_controller import PersistentVolumeController

__all__ = ["LocalPathProvisioner", "PVCProtectionController", "PVProtectionController",
           "PersistentVolumeController"]
