"""The certificates controllers (kubernetes pkg/controller/certificates)."""

from kubelab.controllers.certificates.cleaner import CSRCleanerController
from kubelab.controllers.certificates.rootcacertpublisher import (
    ROOT_CA_CERT_CONFIG_MAP_NAME,
    Publisher,
)
from kubelab.controllers.certificates.sarapprove import SARApprover
from kubelab.controllers.certificates.signer import CSRSigningController

__all__ = ["ROOT_CA_CERT_CONFIG_MAP_NAME", "CSRCleanerController", "CSRSigningController", "Publisher",
           "SARApprover"]
