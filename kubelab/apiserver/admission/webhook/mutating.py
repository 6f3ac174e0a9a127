"""MutatingAdmissionWebhook: the webhooks that may change the object, after the mutating
plugins.

Follows k8s.io/apiserver pkg/admission/plugin/webhook/mutating/dispatcher.go and
reinvocationcontext.go. Every MutatingWebhookConfiguration's webhooks that match are called
in order, each with the object as the previous one left it; an answer with a JSONPatch
changes the object (in place, for the stages after admission). Failures and denials are
handled as the validating webhooks' are (validating.py).

Reinvocation: when a webhook changes the object, the webhooks with reinvocationPolicy
IfNeeded that ran before it may no longer like what they see; the admission chain then runs
the mutating plugins once more (chain.py), and in that round only those webhooks are called
again (never one that did not run in the first round).
"""

from __future__ import annotations

import copy
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from kubelab.api.errors import ApiError, internal_error
from kubelab.apiserver.admission.chain import AdmissionPlugin, Attributes
from kubelab.apiserver.admission.webhook.errors import ErrCallingWebhook, ErrWebhookRejection
from kubelab.apiserver.admission.webhook.generic import (
    Hook,
    dry_run_unsupported,
    exempt,
    hooks,
    should_call_hook,
)
from kubelab.apiserver.admission.webhook.validating import KEPT, call_hook
from kubelab.apiserver.endpoints.jsonpatch import apply_json_patch

__all__ = ["MutatingAdmissionWebhook"]

RESOURCE = "mutatingwebhookconfigurations"


@dataclass
class WebhookReinvokeContext:
    """webhookReinvokeContext: what the first round leaves for the second."""

    last_output: Any = None
    previously_invoked: set[str] = field(default_factory=set)   # IfNeeded webhooks that ran
    reinvoke: set[str] = field(default_factory=set)             # ... to call again

    def require_reinvoking_previously_invoked(self) -> None:
        self.reinvoke |= self.previously_invoked
        self.previously_invoked = set()


class MutatingAdmissionWebhook(AdmissionPlugin):
    name = "MutatingAdmissionWebhook"

    def __init__(self) -> None:
        # The latest ones (upstream: the response's Warning headers and the audit events).
        self.warnings: deque[str] = deque(maxlen=KEPT)
        self.audit_annotations: deque[dict[str, str]] = deque(maxlen=KEPT)

    def mutate(self, attrs: Attributes) -> None:
        if exempt(attrs):
            return
        all_hooks = hooks(attrs.lister, RESOURCE)
        if not all_hooks:
            return
        state = attrs.reinvocation
        context = state.values.setdefault(self.name, WebhookReinvokeContext())
        if state.is_reinvoke and attrs.object != context.last_output:
            # the in-tree plugins changed the object in the second round
            context.require_reinvoking_previously_invoked()
        try:
            self._dispatch(attrs, all_hooks, context)
        finally:
            context.last_output = copy.deepcopy(attrs.object)

    def _dispatch(self, attrs: Attributes, all_hooks: list[Hook],
                  context: WebhookReinvokeContext) -> None:
        state = attrs.reinvocation
        round_ = 1 if state.is_reinvoke else 0
        for index, hook in enumerate(all_hooks):
            if not should_call_hook(hook, attrs):
                continue
            if state.is_reinvoke and hook.uid not in context.reinvoke:
                continue
            unsupported = dry_run_unsupported(hook, attrs)
            if unsupported is not None:
                raise unsupported
            try:
                changed = self._call_mutating_hook(hook, attrs, round_, index)
                error: Exception | None = None
            except (ErrCallingWebhook, ErrWebhookRejection, ApiError) as err:
                changed, error = False, err
            if changed:
                context.require_reinvoking_previously_invoked()
                state.should_reinvoke = True
            if hook.spec.get("reinvocationPolicy") == "IfNeeded":
                context.previously_invoked.add(hook.uid)
            if error is None:
                continue
            if isinstance(error, ErrCallingWebhook):
                if hook.failure_policy == "Ignore":
                    self.audit_annotations.append({
                        f"failed-open.mutation.webhook.admission.k8s.io/round_{round_}_index_"
                        f"{index}": hook.name})
                    continue
                raise internal_error(str(error)) from None
            if isinstance(error, ErrWebhookRejection):
                raise error.status from None
            raise error

    def _call_mutating_hook(self, hook: Hook, attrs: Attributes, round_: int,
                            index: int) -> bool:
        """callAttrMutatingHook: True when the webhook's patch changed the object."""
        result = call_hook(hook, attrs, mutating=True)
        self.warnings.extend(result.warnings)
        if result.audit_annotations:
            self.audit_annotations.append(dict(result.audit_annotations))
        changed = False
        if result.patch:
            if attrs.object is None:
                raise internal_error(f'admission webhook "{hook.name}" attempted to modify the '
                                     "object, which is not supported for this operation")
            try:
                patched = apply_json_patch(copy.deepcopy(attrs.object), result.patch)
            except ApiError as err:
                raise internal_error(err.message) from None
            if not isinstance(patched, dict):
                raise internal_error(f'admission webhook "{hook.name}" replaced the object '
                                     "with something that is not an object")
            changed = patched != attrs.object
            if changed:
                _replace_in_place(attrs.object, patched)
        self.audit_annotations.append({
            f"mutation.webhook.admission.k8s.io/round_{round_}_index_{index}":
                f'{{"configuration":"{hook.configuration}","webhook":"{hook.name}",'
                f'"mutated":{"true" if changed else "false"}}}'})
        return changed


def _replace_in_place(obj: dict[str, Any], patched: dict[str, Any]) -> None:
    """The registry holds the object and its metadata: both keep their identity."""
    meta, new_meta = obj.get("metadata"), patched.get("metadata")
    obj.clear()
    obj.update(patched)
    if isinstance(meta, dict) and isinstance(new_meta, dict):
        meta.clear()
        meta.update(new_meta)
        obj["metadata"] = meta
