"""What a check is handed: the learner's object, the seed, and ways to say what went wrong.

A check builds a small scenario on a real simulated Cluster, plugs the learner's code in, runs
it (with faults where the contract promises to survive them), and compares what the cluster
shows with what the contract says, in Kubernetes' terms:

    @check("1.1", points=4, seeds=(1, 2, 3))
    def survives_conflicting_writers(ctx):
        c = ctx.cluster(nodes=0)
        ...
        if got != expected:
            ctx.fail("updates were lost", expected=f"data.count = {expected}", got=f"data.count = {got}")
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn

from kubelab.grading.remote import Proxy

if TYPE_CHECKING:
    from kubelab.cluster import Cluster
    from kubelab.grading.exercises import Check, Exercise

__all__ = ["CheckContext", "CheckFailed", "with_unit"]


class CheckFailed(Exception):
    """The submission broke the contract. expected/got say how, in Kubernetes' terms."""

    def __init__(self, message: str, *, expected: Any = None, got: Any = None,
                 hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.expected = None if expected is None else str(expected)
        self.got = None if got is None else str(got)
        self.hint = hint


class CheckContext:
    def __init__(self, exercise: Exercise, check: Check, seed: int, root: Proxy) -> None:
        self.exercise = exercise
        self.check = check
        self.seed = seed
        self._root = root
        self.clusters: list[Cluster] = []

    @property
    def learner(self) -> Any:
        """The learner's function or class (a proxy: calling it runs their code)."""
        return self._root.target

    def invoke(self, fn: Any, *args: Any, **kwargs: Any) -> tuple[Any, list[Any]]:
        """Call the learner's fn and also get back its arguments as the call left them
        (for code that changes its arguments in place: they cross the wire as copies)."""
        result, after = self._root.invoke(fn, list(args), kwargs)
        return result, list(after)

    def cluster(self, **kwargs: Any) -> Cluster:
        """A fresh simulated Cluster seeded with this run's seed; its trace goes into the report
        when the check fails."""
        from kubelab.cluster import Cluster

        kwargs.setdefault("seed", self.seed)
        c = Cluster(**kwargs)
        self.clusters.append(c)
        return c

    def fail(self, message: str, *, expected: Any = None, got: Any = None,
             hint: str | None = None) -> NoReturn:
        raise CheckFailed(message, expected=expected, got=got, hint=hint)

    def expect_equal(self, got: Any, expected: Any, message: str, *, unit: str = "",
                     hint: str | None = None) -> None:
        """Fail unless got == expected. unit names what the values count or are, so that the
        report's expected/got lines say it: "3 LIST(s)", "data.count = 12" (kubelab's own
        checks always name one)."""
        if got != expected:
            self.fail(message, expected=with_unit(expected, unit), got=with_unit(got, unit), hint=hint)


def with_unit(value: Any, unit: str) -> str:
    """12 and "LIST(s)" -> "12 LIST(s)"; 12 and "data.count =" -> "data.count = 12";
    [10.0, 20.0] and "seconds" -> "seconds: [10.0, 20.0]"."""
    if not unit:
        return str(value)
    if unit.endswith("="):
        return f"{unit} {value!r}" if isinstance(value, str) else f"{unit} {value}"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value:g} {unit}" if isinstance(value, float) else f"{value} {unit}"
    return f"{unit}: {value}"
