"""kubectl's printers: ages as apimachinery's duration.HumanDuration prints them."""

from __future__ import annotations

import pytest

from kubelab.api.duration import human_duration
from kubelab.apiserver.printers.internalversion import add_handlers
from kubelab.apiserver.printers.tablegenerator import TableGenerator

YEAR, DAY = 365 * 86400, 86400


@pytest.mark.parametrize(("seconds", "text"), [
    (2 * YEAR, "2y"), (2 * YEAR + 3 * DAY, "2y3d"), (7 * YEAR, "7y"), (8 * YEAR + 5 * DAY, "8y"),
    (2 * YEAR - DAY, "729d"),
])
def test_years_print_without_a_zero_day_count(seconds: float, text: str) -> None:
    assert human_duration(seconds) == text


def test_a_node_whose_ready_condition_is_not_true_prints_not_ready() -> None:
    def node(conditions: list[dict[str, str]], unschedulable: bool = False) -> dict[str, object]:
        return {"metadata": {"name": "n1", "creationTimestamp": "2025-01-01T00:00:00Z"},
                "spec": {"unschedulable": unschedulable}, "status": {"conditions": conditions}}

    def status(n: dict[str, object]) -> str:
        return str(TableGenerator().with_handlers(add_handlers).generate_table("nodes", n, 60)
                   ["rows"][0]["cells"][1])

    assert status(node([{"type": "Ready", "status": "True"}])) == "Ready"
    assert status(node([{"type": "Ready", "status": "Unknown"}])) == "NotReady"  # printNode's rule
    assert status(node([{"type": "Ready", "status": "False"}], unschedulable=True)) == \
        "NotReady,SchedulingDisabled"
    assert status(node([])) == "Unknown"  # no Ready condition at all
