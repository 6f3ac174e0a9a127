"""Sequence diagrams from the trace: who asked the API server what, and who heard about it.

    d = SequenceDiagram(c.trace, related="web", since=t_apply)   # what happened after apply
    d                       # draws itself in Jupyter (SVG)
    print(d.text())         # the same story as lines of text
    d.save("apply.svg")

Participants are the parts of a control plane, found from the trace:

- a request record of the API server carries user=..., and the user says who asked:
  kubernetes-admin is you at kubectl, system:kube-scheduler the scheduler,
  system:kube-controller-manager the controller manager, system:node:<node> a kubelet
  (the identities of pkg/kubeapiserver/authorizer and the kubelet's node authorizer);
- a request that reached storage goes on to etcd on the same row (reads "range", writes "txn");
- a watch delivery (verb "watch-event", to=<user>) is a dashed arrow from the API server to
  every participant that heard it at that moment: this is how components learn about changes;
- an admission webhook the API server calls (verb "webhook") is an arrow from the API server
  to a "webhook" lifeline, drawn after the request it admits: the call happens between
  admission and storage, while the request waits;
- some of a component's own steps are drawn as notes on its lifeline (the scheduler's
  decision, the kubelet's image pull and container start); faults are red bands.

etcd is drawn left of the API server and every client to its right, so that each row's arrows
never overlap. Consecutive rows that differ only by the object (three pods created, three
pods heard) are merged into one with "+2 more", so a Deployment's story fits on a screen.

Why not Graphviz: `dot` ranks nodes of a graph; a sequence diagram is a fixed grid of lifelines
and rows. Forcing one into the other (rank=same per row, invisible nodes per lifeline) gives
arcs instead of straight arrows and slows down with every row, so the grid is computed here and
written as SVG directly (kubelab.viz.svg).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kubelab.sim import Record
from kubelab.viz import svg

__all__ = ["PARTICIPANTS", "Message", "SequenceDiagram", "messages", "participant_of",
           "render_sequence"]

# Left to right. The API server is the hub; etcd sits behind it, every client in front of it.
PARTICIPANTS = ("etcd", "API server", "kubectl", "controller manager", "scheduler", "kubelet")
USERS = {"kubernetes-admin": "kubectl", "system:kube-scheduler": "scheduler",
         "system:apiserver": "API server",  # its own loopback requests (bootstrap objects)
         "system:kube-controller-manager": "controller manager"}
READS = frozenset({"get", "list"})
NOISE = ("events", "leases")  # heartbeats and event objects: left out unless asked for
# A component's own steps worth a note: verb -> the detail keys the note shows.
ACTIONS = {"assume": ("node",), "unschedulable": ("message",), "pull": ("image",),
           "pulled": ("image",), "pull-failed": ("image",), "start-container": ("container",),
           "compact": ("revision",)}


def participant_of(user: str) -> str:
    """The lifeline for an API user: kubernetes-admin -> kubectl, system:node:* -> kubelet, ...;
    any other user (a learner's controller, "bob") gets a lifeline of its own name."""
    if user.startswith("system:node:"):
        return "kubelet"
    return USERS.get(user, user)


def _component_participant(component: str) -> str | None:
    """The lifeline of a record written by a component itself (not by the API server)."""
    if component.startswith(("kubelet", "runtime/")):
        return "kubelet"
    if "scheduler" in component:
        return "scheduler"
    if component == "etcd":
        return "etcd"
    if "controller" in component or component.startswith("garbage-collector"):
        return "controller manager"
    return None


@dataclass(frozen=True)
class Message:
    """One row of the diagram. kind: "request", "watch", "action" or "fault"."""

    time: float
    kind: str
    source: str
    targets: tuple[str, ...]
    label: str
    object: str = ""
    verb: str = ""
    failed: bool = False
    store: str = ""        # "txn" or "range": the API server went on to etcd in the same row
    count: int = 1         # rows merged into this one

    def text(self) -> str:
        when = f"{self.time:9.3f}s  "
        if self.kind == "fault":
            return f"{when}!! fault: {self.label}"
        if self.kind == "action":
            return f"{when}{self.source}: {self.label}"
        arrow = "->" if self.kind == "request" else "~>"
        hop = f"  (API server -> etcd: {self.store})" if self.store else ""
        return f"{when}{self.source} {arrow} {', '.join(self.targets)}: {self.label}{hop}"


def _short(obj: str) -> str:
    """pods/default/web-1 -> pods/web-1: the default namespace goes unsaid, as in kubectl."""
    parts = obj.split("/")
    if len(parts) >= 3 and parts[1] == "default":
        del parts[1]
    return "/".join(parts)


def _is_related(obj: str, names: tuple[str, ...]) -> bool:
    """Does the object path name `web`, or something made from it (web-64f..., web.181...)?"""
    for segment in obj.split("/")[1:] if "/" in obj else ():
        for name in names:
            if segment == name or segment.startswith((name + "-", name + ".")):
                return True
    return False


def _message(rec: Record) -> Message | None:
    d = rec.detail
    if rec.component == "faults":
        what = " ".join(str(x) for x in (rec.verb, rec.object) if x and x != "*")
        return Message(rec.time, "fault", "", (), what, rec.object, rec.verb)
    if rec.component == "apiserver" and "user" in d:
        code = int(d.get("code", 0))
        reached = code < 400 or d.get("stage") == "storage"
        store = "" if rec.verb == "watch" or not reached else "range" if rec.verb in READS else "txn"
        label = f"{rec.verb} {_short(rec.object)}" + (f" → {code}" if code >= 400 else "")
        return Message(rec.time, "request", participant_of(str(d["user"])), ("API server",), label,
                       rec.object, rec.verb, code >= 400, store)
    if rec.component == "apiserver" and rec.verb == "webhook":
        failed = bool(d.get("error"))
        label = f"AdmissionReview {rec.object}" + (" → no answer" if failed else "")
        return Message(rec.time, "request", "API server", ("webhook",), label,
                       str(d.get("admitting", "")), rec.verb, failed)
    if rec.component == "apiserver" and rec.verb == "watch-event":
        label = f"{d.get('type', '')} {_short(rec.object)}"
        return Message(rec.time, "watch", "API server", (participant_of(str(d.get("to", ""))),),
                       label, rec.object, str(d.get("type", "")))
    who = _component_participant(rec.component)
    if who is None or rec.verb not in ACTIONS:
        return None
    shown = " ".join(str(d[k]) for k in ACTIONS[rec.verb] if k in d)
    node = rec.component.split("/", 1)[1] + ": " if "/" in rec.component else ""
    name = _short(rec.object).split("/", 1)[-1]
    label = f"{node}{rec.verb} {name}{' → ' if rec.verb == 'assume' else ' '}{shown}".strip()
    return Message(rec.time, "action", who, (who,), label, rec.object, rec.verb)


def _fan_out(rows: list[Message]) -> list[Message]:
    """One watch event heard by several participants at once becomes one row of arrows."""
    out: list[Message] = []
    for m in rows:
        prev = out[-1] if out else None
        if (prev is not None and m.kind == "watch" and prev.kind == "watch" and
                prev.label == m.label and prev.time == m.time):
            if m.targets[0] not in prev.targets:
                out[-1] = replace(prev, targets=(*prev.targets, *m.targets))
            continue
        out.append(m)
    return out


def _merge_similar(rows: list[Message]) -> list[Message]:
    """Runs of the same step on different objects (create pod a, b, c) become one row."""
    out: list[Message] = []
    for m in rows:
        prev = out[-1] if out else None
        if (prev is not None and m.kind in ("request", "watch") and m.kind == prev.kind and
                (m.source, m.targets, m.verb, m.failed, m.store) ==
                (prev.source, prev.targets, prev.verb, prev.failed, prev.store) and
                m.object.split("/")[0] == prev.object.split("/")[0] and
                m.object.count("/") == prev.object.count("/")):
            out[-1] = replace(prev, count=prev.count + 1)
            continue
        out.append(m)
    return [m if m.count == 1 else replace(m, label=f"{m.label} +{m.count - 1} more") for m in out]


def messages(source: Iterable[Record], *, since: float | None = None, until: float | None = None,
             related: str | Iterable[str] | None = None, watch: bool = True, actions: bool = True,
             faults: bool = True, noise: Iterable[str] = NOISE, merge: bool = True) -> list[Message]:
    """The diagram's rows from trace records (a Trace, or any list of its records).

    since/until: virtual time window (inclusive). related: object name(s); keep only what
    concerns them and what was made from them (web -> web-64f..., web-64f...-x2k9q); faults
    are always kept. watch/actions/faults: include those rows. noise: resources left out.
    merge: merge consecutive rows that differ only by the object."""
    names = (related,) if isinstance(related, str) else tuple(related) if related else ()
    noisy = frozenset(noise)
    rows: list[Message] = []
    for rec in source:
        if (since is not None and rec.time < since) or (until is not None and rec.time > until):
            continue
        m = _message(rec)
        if m is None or (m.kind == "watch" and not watch) or (m.kind == "action" and not actions):
            continue
        if m.kind == "fault":
            if faults:
                rows.append(m)
            continue
        if m.object.split("/")[0] in noisy:
            continue
        if names and not _is_related(m.object, names):
            continue
        rows.append(m)
    rows = _fan_out(_webhooks_after_their_request(rows))
    return _merge_similar(rows) if merge else rows


def _webhooks_after_their_request(rows: list[Message]) -> list[Message]:
    """The API server records a request when it answers, so the webhook calls it made while
    admitting it come first in the trace; draw them after the request's own arrow, and its
    write to etcd after them, in the order they happened."""
    out: list[Message] = []
    waiting: list[Message] = []
    for m in rows:
        if m.verb == "webhook" and m.source == "API server":
            waiting.append(m)
            continue
        if waiting and m.kind == "request" and m.object == waiting[0].object:
            out += [replace(m, store=""), *waiting]
            if m.store:
                out.append(Message(m.time, "request", "API server", ("etcd",),
                                   f"{m.store} {_short(m.object)}", m.object, "store"))
            waiting = []
            continue
        out.append(m)
    return out + waiting


# ---------------------------------------------------------------------------- drawing

LEFT, COLUMN, TOP, ROW, BOX = 70.0, 150.0, 44.0, 22.0, 26.0
INK, FAILED, WATCH, STORE, FAULT = "#222222", "#c0392b", "#2471a3", "#7d6608", "#c0392b"


def _participants(rows: list[Message], wanted: Iterable[str] | None) -> list[str]:
    names = list(wanted or PARTICIPANTS)
    for m in rows:  # users that are none of the control plane's parts get their own lifeline
        for who in (m.source, *m.targets):
            if who and who not in names:
                names.append(who)
    return names


def render_sequence(rows: list[Message], participants: Iterable[str] | None = None,
                    title: str = "", limit: int = 80) -> str:
    """SVG text of the diagram. At most `limit` rows are drawn; a last row says what was left out."""
    names = _participants(rows, participants)
    shown, hidden = rows[:limit], rows[limit:]
    x = {name: LEFT + COLUMN * i + COLUMN / 2 for i, name in enumerate(names)}
    width = LEFT + COLUMN * len(names) + 10
    n_rows = len(shown) + (1 if hidden else 0)
    bottom = TOP + BOX + ROW * (n_rows + 1)
    height = bottom + BOX + 10
    body = [svg.arrow_markers({"ink": INK, "failed": FAILED, "watch": WATCH, "store": STORE})]
    if title:
        body.append(svg.text(8, 16, title, size=13, weight="bold"))
    for name, cx in x.items():
        body.append(svg.line(cx, TOP + BOX, cx, bottom, stroke="#b3b6b7", dash="3 3"))
        for top in (TOP, bottom):
            body.append(svg.rect(cx - COLUMN / 2 + 8, top, COLUMN - 16, BOX, fill="#eaf2f8",
                                 stroke="#5d6d7e", radius=4))
            body.append(svg.text(cx, top + 17, name, size=12, anchor="middle", weight="bold"))
    last_time = None
    for i, m in enumerate(shown):
        y = TOP + BOX + ROW * (i + 1)
        if m.time != last_time:
            body.append(svg.text(LEFT - 6, y + 4, f"{m.time:.3f}s", size=10, anchor="end",
                                 fill="#7f8c8d"))
            last_time = m.time
        body += _row(m, y, x, width)
    if hidden:
        y = TOP + BOX + ROW * (len(shown) + 1)
        body.append(svg.text(LEFT, y + 4, f"… {len(hidden)} more rows until t={hidden[-1].time:.3f}s "
                             "(narrow the window with since/until or related)", fill="#7f8c8d"))
    return svg.document(width, height, body, title)


def _row(m: Message, y: float, x: dict[str, float], width: float) -> list[str]:
    if m.kind == "fault":
        return [svg.rect(4, y - ROW / 2 + 2, width - 8, ROW - 4, fill="#fdedec", stroke=FAULT,
                         radius=3),
                svg.text(LEFT + 4, y + 4, f"⚡ fault: {m.label}", fill=FAULT, weight="bold")]
    if m.kind == "action":
        cx = x[m.source]
        w = svg.text_width(m.label, 10) + 10
        left = cx + 4 if cx + 4 + w <= width - 4 else cx - 4 - w  # the last lifeline: note to its left
        return [svg.rect(left, y - 8, w, 15, fill="#f4f6f6", stroke="#95a5a6", radius=3),
                svg.text(left + 5, y + 3, m.label, size=10, fill="#424949")]
    out: list[str] = []
    src = x[m.source]
    colour, marker, dash = ((FAILED, "failed", "") if m.failed else (INK, "ink", "")) \
        if m.kind == "request" else (WATCH, "watch", "5 3")
    for target in m.targets:
        dst = x[target]
        if dst == src:
            continue  # the API server's own request: only its hop to etcd is drawn
        tip = dst + (-3 if dst > src else 3)  # stop short of the lifeline so the head shows
        out.append(svg.line(src, y, tip, y, stroke=colour, width=1.3, dash=dash, marker=marker))
    left = min([src, *(x[t] for t in m.targets)])
    out.append(svg.text(left + 8, y - 4, m.label, size=10.5, fill=colour))
    if m.store:
        api, etcd = x["API server"], x["etcd"]
        out.append(svg.line(api, y, etcd + (3 if etcd < api else -3), y, stroke=STORE, width=1,
                            marker="store"))
        out.append(svg.text(min(api, etcd) + 8, y + 11, m.store, size=9, fill=STORE))
    return out


class SequenceDiagram:
    """A sequence diagram over trace records, filtered like messages(); shows itself in Jupyter.

    .messages: the rows; .text(): the story as text; .svg(): the picture; .save(path)."""

    def __init__(self, source: Iterable[Record], *, title: str = "", limit: int = 80,
                 participants: Iterable[str] | None = None, **filters: Any) -> None:
        self.messages = messages(list(source), **filters)
        self.title, self.limit = title, limit
        self.participants = list(participants) if participants is not None else None

    def svg(self) -> str:
        return render_sequence(self.messages, self.participants, self.title, self.limit)

    def text(self) -> str:
        return "\n".join(m.text() for m in self.messages)

    def save(self, path: str | Path) -> Path:
        """Write the picture as SVG (the file opens in any browser)."""
        target = Path(path)
        if target.suffix.lower() != ".svg":
            raise ValueError(f"can only save a sequence diagram as .svg, not {target.suffix or path!r}")
        target.write_text(self.svg(), encoding="utf-8")
        return target

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"image/svg+xml": self.svg(), "text/plain": repr(self)}

    def __repr__(self) -> str:
        faults = sum(1 for m in self.messages if m.kind == "fault")
        return f"<SequenceDiagram {len(self.messages)} rows, {faults} fault(s)>"
