"""A timeline of a cluster's life: pods by phase, ready replicas per ReplicaSet, and faults.

    tl = Timeline(c)            # starts sampling every virtual second
    c.faults.kill_node("node-2"); c.run(400)
    tl                          # draws itself in Jupyter (SVG); tl.save("kill.svg")

The trace says what was *asked*; the timeline shows what the cluster *was*. So it samples the
live objects on the cluster's clock (a background timer, which run_until_idle ignores, like
a heartbeat), reading quietly (kubelab.viz.observe): sampling changes neither the trace nor
the order of anything else on the clock. Only changes are kept, so a long quiet stretch costs
nothing. Faults come from the trace, where every c.faults call is recorded.

Drawn as SVG by hand (kubelab.viz.svg): a step chart needs no plotting library.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubelab.sim import Record, Timer
from kubelab.viz import svg
from kubelab.viz.observe import PHASES, pod_phase, quiet
from kubelab.viz.render import PHASE_COLOURS

__all__ = ["Sample", "Timeline", "render_timeline"]

COLOURS = {**PHASE_COLOURS, "Running": "#58d68d", "Terminating": "#aab7b8", "Unknown": "#7f8c8d"}
PALETTE = ("#2471a3", "#ca6f1e", "#7d3c98", "#17a589", "#b03a2e", "#2e4053", "#b7950b")
WIDTH, LEFT, RIGHT = 880.0, 56.0, 150.0
PODS_TOP, PODS_H, RS_TOP, RS_H = 40.0, 150.0, 235.0, 120.0


@dataclass(frozen=True)
class Sample:
    """What the cluster looked like at `time`."""

    time: float
    phases: dict[str, int] = field(default_factory=dict)            # phase -> how many pods
    replicas: dict[str, tuple[int, int]] = field(default_factory=dict)  # ReplicaSet -> (ready, desired)

    def same_as(self, other: Sample) -> bool:
        return self.phases == other.phases and self.replicas == other.replicas


class Timeline:
    """Samples `cluster` every `interval` virtual seconds from now on (start=False: only when
    you call sample()). namespace=None watches every namespace."""

    def __init__(self, cluster: Any, *, interval: float = 1.0, namespace: str | None = "default",
                 start: bool = True, title: str = "") -> None:
        if interval <= 0:
            raise ValueError(f"interval must be > 0, got {interval}")
        self.cluster, self.interval, self.namespace, self.title = cluster, interval, namespace, title
        self.samples: list[Sample] = []
        self._timer: Timer | None = None
        self.sample()
        if start:
            self._schedule()

    def _schedule(self) -> None:
        self._timer = self.cluster.clock.call_later(self.interval, self._tick, background=True)

    def _tick(self) -> None:
        self.sample()
        self._schedule()

    def stop(self) -> None:
        """Stop sampling (the samples so far stay)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def sample(self) -> Sample:
        """Look at the cluster now; the sample is kept if anything changed since the last one."""
        client, ns = self.cluster.client, self.namespace or ""
        with quiet(self.cluster):
            pods = client.list("pods", ns)["items"]
            replica_sets = client.list("replicasets", ns)["items"]
        phases: dict[str, int] = {}
        for pod in pods:
            phase = pod_phase(pod)
            phases[phase] = phases.get(phase, 0) + 1
        replicas = {rs["metadata"]["name"]: (int((rs.get("status") or {}).get("readyReplicas", 0)),
                                             int((rs.get("spec") or {}).get("replicas", 1)))
                    for rs in replica_sets}
        now = Sample(float(self.cluster.clock.now), phases, replicas)
        if not self.samples or not now.same_as(self.samples[-1]):
            self.samples.append(now)
        return now

    def faults(self) -> list[Record]:
        return self.cluster.trace.filter(component="faults")  # type: ignore[no-any-return]

    def svg(self) -> str:
        self.sample()
        return render_timeline(self.samples, self.faults(), end=float(self.cluster.clock.now),
                               title=self.title)

    def save(self, path: str | Path) -> Path:
        target = Path(path)
        if target.suffix.lower() != ".svg":
            raise ValueError(f"can only save a timeline as .svg, not {target.suffix or path!r}")
        target.write_text(self.svg(), encoding="utf-8")
        return target

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"image/svg+xml": self.svg(), "text/plain": repr(self)}

    def __repr__(self) -> str:
        return f"<Timeline {len(self.samples)} samples, {len(self.faults())} fault(s)>"


# ---------------------------------------------------------------------------- drawing

def _nice_step(span: float, ticks: int = 8) -> float:
    for step in (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600, 86400):
        if span / step <= ticks:
            return float(step)
    return span / ticks


def _steps(points: list[tuple[float, float]], end: float) -> list[tuple[float, float]]:
    """A step function through (time, value) points: each value holds until the next time."""
    out: list[tuple[float, float]] = []
    for i, (t, v) in enumerate(points):
        nxt = points[i + 1][0] if i + 1 < len(points) else end
        out += [(t, v), (nxt, v)]
    return out


