"""The certificates controllers (kubernetes pkg/controller/certificates)."""

from kubelab.controllers.certificates.rootcacertpublisher import (
    ROOT_CA_CERT_CONFIG_MAP_NAME,
    Publisher,
)

__all__ = ["ROOT_CA_CERT_CONFIG_MAP_NAME", "Publisher"]
