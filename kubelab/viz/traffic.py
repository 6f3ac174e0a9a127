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


def plot_traffic(traffic: Traffic, width: float = 640, height: float = 180) -> Chart:
    """Ok (green) and failed (red) requests per second of c.traffic(...), as an SVG bar chart
    with its axes titled and a legend."""
    seconds = traffic.per_second()
    if not seconds:
        return Chart(svg.document(width, 40, [svg.text(10, 24, "no requests yet")]))
    first, last = min(seconds), max(seconds)
    most = max(ok + bad for ok, bad in seconds.values())
    left, top, plot_h = 48.0, 24.0, height - 64
    bar = (width - left - 10) / (last - first + 1)
    middle = top + plot_h / 2
    body = [svg.line(left, top + plot_h, width - 10, top + plot_h),
            svg.line(left, top, left, top + plot_h),
            svg.text(left - 4, top + 8, str(most), size=9, anchor="end"),
            svg.text(left - 4, top + plot_h, "0", size=9, anchor="end"),
            svg.text(14, middle, "requests per second", size=10, anchor="middle",
                     extra=f' transform="rotate(-90 14 {middle:g})"'),
            svg.text(left, top + plot_h + 14, f"{first} s", size=9),
            svg.text(width - 10, top + plot_h + 14, f"{last} s", size=9, anchor="end"),
            svg.text((left + width - 10) / 2, top + plot_h + 30, "virtual time (s)", size=10,
                     anchor="middle")]
    for i, (label, colour) in enumerate((("ok", "#58d68d"), ("failed", "#ec7063"))):
        x = width - 130 + i * 60
        body += [svg.rect(x, 6, 10, 10, fill=colour, stroke="none"), svg.text(x + 14, 15, label, size=10)]
    for second, (ok, bad) in seconds.items():
        x = left + (second - first) * bar
        h_ok, h_bad = plot_h * ok / most, plot_h * bad / most
        body.append(svg.rect(x, top + plot_h - h_ok, bar, h_ok, fill="#58d68d", stroke="none"))
        if bad:
            body.append(svg.rect(x, top + plot_h - h_ok - h_bad, bar, h_bad, fill="#ec7063",
                                 stroke="none"))
    return Chart(svg.document(width, height, body, title=f"requests to {traffic.target} per second"))
