"""Authentication: who is asking? A bearer token becomes a user name and groups.

kube-apiserver tries its authenticators in turn (client certificates, bearer tokens, service
account tokens, ...) and falls back to the anonymous user. kubelab keeps one of them, the static
token file (--token-auth-file), which is enough to give every component its own identity:
RBAC and the audit log then see who did what. User and group names are upstream's
(k8s.io/apiserver/pkg/authentication/user/user.go). A token the table does not hold goes to the
service account token authenticator, when there is one (serviceaccount.py: the JWTs that
TokenRequest signs), before it is refused, as kube-apiserver's union of authenticators does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from kubelab.api.errors import unauthorized

__all__ = [
    "ADMIN",
    "ALL_AUTHENTICATED",
    "ALL_UNAUTHENTICATED",
    "ANONYMOUS",
    "CONTROLLER_MANAGER",
    "MASTERS",
    "NODES",
    "NODE_PREFIX",
    "SCHEDULER",
    "TokenAuthenticator",
    "UserInfo",
    "node_user",
]

MASTERS = "system:masters"                  # bound to cluster-admin: may do anything
NODES = "system:nodes"                      # every kubelet
ALL_AUTHENTICATED = "system:authenticated"  # added to every user with a valid token
ALL_UNAUTHENTICATED = "system:unauthenticated"
NODE_PREFIX = "system:node:"

ADMIN = "admin"
SCHEDULER = "system:kube-scheduler"
CONTROLLER_MANAGER = "system:kube-controller-manager"


@dataclass(frozen=True, slots=True)
class UserInfo:
    name: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    # user.Info's Extra, as (key, values) pairs: an impersonated user's Impersonate-Extra-*.
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def node_name(self) -> str | None:
        """The node a kubelet speaks for (system:node:<name> in group system:nodes), or None."""
        if NODES in self.groups and self.name.startswith(NODE_PREFIX):
            return self.name[len(NODE_PREFIX):]
        return None


ANONYMOUS = UserInfo("system:anonymous", (ALL_UNAUTHENTICATED,))


def node_user(node_name: str) -> str:
    return NODE_PREFIX + node_name


class BearerTokenAuthenticator(Protocol):
    def authenticate(self, token: str) -> UserInfo | None: ...


class TokenAuthenticator:
    """A static token table. An empty token is anonymous; an unknown one is 401 Unauthorized."""

    def __init__(self) -> None:
        self._users: dict[str, UserInfo] = {}
        # --- sa --- the service account tokens' authenticator (auth/serviceaccount.py)
        self.service_account_tokens: BearerTokenAuthenticator | None = None
        self._tokens: dict[str, str] = {}  # user name -> token, for the built-in identities

    def add_token(self, token: str, user: str, groups: tuple[str, ...] | list[str] = ()) -> None:
        if not token:
            raise ValueError("a token may not be empty: the empty token means anonymous")
        groups = tuple(groups)
        if ALL_AUTHENTICATED not in groups:
            groups = (*groups, ALL_AUTHENTICATED)
        self._users[token] = UserInfo(user, groups)
        self._tokens.setdefault(user, token)

    def token_for(self, user: str) -> str | None:
        return self._tokens.get(user)

    def authenticate(self, token: str) -> UserInfo:
        if not token:
            return ANONYMOUS
        user = self._users.get(token)
        if user is None and self.service_account_tokens is not None:
            user = self.service_account_tokens.authenticate(token)
        if user is None:
            raise unauthorized()
        return user
