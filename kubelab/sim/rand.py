"""Seeded randomness. One random.Random(seed) per cluster, passed down; never the global one."""

from __future__ import annotations

import random

__all__ = ["Rand", "new_rand"]

Rand = random.Random


def new_rand(seed: int) -> random.Random:
    """A private generator for one cluster: the same seed gives the same story."""
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")
    return random.Random(seed)
