"""TokenRequest: POST serviceaccounts/<name>/token (kubernetes pkg/registry/core/serviceaccount/
storage/token.go TokenREST.Create, with pkg/apis/authentication/validation ValidateTokenRequest
and the v1 defaults).

The body is an authentication.k8s.io/v1 TokenRequest. The service account must exist
(`serviceaccounts "robot" not found`); spec.expirationSeconds defaults to 3600 and must lie
between 10 minutes and 2^32 seconds; spec.audiences defaults to the API server's audiences;
a spec.boundObjectRef names a Pod, Secret or Node that must exist (and have that uid; a pod must
run as the account), and the token dies with it. The answer is the request with status.token
(a JWT signed by the API server's service account key, kubelab/apiserver/auth/serviceaccount.py)
and status.expirationTimestamp. Nothing is stored. `kubectl create token` sends it, and so does
every kubelet for the projected tokens of its pods (kubelab/kubelet/token), which the
NodeRestriction admission plugin keeps to pods bound to that kubelet's node.

The request goes through admission as a CREATE of serviceaccounts/token (TokenREST.Create's
createValidation comes before ValidateTokenRequest; the audiences are defaulted after both,
so NodeRestriction sees what the kubelet sent). A pod-bound token of 3607
seconds for the API server's audiences (what the ServiceAccount admission plugin's projection
asks for) is the safe transition of --service-account-extend-token-expiration (on by default):
its exp is a year away (ExpirationExtensionSeconds) and the claim kubernetes.io.warnafter holds
the 3607 seconds, while status.expirationTimestamp says 3607 seconds, so the kubelet still
renews it hourly.

Not modelled: --service-account-max-token-expiration (kubeadm leaves it unset), and the stale
token's audit annotation and metric once warnafter has passed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubelab.api import Object
from kubelab.api.errors import FieldError, bad_request, field_invalid, invalid, not_found
from kubelab.api.meta import epoch, new_uid, rfc3339
from kubelab.api.resources import ResourceInfo
from kubelab.apiserver.admission.chain import CREATE
from kubelab.apiserver.apis.schema import SCHEMAS
from kubelab.apiserver.auth.serviceaccount import DEFAULT_AUDIENCE, claims, generate_token
from kubelab.apiserver.context import RequestContext
from kubelab.apiserver.endpoints.decode import decode_body

if TYPE_CHECKING:
    from kubelab.apiserver.registry.store import Registry

__all__ = ["TOKEN_REQUEST", "create_token"]

TOKEN_REQUEST = ResourceInfo("tokenrequests", "TokenRequest", group="authentication.k8s.io")
DEFAULT_EXPIRATION_SECONDS = 3600  # SetDefaults_TokenRequestSpec
MIN_TOKEN_SECONDS = 600  # ValidateTokenRequest: 10 minutes
MAX_TOKEN_SECONDS = 1 << 32
WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS = 3607  # token.WarnOnlyBoundTokenExpirationSeconds
EXPIRATION_EXTENSION_SECONDS = 24 * 365 * 60 * 60  # token.ExpirationExtensionSeconds: a year
_BOUND = {"Pod": ("pods", True), "Secret": ("secrets", True), "Node": ("nodes", False)}


def _pod_account(pod: Object) -> str:
    """The pod's serviceAccountName; a pod the ServiceAccount admission plugin never saw (it is
    registered only in the anatomy) runs as `default`, as the kubelet asks for it."""
    return str((pod.get("spec") or {}).get("serviceAccountName") or "default")


def validate_token_request(tr: Object) -> list[FieldError]:
    seconds = int((tr.get("spec") or {}).get("expirationSeconds") or 0)
    if seconds < MIN_TOKEN_SECONDS:
        return [field_invalid("spec.expirationSeconds", seconds,
                              "may not specify a duration less than 10 minutes")]
    if seconds > MAX_TOKEN_SECONDS:
        return [field_invalid("spec.expirationSeconds", seconds,
                              "may not specify a duration larger than 2^32 seconds")]
    return []


def create_token(registry: Registry, ctx: RequestContext, body: Any) -> Object:
    r, server = ctx.request, ctx.server
    ctx.enter("decode")
    tr = decode_body(body, TOKEN_REQUEST, SCHEMAS["TokenRequest"])
    spec = tr.setdefault("spec", {})
    if not spec.get("expirationSeconds"):
        spec["expirationSeconds"] = DEFAULT_EXPIRATION_SECONDS
    attrs = ctx.attributes(CREATE, tr, None)
    ctx.enter("mutating-admission")
    server.admission.mutate(attrs)
    ctx.enter("validating-admission")  # TokenREST.Create's createValidation, first
    server.admission.validate(attrs)
    ctx.enter("validation")
    errs = validate_token_request(tr)
    if errs:
        raise invalid("TokenRequest", "", errs, "authentication.k8s.io")
    lister = server.served
    sa = lister.get("serviceaccounts", r.namespace, r.name)
    if sa is None:
        raise not_found("serviceaccounts", r.name)
    bound: Object | None = None
    ref = spec.get("boundObjectRef")
    if ref:
        kind = ref.get("kind", "")
        if kind not in _BOUND:
            raise bad_request(f"cannot bind token for serviceaccount \"{r.name}\" to object of "
                              f"kind \"{kind}\"")
        resource, namespaced = _BOUND[kind]
        bound = lister.get(resource, r.namespace if namespaced else "", ref.get("name", ""))
        if bound is None:
            raise not_found(resource, ref.get("name", ""))
        if ref.get("uid") and ref["uid"] != bound["metadata"].get("uid"):
            raise bad_request(f"the UID in the bound object reference ({ref['uid']}) does not "
                              f"match the UID in record. The object might have been deleted "
                              f"and then recreated")
        if kind == "Pod" and r.name != _pod_account(bound):
            raise bad_request(f"cannot bind token for serviceaccount \"{r.name}\" to pod running "
                              "with different serviceaccount name.")
        bound = {**bound, "kind": kind}
    if not spec.get("audiences"):
        spec["audiences"] = [DEFAULT_AUDIENCE]  # the API server's, once admission has seen it
    node = None
    if bound is not None and bound["kind"] == "Pod" and (bound.get("spec") or {}).get("nodeName"):
        node = lister.get("nodes", "", bound["spec"]["nodeName"])  # the pod's node, as info
    ctx.enter("storage")  # (nothing is stored)
    now = int(epoch().timestamp() + server.clock.now)
    seconds = exp = int(spec["expirationSeconds"])
    warn_after = 0
    if bound is not None and bound["kind"] == "Pod" and \
            seconds == WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS and \
            set(spec["audiences"]) <= {DEFAULT_AUDIENCE}:  # isKubeAudiences
        warn_after, exp = seconds, EXPIRATION_EXTENSION_SECONDS
    token = generate_token(server.service_account_key,
                           claims(sa, spec["audiences"], now, exp, new_uid(server.rand),
                                  bound, node, warn_after))
    tr["status"] = {"token": token, "expirationTimestamp": rfc3339(server.clock.now + seconds)}
    tr.setdefault("metadata", {}).setdefault("creationTimestamp", None)
    return tr
