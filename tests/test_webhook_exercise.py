"""Exercise 8.3: the reference webhook passes every check, the stub none, and each wrong
webhook or configuration fails exactly the checks that catch it (run in-process, as
tests/test_service_exercises.py does; tests/test_grading_* cover the sandbox)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from kubelab.grading.context import CheckContext, CheckFailed
from kubelab.grading.exercises import checks_for, exercise, load_checks

ROOT = Path(__file__).resolve().parent.parent
SOLUTION_TEXT = (ROOT / "solutions" / "ex08_operators.py").read_text()
CHECKS = {"refuses_unpinned_images_in_kube_apiservers_words",
          "answers_with_the_requests_uid_on_create_and_update",
          "a_hung_webhook_fails_closed_within_three_seconds", "recovers_from_its_own_outage"}


def load(text: str, name: str) -> ModuleType:
    path = Path(__import__("tempfile").mkdtemp()) / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def verdicts(cls: Any) -> dict[str, bool]:
    load_checks()
    out = {}
    for chk in checks_for("8.3"):
        try:
            for seed in chk.seeds:
                chk.fn(CheckContext(exercise("8.3"), chk, seed, SimpleNamespace(target=cls)))
            out[chk.name] = True
        except (CheckFailed, NotImplementedError):
            out[chk.name] = False
    return out


def variant(*edits: tuple[str, str]) -> Any:
    text = SOLUTION_TEXT
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    return load(text, "ex08_variant").ImagePolicyWebhook


def test_the_reference_passes_every_check_and_the_stub_none() -> None:
    reference = load(SOLUTION_TEXT, "ex08_solution").ImagePolicyWebhook
    assert verdicts(reference) == dict.fromkeys(CHECKS, True)
    stub = load((ROOT / "exercises" / "ex08_operators.py").read_text(), "ex08_stub").ImagePolicyWebhook
    assert verdicts(stub) == dict.fromkeys(CHECKS, False)


WRONG = {
    # only the containers: an unpinned init container slips through
    "no-init-containers": ((
        '[*(spec.get("initContainers") or []), *(spec.get("containers") or [])]',
        '[*(spec.get("containers") or [])]'),),
    # a new uid: the API server refuses the answer, and fails closed on every pod
    "wrong-uid": (('"uid": request.get("uid", "")', '"uid": "made-up"'),),
    # the default timeout: a hung webhook makes each create wait 10 s
    "default-timeout": (('"timeoutSeconds": 3,', ""),),
    # fail open: a hung or dead webhook lets everything in
    "ignore": (('"failurePolicy": "Fail"', '"failurePolicy": "Ignore"'),),
    # every namespace: the webhook's own pods cannot come back while it is down
    "no-namespace-selector": (('"namespaceSelector": {"matchExpressions": [\n'
                               '                    {"key": "kubelab.dev/webhook", "operator": "NotIn", '
                               '"values": ["exempt"]}]},', ""),),
}
CAUGHT = {
    "no-init-containers": {"refuses_unpinned_images_in_kube_apiservers_words"},
    "wrong-uid": CHECKS - {"a_hung_webhook_fails_closed_within_three_seconds"},
    "default-timeout": {"a_hung_webhook_fails_closed_within_three_seconds"},
    "ignore": {"a_hung_webhook_fails_closed_within_three_seconds", "recovers_from_its_own_outage"},
    "no-namespace-selector": {"recovers_from_its_own_outage"},
}


@pytest.mark.parametrize("name", sorted(WRONG))
def test_each_wrong_webhook_fails_exactly_the_checks_that_catch_it(name: str) -> None:
    got = verdicts(variant(*WRONG[name]))
    assert {check for check, ok in got.items() if not ok} == CAUGHT[name]
