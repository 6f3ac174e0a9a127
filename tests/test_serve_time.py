"""Time in serve mode (kubelab.api.meta.set_epoch, kubelab/serve/command.py): a served cluster's
time 0 is the second `kubelab serve` started, so the real kubectl, which computes ages from its
own clock (`kubectl events`' LAST SEEN), reads seconds, as on kind; in-process clusters keep
2025-01-01 so that their timestamps repeat run after run."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from serve_helpers import Served, serving

from kubelab import Cluster
from kubelab.api import meta
from kubelab.serve.command import _instant


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from serving(tmp_path_factory.mktemp("time"), "--nodes", "1", "--no-anatomy")


def test_served_objects_carry_times_of_now_and_client_side_ages_read_seconds(served: Served) -> None:
    served.kubectl("run", "t", "--image=busybox", "--restart=Never", "--", "echo", "hi")
    stamp = served.kubectl("get", "pod", "t", "-o", "jsonpath={.metadata.creationTimestamp}").stdout
    created = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    assert abs((datetime.now(UTC) - created).total_seconds()) < 120, stamp
    served.kubectl("wait", "--for=jsonpath={.status.phase}=Succeeded", "pod/t", "--timeout=60s")
    rows = served.kubectl("events", "--for", "pod/t").stdout.splitlines()
    assert rows[0].split()[:2] == ["LAST", "SEEN"] and len(rows) > 2, rows
    ages = [row.split()[0] for row in rows[1:]]
    assert all(re.fullmatch(r"\d{1,3}s|\dm\d*s?", age) for age in ages), ages  # not "699d"


def test_the_epoch_moves_every_timestamp_and_in_process_clusters_keep_2025() -> None:
    assert meta.epoch() == meta.EPOCH == datetime(2025, 1, 1, tzinfo=UTC)
    assert Cluster(nodes=1).client.get("namespaces", "default")["metadata"]["creationTimestamp"] \
        == "2025-01-01T00:00:00Z"
    try:
        meta.set_epoch(datetime(2026, 12, 2, 1, 2, 3, 456789, tzinfo=UTC))
        assert meta.rfc3339(30.5) == "2026-12-02T01:02:33Z"  # cut to the second, then + 30 s
        assert meta.micro_time(1.25) == "2026-12-02T01:02:04.250000Z"
        assert meta.parse_time("2026-12-02T01:03:03Z") == 60.0
        with pytest.raises(ValueError, match="aware"):
            meta.set_epoch(datetime(2026, 12, 2))
    finally:
        meta.set_epoch(meta.EPOCH)
    assert meta.rfc3339(0) == "2025-01-01T00:00:00Z"


@pytest.mark.parametrize(("text", "error"), [("2025-01-01T00:00:00", "no time zone"),
                                             ("yesterday", "not an RFC 3339 time")])
def test_serves_epoch_flag_refuses_what_is_not_an_instant(text: str, error: str) -> None:
    assert _instant("2025-01-01T00:00:00Z") == meta.EPOCH
    with pytest.raises(argparse.ArgumentTypeError, match=error):
        _instant(text)
