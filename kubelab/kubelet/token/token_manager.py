"""The kubelet's token manager: the service account tokens of the pods on its node (kubernetes
pkg/kubelet/token/token_manager.go).

The projected volume plugin asks it for the token of each serviceAccountToken projection
(pkg/volume/projected/projected.go collectData): a TokenRequest for the pod's service account,
with the projection's audience (none: the API server's own) and expirationSeconds (the
ServiceAccount admission plugin's 3607) and bound to the pod (boundObjectRef v1 Pod, name and
uid). GetServiceAccountToken:

- looks in its cache under keyFunc's key (account, namespace, audiences, seconds, bound object);
- answers the cached TokenRequest unless requiresRefresh: the token is older than 80 % of its
  lifetime, or older than 24 h (maxTTL), each less a jitter of up to 10 s, or was issued "in
  the future" (the clock went back);
- else asks the API server (POST serviceaccounts/<name>/token) and caches the answer;
- when that fails it answers the old token while it has not expired ("Couldn't update token"),
  and an error once it has (`token <key> expired and refresh failed: ...`); with no old token
  the error is `failed to fetch token: <the API's error>`, which the volume manager reports as
  the FailedMount of the volume.

DeleteServiceAccountToken(pod uid) drops a pod's tokens when its volume is torn down; cleanup
drops expired ones (upstream: a goroutine every gcPeriod, 1 minute).

Departures: times are the cluster clock's virtual seconds; the jitter draws from the kubelet's
seeded generator, not math/rand's global one; cleanup runs when GetServiceAccountToken is
called a gcPeriod or more after the last cleanup, not from a goroutine of its own, so a kubelet
with no tokens adds nothing to the clock.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

from kubelab.api import Object
from kubelab.api.meta import parse_time
from kubelab.sim.clock import Clock

__all__ = ["GC_PERIOD", "MAX_JITTER", "MAX_TTL", "Manager", "TokenError", "key_func"]

MAX_TTL = 24 * 3600.0   # maxTTL
GC_PERIOD = 60.0        # gcPeriod
MAX_JITTER = 10.0       # maxJitter

# getToken: (service account name, namespace, TokenRequest) -> the TokenRequest answered.
TokenGetter = Callable[[str, str, Object], Object]


class TokenError(Exception):
    """No token to give: the message is the manager's."""


def key_func(name: str, namespace: str, tr: Object) -> str:
    """keyFunc: nonconfidential and safe to log; every field of the request that changes the
    token the server would mint is in it."""
    spec = tr.get("spec") or {}
    ref = spec.get("boundObjectRef") or {}
    given = list(spec.get("audiences") or [])
    audiences = "{" + ", ".join(json.dumps(str(a)) for a in given) + "}" if given else "(nil)"
    fields = ", ".join(f"{go}:{json.dumps(str(ref.get(k) or ''))}" for go, k in (
        ("Kind", "kind"), ("APIVersion", "apiVersion"), ("Name", "name"), ("UID", "uid")))
    # fmt's "%q/%q/%#v/%#v/%#v"
    return (f"{json.dumps(name)}/{json.dumps(namespace)}/[]string{audiences}/"
            f"{int(spec.get('expirationSeconds') or 0)}/v1.BoundObjectReference{{{fields}}}")


class Manager:
    def __init__(self, get_token: TokenGetter, clock: Clock, rand: random.Random) -> None:
        self.get_token, self.clock, self.rand = get_token, clock, rand
        self.cache: dict[str, Object] = {}
        self._cleaned_at = clock.now

    def get_service_account_token(self, namespace: str, name: str, tr: Object) -> Object:
        """GetServiceAccountToken: the cached TokenRequest, or a new one. Raises TokenError."""
        if self.clock.now - self._cleaned_at >= GC_PERIOD:
            self.cleanup()
        key = key_func(name, namespace, tr)
        cached = self.cache.get(key)
        if cached is not None and not self.requires_refresh(cached):
            return cached
        try:
            fresh = self.get_token(name, namespace, tr)
        except Exception as err:  # the API's error (an ApiError, or the server unreachable)
            message = getattr(err, "message", None) or str(err)
            if cached is None:
                raise TokenError(f"failed to fetch token: {message}") from err
            if self.expired(cached):
                raise TokenError(f"token {key} expired and refresh failed: {message}") from err
            return cached  # klog: "Couldn't update token"; the old one is still good
        self.cache[key] = fresh
        return fresh

    def delete_service_account_token(self, pod_uid: str) -> None:
        """DeleteServiceAccountToken: the pod is gone, and so are its tokens."""
        for key in [k for k, tr in self.cache.items()
                    if ((tr.get("spec") or {}).get("boundObjectRef") or {}).get("uid") == pod_uid]:
            del self.cache[key]

    def cleanup(self) -> None:
        self._cleaned_at = self.clock.now
        for key in [k for k, tr in self.cache.items() if self.expired(tr)]:
            del self.cache[key]

    def _expiration(self, tr: Object) -> float:
        return parse_time(str((tr.get("status") or {}).get("expirationTimestamp") or ""))

    def expired(self, tr: Object) -> bool:
        return self.clock.now > self._expiration(tr)

    def requires_refresh(self, tr: Object) -> bool:
        """requiresRefresh: older than 80 % of its lifetime or than 24 h (less a jitter), or
        issued after now."""
        seconds: Any = (tr.get("spec") or {}).get("expirationSeconds")
        if seconds is None:
            return False  # klog: "Expiration seconds was nil for token request"
        now, exp = self.clock.now, self._expiration(tr)
        iat = exp - int(seconds)
        jitter = float(int(self.rand.random() * MAX_JITTER))  # whole seconds, as Duration()
        if now > iat + MAX_TTL - jitter:
            return True
        if now > exp - int(seconds) * 20 // 100 - jitter:
            return True
        return now < iat
