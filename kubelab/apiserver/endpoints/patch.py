"""PATCH: the patcher computes the new object from the live one and a patch, then updates.

k8s.io/apiserver pkg/endpoints/handlers/patch.go: PatchResource hands the request to a
patcher; patcher.patchResource picks the patch mechanism by the patch type, reads the current
object, and applyPatch runs the mechanism on it; what comes out is an update of the object
(rest.Update). The mechanisms, as kubectl sends them:
- "merge": JSON merge patch (RFC 7386), and "json": JSON patch (RFC 6902), both jsonPatcher's
  (jsonpatch.py);
- "strategic": smpPatcher's strategic merge patch, lists of named things merged by their key
  (strategicpatch.py); built-in kinds only;
- "apply": server-side apply, applyPatcher's (apply.py).

kubelab's departures: the update does not retry on a conflict (upstream's GuaranteedUpdate
re-reads and re-applies the patch); the patch type is checked when the patch is applied, after
the live object is read, so a patch of a missing object is 404 whatever its type; and apply
keeps its own read-create-or-update path (apply.py server_side_apply) instead of a
createNewObject / applyPatchToCurrentObject pair.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubelab.api import Object
from kubelab.api.errors import ApiError, bad_request
from kubelab.api.strategicpatch import strategic_merge_patch
from kubelab.apiserver.apiextensions.versions import to_version
from kubelab.apiserver.endpoints import subresources
from kubelab.apiserver.endpoints.apply import server_side_apply
from kubelab.apiserver.endpoints.decode import copy_json, decode_body
from kubelab.apiserver.endpoints.jsonpatch import apply_json_patch, merge_patch
from kubelab.apiserver.storage.codec import decode

if TYPE_CHECKING:
    from kubelab.apiserver.context import RequestContext
    from kubelab.apiserver.registry.store import Registry

__all__ = ["PATCH_TYPES", "Patcher", "apply_patch", "patch_resource"]

PATCH_TYPES = ("merge", "strategic", "json")

_MEDIA = ("application/json-patch+json, application/merge-patch+json, "
          "application/apply-patch+yaml")


def patch_resource(registry: Registry, ctx: RequestContext) -> Object:
    """PatchResource: an apply patch of the object itself goes to server-side apply (the
    applyPatcher); every other patch to a patcher."""
    r = ctx.request
    patch_type = str(r.options.get("patchType", "merge"))
    if patch_type == "apply" and not r.subresource:
        return server_side_apply(registry, ctx)
    return Patcher(registry, ctx, patch_type).patch_resource()


class Patcher:
    """patcher: one PATCH request of the object or of its scale subresource."""

    def __init__(self, registry: Registry, ctx: RequestContext, patch_type: str) -> None:
        self.registry, self.ctx, self.patch_type = registry, ctx, patch_type

    def patch_resource(self) -> Object:
        """patchResource: read the current object (in the request's version), apply the patch
        to it, and update the object with the result."""
        ctx, registry = self.ctx, self.registry
        r, served = ctx.request, ctx.served
        kv = registry.read(ctx, r.namespace, r.name)
        current = decode(kv.value, kv.mod_revision)
        if not served.builtin:
            current = to_version(current, served.info.api_version)
        ctx.enter("decode")
        if r.subresource == "scale":
            patched = self.apply_patch(subresources.scale_of(current, served.custom))
            return subresources.update_scale(registry, ctx, patched)
        obj = decode_body(self.apply_patch(current), served.info, served.schema)
        subresources.check_name(obj, r.name, required=True)
        # A merge patch builds new dicts and leaves current as it was read: the update can
        # compare against it instead of decoding the stored bytes again (a JSON patch edits
        # current in place).
        return registry.update(ctx, obj, kv, current if self.patch_type != "json" else None)

    def apply_patch(self, current: Object) -> Any:
        """applyPatch: the mechanism's applyPatchToCurrentObject."""
        return apply_patch(current, self.ctx.request.body, self.patch_type,
                           self.ctx.served.builtin)


def apply_patch(current: dict[str, Any], patch: Any, patch_type: str, builtin: bool) -> Any:
    """The patched object, by the patch type's mechanism: jsonPatcher (json, merge) or
    smpPatcher (strategic, built-in kinds only). current may be changed in place (json)."""
    if patch_type not in PATCH_TYPES or (patch_type == "strategic" and not builtin):
        media = _MEDIA + (", application/strategic-merge-patch+json" if builtin else "")
        raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown "
                       f"format - accepted media types include: {media}")
    patch = copy_json(patch, "error decoding patch")
    if patch_type == "json":
        if not isinstance(patch, list):
            raise bad_request("json: cannot unmarshal object into Go value of type "
                              "jsonpatch.Patch")
        return apply_json_patch(current, patch)
    if not isinstance(patch, dict):
        raise bad_request("error decoding patch: json: cannot unmarshal array into Go value "
                          "of type map[string]interface {}")
    if patch_type == "strategic":
        return strategic_merge_patch(current, patch)
    return merge_patch(current, patch)
