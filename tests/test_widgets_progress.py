"""RunProgress: simulated time and pods Running, as a widget, tqdm's bar or a line."""

from __future__ import annotations

import io

import pytest

from kubelab.widgets.progress import RunProgress, in_notebook


def test_a_line_per_update_says_simulated_time_and_pods_running() -> None:
    out = io.StringIO()
    progress = RunProgress(300, "storm", mode="line", stream=out)
    progress.update(12.0, 100)
    progress.update(25.0, 300)
    progress.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("storm: t=12 s simulated · 100 of 300 pods Running · ")
    assert "t=25 s simulated · 300 of 300 pods Running" in lines[1] and "sim s/s" in lines[1]


def test_the_widget_bar_counts_pods_running() -> None:
    progress = RunProgress(50, "rollout", mode="widget")
    progress.update(5.0, 20)
    bar, label = progress.widget.children
    assert (bar.value, bar.max) == (20, 50)
    assert "20 of 50 pods Running" in label.value
    progress.update(10.0, 50)
    progress.close()
    assert bar.bar_style == "success"


def test_outside_a_kernel_there_is_no_widget_and_a_bad_mode_is_refused() -> None:
    assert in_notebook() is False
    with pytest.raises(ValueError, match='mode must be "widget", "tqdm" or "line"'):
        RunProgress(1, mode="gauge")
