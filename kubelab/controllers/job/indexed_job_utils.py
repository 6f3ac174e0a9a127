"""completionMode: Indexed (kubernetes/kubernetes pkg/controller/job/indexed_job_utils.go).

Each pod gets an index 0..completions-1 in the annotation and label
batch.kubernetes.io/job-completion-index, a hostname `<job>-<index>`, and the variable
JOB_COMPLETION_INDEX. The Job succeeds when every index has one succeeded pod; status keeps the
succeeded indexes as an interval list, "1,3-5".
"""

from __future__ import annotations

from kubelab.api import Object

__all__ = ["COMPLETION_INDEX_ANNOTATION", "COMPLETION_INDEX_ENV", "format_indexes",
           "get_completion_index", "parse_indexes"]

COMPLETION_INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
COMPLETION_INDEX_ENV = "JOB_COMPLETION_INDEX"
UNKNOWN_COMPLETION_INDEX = -1


def get_completion_index(pod: Object) -> int:
    """getCompletionIndex: the pod's index, or -1 if it has none or a bad one."""
    value = (pod["metadata"].get("annotations") or {}).get(COMPLETION_INDEX_ANNOTATION)
    if value is None or not value.isdigit():
        return UNKNOWN_COMPLETION_INDEX
    return int(value)


def parse_indexes(text: str, completions: int) -> set[int]:
    """parseIndexesFromString: "1,3-5" -> {1, 3, 4, 5}, ignoring what is out of range."""
    out: set[int] = set()
    for part in filter(None, (text or "").split(",")):
        first, _, last = part.partition("-")
        if not first.isdigit() or (last and not last.isdigit()):
            continue
        out.update(i for i in range(int(first), int(last or first) + 1) if i < completions)
    return out


def format_indexes(indexes: set[int]) -> str:
    """orderedIntervals.String: sorted intervals, "0,2-4"."""
    parts, ordered = [], sorted(indexes)
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        parts.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(parts)
