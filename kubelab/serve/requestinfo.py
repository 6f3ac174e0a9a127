"""From an HTTP request to a kubelab Request: which verb, resource, namespace, name and options.

Follows k8s.io/apiserver pkg/endpoints/request/requestinfo.go (NewRequestInfo): the path says
the group, version, namespace, resource, name and subresource; the HTTP method and the
`watch` parameter say the verb; the query string carries the list and watch options
(metav1.ListOptions), and the body of a DELETE its DeleteOptions. Anything this cannot read is
the client's fault: 400 BadRequest, in the apiserver's words where it has them (the
parameter codec's strconv.ParseInt errors; resourceVersionMatch's ListOptions validation).

Departure: upstream converts the query parameters in the REST handler, after authentication
and authorization; kubelab converts them here, before the request reaches the API server, so
a bad parameter is a 400 even for a request that would be refused. Nothing is decoded that
way: a body is read by the API server only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubelab.api.errors import ApiError, field_forbidden, field_not_supported, invalid
from kubelab.api.request import Request

__all__ = ["CONNECT_SUBRESOURCES", "PATCH_TYPES", "RequestInfo", "connect_options", "parse_path",
           "query_bool", "to_request", "watch_timeout"]

# A patch's Content-Type says its type (k8s.io/apimachinery pkg/types/patch.go).
PATCH_TYPES = {
    "application/json-patch+json": "json",
    "application/merge-patch+json": "merge",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
}
# Namespaces have subresources of their own: /api/v1/namespaces/x/status is the namespace x.
_NAMESPACE_SUBRESOURCES = {"status", "finalize"}
_METHOD_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch"}
# A pod's connect subresources: their options come from a query whose parameters repeat.
CONNECT_SUBRESOURCES = ("exec", "attach", "portforward")


@dataclass
class RequestInfo:
    """requestinfo.go's RequestInfo, for a resource request."""

    verb: str
    group: str
    version: str
    namespace: str
    resource: str
    name: str
    subresource: str


def parse_path(method: str, path: str, watch: bool) -> RequestInfo | None:
    """The resource request a path names, or None when it is not a resource path."""
    parts = [p for p in path.split("/") if p]
    if len(parts) >= 2 and parts[0] == "api":
        group, version, rest = "", parts[1], parts[2:]
    elif len(parts) >= 3 and parts[0] == "apis":
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return None
    if not rest:
        return None
    namespace = ""
    if rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    if len(rest) > 3:
        return None
    if resource == "namespaces":
        namespace = ""  # the namespace of a Namespace is itself; kubelab's requests leave it out
    if method == "GET":
        verb = "watch" if watch else ("get" if name else "list")
    elif method == "DELETE":
        verb = "delete" if name else "deletecollection"
    elif method in _METHOD_VERBS:
        verb = _METHOD_VERBS[method]
    else:
        return None
    return RequestInfo(verb, group, version, namespace, resource, name, subresource)


_GO_INT = re.compile(r"[+-]?[0-9]+")


def _int(query: Mapping[str, str], name: str) -> int | None:
    """An int64 query parameter as the parameter codec converts it (strconv.ParseInt, base
    10): "abc", "nan", "1.5" and " 1" are invalid syntax, past int64 is out of range."""
    value = query.get(name)
    if value in (None, ""):
        return None
    if not _GO_INT.fullmatch(value):
        raise ApiError(400, "BadRequest", f'strconv.ParseInt: parsing "{value}": invalid syntax')
    number = int(value)
    if not -(2**63) <= number < 2**63:
        raise ApiError(400, "BadRequest", f'strconv.ParseInt: parsing "{value}": value out of range')
    return number


def query_bool(query: Mapping[str, str], name: str) -> bool:
    """A bool query parameter as the parameter codec converts it
    (runtime.Convert_Slice_string_To_bool): absent, "0" and "false" (any case) are false,
    anything else, even an empty value, is true. It never fails."""
    value = query.get(name)
    return value is not None and value != "0" and value.lower() != "false"


def watch_timeout(query: Mapping[str, str]) -> int | None:
    """A watch's timeoutSeconds, checked before the stream starts (None: not given)."""
    return _int(query, "timeoutSeconds")


_MATCHES = ("Exact", "NotOlderThan")


