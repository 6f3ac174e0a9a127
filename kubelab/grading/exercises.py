"""The exercises and their checks: one id everywhere (exercise 4.1 lives in notebook 04, in
exercises/ex04_scheduler.py, and is graded by `kubelab grade 4.1`).

The grader reads what an exercise is worth, and how it is checked, only from here and from
kubelab.grading.checks (plus an instructor's --checks folder): never from a submission.
Solutions repeat the title, section, difficulty and points in their docstrings for the learner;
tests/test_grading_release.py keeps the two in step.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kubelab.grading.context import CheckContext

__all__ = [
    "EXERCISES",
    "Check",
    "Exercise",
    "check",
    "checks_for",
    "exercise",
    "load_checks",
]

DIFFICULTIES = ("easy", "medium", "hard")


@dataclass(frozen=True)
class Exercise:
    id: str          # "1.1": notebook 01, first exercise
    title: str
    module: str      # file name in exercises/ and solutions/, without .py
    symbol: str      # the function or class the learner writes
    notebook: str    # the lesson that teaches it, e.g. "01_store"
    section: str     # the section of that lesson
    difficulty: str  # easy, medium or hard
    points: int      # what kubelab's own checks are worth together
    # kubelab modules that implement what the learner is asked to write: importing one fails
    # the exercise (a static look at the file; it stops honest shortcuts, not determined ones).
    forbidden_imports: tuple[str, ...] = ()


EXERCISES: dict[str, Exercise] = {e.id: e for e in (
    Exercise("1.1", "Compare-and-swap update with retry on conflict", "ex01_store", "cas_update",
             "01_store", "2. Two writers, one key: optimistic concurrency", "easy", 10,
             ("kubelab.client.retry",)),
    Exercise("1.2", "Resume a watch from a revision, relist after compaction", "ex01_store",
             "PrefixMirror", "01_store", "3. Watch and 4. Compaction", "medium", 10),
    Exercise("2.1", "Admission: require a team label", "ex02_apiserver", "RequireTeamLabel",
             "02_apiserver", "Admission", "easy", 10),
    Exercise("2.2", "Admission: default resource requests", "ex02_apiserver",
             "DefaultResourceRequests", "02_apiserver", "Admission", "medium", 10),
    Exercise("3.1", "The workqueue: add, get, done", "ex03_watch", "WorkQueue", "03_watch",
             "The workqueue", "medium", 10,
             ("kubelab.client.workqueue",)),
    Exercise("3.2", "A reflector that recovers from 410 Gone", "ex03_watch", "Reflector",
             "03_watch", "List and watch; 410 Gone and relist", "hard", 10,
             ("kubelab.client.reflector", "kubelab.client.shared_informer")),
    Exercise("4.1", "A Filter plugin: taints and tolerations", "ex04_scheduler", "TaintFilter",
             "04_scheduler", "Taints and tolerations", "medium", 10, ("kubelab.scheduler.plugins",)),
    Exercise("4.2", "A Score plugin: bin packing (MostAllocated)", "ex04_scheduler",
             "BinPackingScore", "04_scheduler", "Spreading vs bin packing", "medium", 10,
             ("kubelab.scheduler.plugins",)),
    Exercise("5.1", "ReplicaSet reconcile", "ex05_controllers", "sync_replica_set", "05_controllers",
             "Delete a pod, it comes back", "hard", 10, ("kubelab.controllers",)),
    Exercise("5.2", "One rolling-update step", "ex05_controllers", "rolling_update_step",
             "05_controllers", "A rolling update, step by step", "hard", 10, ("kubelab.controllers",)),
    Exercise("6.1", "Image pull back-off", "ex06_kubelet", "Backoff", "06_kubelet",
             "The 15-hour ImagePullBackOff", "medium", 10, ("kubelab.kubelet",)),
    Exercise("6.2", "A readiness probe", "ex06_kubelet", "ReadinessProbe", "06_kubelet",
             "Liveness vs readiness", "medium", 10, ("kubelab.kubelet",)),
    # --- trouble --- notebook 06b: troubleshooting (issue 32)
    Exercise("6.3", "Diagnose a broken cluster", "ex06b_troubleshooting", "diagnose",
             "06b_troubleshooting", "8. Your turn: diagnose a cluster you have not seen", "medium",
             10),
    # notebook 07: failures and high availability
    Exercise("7.1", "Acquire or renew a leader Lease", "ex07_ha", "try_acquire_or_renew",
             "07_failures_ha", "Leader election", "hard", 10,
             ("kubelab.client.leaderelection.leaderelection",)),
    Exercise("7.2", "Raft's vote and commit rules", "ex07_ha", "RaftRules", "07_failures_ha",
             "The etcd quorum", "hard", 10, ("kubelab.store.raft.rules",)),
    # notebook 08 (operators)
    Exercise("8.1", "Reconcile a Website", "ex08_operators", "reconcile_website", "08_operators",
             "3. Write the operator", "hard", 10, ("kubelab.controllers", "kubelab.samples")),
    Exercise("8.2", "A finalizer for an outside lock", "ex08_operators", "reconcile_ledger_lock",
             "08_operators", "5. Clean up outside the cluster: a finalizer", "medium", 10,
             ("kubelab.controllers", "kubelab.samples")),
    Exercise("8.3", "A validating webhook that survives its own outage", "ex08_operators",
             "ImagePolicyWebhook", "08_operators", "8. Admission webhooks: the API server calls out",
             "medium", 10, ("kubelab.samples",)),
    # Services (notebook 09)
    Exercise("9.1", "The EndpointSlice reconcile for one Service", "ex09_services",
             "reconcile_endpoint_slices", "09_services",
             "4. EndpointSlices: who is behind the Service", "hard", 10, ("kubelab.controllers",)),
    Exercise("9.2", "The KUBE-SVC probability ladder", "ex09_services", "service_to_endpoint_rules",
             "09_services", "5. kube-proxy's rules on one node", "medium", 10, ("kubelab.proxy",)),
    # notebook 10: scale
    Exercise("10.1", "A fair queue", "ex10_scale", "FairQueue", "10_scale",
             "A noisy tenant and API Priority and Fairness", "hard", 10,
             ("kubelab.apiserver.flowcontrol",)),
    # --- i31-hpa ---
    Exercise("10.2", "The HPA replica calculation", "ex10_scale", "calculate_replicas",
             "10_scale", "Autoscaling: metrics-server and the HPA", "medium", 10,
             ("kubelab.controllers.podautoscaler",)),
)}


@dataclass(frozen=True)
class Check:
    exercise: str
    name: str
    points: int
    fn: Callable[[CheckContext], None]
    hint: str = ""
    seeds: tuple[int, ...] = (1,)
    origin: str = "kubelab"  # or the instructor's file it came from


_CHECKS: dict[str, list[Check]] = {}
_LOADED_DIRS: set[str] = set()
_ID = re.compile(r"^\d+\.\d+$")


def check(exercise_id: str, *, points: int, hint: str = "", seeds: Iterable[int] = (1,)
          ) -> Callable[[Callable[[CheckContext], None]], Callable[[CheckContext], None]]:
    """Register a check: a function of a CheckContext that raises CheckFailed (or lets the
    submission's error through) when the submission misses the contract.

        @check("4.1", points=2, hint="A taint with effect NoExecute also keeps pods away.")
        def no_execute_taints_filter_too(ctx): ...
    """
    if exercise_id not in EXERCISES:
        raise ValueError(f"unknown exercise {exercise_id!r}; known: {', '.join(EXERCISES)}")
    if points < 0:
        raise ValueError(f"points must be >= 0, got {points}")
    seed_list = tuple(seeds)
    if not seed_list:
        raise ValueError("a check needs at least one seed")

    def register(fn: Callable[[CheckContext], None]) -> Callable[[CheckContext], None]:
        module = sys.modules.get(fn.__module__)
        origin = "kubelab" if fn.__module__.startswith("kubelab.") else \
            str(getattr(module, "__file__", fn.__module__))
        checks = _CHECKS.setdefault(exercise_id, [])
        if any(c.name == fn.__name__ for c in checks):
            raise ValueError(f"exercise {exercise_id} already has a check named {fn.__name__}")
        checks.append(Check(exercise_id, fn.__name__, points, fn, hint, seed_list, origin))
        return fn
    return register


def exercise(exercise_id: str) -> Exercise:
    if not _ID.match(exercise_id) or exercise_id not in EXERCISES:
        raise ValueError(f"no exercise {exercise_id!r}; exercises: {', '.join(EXERCISES)}")
    return EXERCISES[exercise_id]


def load_checks(extra_dirs: Iterable[str | Path] = ()) -> None:
    """Import kubelab's checks and every *.py in each instructor folder (once each)."""
    import kubelab.grading.checks  # noqa: F401 - registers the built-in checks

    for folder in extra_dirs:
        path = Path(folder).resolve()
        if str(path) in _LOADED_DIRS:
            continue
        if not path.is_dir():
            raise ValueError(f"--checks {folder}: no such directory")
        _LOADED_DIRS.add(str(path))
        for index, file in enumerate(sorted(path.glob("*.py"))):
            name = f"kubelab_extra_checks_{len(_LOADED_DIRS)}_{index}_{file.stem}"
            spec = importlib.util.spec_from_file_location(name, file)
            if spec is None or spec.loader is None:
                raise ValueError(f"cannot import checks from {file}")
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)


def checks_for(exercise_id: str) -> list[Check]:
    return list(_CHECKS.get(exercise_id, []))
