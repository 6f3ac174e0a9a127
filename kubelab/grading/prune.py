"""The sandbox's kubelab: the package as a submission may see it, without what it could copy.

A sandbox never runs with the kubelab the grader runs. It gets a pruned copy, made for its
exercise, in which these modules do not exist at all:

- the modules the exercise asks the learner to write (Exercise.forbidden_imports: for 4.1
  kubelab.scheduler.plugins, for 5.1 the whole of kubelab.controllers);
- every module that imports one of those when it is imported (kubelab.scheduler.config
  imports every plugin, kubelab.cluster the kubelet), again and again until nothing left
  imports anything missing;
- the whole grader (kubelab.grading), the checks and their registry among it, except the five
  modules the sandbox itself runs: sandbox, zygote, rpc, remote, pipe.

A package's __init__ that imports a missing module is kept, without those import statements
(and without their names in __all__): kubelab.scheduler.interface still imports when
kubelab.scheduler's plugins are gone. The learner's own file is loaded under its own name
(ex04_scheduler), never as kubelab's module.

The analysis reads every module's import statements (those that run at import time: not in a
function, not under `if TYPE_CHECKING:`). It parses all of kubelab, about two seconds, so the
grader makes each exercise's plan once per run (plan()) and sends it with the job; the grading
process only copies files (write()). See kubelab/grading/__init__.py for the threat model.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib.util
import os
import py_compile
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["SANDBOX_MODULES", "Plan", "plan", "write"]

# The grader's own modules a sandbox runs: the wire and the process, nothing that grades.
SANDBOX_MODULES = frozenset({"kubelab.grading.sandbox", "kubelab.grading.zygote",
                             "kubelab.grading.rpc", "kubelab.grading.remote",
                             "kubelab.grading.pipe"})
_PACKAGE = Path(__file__).resolve().parents[1]  # kubelab/


@dataclass(frozen=True)
class Plan:
    """What a sandbox's kubelab holds: files copied as they are, and rewritten __init__s.
    Paths are relative to the folder that holds the kubelab package."""

    copy: tuple[str, ...]
    rewrite: dict[str, str]

    def to_json(self) -> dict[str, Any]:
        return {"copy": list(self.copy), "rewrite": self.rewrite}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Plan:
        return cls(tuple(str(p) for p in data["copy"]),
                   {str(k): str(v) for k, v in dict(data["rewrite"]).items()})


@dataclass
class _Module:
    name: str
    relpath: str
    package: bool
    tree: ast.Module


@functools.cache
def _modules() -> dict[str, _Module]:
    modules = {}
    for file in sorted(_PACKAGE.rglob("*.py")):
        rel = file.relative_to(_PACKAGE.parent)
        parts = list(rel.with_suffix("").parts)
        package = parts[-1] == "__init__"
        if package:
            parts.pop()
        name = ".".join(parts)
        modules[name] = _Module(name, str(rel), package, ast.parse(file.read_bytes(), str(file)))
    return modules


def _type_checking(node: ast.stmt) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _import_time(body: list[ast.stmt]) -> list[ast.Import | ast.ImportFrom]:
    """The import statements that run when the module is imported."""
    found: list[ast.Import | ast.ImportFrom] = []
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or _type_checking(node):
            continue
        else:
            for field in ("body", "orelse", "finalbody", "handlers"):
                children = getattr(node, field, None) or []
                found += _import_time([c for c in children if isinstance(c, ast.stmt)])
                for handler in children:
                    if isinstance(handler, ast.ExceptHandler):
                        found += _import_time(handler.body)
    return found


def _resolve(module: _Module, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.name.split(".")
    base = base if module.package else base[:-1]
    base = base[:len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def _fails(module: _Module, node: ast.Import | ast.ImportFrom, gone: set[str],
           unbound: dict[str, set[str]]) -> bool:
    """Whether this import statement fails in a tree without `gone` (and without the names
    `unbound` says each kept package no longer has)."""
    known = _modules()
    if isinstance(node, ast.Import):
        return any(p in gone for a in node.names for p in _parents(a.name) if p.startswith("kubelab"))
    source = _resolve(module, node)
    if source.split(".")[0] != "kubelab":
        return False
    if any(p in gone for p in _parents(source)):
        return True
    lazy = _lazy(source)
    for alias in node.names:
        sub = f"{source}.{alias.name}"
        if sub in gone or (sub not in known and alias.name in unbound.get(source, set())):
            return True
        if alias.name in lazy and any(p in gone for p in _parents(lazy[alias.name])):
            return True
    return False


@functools.cache
def _lazy(package: str) -> dict[str, str]:
    """A package that loads its names on first use (PEP 562, like kubelab.store.raft): which
    module each name comes from, as its `if TYPE_CHECKING:` imports say."""
    module = _modules().get(package)
    if module is None or not module.package or not any(
            isinstance(n, ast.FunctionDef) and n.name == "__getattr__" for n in module.tree.body):
        return {}
    where = {}
    for node in module.tree.body:
        if _type_checking(node):
            for child in ast.walk(node):
                if isinstance(child, ast.ImportFrom) and child.module and not child.level:
                    where.update({a.asname or a.name: child.module for a in child.names})
    return where


def _bound(node: ast.Import | ast.ImportFrom) -> set[str]:
    return {(a.asname or a.name).split(".")[0] for a in node.names}


def _banned(name: str, forbidden: tuple[str, ...]) -> bool:
    if name.startswith("kubelab.grading.") and name not in SANDBOX_MODULES:
        return True
    return any(name == f or name.startswith(f + ".") for f in forbidden)


@functools.cache
def plan(forbidden: tuple[str, ...]) -> Plan:
    """The sandbox's kubelab for an exercise whose learner writes `forbidden` (see above)."""
    modules = _modules()
    gone = {name for name in modules if _banned(name, forbidden)}
    dropped: dict[str, list[ast.stmt]] = {}   # package -> its import statements that go
    unbound: dict[str, set[str]] = {}         # package -> the names those bound
    changed = True
    while changed:
        changed = False
        for module in modules.values():
            if module.name in gone:
                continue
            for node in _import_time(module.tree.body):
                if node in dropped.get(module.name, ()) or not _fails(module, node, gone, unbound):
                    continue
                changed = True
                if module.package and node in module.tree.body:
                    dropped.setdefault(module.name, []).append(node)
                    unbound.setdefault(module.name, set()).update(_bound(node))
                else:
                    gone.add(module.name)
                    break
    copy, rewrite = [], {}
    for module in modules.values():
        if module.name in gone:
            continue
        if module.name in dropped:
            rewrite[module.relpath] = _without(module.tree, dropped[module.name],
                                               unbound[module.name])
        else:
            copy.append(module.relpath)
    return Plan(tuple(copy), rewrite)


