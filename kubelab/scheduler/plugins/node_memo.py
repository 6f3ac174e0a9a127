"""NodeMemo: what a plugin worked out per node, kept until the node changes.

Not an upstream idea: upstream works out Filter and Score afresh for every node in every cycle,
on 16 goroutines. Python has one, and most of that work would repeat the last cycle's: the
pods of one Deployment ask for the same resources, and a cycle changes one node (the one the
pod was assumed on). So NodeResourcesFit and BalancedAllocation remember their verdicts and
scores for the current pod shape, by NodeInfo.generation, which changes with every change to
a node (types.go nextGeneration). The answers are the same as working them out again.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any, Generic, TypeVar, cast

from kubelab.scheduler.types import NodeInfo

__all__ = ["NodeMemo"]

T = TypeVar("T")
_UNKNOWN: Any = object()


class NodeMemo(Generic[T]):
    """Results per node for pods of one shape (`key`); a new key forgets them all."""

    def __init__(self) -> None:
        self._key: Hashable = _UNKNOWN
        self._by_generation: dict[int, T] = {}
        self._generation_of: dict[str, int] = {}  # node name -> generation remembered

    def results(self, key: Hashable, nodes: Sequence[NodeInfo],
                work_out: Callable[[list[NodeInfo]], list[T]]) -> list[T]:
        """The result for each node: remembered, or work_out(the nodes not remembered)."""
        if key != self._key:
            self._key, self._by_generation, self._generation_of = key, {}, {}
        remembered = self._by_generation
        results: list[Any] = [remembered.get(n.generation, _UNKNOWN) for n in nodes]
        missing: list[int] = []
        for _ in range(results.count(_UNKNOWN)):  # count and index search in C; misses are few
            missing.append(results.index(_UNKNOWN, missing[-1] + 1 if missing else 0))
        if missing:
            for i, result in zip(missing, work_out([nodes[i] for i in missing]), strict=True):
                node_info = nodes[i]
                # Forget the node's older generation, so the memo never outgrows the cluster.
                remembered.pop(self._generation_of.get(node_info.name, 0), None)
                self._generation_of[node_info.name] = node_info.generation
                results[i] = remembered[node_info.generation] = result
        return cast(list[T], results)

    def __len__(self) -> int:
        return len(self._by_generation)
