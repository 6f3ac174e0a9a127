"""RunControls: play, pause and step virtual time; set its speed; see what time it is.

Nothing in kubelab may start a thread or read the wall clock, so "play" is driven from the
browser: an ipywidgets.Play widget counts ticks on a JavaScript timer (every INTERVAL_MS) and
each new count reaches the kernel as an ordinary widget message. On each tick the cluster runs
`speed * INTERVAL_MS / 1000` virtual seconds, so speed means what it means for
kubelab.sim.RealTimeClock: virtual seconds per real second. On a RealTimeClock the clock's own
speed is set too (it then paces each tick itself); on a plain Clock each tick is as fast as
the simulation. Pause is the Play widget's pause button (or pause()); step runs a fixed amount.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ipywidgets as W

from kubelab.sim import RealTimeClock

__all__ = ["INTERVAL_MS", "SPEEDS", "STEPS", "RunControls"]

INTERVAL_MS = 500
SPEEDS = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)  # virtual seconds per real second
STEPS = (1.0, 10.0, 60.0, 300.0)                              # virtual seconds per step


class RunControls:
    """on_tick: called after every advance of the clock (the dashboard refreshes there)."""

    def __init__(self, cluster: Any, on_tick: Callable[[], None] | None = None, *,
                 speed: float = 10.0, step: float = 10.0) -> None:
        if speed not in SPEEDS:
            raise ValueError(f"speed must be one of {', '.join(f'{s:g}' for s in SPEEDS)}, got {speed}")
        if step not in STEPS:
            raise ValueError(f"step must be one of {', '.join(f'{s:g}' for s in STEPS)}, got {step}")
        self.cluster, self.on_tick = cluster, on_tick
        self.play = W.Play(value=0, min=0, max=10**9, step=1, interval=INTERVAL_MS,
                           description="play", show_repeat=False)
        self.play.observe(self._on_play, names="value")
        self.speed = W.SelectionSlider(options=[(f"{s:g}×", s) for s in SPEEDS], value=speed,
                                       description="speed", continuous_update=False,
                                       layout=W.Layout(width="260px"))
        self.speed.observe(lambda ch: self.set_speed(float(ch["new"])), names="value")
        self.step_size = W.Dropdown(options=[(f"{s:g} s", s) for s in STEPS], value=step,
                                    description="step", layout=W.Layout(width="170px"))
        self.step_button = W.Button(description="step", icon="step-forward",
                                    layout=W.Layout(width="auto"))
        self.step_button.on_click(lambda _b: self.step())
        self.time = W.HTML()
        self.time.add_class("kubelab-time")
        self.widget = W.HBox([self.play, self.speed, self.step_size, self.step_button, self.time],
                             layout=W.Layout(align_items="center", flex_flow="row wrap"))
        self.set_speed(speed)
        self.refresh()

    # Each control calls one of these, so tests and learners can drive it without a browser.

    def tick(self) -> float:
        """One tick of play: advance speed * INTERVAL_MS virtual milliseconds."""
        return self.advance(float(self.speed.value) * INTERVAL_MS / 1000)

    def step(self) -> float:
        return self.advance(float(self.step_size.value))

    def pause(self) -> None:
        self.play.playing = False
        if isinstance(self.cluster.clock, RealTimeClock):
            self.cluster.clock.resync()  # do not race to catch up on the time spent paused

    def set_speed(self, speed: float) -> None:
        if speed <= 0:
            raise ValueError(f"speed must be > 0, got {speed}")
        if isinstance(self.cluster.clock, RealTimeClock):
            self.cluster.clock.speed = speed
            self.cluster.clock.resync()

    def advance(self, seconds: float) -> float:
        """Run the cluster `seconds` of virtual time; returns the new virtual time."""
        self.cluster.run(seconds)
        self.refresh()
        if self.on_tick is not None:
            self.on_tick()
        return float(self.cluster.clock.now)

    def _on_play(self, change: dict[str, Any]) -> None:
        if change["new"] > change["old"]:  # the stop button rewinds the counter: not a tick
            self.tick()

    def refresh(self) -> None:
        self.time.value = f"<b>t = {self.cluster.clock.now:.1f} s</b> <small>(virtual)</small>"

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)  # type: ignore[no-untyped-call]
