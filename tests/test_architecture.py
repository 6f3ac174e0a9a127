"""The package layout is a map of Kubernetes' binaries (docs/ARCHITECTURE.md section 1), and the
import-linter contracts in pyproject.toml hold it: every module lies in a package a contract
names, no circle of imports crosses packages but through type-only imports, and the contracts
refuse the imports that would blur a boundary."""

from __future__ import annotations

import pkgutil
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp
import networkx as nx
import pytest

import kubelab

ROOT = Path(__file__).resolve().parent.parent
CONTRACTS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
TOP_LEVEL_MODULES = {"kubelab.__init__", "kubelab.__main__", "kubelab.cli"}


def named_by_contracts(contracts: list[dict[str, object]]) -> set[str]:
    """Every module or package a contract names, with its containers prefixed to its layers."""
    named: set[str] = set()
    for contract in contracts:
        containers = list(contract.get("containers", [])) or [""]  # type: ignore[call-overload]
        for key in ("source_modules", "forbidden_modules", "modules"):
            named.update(contract.get(key, []))  # type: ignore[arg-type]
        for layer in contract.get("layers", []):  # type: ignore[attr-defined]
            for name in layer.replace(":", "|").split("|"):
                named.update(f"{c}.{name.strip()}" if c else name.strip() for c in containers)
    return named


def uncovered(modules: list[str], named: set[str]) -> list[str]:
    """The modules that are neither named by a contract nor inside a package that is."""
    def covered(module: str) -> bool:
        parts = module.split(".")
        return any(".".join(parts[:i]) in named for i in range(2, len(parts) + 1))
    return [m for m in modules if m not in TOP_LEVEL_MODULES - {"kubelab.__init__"} and not covered(m)]


def all_modules() -> list[str]:
    return sorted(name for _, name, _ in pkgutil.walk_packages(kubelab.__path__, "kubelab."))


def test_kubelab_top_level_holds_only_packages_and_the_entry_points() -> None:
    loose = sorted(p.name for p in (ROOT / "kubelab").glob("*.py"))
    assert loose == ["__init__.py", "__main__.py", "cli.py"]


def test_every_module_lies_in_a_package_a_contract_names() -> None:
    assert uncovered(all_modules(), named_by_contracts(CONTRACTS)) == []


def test_an_uncovered_module_is_noticed() -> None:
    named = named_by_contracts(CONTRACTS)
    assert uncovered(["kubelab.proxy.iptables", "kubelab.kubectl_printers", "kubelab.dns"], named) == [
        "kubelab.kubectl_printers", "kubelab.dns"]


def package_of(module: str) -> str:
    parts = module.split(".")
    if parts[1:3] == ["serve", "transport"]:  # the client transport: a leaf package of its own
        return "kubelab.serve.transport"
    return ".".join(parts[:2])


def test_no_circle_of_imports_crosses_packages_but_through_type_only_imports() -> None:
    graph = grimp.build_graph("kubelab", exclude_type_checking_imports=True, cache_dir=None)
    packages = nx.DiGraph()
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            a, b = package_of(module), package_of(imported)
            if a != b and a != "kubelab":  # kubelab/__init__.py re-exports the public surface
                packages.add_edge(a, b)
    assert list(nx.simple_cycles(packages)) == []


@pytest.mark.parametrize(("module", "line"), [
    ("api/__init__.py", ""),  # the control: the tree as it is keeps every contract
    # What a review once added without any contract noticing (issue 27).
    ("apiserver/auth/audit.py", "import kubelab.apiserver.printers\nimport kubelab.kubectl.tabwriter"),
    ("store/kv.py", "import kubelab.kubectl.tabwriter"),
    ("cluster/cluster.py", "import kubelab.serve.server"),
    ("client/reflector.py", "import kubelab.apiserver.registry.store"),
    ("scheduler/cache.py", "import kubelab.kubelet.kubelet"),
    ("samples/sample_controller.py", "import kubelab.controllers.controller_utils"),
    ("serve/transport/transport.py", "import kubelab.client.client"),
    # kubectl prints the server's Tables; it never builds them from the printers itself.
    ("kubectl/get.py", "import kubelab.apiserver.printers.internalversion"),
])
def test_the_contracts_refuse_an_import_across_a_boundary(tmp_path: Path, module: str, line: str) -> None:
    shutil.copytree(ROOT / "kubelab", tmp_path / "kubelab", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / "kubelab" / module
    target.write_text(target.read_text() + "\n" + line + "\n")
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint), "--no-cache"], cwd=tmp_path, capture_output=True, text=True,
                            env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"}, timeout=120)
    assert result.returncode == (1 if line else 0), result.stdout[-2000:]
    assert ("BROKEN" in result.stdout) == bool(line)
