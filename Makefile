# kubelab: two commands do all set-up on a fresh machine.
#   make lab    set up, then start JupyterLab on notebooks/
#   make test   set up, then lint, types, architecture contracts, tests and every notebook
# The virtual environment lives in .venv; a stamp file records which pyproject.toml it was
# built from, so re-running a target on a ready machine installs nothing.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.kubelab-installed
PORT   ?= 8888

.PHONY: all lab test lint typecheck contracts pytest notebooks exercises bench doctor system-deps venv clean

all: test

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

venv: $(STAMP) system-deps

# System packages: Graphviz's `dot` renders every picture in the course.
system-deps:
	@$(BIN)/python scripts/system_deps.py

lab: venv
	$(BIN)/jupyter lab --notebook-dir=notebooks --port=$(PORT)

lint: venv
	$(BIN)/ruff check kubelab tests benchmarks scripts notebooks solutions

typecheck: venv
	$(BIN)/mypy

contracts: venv
	$(BIN)/lint-imports

pytest: venv
	$(BIN)/python -m pytest

test: lint typecheck contracts pytest

bench: venv
	$(BIN)/python -m benchmarks

doctor: venv
	$(BIN)/kubelab doctor

# The seeded fault-schedule soak: SEEDS seeds (make test runs a hundred), one line per seed.
.PHONY: soak
SEEDS ?= 1000
soak: venv
	$(BIN)/python -m benchmarks.soak $(SEEDS)

# Regenerate each notebook's .ipynb from its jupytext source (notebooks/*.py), without outputs.
notebooks: venv
	$(BIN)/python scripts/sync_notebooks.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
