"""The registry: the REST storage of each resource (k8s.io/apiserver
pkg/registry/generic/registry and kubernetes pkg/registry/). store.py is the generic store
(create, get, list, update, delete over the storage layer), strategy.py the per-kind rules it
calls, deletion.py graceful deletion and finalizers, eviction.py pods/eviction, batch.py the Job
strategy, service/ the Service REST with its ClusterIP and NodePort allocators.
"""
