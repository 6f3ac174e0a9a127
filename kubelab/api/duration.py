"""How long ago, as kubectl prints it: apimachinery pkg/util/duration/duration.go HumanDuration.

The AGE column of every Table the API server builds (kubelab.apiserver.printers) and the ages
`kubectl describe` prints use it.
"""

from __future__ import annotations

__all__ = ["human_duration"]


def human_duration(seconds: float) -> str:
    """duration.HumanDuration: 45s, 3m20s, 5h, 3d4h, 2y3d."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    m = s // 60
    if m < 10:
        return f"{m}m{s % 60}s" if s % 60 else f"{m}m"
    if m < 180:
        return f"{m}m"
    h = m // 60
    if h < 8:
        return f"{h}h{m % 60}m" if m % 60 else f"{h}h"
    if h < 48:
        return f"{h}h"
    if h < 24 * 8:
        return f"{h // 24}d{h % 24}h" if h % 24 else f"{h // 24}d"
    if h < 24 * 365 * 2:
        return f"{h // 24}d"
    y, days = h // (24 * 365), (h // 24) % 365
    return f"{y}y{days}d" if y < 8 and days else f"{y}y"