def render_timeline(samples: list[Sample], faults: Iterable[Record] = (), *, end: float | None = None,
                    title: str = "") -> str:
    """SVG text of the timeline: stacked pods by phase above, ready/desired replicas below."""
    if not samples:
        raise ValueError("a timeline needs at least one sample")
    start = samples[0].time
    end = max(end if end is not None else samples[-1].time, start + 1.0)
    faults = [f for f in faults if start <= f.time <= end]
    plot_w = WIDTH - LEFT - RIGHT

    def tx(t: float) -> float:
        return LEFT + (t - start) / (end - start) * plot_w

    def ty(n: float, top: float, h: float, most: int) -> float:
        return top + h - n / most * h

    rs_names = sorted({name for s in samples for name in s.replicas})
    legend_h = 16 * len(faults) + (24 if faults else 0)
    height = RS_TOP + RS_H + 30 + legend_h
    body = [svg.text(8, 18, title or "pods by phase, ready replicas and faults over virtual time",
                     size=13, weight="bold")]
    # Pods by phase, stacked in PHASES order.
    most = max(1, max(sum(s.phases.values()) for s in samples))
    body += _axes(start, end, tx, PODS_TOP, PODS_H, most, "pods")
    below = [0] * len(samples)
    for i, phase in enumerate(PHASES):
        counts = [s.phases.get(phase, 0) for s in samples]
        if not any(counts):
            continue
        above = [b + c for b, c in zip(below, counts, strict=True)]
        upper = _steps([(s.time, a) for s, a in zip(samples, above, strict=True)], end)
        lower = _steps([(s.time, b) for s, b in zip(samples, below, strict=True)], end)
        pts = [(tx(t), ty(v, PODS_TOP, PODS_H, most)) for t, v in upper + lower[::-1]]
        body.append('<polygon points="' + " ".join(f"{x:.1f},{y:.1f}" for x, y in pts) +
                    f'" fill="{COLOURS.get(phase, "#ccc")}" stroke="#566573" stroke-width="0.5"/>')
        body += _legend(LEFT + plot_w + 12, PODS_TOP + 14 * i, COLOURS.get(phase, "#ccc"),
                        f"{phase} ({counts[-1]})")
        below = above
    # Ready (solid) and desired (dashed) replicas per ReplicaSet.
    top_rs = max(1, max((max(r) for s in samples for r in s.replicas.values()), default=1))
    body += _axes(start, end, tx, RS_TOP, RS_H, top_rs, "replicas")
    for i, name in enumerate(rs_names):
        colour = PALETTE[i % len(PALETTE)]
        for which, dash in ((1, "4 3"), (0, "")):
            pts = _steps([(s.time, s.replicas[name][which]) for s in samples if name in s.replicas], end)
            if pts:
                body.append('<polyline points="' + " ".join(
                    f"{tx(t):.1f},{ty(v, RS_TOP, RS_H, top_rs):.1f}" for t, v in pts) +
                    f'" fill="none" stroke="{colour}" stroke-width="{1 if dash else 2}"'
                    + (f' stroke-dasharray="{dash}"' if dash else "") + "/>")
        body += _legend(LEFT + plot_w + 12, RS_TOP + 14 * i, colour, name[-20:])
    if rs_names:
        body.append(svg.text(LEFT + plot_w + 12, RS_TOP + 14 * len(rs_names) + 10,
                             "solid ready, dashed desired", size=9, fill="#7f8c8d"))
    # Faults: a numbered red line through both plots, explained underneath.
    for n, f in enumerate(faults, 1):
        x = tx(f.time)
        body.append(svg.line(x, PODS_TOP - 6, x, RS_TOP + RS_H, stroke="#c0392b", dash="4 2"))
        body.append(svg.text(x, PODS_TOP - 9, str(n), size=10, anchor="middle", fill="#c0392b",
                             weight="bold"))
        what = " ".join(str(p) for p in (f.verb, f.object) if p and p != "*")
        body.append(svg.text(LEFT, RS_TOP + RS_H + 44 + 16 * (n - 1), f"{n}  t={f.time:g}s  ⚡ {what}",
                             size=11, fill="#c0392b"))
    return svg.document(WIDTH, height, body, title or "timeline")


def _axes(start: float, end: float, tx: Callable[[float], float], top: float, h: float, most: int,
          label: str) -> list[str]:
    out = [svg.line(LEFT, top + h, WIDTH - RIGHT, top + h, stroke="#566573"),
           svg.line(LEFT, top, LEFT, top + h, stroke="#566573"),
           svg.text(8, top + 10, label, size=10, fill="#566573")]
    step = _nice_step(end - start)
    t = (start // step + 1) * step if start % step else start
    while t <= end + 1e-9:
        out.append(svg.line(tx(t), top + h, tx(t), top + h + 4, stroke="#566573"))
        out.append(svg.text(tx(t), top + h + 15, f"{t:g}s", size=9, anchor="middle", fill="#566573"))
        t += step
    y_step = max(1, int(_nice_step(most, 4)))
    for n in range(0, most + 1, y_step):
        y = top + h - n / most * h
        out.append(svg.line(LEFT - 4, y, LEFT, y, stroke="#566573"))
        out.append(svg.text(LEFT - 6, y + 3, str(n), size=9, anchor="end", fill="#566573"))
    return out


def _legend(x: float, y: float, colour: str, label: str) -> list[str]:
    return [svg.rect(x, y - 8, 10, 10, fill=colour, stroke="#566573"),
            svg.text(x + 14, y + 1, label, size=10)]
