"""A Traffic run as a picture: ok (green) and failed (red) requests per virtual second."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kubelab.viz import svg

if TYPE_CHECKING:
    from kubelab.cluster.traffic import Traffic

__all__ = ["Chart", "plot_traffic"]


@dataclass(frozen=True)
class Chart:
    """An SVG picture that shows itself in Jupyter."""

    svg: str

    def _repr_svg_(self) -> str:
        return self.svg


def plot_traffic(traffic: Traffic, width: float = 640, height: float = 160) -> Chart:
    """Ok (green) and failed (red) requests per second of c.traffic(...), as an SVG bar chart."""
    seconds = traffic.per_second()
    if not seconds:
        return Chart(svg.document(width, 40, [svg.text(10, 24, "no requests yet")]))
    first, last = min(seconds), max(seconds)
    most = max(ok + bad for ok, bad in seconds.values())
    left, top, plot_h = 40.0, 10.0, height - 40
    bar = (width - left - 10) / (last - first + 1)
    body = [svg.line(left, top + plot_h, width - 10, top + plot_h),
            svg.text(left - 4, top + 8, str(most), size=9, anchor="end"),
            svg.text(left, height - 8, f"t={first}s", size=9),
            svg.text(width - 10, height - 8, f"t={last}s", size=9, anchor="end")]
    for second, (ok, bad) in seconds.items():
        x = left + (second - first) * bar
        h_ok, h_bad = plot_h * ok / most, plot_h * bad / most
        body.append(svg.rect(x, top + plot_h - h_ok, bar, h_ok, fill="#58d68d", stroke="none"))
        if bad:
            body.append(svg.rect(x, top + plot_h - h_ok - h_bad, bar, h_bad, fill="#ec7063",
                                 stroke="none"))
    return Chart(svg.document(width, height, body, title=f"requests to {traffic.target} per second"))