def _without(tree: ast.Module, drop: list[ast.stmt], names: set[str]) -> str:
    body: list[ast.stmt] = []
    for node in tree.body:
        if node in drop:
            continue
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id == "__all__"
                and isinstance(node.value, (ast.List, ast.Tuple))):
            kept = [e for e in node.value.elts
                    if not (isinstance(e, ast.Constant) and e.value in names)]
            node = ast.Assign(targets=node.targets, value=ast.List(elts=kept, ctx=ast.Load()),
                              lineno=node.lineno)
        body.append(node)
    return ast.unparse(ast.fix_missing_locations(ast.Module(body=body, type_ignores=[]))) + "\n"


def write(layout: Plan, dest: Path) -> Path:
    """Make the sandbox's kubelab under dest (dest/kubelab/...) from this kubelab's files;
    returns dest, the folder to put on the sandbox's sys.path.

    A copied module keeps its modification time and takes its bytecode with it (compiled here
    once if this kubelab has none yet: what importing it would have written), so the zygote
    loads compiled code instead of compiling all of kubelab again for every job: about five
    seconds a job on a loaded machine. The bytecode is this kubelab's own, of the same source,
    and Python checks it against that source's size and time as for any import."""
    for rel in layout.copy:
        source, target = _PACKAGE.parent / rel, dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
        compiled = Path(_compiled(str(source)))
        if compiled.is_file():
            (target.parent / "__pycache__").mkdir(exist_ok=True)
            shutil.copy2(compiled, target.parent / "__pycache__" / compiled.name)
    for rel, text in layout.rewrite.items():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return dest


@functools.cache
def _compiled(source: str) -> str:
    """Where this kubelab keeps a module's bytecode, made now if it is missing or stale (once
    per process; nothing when the package's folder is read-only)."""
    cached = importlib.util.cache_from_source(source)
    with contextlib.suppress(OSError, SyntaxError, py_compile.PyCompileError):
        if not _fresh(source, cached):
            py_compile.compile(source, cached, doraise=True,
                               invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP)
    return cached


def _fresh(source: str, cached: str) -> bool:
    """Whether the bytecode file is the one the import system would accept for the source
    (PEP 552's timestamp header: magic, flags 0, the source's mtime and size)."""
    try:
        with open(cached, "rb") as f:
            header = f.read(16)
    except OSError:
        return False
    st = os.stat(source)
    return (header[:4] == importlib.util.MAGIC_NUMBER and header[4:8] == bytes(4)
            and int.from_bytes(header[8:12], "little") == int(st.st_mtime) & 0xFFFFFFFF
            and int.from_bytes(header[12:16], "little") == st.st_size & 0xFFFFFFFF)
