"""RunProgress: how far a long run has come, in simulated seconds and pods Running.

A long run (notebook 10's 1,000-node storm, `make bench`'s densities) says where it is while it
runs: in a notebook an ipywidgets progress bar with a line under it, in a terminal tqdm's bar
(if tqdm is installed; otherwise one line on stderr per update). The bar counts pods Running
of the pods the run waits for; the line adds the simulated time and the wall seconds so far, so
the simulated seconds per wall second can be read off as it goes.

    progress = RunProgress(total=30_000, desc="1,000 nodes x 30 pods")
    while running < total:
        c.run(5)
        progress.update(c.clock.now, running)
    progress.close()

Wall time is read here, at the edge, for the display only; the simulation never sees it.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

__all__ = ["RunProgress", "in_notebook"]


def in_notebook() -> bool:
    """True inside a Jupyter kernel (the ipykernel shell), where a widget can be shown."""
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    try:
        ip = shell.get_ipython()
    except AttributeError:
        return False
    return ip is not None and hasattr(ip, "kernel")


class RunProgress:
    def __init__(self, total: int, desc: str = "", *, mode: str | None = None,
                 stream: TextIO | None = None) -> None:
        """mode: "widget", "tqdm" or "line"; None picks the widget in a notebook, else tqdm if
        it is installed, else a line per update on stream (stderr)."""
        self.total, self.desc = total, desc
        self.stream = stream if stream is not None else sys.stderr
        self.start = time.perf_counter()
        self.sim_time, self.running = 0.0, 0
        if mode is None:
            mode = "widget" if in_notebook() else "tqdm" if _has_tqdm() else "line"
        self.mode = mode
        self._bar: Any = None
        self._label: Any = None
        if mode == "widget":
            import ipywidgets as W
            from IPython.display import display

            self._bar = W.IntProgress(value=0, min=0, max=max(total, 1), description=desc[:20],
                                      layout=W.Layout(width="60%"))
            self._label = W.HTML()
            self.widget = W.VBox([self._bar, self._label])
            display(self.widget)  # type: ignore[no-untyped-call]
        elif mode == "tqdm":
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=desc, unit="pods", file=self.stream)
        elif mode != "line":
            raise ValueError(f'mode must be "widget", "tqdm" or "line", got {mode!r}')

    @property
    def text(self) -> str:
        wall = time.perf_counter() - self.start
        rate = self.sim_time / wall if wall > 0 else 0.0
        return (f"t={self.sim_time:,.0f} s simulated · {self.running:,} of {self.total:,} pods "
                f"Running · {wall:,.0f} s wall ({rate:.2f} sim s/s)")

    def update(self, sim_time: float, running: int) -> None:
        """The run reached simulated time sim_time with `running` pods Running."""
        self.sim_time, self.running = sim_time, running
        if self.mode == "widget":
            self._bar.value = min(running, self._bar.max)
            self._label.value = self.text
        elif self.mode == "tqdm":
            self._bar.n = running
            self._bar.set_postfix_str(f"t={sim_time:,.0f}s sim", refresh=False)
            self._bar.refresh()
        else:
            print(f"{self.desc}: {self.text}" if self.desc else self.text, file=self.stream, flush=True)

    def close(self) -> None:
        if self.mode == "tqdm":
            self._bar.close()
        elif self.mode == "widget":
            self._bar.bar_style = "success" if self.running >= self.total else "warning"


def _has_tqdm() -> bool:
    try:
        import tqdm  # noqa: F401
    except ImportError:
        return False
    return True
