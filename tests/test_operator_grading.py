"""Exercises 8.1 and 8.2: the reference solution earns every point, the stub none, and each
deliberately wrong solution loses exactly the checks it breaks, with a message that says why
(the efficiency budget's report names the requests the reconcile sent)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubelab.grading import Report, grade

ROOT = Path(__file__).resolve().parent.parent
SOLUTION = (ROOT / "solutions" / "ex08_operators.py").read_text()


def variant(*edits: tuple[str, str]) -> str:
    text = SOLUTION
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


WRONG = {
    # writes status on every reconcile, changed or not
    "writes-every-time": variant(("    if status != old:\n        client.update_status",
                                  "    if True:\n        client.update_status")),
    # asks the API server for the Deployment instead of the cache
    "lists": variant(('    deployment = cache.get("deployments", name, namespace)\n',
                      '    found = client.list("deployments", namespace)["items"]\n'
                      '    deployment = next((d for d in found if d["metadata"]["name"] == name), None)\n')),
    # remembers what it created: a deleted Deployment, or one lost in a crash, is never made again
    "remembers": variant(("def reconcile_website(", "CREATED = set()\n\n\ndef reconcile_website("),
                         ("    if deployment is None:\n        desired",
                          "    if deployment is None and name not in CREATED:\n        CREATED.add(name)\n"
                          "        desired"),
                         ("        client.create(desired)\n    else:", "        client.create(desired)\n"
                          "    elif deployment is not None:")),
    # removes the finalizer before it releases: a down ledger leaks the lock
    "finalizer-first": variant(("            ledger.release_lock(book, holder)\n"
                                "            updated = deep_copy(lock)\n"
                                "            remove_finalizer(updated, FINALIZER)\n"
                                "            client.update(updated)\n",
                                "            updated = deep_copy(lock)\n"
                                "            remove_finalizer(updated, FINALIZER)\n"
                                "            client.update(updated)\n"
                                "            ledger.release_lock(book, holder)\n")),
}


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Report]:
    out = {}
    stub = (ROOT / "exercises" / "ex08_operators.py").read_text()
    nothing = "\n".join(line.split("raise NotImplementedError")[0] + "return None"
                        if "raise NotImplementedError(" in line else line for line in stub.splitlines())
    for name, text in {**WRONG, "reference": SOLUTION, "stub": stub, "does-nothing": nothing}.items():
        folder = tmp_path_factory.mktemp(name)
        (folder / "ex08_operators.py").write_text(text)
        out[name] = grade("8", submission=folder, jobs=2)
    return out


def passed(report: Report, exercise: str) -> set[str]:
    ex = next(e for e in report.exercises if e.exercise.id == exercise)
    return {c.check for c in ex.checks if c.passed}


def failed_messages(report: Report, exercise: str) -> str:
    ex = next(e for e in report.exercises if e.exercise.id == exercise)
    return "\n".join(f"{c.message} {c.expected} {c.got}" for c in ex.checks if not c.passed)


WEBSITE = {"creates_an_owned_deployment_and_reports_ready", "follows_concurrent_spec_edits",
           "survives_crashes_lost_events_and_a_deleted_child", "stays_within_the_request_budget"}
LOCK = {"holds_and_releases_the_lock", "waits_for_a_ledger_that_is_down",
        "released_once_when_deletion_and_a_crash_race"}


def test_the_reference_earns_everything_and_the_stub_nothing(reports: dict[str, Report]) -> None:
    assert passed(reports["reference"], "8.1") == WEBSITE and passed(reports["reference"], "8.2") == LOCK
    for student in ("stub", "does-nothing"):
        assert passed(reports[student], "8.1") == set() and passed(reports[student], "8.2") == set()


@pytest.mark.parametrize(("student", "exercise", "lost", "message"), [
    ("writes-every-time", "8.1", {"stays_within_the_request_budget"},
     "a reconcile with nothing to change sent requests"),
    ("lists", "8.1", {"stays_within_the_request_budget"}, "list deployments default"),
    ("remembers", "8.1", {"survives_crashes_lost_events_and_a_deleted_child"}, "no Deployment shop"),
    ("finalizer-first", "8.2",
     {"waits_for_a_ledger_that_is_down", "released_once_when_deletion_and_a_crash_race"},
     "the LedgerLock was deleted while the ledger was down"),
])
def test_a_wrong_solution_loses_what_it_breaks(reports: dict[str, Report], student: str, exercise: str,
                                               lost: set[str], message: str) -> None:
    everything = WEBSITE if exercise == "8.1" else LOCK
    assert passed(reports[student], exercise) == everything - lost
    assert message in failed_messages(reports[student], exercise)
