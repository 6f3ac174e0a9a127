"""Server-side printing (kubernetes pkg/printers/internalversion): the columns `kubectl get`
shows for each built-in kind. internalversion.py holds the kinds of the workloads and nodes,
services.py those of Services and EndpointSlices.
"""
