"""retry_on_conflict, the apply patch, and kubectl's duration format."""

from __future__ import annotations

import random

import pytest

from kubelab.api import errors
from kubelab.api.duration import human_duration
from kubelab.client.apply import three_way_merge_patch
from kubelab.client.retry import Backoff, retry_on_conflict


def test_retry_on_conflict_retries_only_conflicts() -> None:
    calls = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise errors.conflict("pods", "web")
        return "ok"

    assert retry_on_conflict(flaky) == "ok" and len(calls) == 3

    def not_found() -> None:
        calls.append(1)
        raise errors.not_found("pods", "web")

    calls.clear()
    with pytest.raises(errors.ApiError, match="not found"):
        retry_on_conflict(not_found)
    assert len(calls) == 1


def test_retry_on_conflict_gives_up_after_the_backoff_steps() -> None:
    attempts = []

    def always() -> None:
        attempts.append(1)
        raise errors.conflict("pods", "web")

    waited = []
    with pytest.raises(errors.ApiError, match="Operation cannot be fulfilled"):
        retry_on_conflict(always, Backoff(duration=0.01, factor=2, jitter=0, steps=4),
                          on_retry=lambda r: waited.append(r.waited))
    assert len(attempts) == 4
    assert waited == pytest.approx([0.01, 0.03, 0.07])
    delays = Backoff(jitter=0.1).delays(random.Random(1))
    assert len(delays) == 4 and all(0.010 <= d <= 0.011 for d in delays)


def test_three_way_merge_patch() -> None:
    original = {"spec": {"replicas": 3, "paused": True}, "metadata": {"labels": {"a": "1"}}}
    modified = {"spec": {"replicas": 5}, "metadata": {"labels": {"a": "1"}}}
    current = {"spec": {"replicas": 3, "paused": True, "strategy": {"type": "RollingUpdate"}},
               "metadata": {"labels": {"a": "1"}, "uid": "x"}, "status": {"replicas": 3}}
    # replicas changes, paused (removed from the file) is deleted, what others set stays.
    assert three_way_merge_patch(original, modified, current) == {
        "spec": {"replicas": 5, "paused": None}}
    assert three_way_merge_patch(modified, modified, {**current, "spec": {"replicas": 5}}) == {}
    # Lists are replaced whole (a JSON merge patch).
    assert three_way_merge_patch({}, {"a": [1, 2]}, {"a": [1]}) == {"a": [1, 2]}


@pytest.mark.parametrize(("seconds", "text"), [
    (-5, "<invalid>"), (-0.5, "0s"), (0, "0s"), (119, "119s"), (120, "2m"), (200, "3m20s"),
    (600, "10m"), (3 * 3600 - 1, "179m"), (3 * 3600, "3h"), (3 * 3600 + 60, "3h1m"),
    (8 * 3600, "8h"), (47 * 3600, "47h"), (48 * 3600, "2d"), (50 * 3600, "2d2h"),
    (8 * 86400, "8d"), (800 * 86400, "2y70d"), (9 * 365 * 86400, "9y"),
])
def test_human_duration_matches_apimachinery(seconds: float, text: str) -> None:
    assert human_duration(seconds) == text
