"""Exercise 10.1 (a fair queue): the reference solution scores 10, and each realistic mistake
loses the checks it should: a global FIFO, one queue per flow, seats not counted, an idle
queue not reset to the current virtual time, a 429 while seats are free (issue 28)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubelab.grading import Report, grade_class

ROOT = Path(__file__).resolve().parent.parent
SOLUTION = (ROOT / "solutions" / "ex10_scale.py").read_text()


def variant(*edits: tuple[str, str]) -> str:
    text = SOLUTION
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


STUDENTS = {
    "honest": SOLUTION,
    # the oldest request overall goes first (the replay's ids count arrivals): no fairness
    "fifo": variant(("""            best = min(candidates, key=lambda i: self.queues[i].virtual_start
                       + self.queues[i].waiting[0][1] * SERVICE_ESTIMATE)""",
                     """            best = min(candidates, key=lambda i: int("0" + "".join(
                ch for ch in self.queues[i].waiting[0][0] if ch.isdigit())))""")),
    # no shuffle sharding: a flow has one queue, hash modulo the queues
    "one-queue": variant(("""        deck = len(self.queues)
        digits = []""", """        return [hash_value % len(self.queues)]
        deck = len(self.queues)
        digits = []""")),
    # seats are not counted: everything waiting starts at once
    "ignores-seats": variant(
        ("            fits = self.seats_in_use + seats <= self.concurrency_limit or \\",
         "            fits = True or \\")),
    # an idle queue keeps its old virtual start: credit for idling (queueset.go
    # enqueueToBoundLocked sets nextDispatchR = currentR)
    "no-idle-reset": variant(("""        if not queue.waiting and not queue.executing:
            queue.virtual_start = max(queue.virtual_start, self.virtual_time)
""", "")),
    # a full queue refuses although seats are free (rejectOrEnqueueToBoundLocked asks both)
    "rejects-with-seats-free": variant(("""        if self.seats_in_use >= self.concurrency_limit and \\
                len(queue.waiting) >= self.queue_length_limit:""",
                                        """        if len(queue.waiting) >= self.queue_length_limit:""")),
}


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Report]:
    root = tmp_path_factory.mktemp("class")
    for student, text in STUDENTS.items():
        (root / student).mkdir()
        (root / student / "ex10_scale.py").write_text(text)
    return {r.name: r for r in grade_class(root, root / "grades.csv", ["10.1"], timeout=30.0)}


def passed(report: Report) -> set[str]:
    ex = next(e for e in report.exercises if e.exercise.id == "10.1")
    return {c.check for c in ex.checks if c.passed}


def test_the_reference_solution_scores_every_point(reports: dict[str, Report]) -> None:
    ex = next(e for e in reports["honest"].exercises if e.exercise.id == "10.1")
    assert ex.points == 10 and {c.check for c in ex.checks} == ALL


ALL = {"deals_hands_as_upstream", "spreads_a_flow_over_its_hand", "rejects_only_when_every_seat_is_busy",
       "keeps_to_the_seats", "an_idle_queue_gets_no_credit", "a_flood_takes_only_what_the_others_leave"}


@pytest.mark.parametrize(("student", "keeps"), [
    ("fifo", {"deals_hands_as_upstream", "spreads_a_flow_over_its_hand", "keeps_to_the_seats",
              "rejects_only_when_every_seat_is_busy"}),
    ("one-queue", {"keeps_to_the_seats", "rejects_only_when_every_seat_is_busy",
                   "an_idle_queue_gets_no_credit"}),
    ("ignores-seats", {"deals_hands_as_upstream", "rejects_only_when_every_seat_is_busy"}),
    ("no-idle-reset", ALL - {"an_idle_queue_gets_no_credit"}),
    ("rejects-with-seats-free", ALL - {"rejects_only_when_every_seat_is_busy"}),
])
def test_a_wrong_fair_queue_loses_what_it_breaks(reports: dict[str, Report], student: str,
                                                  keeps: set[str]) -> None:
    assert passed(reports[student]) == keeps

