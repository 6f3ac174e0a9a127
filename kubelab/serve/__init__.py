"""The Kubernetes API over HTTPS: real kubectl, the official Python client and kopf against a
kubelab cluster (server.py says how, handlers.py what each request becomes).

    kubelab serve --nodes 3 -f deploy.yaml      # then: export KUBECONFIG=~/.kube/kubelab.yaml
    url = c.serve(port=0)                       # in a notebook, for a cluster you already have
    c.kubeconfig("~/.kube/kubelab.yaml")

And the other way round, kubelab.client's informers and controllers against any API server
(transport.py, remote.py):

    remote = kubelab.serve.connect("~/.kube/kubelab.yaml")   # or a real cluster's kubeconfig
    served = kubelab.serve.spawn(nodes=1)                     # a served cluster in its own process
"""

from kubelab.serve.remote import Remote, connect
from kubelab.serve.server import Server
from kubelab.serve.spawn import Spawned, spawn

__all__ = ["Remote", "Server", "Spawned", "connect", "spawn"]
