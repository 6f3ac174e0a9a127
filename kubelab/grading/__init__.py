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

1. The grader (grader.py, jobs.py: the `kubelab grade` command, or your notebook) reads each
   submission file once (source.py), decides the points and writes the gradebook. It never
   imports submission code.
2. One grading process per exercise and submission (runner.py) runs kubelab's checks: real
   simulated clusters, faults included. It never imports submission code either. It is PID 1
   of its own user, PID, mount and network namespaces (contain.py), non-dumpable from its first
   line, and without any capability once its zygote (zygote.py) is confined. The checks, an
   instructor's hidden ones included, run here and nowhere else.
3. One sandbox per check (sandbox.py, forked from the zygote) runs the learner's module and
   does nothing but answer the grading process's calls (rpc.py): "here is a pod and a node,
   filter it", "give me the next key". Limits on CPU time, memory and output size are set
   before the submission loads.

What a sandbox contains, and nothing else:

- the submission's folder;
- the Python runtime: the interpreter's prefix, site-packages (any kubelab install in it, and
  the editable-install hook that maps kubelab to the repository, covered), the shared
  libraries, /dev/null, /dev/zero, /dev/urandom;
- the sandbox's kubelab (prune.py): kubelab without the modules the exercise asks the learner
  to write, without every module that imports one of them, and without the grader but the
  five modules a sandbox runs (sandbox, zygote, rpc, remote, pipe): no checks, no registry.

The zygote is a fresh interpreter (`python -I -S`, its search path only that kubelab and the
runtime), not a fork of the grading process, so nothing the grading process loaded is in its
memory; in a contained grading process it runs in a mount namespace of its own whose root is a
tmpfs holding only the binds above (contain.confine: pivot_root, the old root detached, then no
capabilities). No repository, no solutions/, no hidden checks, no other student, no /proc.

Threats, and what stops each:

- Forged verdicts. The grading process makes itself non-dumpable before it has received
  anything; it then hands the grader, over the socket it inherited, a socket it created after
  that, and the grader checks with SO_PEERCRED that the runner's own session made it. The job
  (with its random nonce) and the verdicts travel only on that socket: nothing a process of the
  same user can open through /proc/PID/fd (sockets cannot be opened there, the process cannot
  be ptraced), and never on stdout. The grader keeps only lines with the job's nonce, for checks
  it asked for, once each, and takes the points from its own registry.
- Escaping children, and one student reaching another. When PID 1 of a namespace dies, the
  kernel kills everything in it: a double fork or setsid does not escape, and after each check
  the grading process kills whatever the sandbox left behind. A process inside sees, and can
  signal, only its own namespace's processes, and its /proc lists only those. PID namespaces
  were chosen over cgroups because `unshare --user` needs no set-up and works the same as root
  and as a normal user (cgroup v2 needs a delegated subtree); where it is unavailable, every
  report carries a note and the grader falls back to a process-group kill and a parent-death
  signal, which a double fork escapes. Inside its namespace the filesystem is read-only (the
  sandbox's working directory, on a private tmpfs, is the one writable place): a submission
  cannot change another student's files, the course or the gradebook. The grader reads every
  submission file before the first grading process starts, so what each student handed in is
  what is graded. The gradebook is
  written only from the grader's own verdicts, after every grading process has ended, by
  renaming complete files into place.
- Monkeypatching kubelab, the checks or sys.modules, replacing builtins, import-time tricks:
  they happen inside the sandbox, where no check runs. The checks' clusters live in the grading
  process; the submission only sees the objects a check hands it, through a Policy (shared.py)
  that allows their public methods (store.txn, client.create, ...) and never attributes such
  as client.api or anything starting with "_". Its answers are data or references to its own
  objects; records cross by value from a fixed list (remote.VALUE_TYPES), never by pickle.
- Reaching the reference. It is not in the sandbox: not in its memory, not in its filesystem
  (above), so walking gc, sys.modules or every file, with ctypes, os.open(..., dir_fd=...) or
  fork + execv, finds nothing to copy (tests/test_grading_isolation.py walks all three). A
  static look at the file (parsed once) refuses literal imports of the modules the exercise
  asks the learner to write (Exercise.forbidden_imports), and a finder in the sandbox says why
  an import of one fails however the name is spelt. The grader refuses a submission file that
  is a symbolic link or resolves outside the submission folder.
- Hidden checks: they run only in the grading process, the sandbox's filesystem does not have
  their folder, and a check's traceback in a report leaves out their frames.
- Checks that reward doing nothing: every check fails the honest stub (exercises/) and a
  submission whose every function returns None (tests/test_grading_submissions.py).
- Unbounded input: a file over source.MAX_SOURCE (512 KiB) is refused as too large; the one
  parse runs in a child process with a CPU and a memory limit. An exception's message is cut
  at remote.MESSAGE_LIMIT (2000 characters, marked "(cut)") in the sandbox and again in the
  grading process before its verdicts are sent, so a huge message cannot crowd out the
  exercise's other verdicts.
- Hostile text: what a submission says (its messages, its output) is shown by the text report
  with control characters, bidirectional overrides and lone surrogates escaped (\\x1b,
  \\u202e, \\udc80), each of its lines indented under its check, so it cannot rewrite the
  terminal or forge a verdict line (report.py). Student folder names reach a spreadsheet: the
  gradebook quotes every cell and puts a ' before one that starts with = + - @, a tab or a
  carriage return (OWASP's advice on CSV injection). A student folder that is a symbolic link,
  or whose name is not UTF-8, is not graded: it is reported, and the rest of the class is.
- os._exit(0), sys.exit, raising SystemExit or KeyboardInterrupt, killing itself: an exception
  is an answer (the check fails and says which exception); a dead sandbox fails the check with
  the exit status and the call it died in.
- Never returning, deadlocks, endless work: every call has the check's deadline (10 s by
  default), the check as a whole has an alarm, the grader kills the grading process's whole
  namespace after its budget, and a sandbox has an RLIMIT_CPU.
- Huge output: the output file is capped with RLIMIT_FSIZE; reaching the cap fails the check.
  Memory bombs: RLIMIT_AS (2 GiB).
- Syntax or import errors: only the sandbox sees them; every check of that exercise fails with
  the error and its line. Other exercises and other students are untouched (one process each).
- The grader's own failures (a check's scenario that breaks before the learner's code is used,
  its simulated rival writer): the verdict is "error", in the grader's words, never "fail".

Not covered: without the namespaces (the report's note says so), the sandbox still runs on
the sandbox's kubelab, but it sees every file the grading user can read (solutions/ and hidden
checks among them), can write them, and can signal that user's processes: grade untrusted code
only where the report has no such note. Its network is an empty namespace only where --net was
granted.
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
