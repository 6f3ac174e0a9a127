"""`kubectl describe` (kubernetes/kubectl pkg/describe/describe.go): describe.py holds the
describers every kind shares and the pod's; apps.py those of nodes, Deployments and ReplicaSets.
"""
