"""The operator toolkit unchanged over HTTPS: the SettlementJob operator, built from
kubelab.serve.connect's ComponentContext, runs a night on a `kubelab serve` cluster in another
process (its Job controller, its kubelets) and cleans up through its finalizer."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from serve_helpers import Served, serving
from transport_helpers import run, until

from kubelab.cluster.ledger import Ledger
from kubelab.samples.settlement_job import (
    FINALIZER,
    SETTLEMENT_JOB_CRD,
    settlement_job,
    settlement_operator,
)
from kubelab.serve import connect


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from serving(tmp_path_factory.mktemp("operator"), "--nodes", "1", "--speed", "20")


def test_the_settlement_operator_runs_over_https(served: Served) -> None:
    async def main() -> None:
        remote = connect(served.kubeconfig, speed=20)
        remote.client.create(SETTLEMENT_JOB_CRD)
        ledger = Ledger(remote.clock)
        operator = settlement_operator(remote.context("settlement-operator"), ledger)
        remote.start()
        operator.start()
        try:
            remote.client.create(settlement_job("remote-night", behavior="exit=5"))

            def phase() -> str:
                obj = operator.cache.get("settlementjobs", "remote-night", "default")
                return str(((obj or {}).get("status") or {}).get("phase", ""))
            await until(lambda: phase() == "Succeeded")
            sj = remote.client.get("settlementjobs", "remote-night")
            assert sj["metadata"]["finalizers"] == [FINALIZER]
            assert remote.client.get("jobs", "remote-night-1")["status"]["succeeded"] == 1
            assert ledger.holder_of("equities") == sj["metadata"]["uid"]
            remote.client.delete("settlementjobs", "remote-night")
            await until(lambda: operator.cache.get("settlementjobs", "remote-night", "default") is None)
            assert len(ledger.released) == 1 and ledger.locks == {}
            assert any(r.requests for r in operator.records)  # the request log works over HTTPS too
        finally:
            operator.stop()
            remote.stop()

    run(main)
