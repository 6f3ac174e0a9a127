"""The API server: the only door to the store.

Every request walks the same pipeline, and the audit record says how far it got:

    resolve -> authentication -> impersonation -> (priority and fairness) -> authorization
            -> decode -> mutating admission -> validation -> validating admission -> storage

(k8s.io/apiserver/pkg/server/config.go DefaultBuildHandlerChain, then the REST handlers of
pkg/endpoints/handlers). Nothing of a body is decoded before authorization: a DELETE's
DeleteOptions, like a POST's object, are read in the decode stage. Watches go through the
same stages up to authorization, then to the watch
cache of their resource (watch_cache.py). Nothing but an ApiError ever leaves handle(): a bug
becomes 500 InternalError, recorded in the trace.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import random
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from kubelab.api import Object
from kubelab.api.errors import (
    ApiError,
    bad_request,
    internal_error,
    method_not_supported,
    resource_expired,
    server_not_found,
    service_unavailable,
)
from kubelab.api.meta import epoch, rfc3339
from kubelab.api.request import RawBody, Request, Response, WatchEvent, WatchHandle
from kubelab.api.resources import DEPRECATED, ResourceTable
from kubelab.apiserver import aggregator
from kubelab.apiserver.admission.certificates import (
    CertificateApproval,
    CertificateSigning,
    CertificateSubjectRestriction,
)
from kubelab.apiserver.admission.chain import AdmissionChain
from kubelab.apiserver.admission.plugins import default_plugins
from kubelab.apiserver.admission.webhook import WebhookClient
from kubelab.apiserver.apiextensions.versions import to_version, versioned_events
from kubelab.apiserver.auth.audit import AuditRecord
from kubelab.apiserver.auth.authn import (
    ADMIN,
    CONTROLLER_MANAGER,
    MASTERS,
    NODE_PREFIX,
    NODES,
    SCHEDULER,
    TokenAuthenticator,
)
from kubelab.apiserver.auth.impersonation import impersonate
from kubelab.apiserver.auth.rbac import AuthzAttributes, RBACAuthorizer, forbidden_error
from kubelab.apiserver.auth.reviews import (
    create_self_subject_access_review,
    create_self_subject_review,
    create_self_subject_rules_review,
    create_subject_access_review,
)
from kubelab.apiserver.auth.serviceaccount import HMACKey, SigningKey, TokenValidator
from kubelab.apiserver.bootstrap import bootstrap
from kubelab.apiserver.context import RequestContext, Served
from kubelab.apiserver.endpoints import subresources
from kubelab.apiserver.endpoints.decode import strict_decoding_error
from kubelab.apiserver.endpoints.handlers import create_resource, delete_options, update_resource
from kubelab.apiserver.endpoints.patch import patch_resource
from kubelab.apiserver.endpoints.portforward import port_forward
from kubelab.apiserver.endpoints.response import as_table, table_events
from kubelab.apiserver.endpoints.wire import read_body_strict
from kubelab.apiserver.flowcontrol import APFController
from kubelab.apiserver.flowcontrol.maxinflight import MaxInFlightFilter
from kubelab.apiserver.metrics import RequestMetrics
from kubelab.apiserver.registry.componentstatus import (
    ComponentProbe,
    get_component_status,
    list_component_statuses,
)
from kubelab.apiserver.registry.eviction import evict
from kubelab.apiserver.registry.service import ServiceAllocators
from kubelab.apiserver.registry.serviceaccount_token import create_token
from kubelab.apiserver.registry.store import Registry
from kubelab.apiserver.serving import ServedResources
from kubelab.apiserver.storage.compact import DEFAULT_COMPACTION_INTERVAL, Compactor
from kubelab.apiserver.storage.fanout import FanoutStats
from kubelab.apiserver.storage.prefixes import key_prefix
from kubelab.apiserver.storage.selection import make_predicate, parse_resource_version
from kubelab.apiserver.storage.watch_cache import WatchInfo
from kubelab.sim import Clock, Trace
from kubelab.store.backend import Backend
from kubelab.store.errors import StoreError, UnavailableError

__all__ = ["APIServer", "WatchInterceptor"]

# Reviews are only created, never stored: the authenticator or authorizer answers.
_REVIEWS = {"selfsubjectaccessreviews": create_self_subject_access_review,
            "subjectaccessreviews": create_subject_access_review,  # --- csr ---
            "selfsubjectrulesreviews": create_self_subject_rules_review,
            "selfsubjectreviews": create_self_subject_review}

class WatchInterceptor(Protocol):
    """The fault layer's hook on every watch (kubelab.cluster.faults.WatchFaults)."""

    def __call__(self, watch: WatchInfo, event: WatchEvent) -> list[tuple[float, WatchEvent]]:
        """The (delay in seconds, event) pairs to deliver for one event on its way to `watch`:
        none (lost), one (maybe late) or more."""
        ...

    def on_open(self, watch: WatchInfo) -> bool:
        """A watch is opening: True answers it with 410 Expired (its client lost events)."""
        ...


