"""The wire between a check and the submission it grades: calls on remote objects, over pipes.

The check runs the simulated cluster in the grader's process; the learner's code runs in another
process, the sandbox (sandbox.py). When the cluster needs the learner's code (a filter plugin's
verdict, the workqueue's next key, a sync) the grader calls it here; when the learner's code needs
the cluster (store.txn, client.create, lister.list) it calls back. Both sides are single-threaded:
a caller waits for the answer and serves the other side's calls meanwhile, so the run stays as
deterministic as the simulation itself.

Values cross by value: JSON data, bytes, and a fixed list of Kubernetes-shaped records
(VALUE_TYPES: etcd's KeyValue and TxnResponse, the scheduler's Status, ...). Anything else crosses
as a reference: the receiver gets a Proxy, and every use of it is a call back to its owner. The
grader's side shares only what its Policy allows (store.txn, client.create, ... never client.api,
never a private attribute), so the submission can answer the questions it is asked and use the
objects it is handed, and nothing else: it cannot reach the checks, the cluster's internals or
the verdict. What the submission does inside its own process only changes its own answers.
"""

from __future__ import annotations

import base64
import dataclasses
import traceback
from collections.abc import Callable
from typing import Any

from kubelab.grading.pipe import Pipe
from kubelab.grading.remote import (
    BUILTIN_ERRORS,
    ENUM_TYPES,
    METHOD,
    SLOTTED,
    VALUE_TYPES,
    NotImplementedYet,
    Policy,
    ProtocolError,
    Proxy,
    RemoteError,
    RemoteMethod,
    SessionError,
    cut,
    resolve_class,
    store_error,
)

__all__ = ["Connection"]

_MAX_TRACEBACK = 4000    # characters of a submission's traceback kept for the report


