"""The Service registry's own work: defaults, ClusterIP and NodePort allocation, validation.

Upstream's Service REST (pkg/registry/core/service/storage/rest.go and alloc.go) wraps the
generic store with BeginCreate / BeginUpdate hooks that allocate a ClusterIP and NodePorts
before the object is validated and written, and release them when it is deleted. Here
`allocators.py` holds the allocators and those hooks, `defaults.py` SetDefaults_Service and
SetDefaults_EndpointSlice, `validation.py` ValidateService and ValidateEndpointSlice, and
`schema.py` their strict-decoding schema.
"""

from kubelab.apiserver.apis.schema import SCHEMAS
from kubelab.apiserver.apis.schema_services import SERVICE_SCHEMAS
from kubelab.apiserver.registry.service.allocators import (
    NODE_PORT_RANGE,
    SERVICE_CIDR,
    ServiceAllocators,
)

# The strict decoder's schema of Service and EndpointSlice (service/schema.py) joins the
# others' when the API server imports this package.
SCHEMAS.update(SERVICE_SCHEMAS)

__all__ = ["NODE_PORT_RANGE", "SERVICE_CIDR", "ServiceAllocators"]
