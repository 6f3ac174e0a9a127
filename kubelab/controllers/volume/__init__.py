"""The volume controllers of kube-controller-manager (kubernetes pkg/controller/volume/):
persistentvolume (the binder, pv_controller.py), pvcprotection and pvprotection
(protection.py); and kind's local-path provisioner, simulated (provisioner.py); a simulated CSI
driver's provisioner and external-resizer (csi_hostpath.py)."""

from kubelab.controllers.volume.csi_hostpath import CSIHostPathProvisioner, ExternalResizer
from kubelab.controllers.volume.protection import PVCProtectionController, PVProtectionController
from kubelab.controllers.volume.provisioner import LocalPathProvisioner
from kubelab.controllers.volume.pv_controller import PersistentVolumeController

__all__ = ["CSIHostPathProvisioner", "ExternalResizer", "LocalPathProvisioner",
           "PVCProtectionController", "PVProtectionController", "PersistentVolumeController"]
