"""etcd's space quota, NOSPACE alarm, defragmentation, and the API server's compactor."""

from __future__ import annotations

import pytest

from kubelab import Cluster
from kubelab.api.errors import ApiError
from kubelab.apiserver.storage.compact import COMPACT_REV_KEY
from kubelab.sim import Clock
from kubelab.store import Compare, DeleteRequest, PutRequest, RangeRequest, Store
from kubelab.store.quota import DEFAULT_QUOTA_BYTES, KV_OVERHEAD, NOSPACE, NoSpaceError

NO_SPACE = "etcdserver: mvcc: database space exceeded"


def small_store(limit: int = 10_000) -> Store:
    return Store(Clock(), quota_backend_bytes=limit)


def test_defaults_follow_etcd() -> None:
    assert Store(Clock()).quota.limit == DEFAULT_QUOTA_BYTES == 2 * 1024**3
    assert Store(Clock(), quota_backend_bytes=-1).quota.limit is None  # negative: disabled


def test_size_counts_every_revision_kept() -> None:
    store = small_store()
    store.put("k", b"v" * 100)
    store.put("k", b"v" * 100)
    assert store.db_size == store.db_size_in_use == 2 * (KV_OVERHEAD + 1 + 100)
    store.delete_range("k")  # the tombstone is a revision too
    assert store.db_size_in_use == 2 * (KV_OVERHEAD + 101) + KV_OVERHEAD + 1


def test_past_the_quota_puts_fail_and_raise_the_alarm_reads_and_deletes_work() -> None:
    store = small_store()
    store.put("a", b"x" * 4000)
    rev = store.revision
    with pytest.raises(NoSpaceError, match=NO_SPACE):
        store.put("b", b"x" * 6000)
    assert store.alarm_list() == [NOSPACE] and store.revision == rev  # nothing changed
    # While the alarm is active even a small put is refused (applierV3Capped) ...
    with pytest.raises(NoSpaceError):
        store.put("c", b"x")
    with pytest.raises(NoSpaceError):
        store.txn([Compare.version("c", "=", 0)], [PutRequest("c", b"x")], [])
    # ... but reads, deletes, and txns without puts pass.
    assert store.range("a").kvs[0].value == b"x" * 4000
    assert store.txn([], [RangeRequest("a")], []).succeeded
    assert store.delete_range("a").deleted == 1
    store.txn([], [DeleteRequest("zzz")], [])


def test_txn_costs_its_dearer_branch() -> None:
    store = small_store(3000)
    with pytest.raises(NoSpaceError):  # the failure branch would not fit, though it may not run
        store.txn([Compare.version("k", "=", 0)], [PutRequest("k", b"1")],
                  [PutRequest("k", b"x" * 3000)])


def test_only_compaction_defrag_and_disarm_recover() -> None:
    store = small_store()
    for _ in range(8):
        store.put("k", b"x" * 900)
    with pytest.raises(NoSpaceError):
        store.put("k", b"x" * 900)
    store.compact(store.revision)  # frees pages in the file, but the file stays as big
    assert store.db_size_in_use == KV_OVERHEAD + 1 + 900 < store.db_size
    store.alarm_disarm()
    with pytest.raises(NoSpaceError):  # the quota judges the file's size
        store.put("k", b"x" * 900)
    assert store.defragment() > 0
    assert store.db_size == store.db_size_in_use
    with pytest.raises(NoSpaceError):  # the alarm was raised again by the last attempt
        store.put("k", b"x" * 900)
    store.alarm_disarm()
    store.put("k", b"x" * 900)
    assert store.alarm_list() == []


def test_a_write_reuses_freed_pages_without_growing_the_file() -> None:
    store = small_store(-1)
    store.put("k", b"x" * 1000)
    store.put("k", b"x" * 1000)
    size = store.db_size
    store.compact(store.revision)
    store.put("k", b"x" * 1000)
    assert store.db_size == size


def test_a_restored_store_counts_its_snapshot(tmp_path) -> None:  # type: ignore[no-untyped-def]
    store = small_store()
    store.put("k", b"x" * 500)
    store.save_snapshot(tmp_path / "snap.db")
    restored = Store.restore(tmp_path / "snap.db", Clock())
    assert restored.db_size == restored.db_size_in_use == store.db_size_in_use


def test_the_api_server_passes_no_space_on_as_a_500() -> None:
    c = Cluster(nodes=0, components=[])
    c.store.quota.limit = c.store.db_size + 4000
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"},
          "data": {"x": "y" * 5000}}
    with pytest.raises(ApiError) as info:
        c.client.create(cm)
    assert (info.value.code, info.value.reason, info.value.message) == (500, "", NO_SPACE)
    with pytest.raises(ApiError, match=NO_SPACE):
        c.client.create({**cm, "data": {"x": "small"}})
    assert c.client.list("configmaps", "default")["items"] == []  # reads still work


def test_big_objects_get_the_real_errors() -> None:
    c = Cluster(nodes=0, components=[])
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"},
          "data": {"x": "y" * (2 * 1024 * 1024)}}
    with pytest.raises(ApiError) as info:  # over etcd's --max-request-bytes (1.5 MiB)
        c.client.create(cm)
    assert info.value.code == 413
    assert info.value.message == "Request entity too large: etcdserver: request is too large"
    cm["data"] = {"x": "y" * (3 * 1024 * 1024 + 1)}
    with pytest.raises(ApiError) as info:  # over the API server's own 3 MiB
        c.client.create(cm)
    assert (info.value.code, info.value.message) == (413, "Request entity too large: limit is 3145728")
    assert c.client.list("configmaps", "default")["items"] == []


def test_the_api_server_compacts_every_5_minutes_to_the_revision_of_5_minutes_ago() -> None:
    c = Cluster(nodes=0, components=[])
    c.run(299)
    assert c.store.compact_revision == 0
    c.run(1)  # t=300: the first round only remembers the revision (no compaction on bootstrap)
    assert c.store.compact_revision == 0
    seen = c.store.range(COMPACT_REV_KEY).kvs[0]
    assert seen.version == 1
    rev_at_300 = seen.mod_revision  # the revision after its own txn
    c.client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}})
    c.run(300)  # t=600: compacts to the revision it saw at t=300
    assert c.store.compact_revision == rev_at_300
    assert c.store.range(COMPACT_REV_KEY).kvs[0].version == 2


def test_two_api_servers_share_the_compaction_through_compact_rev_key() -> None:
    from kubelab.apiserver.storage.compact import Compactor

    store = small_store(-1)
    a, b = Compactor(store, Clock(), None), Compactor(store, Clock(), None)
    t, rev = a.compact(0, 0)      # a wins the first round
    assert t == 1
    t2, rev2 = b.compact(0, 0)    # b's CAS fails: it learns the time
    assert t2 == 1 and store.compact_revision == 0
    store.put("x", b"1")
    t, _ = a.compact(t, rev)      # a compacts to the revision of its last round
    assert store.compact_revision == rev and t == 2
    t2, _ = b.compact(t2, rev2)   # b is behind again: no second compaction
    assert t2 == 2 and store.compact_revision == rev


def test_a_full_etcd_stops_the_compactor_too() -> None:
    c = Cluster(nodes=0, components=[])
    c.run(301)
    c.store.quota.limit = c.store.db_size + 1
    with pytest.raises(ApiError):
        c.client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}})
    c.run(300)
    assert c.store.compact_revision == 0
    assert any(r.verb == "compact-failed" for r in c.trace)
