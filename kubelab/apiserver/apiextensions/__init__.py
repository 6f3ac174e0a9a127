"""CustomResourceDefinitions (kubernetes/apiextensions-apiserver): crd.py serves a new resource
from a CRD, schema/ is its structural schema at work (validation, pruning, defaulting, CEL
rules), handler.py what the server does with a custom object because of it, versions.py several
served versions, finalizer.py the customresourcecleanup finalizer, tableconvertor.py the
Table of a custom resource (its additionalPrinterColumns, which `kubectl get` prints).
"""
