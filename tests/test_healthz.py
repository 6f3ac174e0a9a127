"""The API server's health checks (kubelab/apiserver/healthz.py), as kube-apiserver writes them:
the verbose listing, the one-word answer, one check alone, exclusions, and a failed check that
withholds its reason (etcd without quorum). Through kubelab serve, the real kubectl reads them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from serve_helpers import Served, serving

from kubelab import Cluster
from kubelab.apiserver.healthz import CHECKS, health


def test_a_healthy_server_lists_every_check_and_passes() -> None:
    c = Cluster(nodes=1)
    code, text = health(c.apiserver, "readyz", verbose=True)
    lines = text.splitlines()
    assert code == 200 and lines[-1] == "readyz check passed" and text.endswith("\n")
    assert lines[:5] == ["[+]ping ok", "[+]log ok", "[+]etcd ok", "[+]etcd-readiness ok",
                         "[+]informer-sync ok"]
    assert lines[-2] == "[+]shutdown ok" and len(lines) == len(CHECKS["readyz"]) + 1
    assert health(c.apiserver, "livez") == (200, "ok")
    assert "shutdown" not in health(c.apiserver, "livez", verbose=True)[1]
    assert health(c.apiserver, "livez", "etcd") == (200, "ok")
    assert health(c.apiserver, "livez", "nope")[0] == 404


def test_excluded_checks_say_so_and_unknown_exclusions_warn() -> None:
    c = Cluster(nodes=1)
    code, text = health(c.apiserver, "livez", verbose=True, exclude=("etcd", "nope"))
    assert code == 200
    assert "[+]etcd excluded: ok\n" in text
    assert 'warn: some health checks cannot be excluded: no matches for "nope"\n' in text


def test_without_etcd_quorum_the_etcd_checks_fail_and_withhold_the_reason() -> None:
    c = Cluster(nodes=1, etcd_members=3)
    c.run(2)
    c.faults.lose_etcd_quorum()
    code, text = health(c.apiserver, "readyz")  # not verbose: a failure lists everything
    assert code == 500 and text.endswith("readyz check failed\n")
    assert "[-]etcd failed: reason withheld\n" in text
    assert "[-]etcd-readiness failed: reason withheld\n" in text and "[+]ping ok\n" in text
    code, text = health(c.apiserver, "livez", "etcd")
    assert code == 500 and text.startswith("internal server error: ")
    assert c.trace.filter(verb="health-check-failed")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from serving(tmp_path_factory.mktemp("healthz"), "--nodes", "1", "--no-anatomy")


def test_the_real_kubectl_reads_the_checks(served: Served) -> None:
    text = served.kubectl("get", "--raw", "/readyz?verbose").stdout
    assert text.startswith("[+]ping ok\n") and text.endswith("readyz check passed\n")
    assert served.kubectl("get", "--raw", "/livez/etcd").stdout == "ok"
    assert served.kubectl("get", "--raw", "/healthz").stdout == "ok"

