"""Exercises 9.1 and 9.2: the reference solution passes every check, and wrong solutions fail
exactly the checks that catch them (run in-process here; tests/test_grading_* cover the sandbox)."""

from __future__ import annotations

import copy
import importlib.util
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from kubelab.grading.context import CheckContext, CheckFailed
from kubelab.grading.exercises import checks_for, exercise, load_checks

ROOT = Path(__file__).resolve().parent.parent


def solution() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ex09_solution", ROOT / "solutions" / "ex09_services.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def verdicts(exercise_id: str, fn: Any) -> dict[str, bool]:
    load_checks()
    out = {}
    for chk in checks_for(exercise_id):
        try:
            for seed in chk.seeds:
                chk.fn(CheckContext(exercise(exercise_id), chk, seed, SimpleNamespace(target=fn)))
            out[chk.name] = True
        except CheckFailed:
            out[chk.name] = False
    return out


SOLUTION = solution()


def test_the_ladder_solution_passes() -> None:
    assert all(verdicts("9.2", SOLUTION.service_to_endpoint_rules).values())


def one_over_n(name: str, chain: str, endpoints: list[tuple[str, str]]) -> list[str]:
    """The classic mistake: every rule matches 1/n, so later endpoints get more."""
    n = len(endpoints)
    return [f'-A {chain} -m comment --comment "{name} -> {e}"'
            + (f" -m statistic --mode random --probability {1 / n:0.10f}" if i < n - 1 else "")
            + f" -j {sep}" for i, (e, sep) in enumerate(endpoints)]


def short_decimals(name: str, chain: str, endpoints: list[tuple[str, str]]) -> list[str]:
    return [line.replace("0.3333333333", "0.33") for line in
            SOLUTION.service_to_endpoint_rules(name, chain, endpoints)]


@pytest.mark.parametrize(("fn", "passed"), [
    (one_over_n, {"one_rule_per_endpoint"}),
    (short_decimals, {"one_rule_per_endpoint", "every_endpoint_gets_an_equal_share"}),
])
def test_wrong_ladders_fail(fn: Any, passed: set[str]) -> None:
    got = verdicts("9.2", fn)
    assert {name for name, ok in got.items() if ok} == passed


def test_the_reconcile_solution_passes() -> None:
    assert all(verdicts("9.1", SOLUTION.reconcile_endpoint_slices).values())


def ignores_terminating(service: Any, pods: list[Any], slices: list[Any], max_endpoints: int = 100) -> Any:
    """Leaves terminating pods out (the pre-1.26 Endpoints behaviour)."""
    live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
    return SOLUTION.reconcile_endpoint_slices(service, live, slices, max_endpoints)


def rewrites_everything(service: Any, pods: list[Any], slices: list[Any], max_endpoints: int = 100) -> Any:
    """Correct slices, maximal churn: delete every slice and create new ones each time."""
    plan = SOLUTION.reconcile_endpoint_slices(service, pods, [], max_endpoints)
    return {"create": plan["create"], "update": [], "delete": copy.deepcopy(slices)}


def one_big_slice(service: Any, pods: list[Any], slices: list[Any], max_endpoints: int = 100) -> Any:
    return SOLUTION.reconcile_endpoint_slices(service, pods, slices, 10_000)


@pytest.mark.parametrize(("fn", "failed"), [
    (ignores_terminating, {"endpoints_carry_the_conditions"}),
    (rewrites_everything, {"writes_as_little_as_it_can", "converges_under_churn_with_a_write_budget"}),
    (one_big_slice, {"at_most_max_endpoints_per_slice"}),
])
def test_wrong_reconciles_fail(fn: Any, failed: set[str]) -> None:
    got = verdicts("9.1", fn)
    assert {name for name, ok in got.items() if not ok} == failed
