"""A few SVG primitives for the hand-drawn pictures (sequence diagram, timeline).

Graphviz lays out graphs; a sequence diagram or a plot is a grid we can compute ourselves, so
those are written as SVG text directly: no layout engine, no plotting library, and the same
input always gives the same bytes (tests compare pictures as text).
"""

from __future__ import annotations

import html

__all__ = ["FONT", "arrow_markers", "document", "line", "rect", "text", "text_width"]

FONT = "Helvetica, Arial, sans-serif"
CHAR_WIDTH = 0.58  # average glyph width of Helvetica, as a fraction of the font size


def _num(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def text_width(label: str, size: float = 11) -> float:
    """About how wide `label` is drawn (good enough to size boxes without a font engine)."""
    return len(label) * size * CHAR_WIDTH


def text(x: float, y: float, label: str, *, size: float = 11, anchor: str = "start",
         fill: str = "#222", weight: str = "", extra: str = "") -> str:
    bold = f' font-weight="{weight}"' if weight else ""
    return (f'<text x="{_num(x)}" y="{_num(y)}" font-size="{_num(size)}" text-anchor="{anchor}" '
            f'fill="{fill}"{bold}{extra}>{html.escape(label)}</text>')


def line(x1: float, y1: float, x2: float, y2: float, *, stroke: str = "#222", width: float = 1,
         dash: str = "", marker: str = "") -> str:
    dashed = f' stroke-dasharray="{dash}"' if dash else ""
    end = f' marker-end="url(#{marker})"' if marker else ""
    return (f'<line x1="{_num(x1)}" y1="{_num(y1)}" x2="{_num(x2)}" y2="{_num(y2)}" '
            f'stroke="{stroke}" stroke-width="{_num(width)}"{dashed}{end}/>')


def rect(x: float, y: float, w: float, h: float, *, fill: str = "#fff", stroke: str = "#222",
         radius: float = 0, opacity: float = 1.0) -> str:
    rounded = f' rx="{_num(radius)}"' if radius else ""
    alpha = f' fill-opacity="{_num(opacity)}"' if opacity < 1 else ""
    return (f'<rect x="{_num(x)}" y="{_num(y)}" width="{_num(w)}" height="{_num(h)}"{rounded} '
            f'fill="{fill}" stroke="{stroke}"{alpha}/>')


def arrow_markers(colours: dict[str, str]) -> str:
    """<defs> with one arrowhead marker per colour: {"marker-id": "#colour"}."""
    heads = "".join(
        f'<marker id="{name}" markerWidth="8" markerHeight="8" refX="7" refY="3" orient="auto" '
        f'markerUnits="userSpaceOnUse"><path d="M0,0 L7,3 L0,6 z" fill="{colour}"/></marker>'
        for name, colour in colours.items())
    return f"<defs>{heads}</defs>"


def document(width: float, height: float, body: list[str], title: str = "") -> str:
    """A standalone SVG document (it opens in a browser, and Jupyter shows it inline)."""
    heading = f"<title>{html.escape(title)}</title>" if title else ""
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{_num(width)}" height="{_num(height)}" '
            f'viewBox="0 0 {_num(width)} {_num(height)}" font-family="{FONT}">{heading}'
            f'<rect width="100%" height="100%" fill="#ffffff"/>' + "".join(body) + "</svg>\n")
