"""What crosses the wire between the grader and a sandbox, and what the receiver holds.

Values cross by value: JSON data, bytes, and a fixed list of Kubernetes-shaped records
(VALUE_TYPES). Anything else crosses as a reference: the receiver gets a Proxy, and every use of
it is a call back to its owner (see rpc.py). The errors that end a session are here too.

This module is the wire's vocabulary and rpc.Connection its grammar: rpc.py uses the tables
(VALUE_TYPES, SLOTTED, BUILTIN_ERRORS), the METHOD marker and the two resolvers
(resolve_class, store_error) defined here, all public on purpose.
"""

from __future__ import annotations

import importlib
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubelab.grading.rpc import Connection

__all__ = [
    "BUILTIN_ERRORS",
    "ENUM_TYPES",
    "MESSAGE_LIMIT",
    "METHOD",
    "SLOTTED",
    "VALUE_TYPES",
    "CallTimeout",
    "GraderError",
    "NotImplementedYet",
    "OutOfTime",
    "Policy",
    "ProtocolError",
    "Proxy",
    "RemoteError",
    "RemoteMethod",
    "SandboxDied",
    "SessionError",
    "cut",
    "resolve_class",
    "store_error",
]

MESSAGE_LIMIT = 2000  # characters of an exception's message (or a verdict's text) kept

CUT = " (cut)"


