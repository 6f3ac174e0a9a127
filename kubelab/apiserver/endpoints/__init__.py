"""What the request handlers do with a body (k8s.io/apiserver pkg/endpoints/handlers): wire.py
reads the bytes (JSON, YAML, protobuf/), decode.py decodes them strictly against the kind,
patch.py computes a PATCH's result, apply.py is server-side apply, and subresources.py serves
pods/binding, <workload>/scale and pods/log.
"""
