"""ActionLog: what a panel did, one line per action with its result, and the tables panels draw.

Every panel keeps one: its first line says the state the panel starts from, then each button
press adds "t=… action → result" (an error in red, in the error's own Kubernetes words). The
last `limit` lines stay on screen, so a second action never hides the first one's answer.
`html_table` is the one table style of every panel: padded cells, a header row that stands out.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import ipywidgets as W

from kubelab.api.errors import ApiError

__all__ = ["ActionLog", "Entry", "html_table"]

T = TypeVar("T")

CELL = "padding:2px 10px 2px 0;text-align:left;vertical-align:top"
HEAD = CELL + ";border-bottom:1px solid #999;font-weight:bold;white-space:nowrap"


def html_table(header: Sequence[str], rows: Sequence[Sequence[str]], *, escape: bool = True) -> str:
    """An HTML table with padded cells; escape=False when the cells are HTML already."""
    def cell(value: str) -> str:
        return html.escape(value) if escape else value
    head = "".join(f"<th style='{HEAD}'>{html.escape(h)}</th>" for h in header)
    def line(row: Sequence[str]) -> str:  # every column on one line but the last, which wraps
        last = len(row) - 1
        return "".join(f"<td style='{CELL};white-space:{'normal' if i == last else 'nowrap'}'>{cell(v)}</td>"
                       for i, v in enumerate(row))
    body = "".join(f"<tr>{line(row)}</tr>" for row in rows)
    return (f"<table style='border-collapse:collapse;margin:4px 0;font-size:12px'>"
            f"<tr>{head}</tr>{body}</table>")


@dataclass(frozen=True)
class Entry:
    time: float | None  # virtual seconds when it happened; None for the starting state
    action: str
    result: str
    ok: bool = True

    def text(self) -> str:
        when = "start" if self.time is None else f"t={self.time:g}s"
        return f"{when} {self.action}: {self.result}" if self.result else f"{when} {self.action}"


class ActionLog:
    """clock: anything with `.now` (the panel's cluster clock), to stamp each entry."""

    def __init__(self, clock: Any, *, limit: int = 8, title: str = "actions") -> None:
        self.clock, self.limit, self.title = clock, limit, title
        self.entries: list[Entry] = []
        self.start_state: Entry | None = None
        self.widget = W.HTML(layout=W.Layout(width="100%"))
        self.widget.add_class("kubelab-action-log")
        self._draw()

    def starting_state(self, text: str) -> None:
        """The state the panel starts from, kept as the first line whatever follows."""
        self.start_state = Entry(None, text, "")
        self._draw()

    def record(self, action: str, result: str, *, ok: bool = True) -> Entry:
        """Log one action. kubectl's own refusals (it prints them, it does not raise) count as
        errors too."""
        ok = ok and not result.startswith(("error:", "Error from server"))
        entry = Entry(float(self.clock.now), action, result, ok)
        self.entries.append(entry)
        del self.entries[:-self.limit]
        self._draw()
        return entry

    def run(self, action: str, do: Callable[[], T], describe: Callable[[T], str] | None = None
            ) -> T | None:
        """Do the action and log its result (str results are shown as they are); an error is
        logged in its own words and returns None."""
        try:
            result = do()
        except ApiError as err:
            self.record(action, err.kubectl_message(), ok=False)
            return None
        except Exception as err:  # shown in the log, in the error's own words
            self.record(action, f"error: {err}", ok=False)
            return None
        text = describe(result) if describe else (result if isinstance(result, str) else "done")
        self.record(action, text)
        return result

    def lines(self) -> list[str]:
        """The log as plain text, oldest first (what tests read)."""
        return [e.text() for e in ([self.start_state] if self.start_state else []) + self.entries]

    @property
    def last(self) -> str:
        return self.entries[-1].result if self.entries else ""

    def _draw(self) -> None:
        def line(e: Entry) -> str:
            colour = "#333" if e.ok else "#c0392b"
            when = "start" if e.time is None else f"t={e.time:g}s"
            result = (f" → <span style='color:{colour}'>{html.escape(e.result)}</span>"
                      if e.result else "")
            return (f"<div style='white-space:pre-wrap'><span style='color:#777'>{when}</span> "
                    f"<b>{html.escape(e.action)}</b>{result}</div>")
        shown = ([self.start_state] if self.start_state else []) + self.entries
        body = "".join(line(e) for e in shown) or "<div style='color:#777'>no action yet</div>"
        self.widget.value = (f"<div style='border-left:3px solid #2e86c1;padding:2px 8px;"
                             f"margin:4px 0;font-size:12px'><div style='color:#555'>"
                             f"{html.escape(self.title)} (newest last)</div>{body}</div>")
