"""The volume controllers of kube-controller-manager (kubernetes pkg/controller/volume/):
persistentvolume (the binder, pv_controller.py), pvcprotection and pvprotection
(protection.py); and kind's local-path provisioner, simulated (provisioner.py); a simulated CSI
driver's provisioner, external-attacher and external-resizer (csi_hostpath.py); the
attach/detach controller (attachdetach.py)."""

from kubelab.controllers.volume.attachdetach import AttachDetachController
from kubelab.controllers.volume.csi_hostpath import CSIHostPathProvisioner, ExternalAttacher, ExternalResizer
from kubelab.controllers.volume.protection import PVCProtectionController, PVProtectionController
from kubelab.controllers.volume.provisioner import LocalPathProvisioner
from kubelab.controllers.volume.pv_controller import PersistentVolumeController

__all__ = ["AttachDetachController", "CSIHostPathProvisioner", "ExternalAttacher",
           "ExternalResizer", "LocalPathProvisioner",
           "PVCProtectionController", "PVProtectionController", "PersistentVolumeController"]
