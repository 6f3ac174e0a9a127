"""Store throughput: put, txn (compare-and-swap), single-key range, and watch fan-out.

Each figure is the best of a few rounds (the machine is shared; the best round is the one least
disturbed). Trace off, latency 0: this measures the store's own machinery.
"""

from __future__ import annotations

from collections.abc import Callable

from benchmarks.common import Figure, rate
from kubelab.sim import Clock
from kubelab.store import Compare, PutRequest, Store, WatchResponse

ROUNDS = 3
KEYS = [f"/registry/pods/default/web-{i}" for i in range(10_000)]
VALUE = b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"}}' * 8  # ~500 bytes


def best(n: int, make: Callable[[], Callable[[], object]]) -> float:
    """Best ops/s over ROUNDS fresh set-ups; make() builds state and returns the timed body."""
    return max(rate(n, make()) for _ in range(ROUNDS))


def bench_put(n: int = 200_000) -> float:
    def make() -> Callable[[], object]:
        store = Store(Clock())

        def body() -> None:
            for i in range(n):
                store.put(KEYS[i % len(KEYS)], VALUE)
        return body
    return best(n, make)


def bench_txn(n: int = 50_000) -> float:
    def make() -> Callable[[], object]:
        store = Store(Clock())
        revs = {key: store.put(key, VALUE).revision for key in KEYS}

        def body() -> None:  # the API server's guaranteed update: compare mod_revision, put
            for i in range(n):
                key = KEYS[i % len(KEYS)]
                resp = store.txn([Compare.mod_revision(key, "=", revs[key])],
                                 [PutRequest(key, VALUE)])
                revs[key] = resp.revision
        return body
    return best(n, make)


def bench_range(n: int = 200_000) -> float:
    def make() -> Callable[[], object]:
        store = Store(Clock())
        for key in KEYS:
            store.put(key, VALUE)

        def body() -> None:
            for i in range(n):
                store.range(KEYS[i % len(KEYS)])
        return body
    return best(n, make)


def bench_watch_fanout(watchers: int = 100, puts: int = 2_000, batch: int = 20) -> float:
    delivered = [0]

    def count(resp: WatchResponse) -> None:
        delivered[0] += len(resp.events)

    def make() -> Callable[[], object]:
        clock = Clock()
        store = Store(clock)
        for _ in range(watchers):
            store.watch("/registry/pods/", prefix=True, callback=count)

        def body() -> None:
            for i in range(puts):
                store.put(KEYS[i % len(KEYS)], VALUE)
                if i % batch == batch - 1:
                    clock.run_until_idle()
            clock.run_until_idle()
        return body

    result = best(watchers * puts, make)
    assert delivered[0] == ROUNDS * watchers * puts, delivered
    return result


def run() -> list[Figure]:
    return [
        Figure("store put", bench_put(), "ops/s", ">= 100000"),
        Figure("store txn", bench_txn(), "ops/s"),
        Figure("store range", bench_range(), "ops/s"),
        Figure("store watch fan-out (100 watchers)", bench_watch_fanout(), "events/s"),
    ]
