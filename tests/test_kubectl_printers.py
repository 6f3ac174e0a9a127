"""kubectl's printers: ages as apimachinery's duration.HumanDuration prints them."""

from __future__ import annotations

import pytest

from kubelab.kubectl_printers import human_duration

YEAR, DAY = 365 * 86400, 86400


@pytest.mark.parametrize(("seconds", "text"), [
    (2 * YEAR, "2y"), (2 * YEAR + 3 * DAY, "2y3d"), (7 * YEAR, "7y"), (8 * YEAR + 5 * DAY, "8y"),
    (2 * YEAR - DAY, "729d"),
])
def test_years_print_without_a_zero_day_count(seconds: float, text: str) -> None:
    assert human_duration(seconds) == text
