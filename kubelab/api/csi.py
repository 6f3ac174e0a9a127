"""What the kubelet and the attach/detach controller share about CSI volumes, as both use
kubernetes pkg/volume/csi (csi_attacher.go getAttachmentName; csi_plugin.go, whose
skipAttach is false when there is no CSIDriver object)."""

from __future__ import annotations

import hashlib
from typing import Any

__all__ = ["attach_required", "attachment_name"]


def attachment_name(volume_handle: str, driver: str, node: str) -> str:
    """getAttachmentName: the VolumeAttachment of this volume on this node."""
    return "csi-" + hashlib.sha256(f"{volume_handle}{driver}{node}".encode()).hexdigest()


def attach_required(csi_driver: dict[str, Any] | None) -> bool:
    """The driver's CSIDriver says attachRequired; without the object, attach."""
    if csi_driver is None:
        return True
    return (csi_driver.get("spec") or {}).get("attachRequired") is not False
