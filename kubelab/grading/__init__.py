"""Graded exercises: release exercises/ from solutions/, and grade submissions.

    from kubelab.grading import grade
    grade("1.1")                      # your exercises/ folder, one exercise; print the report
    grade()                           # every exercise
    grade_class("submissions/", out="grades.csv")   # a class: one folder per student

The same from a shell: `kubelab grade 1.1`, `kubelab grade`, `kubelab grade --class
submissions/ --out grades.csv`, `kubelab release [--check]`.

How a grade is made (and why a submission cannot give itself one)
------------------------------------------------------------------
Three kinds of process take part:

1. The grader (grader.py: the `kubelab grade` command, or your notebook) decides the points. It
   never imports submission code.
2. One grading process per exercise and submission (runner.py) runs kubelab's checks: real
   simulated clusters, faults included. It never imports submission code either. Before it
   reads its job it forks a zygote (zygote.py), a warm process holding nothing secret, then
   makes itself non-dumpable: another process of the same user cannot read its memory or open
   its pipes through /proc.
3. One sandbox per check (sandbox.py, forked from the zygote) imports the learner's module and
   does nothing but answer the grading process's calls (rpc.py): "here is a pod and a node,
   filter it", "give me the next key". Limits on CPU time, memory and output size are set
   before the submission loads.

Threats, and what stops each:

- Printing fake results, or writing them to any pipe it can find: the sandbox's stdout and
  stderr go to a capped file that is only ever shown to the learner. The grader reads verdicts
  only from the grading process, keeps only lines carrying that job's random nonce (which never
  enters a sandbox or the zygote) for checks it asked for, once each, and takes the points from
  its own registry. A line written into a grading process's pipe can at worst spoil that
  submission's own run.
- Monkeypatching kubelab, the checks or sys.modules, replacing builtins, import-time tricks:
  they happen inside the sandbox, where no check runs. The checks' clusters live in the grading
  process; the submission only sees the objects a check hands it, through a Policy (shared.py)
  that allows their public methods (store.txn, client.create, ...) and never attributes such
  as client.api or anything starting with "_". Its answers are data or references to its own
  objects; records cross by value from a fixed list (remote.VALUE_TYPES), never by pickle.
- os._exit(0), sys.exit, raising SystemExit or KeyboardInterrupt, killing itself: an exception
  is an answer (the check fails and says which exception); a dead sandbox fails the check with
  the exit status and the call it died in.
- Never returning, deadlocks, endless work: every call has the check's deadline (10 s by
  default), the check as a whole has an alarm, the grader kills the grading process's whole
  session after its budget, and a sandbox has an RLIMIT_CPU and dies with its parent.
- Huge output: the output file is capped with RLIMIT_FSIZE; reaching the cap fails the check.
  Memory bombs: RLIMIT_AS (2 GiB).
- Syntax or import errors: only the sandbox sees them; every check of that exercise fails with
  the error and its line. Other exercises and other students are untouched (one process each).
- Importing kubelab's own implementation of what the exercise asks for: refused by a static
  look at the file (Exercise.forbidden_imports). This catches honest shortcuts; reading
  reference code from disk by other means is plagiarism, not a grader exploit: grade classes
  from an installation without solutions/ (the kubelab package ships none) and compare
  submissions if that matters.

Not covered (use operating-system isolation to grade code you do not trust at all, e.g. a
container per class and an unprivileged user): a submission is an ordinary process of the user
running the grader, so it can read and write that user's files, use the network, and signal
processes it can find. Run as root it can also read the grading process's memory (and so its
nonce): never grade untrusted code as root.
"""

from kubelab.grading.context import CheckContext, CheckFailed
from kubelab.grading.exercises import EXERCISES, Check, Exercise, check, checks_for, load_checks
from kubelab.grading.grader import find_exercises_dir, grade, grade_class
from kubelab.grading.release import ReleaseError, release
from kubelab.grading.report import CheckResult, ExerciseResult, Report

__all__ = [
    "EXERCISES",
    "Check",
    "CheckContext",
    "CheckFailed",
    "CheckResult",
    "Exercise",
    "ExerciseResult",
    "ReleaseError",
    "Report",
    "check",
    "checks_for",
    "find_exercises_dir",
    "grade",
    "grade_class",
    "load_checks",
    "release",
]