class Connection(Pipe):
    """One end of the conversation. policy=None: the other side may use anything of ours (the
    sandbox's end, since the grader is trusted); a Policy: only what it allows (the grader's).

    deadline() gives the monotonic time by which the other side must answer (None: wait).
    """

    def __init__(self, rfd: int, wfd: int, *, policy: Policy | None,
                 deadline: Callable[[], float | None] | None = None) -> None:
        super().__init__(rfd, wfd, deadline)
        self.policy = policy
        self._exports: dict[int, Any] = {}
        self._export_ids: dict[int, int] = {}
        self._proxies: dict[int, Proxy] = {}
        self._next_request = 0
        self.remote_errors: list[RemoteError] = []
        self.calls = 0  # calls and reads made on the other side's objects (0: never used)

    # ------------------------------------------------------------------ calls

    def call(self, target: Proxy, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        self.calls += 1
        what = f"{target._type}.{name}()" if name else f"{target._type}()"
        if name == "invoke" and args and isinstance(args[0], RemoteMethod):  # Root.invoke(fn, ...)
            what = f"{args[0].owner._type}.{args[0].name}()"
        return self._request(["call", target._id, name, self.encode(list(args)),
                              self.encode(dict(kwargs))], what)

    def get(self, target: Proxy, name: str) -> Any:
        self.calls += 1
        return self._request(["get", target._id, name], f"{target._type}.{name}")

    def _request(self, body: list[Any], what: str) -> Any:
        if self.dead is not None:
            raise self.dead
        self._next_request += 1
        rid = self._next_request
        self.pending.append(what)
        try:
            self.send([body[0], rid, *body[1:]])
            while True:
                message = self.recv()
                kind = message[0] if message else None
                if kind in ("ok", "err"):
                    if len(message) != 3 or message[1] != rid:
                        raise self._fail(ProtocolError("an answer arrived for a call nobody made"))
                    if kind == "ok":
                        return self.decode(message[2])
                    raise self.decode_error(message[2])
                self.serve(message)
        except SessionError as err:
            err.during = err.during or what
            raise
        finally:
            self.pending.pop()

    def serve(self, message: list[Any]) -> None:
        """Answer one call from the other side. Its exceptions go back as answers."""
        if not message or message[0] not in ("call", "get") or len(message) < 4:
            raise self._fail(ProtocolError(f"unexpected message {str(message)[:80]!r}"))
        rid = message[1]
        try:
            obj = self._exports.get(message[2], self._exports)
            if obj is self._exports:
                raise self._fail(ProtocolError(f"reference #{message[2]} was never shared"))
            name = message[3]
            if not isinstance(name, str):
                raise self._fail(ProtocolError("attribute names are strings"))
            if message[0] == "get":
                result = self._get(obj, name)
            else:
                args, kwargs = self.decode(message[4]), self.decode(message[5])
                if not isinstance(args, list) or not isinstance(kwargs, dict):
                    raise self._fail(ProtocolError("malformed call"))
                result = self._call(obj, name, args, kwargs)
            reply = ["ok", rid, METHOD if result is METHOD else self.encode(result)]
        except SessionError:
            raise
        except BaseException as err:  # the sandbox must survive SystemExit from learner code
            reply = ["err", rid, self.encode_error(err)]
        self.send(reply)

    def serve_forever(self) -> None:
        while True:
            self.serve(self.recv())

    def _check(self, obj: Any, name: str) -> None:
        if self.policy is None:
            return
        if name not in self.policy.allowed(obj):
            raise AttributeError(f"the grader does not let submissions use "
                                 f"{type(obj).__name__}.{name or '__call__'}")

    def _get(self, obj: Any, name: str) -> Any:
        self._check(obj, name)
        if self.policy is None and name.startswith("__"):
            raise AttributeError(name)
        value = getattr(obj, name)
        return METHOD if callable(value) and not isinstance(value, type) else value

    def _call(self, obj: Any, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        self._check(obj, name or "__call__")
        if name == "__iter__":
            return list(obj)
        fn = getattr(obj, name) if name else obj
        return fn(*args, **kwargs)

    # ------------------------------------------------------------------ values

    def encode(self, value: Any) -> Any:
        kind = type(value)
        if value is None or kind in (bool, int, float, str):
            return value
        if kind is list:
            return ["l", *[self.encode(v) for v in value]]
        if kind is tuple:
            return ["t", *[self.encode(v) for v in value]]
        if kind is dict:
            return ["d", *[[self.encode(k), self.encode(v)] for k, v in value.items()]]
        if kind is bytes:
            return ["b", base64.b64encode(value).decode()]
        if kind in (set, frozenset):
            return ["s" if kind is set else "f", *[self.encode(v) for v in value]]
        if isinstance(value, Proxy) and value._conn is self:
            return ["R", value._id]
        if isinstance(value, RemoteMethod) and value.owner._conn is self:
            return ["M", value.owner._id, value.name]
        path = f"{kind.__module__}:{kind.__qualname__}"
        if path in ENUM_TYPES:
            return ["e", path, value.value]
        if path in VALUE_TYPES:
            if path in SLOTTED:
                fields = SLOTTED[path][0](value)
            elif isinstance(value, tuple):  # a NamedTuple (the store's records)
                fields = value._asdict()  # type: ignore[attr-defined]
            else:
                fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value) if f.init}
            return ["v", path, {k: self.encode(v) for k, v in fields.items()}]
        return self._export(value)

    def _export(self, obj: Any) -> list[Any]:
        ref = self._export_ids.get(id(obj))
        if ref is None:
            ref = len(self._exports) + 1
            self._exports[ref] = obj
            self._export_ids[id(obj)] = ref
        info: dict[str, Any] = {"t": type(obj).__name__}
        if self.policy is not None:
            allowed = self.policy.allowed(obj)
            cls = type(obj)
            info["m"] = sorted(n for n in allowed if callable(getattr(cls, n, None)) or n == "__call__")
            info["a"] = sorted(n for n in allowed if n not in info["m"])
        return ["r", ref, info]

    def decode(self, data: Any) -> Any:
        try:
            return self._decode(data)
        except SessionError:
            raise
        except (KeyError, IndexError, TypeError, ValueError, RecursionError, AttributeError) as err:
            raise self._fail(ProtocolError(f"malformed value on the wire ({err!r})")) from None

    def _decode(self, data: Any) -> Any:
        if not isinstance(data, list):
            if isinstance(data, dict):
                raise ValueError("bare JSON object")
            return data
        tag, rest = data[0], data[1:]
        if tag == "l":
            return [self._decode(v) for v in rest]
        if tag == "t":
            return tuple(self._decode(v) for v in rest)
        if tag == "d":
            return {self._decode(k): self._decode(v) for k, v in rest}
        if tag == "b":
            return base64.b64decode(rest[0], validate=True)
        if tag in ("s", "f"):
            items = [self._decode(v) for v in rest]
            return set(items) if tag == "s" else frozenset(items)
        if tag == "m":
            return METHOD
        if tag == "R":
            return self._exports[rest[0]]
        if tag == "M":  # one of our own objects' methods, coming back
            obj, name = self._exports[rest[0]], str(rest[1])
            self._check(obj, name)
            return getattr(obj, name)
        if tag == "r":
            ref = int(rest[0])
            proxy = self._proxies.get(ref)
            if proxy is None:
                proxy = self._proxies[ref] = Proxy(self, ref, rest[1] if isinstance(rest[1], dict) else {})
            return proxy
        if tag == "e" and rest[0] in ENUM_TYPES:
            return resolve_class(rest[0])(rest[1])
        if tag == "v" and rest[0] in VALUE_TYPES and isinstance(rest[1], dict):
            fields = {str(k): self._decode(v) for k, v in rest[1].items()}
            cls = resolve_class(rest[0])
            if rest[0] in SLOTTED:
                return SLOTTED[rest[0]][1](cls, fields)
            return cls(**fields)
        raise ValueError(f"unknown tag {tag!r}")

    # ------------------------------------------------------------------ errors

    def encode_error(self, err: BaseException) -> list[Any]:
        from kubelab.api.errors import ApiError

        tb = ""
        if self.policy is None:  # the sandbox: show the learner where it went wrong
            tb = "".join(traceback.format_exception(err))[-_MAX_TRACEBACK:]
        if isinstance(err, ApiError):
            data = {"code": err.code, "reason": err.reason, "details": self.encode(err.details)}
            return ["api", "ApiError", cut(str(err.message)), data, tb]
        kind = type(err)
        if kind.__module__ == "kubelab.store.errors":
            return ["store", kind.__name__, cut(str(err)), self.encode(dict(vars(err))), tb]
        return ["other", kind.__name__, cut(_describe(err)), None, tb]

    def decode_error(self, data: Any) -> BaseException:
        from kubelab.api.errors import ApiError

        try:
            kind, type_name, message, extra, tb = data
            type_name, message, tb = cut(str(type_name), 200), cut(str(message)), str(tb)[-_MAX_TRACEBACK:]
            if kind == "api":
                details = self.decode(extra["details"])
                return ApiError(int(extra["code"]), str(extra["reason"]), message,
                                details if isinstance(details, dict) else {})
            if self.policy is None:  # the grader raised: rebuild what the learner can catch
                if kind == "store":
                    return store_error(type_name, message, self.decode(extra))
                return BUILTIN_ERRORS.get(type_name, RuntimeError)(message)
        except SessionError:
            raise
        except (TypeError, ValueError, KeyError) as err:
            return self._fail(ProtocolError(f"malformed error on the wire ({err!r})"))
        if type_name == "NotImplementedError":
            return NotImplementedYet(message, tb)
        remote = RemoteError(type_name, message, tb)
        self.remote_errors.append(remote)
        return remote


def _describe(err: BaseException) -> str:
    """str(err), or what is wrong with it: a learner's __str__ may raise or return a non-str."""
    try:
        text = str(err)
    except Exception as problem:  # whatever their __str__ does is theirs
        return f"<str() of the exception raised {type(problem).__name__}>"
    return text