AUDIT_LIMIT = 100_000  # audit records kept in memory (between half this and this many)


class APIServer:
    def __init__(self, store: Backend, clock: Clock, rand: random.Random,
                 trace: Trace | None = None, resources: ResourceTable | None = None,
                 compaction_interval: float = DEFAULT_COMPACTION_INTERVAL,
                 service_allocators: ServiceAllocators | None = None) -> None:
        """service_allocators: the ClusterIP and NodePort allocations to share with other API
        servers over the same store (None: this server's own)."""
        self.store, self.clock, self.rand, self.trace = store, clock, rand, trace
        self.resources = resources or ResourceTable()
        self.authn = TokenAuthenticator()
        for user in (ADMIN, SCHEDULER, CONTROLLER_MANAGER):
            self.authn.add_token(f"token-{user}", user, (MASTERS,) if user == ADMIN else ())
        self.authorizer = RBACAuthorizer(self._load_all)
        # --- sa --- the service account signing key and the tokens' authenticator
        # (auth/serviceaccount.py): kubelab serve sets an RSA key; in-process a fixed HS256 one.
        self.service_account_key: SigningKey = HMACKey()
        self.authn.service_account_tokens = TokenValidator(
            lambda: self.service_account_key, self._service_account_lookup,
            lambda: int(epoch().timestamp() + self.clock.now))
        self.admission = AdmissionChain()
        for plugin in default_plugins(self.authorizer.authorize):
            self.admission.register(plugin)
        # --- csr --- the CSR plugins ask the authorizer about signers (admission/certificates.py)
        for plugin in (CertificateApproval(self.authorizer.authorize),
                       CertificateSigning(self.authorizer.authorize), CertificateSubjectRestriction()):
            self.admission.register(plugin, before="MutatingAdmissionWebhook")
        self.registry = Registry(self)
        # Every request's record, oldest first, rotated like upstream's log backend
        # (--audit-log-maxsize): past audit_limit records the older half is dropped, so a
        # 30,000-pod run does not keep 300,000 records (about 140 MiB).
        self.audit: list[AuditRecord] = []
        self.metrics = RequestMetrics()  # /metrics (apiserver/metrics.py)
        self.audit_limit = AUDIT_LIMIT
        # The fault layer's hook: every event for every watcher goes through it, and the
        # (delay, event) pairs it returns are delivered that many virtual seconds later.
        self.watch_interceptor: WatchInterceptor | None = None
        self.running = True
        self.name = "apiserver"  # in the trace; replicas are apiserver-1, apiserver-2, ...
        self.response_delay = 0.0  # seconds every answer is late (an overloaded server)
        self.fanout = FanoutStats(clock)  # watch events and lists per class and second
        # How to reach a node's kubelet (pods/log): the wiring sets it; None: nodes unreachable.
        # What the scheduler's and controller manager's /healthz answer from this server's node
        # (ComponentStatus; the wiring sets it): "" for ok, else why a dial fails.
        self.component_probe: ComponentProbe | None = None
        self.kubelet_connection: Callable[[str], subresources.KubeletConnection | None] | None = None
        # How admission webhooks are reached (admission/webhook/client.py): the wiring sets
        # its dial_pod (the pod network), the HTTPS edge its dial_url.
        self.webhooks = WebhookClient(self)
        # API Priority and Fairness (flowcontrol/), off unless enabled: then every request is
        # classified and queued after authentication, and may get 429.
        # MaxInFlightFilter instead: the filter kube-apiserver runs without it, for comparison.
        self.flowcontrol: APFController | MaxInFlightFilter | None = None
        self._watch_ids = 0
        self._second, self._stamp = -1, ""
        self.service_allocators = service_allocators or ServiceAllocators(rand)
        self.served = ServedResources(self, self.resources)
        self._repair_service_allocations()
        for crd in self._load_all("customresourcedefinitions"):
            self.served.serve_crd(crd)
        self.served.start_cachers()
        bootstrap(self)
        # --etcd-compaction-interval (compact.go): every 5 minutes, to the revision of 5 ago.
        self.compactor = Compactor(store, clock, trace, compaction_interval)
        self.compactor.start()

    # ------------------------------------------------------------------ identities

    def add_token(self, token: str, user: str, groups: list[str] | tuple[str, ...] = ()) -> None:
        """A bearer token for user (--token-auth-file). The empty token is anonymous."""
        self.authn.add_token(token, user, tuple(groups))

    def _service_account_lookup(self, resource: str, namespace: str, name: str) -> Object | None:
        return self.served.get(resource, namespace, name)

    def token_for(self, user: str) -> str:
        """The token of a built-in identity: admin, system:kube-scheduler,
        system:kube-controller-manager, or system:node:<name> (made on first use)."""
        token = self.authn.token_for(user)
        if token is None and user.startswith(NODE_PREFIX) and len(user) > len(NODE_PREFIX):
            token = f"token-{user}"
            self.authn.add_token(token, user, (NODES,))
        if token is None:
            raise ValueError(f"no built-in identity {user!r}; use add_token for other users")
        return token

    def enable_priority_and_fairness(self, server_concurrency_limit: int = 600) -> APFController:
        """Turn API Priority and Fairness on (upstream: on by default; kubelab: Cluster(apf=True))."""
        from kubelab.apiserver.flowcontrol import enable

        return enable(self, server_concurrency_limit)

    # ------------------------------------------------------------------ availability

    def stop(self) -> None:
        """The server goes down: requests get 503, every open watch closes (on_close)."""
        if not self.running:
            return
        self.running = False
        self.served.stop_cachers()
        self.compactor.stop()
        if self.flowcontrol is not None:
            self.flowcontrol.stop()
        self._record("stop", "")

    def close_watches(self) -> int:
        """Cut every open watch (each client's on_close runs); returns how many there were."""
        watchers = [w for c in self.served.cachers.values() for w in c.open_watchers()]
        for watcher in watchers:
            watcher.close()
        self._record("close-watches", "", closed=len(watchers))
        return len(watchers)

    def expire_watches(self, match: Callable[[WatchInfo], bool] | None = None) -> int:
        """End the matching open watches (None: all) with 410 Expired, as for clients whose
        resume point the cache can no longer serve: their reflectors relist."""
        expired = 0
        for cacher in list(self.served.cachers.values()):
            for watcher in cacher.open_watchers():
                if match is None or match(watcher.info):
                    status = resource_expired("too old resource version: the watch lost events")
                    watcher.emit({"type": "ERROR", "object": status.status})
                    expired += 1
        self._record("expire-watches", "", expired=expired)
        return expired

    def start(self) -> None:
        """Back up with empty watch caches: a watch from before the restart gets 410."""
        if self.running:
            return
        self.running = True
        self.served.forget_namespaces()
        self.authorizer.invalidate()
        self._repair_service_allocations()
        self.served.start_cachers()
        self.compactor.start()
        if self.flowcontrol is not None:
            self.flowcontrol = self.flowcontrol.restarted()
        self.metrics = RequestMetrics()  # a new process counts from zero
        self._record("start", "")

    # ------------------------------------------------------------------ requests

    def handle(self, request: Request) -> Response:
        """Serve one request. The answer says how long it took (Response.latency): what it
        waited for the store (its audit record's latency) plus response_delay
        (c.faults.slow_apiserver). Requests are served at once; a client with a timeout compares
        the latency with it (kubelab.client.leaderelection)."""
        record = AuditRecord(self.clock.now, "", request.verb, request.resource,
                             request.namespace, request.name, request.subresource,
                             user_agent=request.user_agent)
        with self._audited(record, request):
            ctx = self._admit_request(request, record)
            result = self._dispatch(ctx)
            if not ctx.served.builtin:  # the version it was asked at, defaulted (apiextensions/versions.py)
                result = to_version(result, ctx.served.info.api_version, ctx.served.custom)
            record.code = 201 if request.verb == "create" else 200
            if self.flowcontrol is not None and request.verb == "list":
                self.flowcontrol.note_items(record, len(result.get("items") or ()))
            if request.as_table and request.verb in ("get", "list") and not request.subresource:
                result = as_table(ctx, result)  # transformObject (endpoints/response.py)
        return Response(result, record.latency + self.response_delay)

    @contextlib.contextmanager
    def _audited(self, record: AuditRecord, request: Request) -> Iterator[None]:
        """Log and count the request however it ends; nothing but an ApiError gets out."""
        try:
            yield
        except ApiError as err:
            self._fail(record, err)
            raise
        except StoreError as err:
            # An etcd error no registry code interprets (no quorum: request timed out; database
            # space exceeded) is passed up by the etcd3 storage layer as it is, and
            # ErrorToAPIStatus (endpoints/handlers/responsewriters/status.go) makes any error
            # that is not a Status a 500 with reason Unknown ("") and etcd's own message.
            if isinstance(err, UnavailableError):
                record.latency += err.latency  # the caller waited for etcd's request timeout
            api_err = ApiError(500, "", str(err))
            self._fail(record, api_err)
            raise api_err from err
        except Exception as err:
            raise self._bug(record, err) from err
        finally:
            if self.flowcontrol is not None:
                self.flowcontrol.finish_request(record)
            self.log(record)
            self.metrics.observe(request, record, record.latency + self.response_delay)

    def _bug(self, record: AuditRecord, err: Exception) -> ApiError:
        """An unexpected exception leaves as 500 InternalError; the trace says what it was."""
        api_err = internal_error(f"{type(err).__name__}: {err}")
        self._fail(record, api_err)
        self._record("internal-error", record.object, error=repr(err))
        return api_err

    def _admit_request(self, request: Request, record: AuditRecord) -> RequestContext:
        """availability, resolve, authentication, authorization: the same for every verb."""
        record.stages.append("availability")
        if not self.running:
            raise service_unavailable()
        record.stages.append("resolve")
        served = self._resolve(request)
        deprecated = DEPRECATED.get((served.info.group, served.info.resource))
        if deprecated:  # WithWarningRecorder + the deprecation warning (endpoints/deprecation)
            request.response_headers["Warning"] = f'299 - "{deprecated}"'
        if not served.info.namespaced and request.namespace:
            request = dataclasses.replace(request, namespace="")
            record.namespace = ""
        record.stages.append("authentication")
        user = self.authn.authenticate(request.token)
        record.user = user.name
        if request.impersonate:  # WithImpersonation: after authentication, before APF
            record.stages.append("impersonation")
            user = impersonate(user, request.impersonate, self.authorizer.authorize)
            record.impersonated_user, record.impersonated_groups = user.name, user.groups
        if self.flowcontrol is not None:  # WithPriorityAndFairness: after authentication
            record.stages.append("priority-and-fairness")
            self.flowcontrol.start_request(request, served, user, record)
        record.stages.append("authorization")
        if MASTERS not in user.groups:  # the privileged group skips RBAC, as upstream
            info = served.info
            namespace = request.name if info.resource == "namespaces" and not info.group \
                else request.namespace
            attrs = AuthzAttributes(user, request.verb, info.group, info.resource,
                                    request.subresource, namespace, request.name)
            if not self.authorizer.authorize(attrs):
                raise forbidden_error(attrs)
        return RequestContext(request, served, user, record, self)

    def _resolve(self, r: Request) -> Served:
        served = self.served.lookup_version(r.group, r.resource, r.version)
        if served is None:
            raise server_not_found()
        verbs = served.verbs(r.subresource)
        if not verbs:
            raise server_not_found()
        if r.verb not in verbs:
            what = f"{r.resource}/{r.subresource}" if r.subresource else r.resource
            raise method_not_supported(what, r.verb, r.group)
        named = r.subresource or r.verb in ("get", "update", "patch", "delete")
        if named and not r.name:
            raise bad_request("resource name may not be empty")
        if served.info.namespaced and not r.namespace and \
                r.verb not in ("list", "watch", "deletecollection"):
            raise server_not_found()
        return served

    def _dispatch(self, ctx: RequestContext) -> Object:
        """The REST handler of the request's verb and subresource (endpoints/installer.go
        registerResourceHandlers)."""
        _read_raw_body(ctx)
        delete_options(ctx)
        r, reg, served = ctx.request, self.registry, ctx.served
        verb, sub = r.verb, r.subresource
        if served.backend is not None:
            return aggregator.proxy(ctx)
        if served.info.resource == "componentstatuses" and not served.info.group:
            return get_component_status(ctx) if verb == "get" else list_component_statuses(ctx)
        if verb == "get":
            if sub == "log":
                return subresources.get_log(reg, ctx)
            if sub in ("exec", "attach"):  # a WebSocket upgrade asks with GET
                return subresources.exec_pod(reg, ctx) if sub == "exec" else subresources.attach(reg, ctx)
            return subresources.get_scale(reg, ctx) if sub == "scale" else reg.get(ctx)
        if verb == "list":
            return reg.list_objects(ctx)
        if verb == "delete":
            return reg.delete(ctx)
        if verb == "deletecollection":
            return reg.delete_collection(ctx)
        if verb == "watch":
            raise bad_request("watch requests are served by APIServer.watch")
        if sub == "binding":
            return subresources.bind(reg, ctx, r.body)
        if sub in ("exec", "attach"):
            return subresources.exec_pod(reg, ctx) if sub == "exec" else subresources.attach(reg, ctx)
        if sub == "portforward":
            return port_forward(reg, ctx)
        if sub == "eviction":
            return evict(reg, ctx, r.body)
        if sub == "token":  # --- sa --- serviceaccounts/<name>/token
            return create_token(reg, ctx, r.body)
        if served.info.resource in _REVIEWS:
            return _REVIEWS[served.info.resource](ctx, r.body)
        if verb == "patch":
            return patch_resource(reg, ctx)
        if sub == "scale":
            return subresources.update_scale(reg, ctx, r.body)
        return create_resource(reg, ctx) if verb == "create" else update_resource(reg, ctx)

    def _fail(self, record: AuditRecord, err: ApiError) -> None:
        record.code, record.message = err.code, err.message
        record.stage = record.stages[-1] if record.stages else ""
        if record.stage.endswith("admission"):
            record.plugin = self.admission.failed_plugin

    def log(self, record: AuditRecord) -> None:
        audit = self.audit
        audit.append(record)
        if len(audit) > self.audit_limit:
            del audit[:len(audit) - self.audit_limit // 2]
        if self.trace is not None and self.trace.enabled:
            detail: dict[str, Any] = {"user": record.user, "code": record.code}
            if record.stage:
                detail["stage"] = record.stage
            self.trace.record(self.name, record.verb, record.object, **detail)

    def _record(self, verb: str, obj: str, **detail: Any) -> None:
        if self.trace is not None:
            self.trace.record(self.name, verb, obj, **detail)

    # ------------------------------------------------------------------ watch

    def authorize_non_resource(self, token: str, path: str, verb: str = "get") -> None:
        """A non-resource URL (/metrics): 401 for a token nobody holds, 403 unless RBAC allows
        the path (its nonResourceURLs rules; system:masters always)."""
        user = self.authn.authenticate(token)
        if not self.authorizer.allows_non_resource(user, path, verb):
            raise ApiError(403, "Forbidden",
                           f'forbidden: User "{user.name}" cannot {verb} path "{path}"')

    def watch(self, request: Request, on_event: Callable[[WatchEvent], None],
              on_close: Callable[[], None] | None = None) -> WatchHandle:
        """Open a watch (see kubelab.api.request.API.watch)."""
        request = dataclasses.replace(request, verb="watch")
        record = AuditRecord(self.clock.now, "", "watch", request.resource, request.namespace,
                             request.name, request.subresource, user_agent=request.user_agent)
        with self._audited(record, request):
            ctx = self._admit_request(request, record)
            r, served = ctx.request, ctx.served
            predicate = make_predicate(served.info.resource, r.namespace, r.label_selector,
                                       r.field_selector)
            initial: list[WatchEvent] = []
            if r.resource_version in ("", "0"):  # "get state and start at most recent"
                state = self.registry.list_predicate(ctx, predicate, r.resource_version)
                initial = [{"type": "ADDED", "object": item} for item in state.items]
                rv = state.resource_version
            else:
                rv = parse_resource_version(r.resource_version)
            self._watch_ids += 1
            info = WatchInfo(self._watch_ids, ctx.user.name, served.info.resource, r.namespace,
                             r.label_selector, r.field_selector)
            interceptor = self.watch_interceptor
            if interceptor is not None and interceptor.on_open(info):  # this client lost events
                rv = -1  # older than anything the cache can replay: 410, and the client relists
            if not served.builtin:
                on_event = versioned_events(on_event, served.info.api_version, served.custom)
                initial = [{**e, "object": to_version(e["object"], served.info.api_version,
                                                      served.custom)} for e in initial]
            if r.as_table:
                on_event = table_events(ctx, on_event)
            watcher = self.served.cachers[(served.info.group, served.info.resource)].add(
                info, predicate, rv, initial, on_event, on_close)
            record.code = 200
        return watcher

    def record_callback_error(self, info: WatchInfo, callback: str, err: Exception) -> None:
        self._record("watch-callback-error", info.resource, to=info.user, callback=callback,
                     error=repr(err))

    def after_write(self, served: Served, key: str, obj: Object | None) -> None:
        self.served.after_write(served, key, obj)

    def restart_cacher(self, resource: str) -> None:
        self.served.restart_cacher(resource)

    def timestamp(self, offset: float = 0.0) -> str:
        """metav1.Time of now + offset, from the simulated clock."""
        if offset:
            return rfc3339(self.clock.now + offset)
        second = int(self.clock.now)
        if second != self._second:
            self._second, self._stamp = second, rfc3339(second)
        return self._stamp

    def _repair_service_allocations(self) -> None:
        """The ClusterIP and NodePort repair controllers' work, done once at start
        (pkg/registry/core/service/ipallocator/controller/repair.go)."""
        kvs = self.store.range(key_prefix("", "services"), prefix=True).kvs
        self.service_allocators.repair((kv.key, json.loads(kv.value)) for kv in kvs)

    def _load_all(self, resource: str) -> list[Object]:
        """Every stored object of a built-in resource, named by its plural ("clusterroles")."""
        info = self.resources.lookup(resource)
        if info is None or info.resource != resource:
            raise KeyError(f"not a served resource: {resource!r}")
        prefix = key_prefix(info.group, info.resource)
        return [json.loads(kv.value) for kv in self.store.range(prefix, prefix=True).kvs]

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<APIServer {state} resources={len(self.served)} requests={len(self.audit)}>"


def _read_raw_body(ctx: RequestContext) -> None:
    """Bytes from an HTTP front end are read now (a body too large fails at decode). The
    strict decoder of a create or update refuses a field an object repeats."""
    if isinstance(ctx.request.body, RawBody):
        try:
            body, repeated = read_body_strict(ctx.request.body)
            if repeated and ctx.request.verb in ("create", "update"):
                raise strict_decoding_error(body, ctx.served.info,
                                            [f'duplicate field "{p}"' for p in repeated])
        except ApiError:
            ctx.enter("decode")
            raise
        ctx.request = dataclasses.replace(ctx.request, body=body)
