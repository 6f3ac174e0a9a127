"""The client side of the HTTPS edge: kubelab.client over HTTPS (client-go's rest and transport).

transport.py speaks the API by HTTP on one keep-alive connection, watchstream.py reads a watch's
chunked stream, restconfig.py reads a kubeconfig (clientcmd), clienterrors.py turns an answer
that is not a success into an ApiError (rest/request.go). It imports only kubelab.api: a
`Client.from_kubeconfig` in the simulation's client loads it without loading the server.
"""

from kubelab.serve.transport.transport import HTTPTransport

__all__ = ["HTTPTransport"]