def cut(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """text, or its first `limit` characters and " (cut)": applied where a message leaves the
    process that made it (the sandbox, the grading process), so one runaway message cannot
    crowd out the verdicts that travel with it."""
    return text if len(text) <= limit else text[:limit] + CUT

# Records that cross by value (module:qualname). Everything else crosses by reference.
VALUE_TYPES = frozenset({
    "kubelab.store.kv:KeyValue", "kubelab.store.kv:Event", "kubelab.store.kv:WatchResponse",
    "kubelab.store.rpc:Compare", "kubelab.store.rpc:RangeRequest", "kubelab.store.rpc:PutRequest",
    "kubelab.store.rpc:DeleteRequest", "kubelab.store.rpc:RangeResponse",
    "kubelab.store.rpc:PutResponse", "kubelab.store.rpc:DeleteResponse",
    "kubelab.store.rpc:TxnResponse",
    "kubelab.apiserver.auth.authn:UserInfo", "kubelab.apiserver.admission.chain:Attributes",
    "kubelab.scheduler.interface:Status", "kubelab.scheduler.interface:NodeScore",
    "kubelab.scheduler.interface:PreFilterResult", "kubelab.scheduler.interface:PostFilterResult",
    "kubelab.scheduler.types:Resource",
    "kubelab.client.leaderelection.resourcelock:LeaderElectionRecord",
    "kubelab.store.raft.messages:VoterState", "kubelab.store.raft.messages:VoteRequest",
})
ENUM_TYPES = frozenset({"kubelab.scheduler.interface:Code"})
_RESOURCE_FIELDS = ("milli_cpu", "memory", "ephemeral_storage", "allowed_pod_number", "scalar_resources")
# Classes with __slots__ instead of dataclass fields: how to take them apart and rebuild them.
SLOTTED: dict[str, tuple[Callable[[Any], dict[str, Any]], Callable[[type, dict[str, Any]], Any]]] = {
    "kubelab.scheduler.interface:Status": (
        lambda s: {"code": s.code, "reasons": list(s.reasons), "plugin": s.plugin},
        lambda cls, f: cls(f["code"], *f["reasons"], plugin=f["plugin"])),
    "kubelab.scheduler.interface:NodeScore": (
        lambda s: {"name": s.name, "score": s.score},
        lambda cls, f: cls(f["name"], f["score"])),
    "kubelab.scheduler.types:Resource": (
        lambda r: {name: getattr(r, name) for name in _RESOURCE_FIELDS},
        lambda cls, f: _filled(cls(), {k: v for k, v in f.items() if k in _RESOURCE_FIELDS})),
}


def _filled(obj: Any, fields: Mapping[str, Any]) -> Any:
    for name, value in fields.items():
        setattr(obj, name, value)
    return obj
# Exceptions rebuilt as themselves on the other side (others become RemoteError/RuntimeError).
BUILTIN_ERRORS: dict[str, type[BaseException]] = {e.__name__: e for e in (
    KeyError, ValueError, TypeError, IndexError, AttributeError, LookupError, RuntimeError,
    NotImplementedError, PermissionError, OverflowError, ZeroDivisionError, AssertionError)}
METHOD = ["m"]  # the answer "that attribute is a method: call it by name" (compared by identity)


class SessionError(BaseException):
    """The conversation with the sandbox is over. A BaseException on purpose: kubelab code that
    catches Exception (a controller retrying a failed sync) must not swallow it. `during` names
    the call that was waiting for an answer, e.g. "WorkQueue.get()"."""

    during = ""


class GraderError(SessionError):
    """The grader's own side failed (a check's scenario, its simulated rival): not the
    submission's doing. The check ends with the verdict "error", never "fail"."""


class SandboxDied(SessionError):
    """The sandbox process ended (os._exit, a crash, a kill) or closed its pipes."""


class CallTimeout(SessionError):
    """The other side did not answer before the deadline (an infinite loop, a deadlock)."""


class OutOfTime(SessionError):
    """The check's time was up before the grader even asked: the cluster kept calling the
    submission (endless work, a livelock) rather than one call hanging."""


class ProtocolError(SessionError):
    """Garbage on the wire: the submission wrote to the grader's pipe or sent a bad value."""


class NotImplementedYet(SessionError):
    """The submission raised NotImplementedError: an exercise stub. Ends the check at once
    (kubelab code that retries failures would otherwise keep calling it)."""

    def __init__(self, message: str, remote_traceback: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.remote_traceback = remote_traceback


class RemoteError(Exception):
    """An exception the submission raised, as seen by the grader: its type name, message and
    the submission's own traceback. Never the exception object itself."""

    def __init__(self, type_name: str, message: str, remote_traceback: str = "") -> None:
        super().__init__(f"{type_name}: {message}" if message else type_name)
        self.type_name = type_name
        self.message = message
        self.remote_traceback = remote_traceback


class Policy:
    """What the grader's objects let the submission use: class -> allowed attribute names.

    Classes are named "module:qualname" (so the grader needs no import of, say, the store to
    share one) and looked up along the object's MRO. Functions and methods handed over on
    purpose may be called, nothing more. Names starting with "_" are allowed only when listed
    (e.g. "__len__"), so no dunder path (__class__, __globals__) ever leads out of an object.
    """

    def __init__(self, shared: Mapping[str, Iterable[str]] | None = None) -> None:
        self._shared: dict[str, frozenset[str]] = {}
        for path, names in (shared or {}).items():
            self.share(path, names)

    def share(self, cls: type | str, names: Iterable[str]) -> None:
        path = cls if isinstance(cls, str) else f"{cls.__module__}:{cls.__qualname__}"
        self._shared[path] = self._shared.get(path, frozenset()) | frozenset(names)

    def allowed(self, obj: Any) -> frozenset[str]:
        for cls in type(obj).__mro__:
            names = self._shared.get(f"{cls.__module__}:{cls.__qualname__}")
            if names is not None:
                return names
        if isinstance(obj, (types.FunctionType, types.MethodType, types.BuiltinFunctionType)):
            return frozenset({"__call__"})
        return frozenset()


class Proxy:
    """The other side's object. Attribute reads and calls are sent to its owner."""

    __slots__ = ("_conn", "_id", "_known", "_methods", "_type", "_values")

    def __init__(self, conn: Connection, ref: int, info: Mapping[str, Any]) -> None:
        object.__setattr__(self, "_conn", conn)
        object.__setattr__(self, "_id", ref)
        object.__setattr__(self, "_type", str(info.get("t", "object")))
        methods, values = info.get("m"), info.get("a")
        # Restricted objects (the grader's) say up front what they share; others are asked.
        object.__setattr__(self, "_methods", None if methods is None else frozenset(methods))
        object.__setattr__(self, "_values", frozenset(values or ()))
        object.__setattr__(self, "_known", set())

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        if self._methods is not None:
            if name in self._methods:
                return RemoteMethod(self, name)
            if name in self._values:
                return self._conn.get(self, name)
            shared = ", ".join(sorted(n for n in self._methods | self._values if not n.startswith("_")))
            raise AttributeError(f"{self._type!r} object has no attribute {name!r} "
                                 f"(the grader shares: {shared or 'nothing'})")
        if name in self._known:
            return RemoteMethod(self, name)
        value = self._conn.get(self, name)
        if value is METHOD:
            self._known.add(name)
            return RemoteMethod(self, name)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot set {name!r} on the other side's {self._type!r} object")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._conn.call(self, "", args, kwargs)

    def __len__(self) -> int:
        return int(self._conn.call(self, "__len__", (), {}))

    def __getitem__(self, key: Any) -> Any:
        return self._conn.call(self, "__getitem__", (key,), {})

    def __setitem__(self, key: Any, value: Any) -> None:
        self._conn.call(self, "__setitem__", (key, value), {})

    def __contains__(self, key: Any) -> bool:
        return bool(self._conn.call(self, "__contains__", (key,), {}))

    def __iter__(self) -> Iterator[Any]:
        return iter(self._conn.call(self, "__iter__", (), {}))

    def __bool__(self) -> bool:
        if self._methods is not None and "__len__" in self._methods:
            return len(self) > 0
        return True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Proxy) and other._conn is self._conn and other._id == self._id

    def __hash__(self) -> int:
        return hash((id(self._conn), self._id))

    def __repr__(self) -> str:
        return f"<remote {self._type} #{self._id}>"


class RemoteMethod:
    __slots__ = ("name", "owner")

    def __init__(self, owner: Proxy, name: str) -> None:
        self.owner, self.name = owner, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.owner._conn.call(self.owner, self.name, args, kwargs)

    def __repr__(self) -> str:
        return f"<remote method {self.owner._type}.{self.name}>"


def resolve_class(path: str) -> Any:
    module, _, qualname = path.partition(":")
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def store_error(type_name: str, message: str, extra: Any) -> BaseException:
    """Rebuild one of etcd's errors (kubelab.store.errors) for the learner to catch. Resolved by
    name, like the value types: the grader itself never talks to a store."""
    try:
        cls = resolve_class(f"kubelab.store.errors:{type_name}")
    except (ImportError, AttributeError):
        return RuntimeError(message)
    fields = extra if isinstance(extra, dict) else {}
    if type_name == "CompactedError":
        return cls(int(fields.get("compact_revision", 0)))  # type: ignore[no-any-return]
    if type_name == "FutureRevisionError":
        return cls(int(fields.get("current_revision", 0)))  # type: ignore[no-any-return]
    if type_name == "RequestTooLargeError":
        return cls(int(fields.get("size", 0)), int(fields.get("limit", 0)))  # type: ignore[no-any-return]
    if isinstance(cls, type) and issubclass(cls, Exception):
        return cls(message)
    return RuntimeError(message)