def _validate_list_options(query: Mapping[str, str], watch: bool) -> None:
    """metainternalversion validation ValidateListOptions, for resourceVersionMatch on a list:
    422 Invalid ListOptions, as the list handler answers."""
    match = query.get("resourceVersionMatch", "")
    if not match or watch:
        return
    errors = []
    if not query.get("resourceVersion"):
        errors.append(field_forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden "
                                      "unless resourceVersion is provided"))
    if query.get("continue"):
        errors.append(field_forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden "
                                      "when continue is provided"))
    if match not in _MATCHES:
        errors.append(field_not_supported("resourceVersionMatch", match, [*_MATCHES, ""]))
    if errors:
        raise invalid("ListOptions", "", errors, "meta.k8s.io")


def _delete_options(query: Mapping[str, str]) -> dict[str, Any]:
    """DeleteOptions from the query (curl users send them there). Those in the body (kubectl
    sends one) are read by the API server after authorization (endpoints/handlers.py)."""
    options: dict[str, Any] = {}
    if query.get("propagationPolicy"):
        options["propagationPolicy"] = query["propagationPolicy"]
    grace = _int(query, "gracePeriodSeconds")
    if grace is not None:
        options["gracePeriodSeconds"] = grace
    return options


def connect_options(subresource: str, query: Mapping[str, list[str]]) -> dict[str, Any]:
    """PodExecOptions, PodAttachOptions or PodPortForwardOptions from the query, where a
    parameter may repeat (`command=sh&command=-c&command=...`, `ports=80&ports=443`; the Python
    client joins ports with commas). A port is parsed as the kubelet parses it (portforward's
    parsePorts: strconv.ParseUint(.., 10, 16), then > 0)."""
    def last(name: str) -> str:
        values = query.get(name) or [""]
        return values[-1]
    if subresource == "portforward":
        ports: list[int] = []
        for value in query.get("ports") or ():
            for text in value.split(","):
                if not text.isdigit() or int(text) > 65535:
                    why = "value out of range" if text.isdigit() else "invalid syntax"
                    raise ApiError(400, "BadRequest", f'unable to parse "{text}" as a port: '
                                   f'strconv.ParseUint: parsing "{text}": {why}')
                if int(text) < 1:
                    raise ApiError(400, "BadRequest", f'port "{text}" must be > 0')
                ports.append(int(text))
        return {"ports": ports}
    options: dict[str, Any] = {name: query_bool({name: last(name)}, name) if name in query else False
                               for name in ("stdin", "stdout", "stderr", "tty")}
    options["container"] = last("container")
    if subresource == "exec":
        options["command"] = list(query.get("command") or ())
    return options


def to_request(info: RequestInfo, query: Mapping[str, str], body: Any, token: str,
               content_type: str = "") -> Request:
    """The kubelab Request for one HTTP request, with its query options."""
    if info.verb in ("list", "watch"):  # the list options, converted and validated first
        watch_timeout(query)
        _validate_list_options(query, info.verb == "watch")
    dry_run = query.get("dryRun", "")
    if dry_run not in ("", "All"):
        raise ApiError(400, "BadRequest", f'unsupported dry run option "{dry_run}"')
    options: dict[str, Any] = {}
    if info.verb == "patch":
        options.update(fieldManager=query.get("fieldManager", ""), force=query.get("force") == "true")
        options["patchType"] = PATCH_TYPES.get(content_type.split(";")[0].strip(), "")
        if not options["patchType"]:
            accepted = ", ".join(PATCH_TYPES)
            raise ApiError(415, "UnsupportedMediaType",
                           f"the body of the request was in an unknown format - accepted media "
                           f"types include: {accepted}")
    if info.verb in ("delete", "deletecollection"):
        options.update(_delete_options(query))
    if info.subresource == "log":  # PodLogOptions
        options.update(container=query.get("container", ""), previous=query.get("previous") == "true")
        options["timestamps"] = query.get("timestamps") == "true"
        tail = _int(query, "tailLines")
        if tail is not None:
            options["tailLines"] = tail
    return Request(
        info.verb, info.resource, namespace=info.namespace, name=info.name, group=info.group,
        version=info.version, subresource=info.subresource, body=body,
        label_selector=query.get("labelSelector", ""), field_selector=query.get("fieldSelector", ""),
        resource_version=query.get("resourceVersion", ""), limit=_int(query, "limit") or 0,
        continue_token=query.get("continue", ""),
        allow_watch_bookmarks=query_bool(query, "allowWatchBookmarks"),
        dry_run=dry_run == "All", options=options, token=token)
