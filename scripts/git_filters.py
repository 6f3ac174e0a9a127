"""Keep notebook outputs out of git: nbstripout as this clone's clean filter for *.ipynb.

    python scripts/git_filters.py [--python .venv/bin/python] [--repo DIR] [--check]

.gitattributes (committed) names the filter for every .ipynb; this script defines it in the
clone's .git/config, so a learner who runs, edits and saves a notebook keeps the outputs on
disk while git sees the notebook as committed: `git status` stays clean and `git pull` of the
next course update does not conflict. Run by `make venv` (so by `make lab` and `make test`);
prints, and logs for `kubelab doctor`, what it changed. --check: exit 1 when it is not set.

The filter strips what Jupyter adds when it runs and saves a notebook: outputs, execution
counts, widget state, the kernel's language_info details, cell UI state. Cell ids stay (the
committed notebooks have stable ones). A linked `git worktree` shares its config with the main
checkout, so there the script changes nothing and says so.
"""

from __future__ import annotations

import argparse
import datetime
import shlex
import subprocess
import sys
from pathlib import Path

# What Jupyter writes into a notebook on save beyond outputs and execution counts (which
# nbstripout always strips): nbstripout's own defaults plus the kernel's language_info details.
EXTRA_KEYS = [
    "metadata.widgets",
    "metadata.language_info.codemirror_mode",
    "metadata.language_info.file_extension",
    "metadata.language_info.mimetype",
    "metadata.language_info.nbconvert_exporter",
    "metadata.language_info.pygments_lexer",
    "metadata.language_info.version",
    "cell.metadata.execution",
    "cell.metadata.jp-MarkdownHeadingCollapsed",
    # jupytext's own bookkeeping when it pairs the notebook with its .py (pyproject.toml).
    "metadata.jupytext.cell_metadata_filter",
    "metadata.jupytext.notebook_metadata_filter",
    "metadata.jupytext.text_representation",
    "cell.metadata.lines_to_next_cell",
]


# nbstripout imports nbformat, nbformat imports jsonschema, and jsonschema's format checkers
# import rfc3987_syntax, which builds some thirty Lark parsers when it is imported
# (python-jsonschema/jsonschema#1428): 3 to 4 s of CPU, nine tenths of every run of the filter.
# Git runs the filter for each notebook whose file changed, and JupyterLab's post-save hook
# (scripts/jupyter/jupyter_server_config.py) runs it twice per save while the server waits, so a
# save took 20 s and more on a loaded machine, long enough for the next save to start before it
# ended and find the file changed ("File Changed ... Overwrite?"). No notebook schema uses the
# `iri` formats that module checks: the filter is nbstripout itself, without it (same output).
NBSTRIPOUT = ('import sys; sys.modules["rfc3987_syntax"] = None; '
              'from nbstripout import main; main()')


def wanted(python: str) -> dict[str, str]:
    """The git config entries of the filter. Git runs filters from the top of the work tree,
    so a relative interpreter path (.venv/bin/python) works wherever the clone is."""
    strip = f"{shlex.quote(python)} -c {shlex.quote(NBSTRIPOUT)} --keep-id"
    return {
        "filter.nbstripout.clean": strip,
        "filter.nbstripout.smudge": "cat",
        "filter.nbstripout.extrakeys": " ".join(EXTRA_KEYS),  # nbstripout reads it (clean and diff)
        "diff.ipynb.textconv": f"{strip} -t",
    }


def git(repo: Path, *args: str) -> str:
    out = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    return out.stdout.strip() if out.returncode == 0 else ""


def log_change(text: str) -> None:
    """Append to the virtual environment's set-up log, which `kubelab doctor` prints."""
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M:%SZ")
    with (Path(sys.prefix) / "kubelab-setup.log").open("a", encoding="utf-8") as f:
        f.write(f"{stamp} {text}\n")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default=".venv/bin/python", help="the interpreter with nbstripout")
    parser.add_argument("--repo", type=Path, default=Path.cwd())
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    if not git(args.repo, "rev-parse", "--git-dir"):
        print("kubelab: not a git clone: no notebook filter to set (outputs are yours to keep)")
        return 0
    entries = wanted(args.python)
    missing = {k: v for k, v in entries.items() if git(args.repo, "config", "--local", "--get", k) != v}
    if args.check:
        return 1 if missing else 0
    if not missing:
        return 0
    git_dir = Path(git(args.repo, "rev-parse", "--absolute-git-dir"))
    common = Path(git(args.repo, "rev-parse", "--path-format=absolute", "--git-common-dir"))
    if git_dir != common:
        print("kubelab: a linked git worktree shares its config with the main checkout: not setting "
              "the notebook filter here (run `make git-filters` in the main checkout)")
        return 0
    for key, value in missing.items():
        subprocess.run(["git", "-C", str(args.repo), "config", "--local", key, value], check=True)
    what = ("set the git filter nbstripout for *.ipynb in .git/config (outputs stay on disk, "
            "out of git)")
    print(f"kubelab: {what}")
    log_change(what)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
