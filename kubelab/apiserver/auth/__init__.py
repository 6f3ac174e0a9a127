"""Who is asking and may they (k8s.io/apiserver pkg/authentication, pkg/authorization, and
plugin/pkg/auth/authorizer/rbac): authn.py turns a bearer token into a user, rbac.py decides,
reviews.py answers SelfSubjectAccessReview, audit.py writes one record per request.
"""
