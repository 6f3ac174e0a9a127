"""The outside system of notebook 08: a bank's settlement ledger, which is not Kubernetes.

The SettlementJob operator locks a book in the ledger before it runs the night's batch, and
must release that lock when the SettlementJob is deleted: a cleanup outside the cluster, so it
needs a finalizer (the garbage collector only cleans up Kubernetes objects). The ledger can be
made unavailable (c.faults.ledger_down()); then every call fails as a refused connection, and
the finalizer keeps the SettlementJob until the ledger is back.

It belongs to the wiring, like the image registry: each Cluster has one (c.ledger), the
operator is handed it by the code that starts it and never imports it. Calls are plain method
calls on the simulated clock.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubelab.sim.clock import Clock
from kubelab.sim.trace import Trace

if TYPE_CHECKING:
    from kubelab.cluster import Cluster

__all__ = ["LEDGER_ADDRESS", "Ledger", "LedgerUnavailable", "ledger_for"]

LEDGER_ADDRESS = "ledger.bank.example:443"


class LedgerUnavailable(ConnectionError):
    """What a client of a down ledger sees (a ConnectionError: the operator catches that)."""

    def __init__(self) -> None:
        super().__init__(f"dial tcp {LEDGER_ADDRESS}: connect: connection refused")


class Ledger:
    def __init__(self, clock: Clock, trace: Trace | None = None) -> None:
        self.clock, self.trace = clock, trace
        self.available = True
        self.locks: dict[str, tuple[str, str]] = {}          # book -> (holder, token)
        self.acquired: list[tuple[float, str, str]] = []     # (time, book, holder)
        self.released: list[tuple[float, str, str]] = []
        self.calls = 0
        self._tokens = 0

    def _call(self, what: str, book: str, holder: str) -> None:
        self.calls += 1
        if self.trace is not None:
            self.trace.record("ledger", what, book, holder=holder, available=self.available)
        if not self.available:
            raise LedgerUnavailable

    def acquire_lock(self, book: str, holder: str) -> str | None:
        """Lock `book` for `holder`: its token. The same holder asking again gets the same
        token (so a retry after a crash is harmless); another holder gets None."""
        self._call("acquire", book, holder)
        held = self.locks.get(book)
        if held is not None:
            return held[1] if held[0] == holder else None
        self._tokens += 1
        token = f"lock-{self._tokens}"
        self.locks[book] = (holder, token)
        self.acquired.append((self.clock.now, book, holder))
        return token

    def release_lock(self, book: str, holder: str) -> bool:
        """Release `holder`'s lock on `book`. False if it holds none (already released)."""
        self._call("release", book, holder)
        held = self.locks.get(book)
        if held is None or held[0] != holder:
            return False
        del self.locks[book]
        self.released.append((self.clock.now, book, holder))
        return True

    def holder_of(self, book: str) -> str | None:
        held = self.locks.get(book)
        return held[0] if held else None

    def __repr__(self) -> str:
        state = "up" if self.available else "DOWN"
        return f"<Ledger {state}: {len(self.locks)} lock(s), {len(self.released)} released>"


def ledger_for(cluster: Cluster) -> Ledger:
    """The cluster's ledger, c.ledger: one outside world per cluster (notebook 08, the checks)."""
    return cluster.ledger
