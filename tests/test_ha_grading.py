"""Exercise 7.1's checks fail realistic wrong versions of try_acquire_or_renew, each on the
property it breaks, and pass the reference solution."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubelab.grading import Report, grade_class

ROOT = Path(__file__).resolve().parent.parent
CHECKS = {"acquires_a_free_lease", "renews_its_own_lease", "waits_out_a_held_lease_by_its_own_clock",
          "one_leader_at_a_time", "a_new_leader_after_the_holder_dies"}
HELD = "    if old.holder_identity and le.is_lease_valid(now) and not le.is_leader():\n"


def variant(*edits: tuple[str, str]) -> str:
    text = (ROOT / "solutions" / "ex07_ha.py").read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


# student -> (source, the checks it must fail)
STUDENTS = {
    "reference": (variant(), set()),
    # Trusts the holder's clock: an hour-fast renewTime keeps it waiting forever.
    "trusts-renew-time": (variant((HELD, "    if old.holder_identity and old.renew_time + "
                                         "old.lease_duration_seconds > now and not le.is_leader():\n")),
                          {"waits_out_a_held_lease_by_its_own_clock"}),
    # Takes any lease, held or not.
    "ignores-the-holder": (variant((HELD, "    if False:\n")),
                           {"waits_out_a_held_lease_by_its_own_clock", "one_leader_at_a_time",
                            "a_new_leader_after_the_holder_dies"}),
    # Never restarts its countdown when the record changes: a renewed lease looks expired.
    "never-observes": (variant(("    if raw != le.observed_raw_record:\n"
                                "        le.set_observed_record(old, raw)\n", "")),
                       {"waits_out_a_held_lease_by_its_own_clock", "one_leader_at_a_time",
                        "a_new_leader_after_the_holder_dies"}),
    # Waits for a lease to be released, never for it to expire (one_leader_at_a_time also
    # wants a leader once the faults heal).
    "never-takes-over": (variant((HELD, "    if old.holder_identity and not le.is_leader():\n")),
                         {"waits_out_a_held_lease_by_its_own_clock", "one_leader_at_a_time",
                          "a_new_leader_after_the_holder_dies"}),
    # Forgets to count the transition.
    "no-transitions": (variant(("        record.leader_transitions = old.leader_transitions + 1\n",
                                "        record.leader_transitions = old.leader_transitions\n")),
                       {"acquires_a_free_lease", "waits_out_a_held_lease_by_its_own_clock"}),
    # Always reads first: correct, but two requests per renewal instead of upstream's one.
    "no-fast-path": (variant(("    if le.is_leader() and le.is_lease_valid(now):\n",
                              "    if False:\n")),
                     {"renews_its_own_lease"}),
}


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Report]:
    root = tmp_path_factory.mktemp("ha-class")
    for student, (text, _fails) in STUDENTS.items():
        (root / student).mkdir()
        (root / student / "ex07_ha.py").write_text(text)
    return {r.name: r for r in grade_class(root, None, ["7.1"])}


@pytest.mark.parametrize("student", sorted(STUDENTS))
def test_each_wrong_version_fails_the_checks_of_what_it_breaks(reports: dict[str, Report],
                                                               student: str) -> None:
    [exercise] = reports[student].exercises
    failed = {c.check for c in exercise.checks if not c.passed}
    assert {c.check for c in exercise.checks} == CHECKS
    assert not [c for c in exercise.checks if c.status == "error"], "the grader failed"
    assert failed == STUDENTS[student][1]
    safety = next(c for c in exercise.checks if c.check == "one_leader_at_a_time")
    if student in ("ignores-the-holder", "never-observes"):  # safety, not liveness, is broken
        assert safety.message == "two candidates led at the same time"
        assert "started leading while" in (safety.got or "")
