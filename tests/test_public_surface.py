"""The public surface (README.md, "Using kubelab"): curated __all__ lists that really resolve."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import kubelab

PACKAGES = sorted(
    name for _, name, is_pkg in pkgutil.iter_modules(kubelab.__path__, "kubelab.") if is_pkg
)


def test_top_level_surface() -> None:
    assert set(kubelab.__all__) == {
        "ApiError", "Clock", "Cluster", "LivelockError", "ParseError", "Quantity", "Trace",
        "__version__", "load_objects", "parse_quantity", "parse_selector",
    }
    for name in kubelab.__all__:
        assert hasattr(kubelab, name), name


@pytest.mark.parametrize("package", PACKAGES)
def test_every_package_has_a_curated_all(package: str) -> None:
    module = importlib.import_module(package)
    assert module.__doc__, f"{package} needs a docstring saying what it is"
    names = getattr(module, "__all__", None)
    assert names is not None, f"{package} has no __all__"
    assert len(names) == len(set(names)), f"{package}.__all__ has duplicates"
    for name in names:
        assert hasattr(module, name), f"{package}.__all__ names {name}, which does not exist"


def test_cluster_surface_from_design() -> None:
    c = kubelab.Cluster(nodes=1, seed=0, components=[])
    for attribute in ("apply", "run", "run_until", "get", "client", "kubectl", "events", "faults",
                      "trace"):
        assert hasattr(c, attribute), attribute
