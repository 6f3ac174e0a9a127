"""The wire between the grader and a sandbox: what a submission can touch, and what it cannot."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from kubelab.api.errors import ApiError
from kubelab.cluster import Cluster
from kubelab.grading.exercises import Exercise
from kubelab.grading.launch import LoadFailed, Sandbox
from kubelab.grading.remote import RemoteError
from kubelab.grading.source import Source

PROBE = '''
from kubelab.api.errors import ApiError
from kubelab.store import Compare, PutRequest


def probe(client, store):
    out = []
    for name, reach in (("client.api", lambda: client.api), ("client._send", lambda: client._send),
                        ("client.__dict__", lambda: client.__dict__),
                        ("store._index", lambda: store._index), ("store.compact", lambda: store.compact)):
        try:
            reach()
            out.append(f"{name}: reached")
        except AttributeError as err:
            out.append(f"{name}: {err}")
    try:
        client.get("configmaps", "nope")
    except ApiError as err:
        out.append(f"ApiError {err.code} {err.message}")
    kvs = store.range("/registry/configmaps/default/seen").kvs
    result = store.txn([Compare.mod_revision(kvs[0].key, "=", kvs[0].mod_revision)],
                       [PutRequest(kvs[0].key, kvs[0].value)])
    out.append(f"txn {result.succeeded}")
    return out


def explode():
    raise KeyError("from the submission")
'''


@pytest.fixture()
def module(tmp_path: Path) -> Path:
    path = tmp_path / "probe.py"
    path.write_text(PROBE)
    return path


def sandbox(path: Path, symbol: str) -> Sandbox:
    probe = Exercise("0.0", "a probe", "probe", symbol, "00_tour", "", "easy", 0)
    return Sandbox(Source(path, path.read_text()), probe, deadline=time.monotonic() + 20,
                   output_limit=1 << 16, cpu_seconds=20)


def test_a_submission_uses_only_what_the_policy_shares(module: Path) -> None:
    c = Cluster(nodes=0, components=[])
    c.client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "seen"}, "data": {}})
    box = sandbox(module, "probe")
    try:
        out = box.start().target(c.client, c.store)
    finally:
        box.close()
    reached = [line for line in out if line.endswith("reached")]
    assert not reached  # (client.__class__ is the sandbox's own Proxy class: nothing of ours)
    assert "client.api: 'Client' object has no attribute 'api' (the grader shares: bind, create," in out[0]
    assert out[2] == "client.__dict__: __dict__"
    assert out[5] == 'ApiError 404 configmaps "nope" not found'  # the real error, rebuilt
    assert out[6] == "txn True"                                  # etcd's records cross by value
    assert c.store.revision == int(c.get("configmaps", "seen")["metadata"]["resourceVersion"])


def test_errors_cross_as_their_type_name_message_and_traceback(module: Path) -> None:
    box = sandbox(module, "explode")
    try:
        with pytest.raises(RemoteError) as err:
            box.start().target()
    finally:
        box.close()
    assert (err.value.type_name, err.value.message) == ("KeyError", "'from the submission'")
    assert 'probe.py", line' in err.value.remote_traceback
    assert not isinstance(err.value, ApiError)


def test_a_missing_symbol_is_reported_by_name(module: Path) -> None:
    box = sandbox(module, "not_there")
    try:
        with pytest.raises(LoadFailed, match=r"probe\.py has no not_there"):
            box.start()
    finally:
        box.close()
