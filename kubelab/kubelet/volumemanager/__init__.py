"""The kubelet's volume manager (kubernetes pkg/kubelet/volumemanager) and the volume plugins'
payloads (pkg/volume/configmap, secret, downwardapi, projected, emptydir)."""

from kubelab.kubelet.volumemanager.volume_manager import MountedVolume, VolumeManager

__all__ = ["MountedVolume", "VolumeManager"]
