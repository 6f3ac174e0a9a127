"""The trace: what happened, in what order, in virtual time.

Every API request, watch delivery and fault is one Record. Its text rendering is stable (golden
tests compare it byte for byte), so keep the format fixed and put new facts in `detail`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Record", "Trace"]


@dataclass(frozen=True)
class Record:
    time: float       # virtual seconds
    component: str    # who acted: "apiserver", "scheduler", "kubelet/node-1", "faults", ...
    verb: str         # what kind of thing happened: "create", "watch-event", "crash", ...
    object: str       # what it happened to: "pods/default/web-1", or "" when nothing in particular
    detail: dict[str, Any] = field(default_factory=dict)

    def text(self) -> str:
        extra = " ".join(f"{k}={_fmt(v)}" for k, v in self.detail.items())
        line = f"{self.time:10.3f}  {self.component:<22} {self.verb:<14} {self.object}"
        return f"{line}  {extra}".rstrip() if extra else line.rstrip()


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    text = str(value)
    return repr(text) if (" " in text or text == "") else text


class Trace:
    """An append-only list of Records with filters, and subscribers for live views."""

    def __init__(self, now: Callable[[], float] = lambda: 0.0) -> None:
        self._now = now
        self._records: list[Record] = []
        self._subscribers: list[Callable[[Record], None]] = []
        self.enabled = True  # benchmarks switch recording off to measure the machinery alone

    def record(self, component: str, verb: str, obj: str = "", **detail: Any) -> Record | None:
        if not self.enabled:
            return None
        rec = Record(self._now(), component, verb, obj, detail)
        self._records.append(rec)
        for fn in self._subscribers:
            fn(rec)
        return rec

    def subscribe(self, fn: Callable[[Record], None]) -> Callable[[], None]:
        """Call fn for every new record; returns a function that unsubscribes."""
        self._subscribers.append(fn)
        return lambda: self._subscribers.remove(fn)

    def filter(
        self,
        component: str | None = None,
        verb: str | None = None,
        object_prefix: str | None = None,
    ) -> list[Record]:
        return [
            r for r in self._records
            if (component is None or r.component == component or
                r.component.startswith(component + "/"))
            and (verb is None or r.verb == verb)
            and (object_prefix is None or r.object.startswith(object_prefix))
        ]

    def text(self, records: list[Record] | None = None) -> str:
        return "\n".join(r.text() for r in (self._records if records is None else records))

    def clear(self) -> None:
        self._records.clear()

    def __iter__(self) -> Iterator[Record]:
        return iter(self._records)

    def __len__(self) -> int:
        return len(self._records)

    def __getitem__(self, index: int) -> Record:
        return self._records[index]

    def __repr__(self) -> str:
        return f"<Trace {len(self._records)} records>"
