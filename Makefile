# kubelab: two commands do all set-up on a fresh machine.
#   make lab    set up, then start JupyterLab on the repository, opening notebooks/00_tour.ipynb
#   make test   set up, then lint, types, architecture contracts, tests and every notebook
#   make workshop   (as root) JupyterHub for a room: LEARNERS=30, or NAMES=ada,bob (README)
# The virtual environment lives in .venv; a stamp file records which pyproject.toml it was
# built from, so re-running a target on a ready machine installs nothing. What set-up changes is
# printed and logged in .venv/kubelab-setup.log (`make doctor` shows it).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.kubelab-installed
PORT   ?= 8888
SETUP_LOG := $(VENV)/kubelab-setup.log
log = echo "$$(date -u '+%Y-%m-%d %H:%M:%SZ') $(1)" >> $(SETUP_LOG); echo "kubelab: $(1)"

.PHONY: all lab test lint typecheck contracts pytest notebooks exercises bench bench-scale doctor system-deps git-filters venv clean workshop test-workshop

all: test

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The kernel is named as the committed notebooks name it ("Python 3"), so saving one does not
# change its metadata; its PATH starts with the venv, so `!kubelab grade 1.1` works in a cell.
# The workshop extra (JupyterHub and the Python configurable-http-proxy) comes with it: `make
# workshop` needs it and `make test` checks the workshop's configuration.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev,workshop]'
	@$(call log,installed kubelab and its dependencies into $(VENV) (pip install -e '.[dev,workshop]'))
	# pip compiles what it installs, but not an editable package: without this the tour's first
	# run compiles all of kubelab's modules first (measured: twice as slow as a later run).
	$(BIN)/python -m compileall -q kubelab >/dev/null
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3" \
		--env PATH '$(abspath $(BIN)):$${PATH}' --env VIRTUAL_ENV '$(abspath $(VENV))' >/dev/null
	@$(call log,installed the Jupyter kernel 'Python 3' (python3) in $(VENV))
	touch $(STAMP)

venv: $(STAMP) system-deps git-filters

# System packages: Graphviz's `dot` renders every picture in the course.
system-deps:
	@$(BIN)/python scripts/system_deps.py

# Keep notebook outputs out of git (nbstripout as the .ipynb clean filter, see .gitattributes).
git-filters: $(STAMP)
	@$(BIN)/python scripts/git_filters.py

# scripts/jupyter/jupyter_server_config.py: the repository as the Lab's root, the tour opened,
# the venv first on PATH in kernels and terminals, --allow-root only as root, a browser only
# where there is a display.
lab: venv
	@echo "kubelab: starting JupyterLab on $(CURDIR); open the URL it prints below"
	@echo "kubelab: (http://localhost:$(PORT)/lab/tree/notebooks/00_tour.ipynb?token=...); Ctrl-C stops it"
	JUPYTER_CONFIG_PATH="$(CURDIR)/scripts/jupyter$${JUPYTER_CONFIG_PATH:+:$$JUPYTER_CONFIG_PATH}" \
		$(BIN)/jupyter lab --port=$(PORT)

# JupyterHub on this machine for a room of learners (kubelab/workshop/): as root, one system user
# per learner with their own clone of the course. Ctrl-C (or `kubelab workshop stop`) stops it.
LEARNERS ?= 3
NAMES ?=
WORKSHOP_PORT ?= 8000
workshop: venv
	$(BIN)/kubelab workshop start --port $(WORKSHOP_PORT) $(if $(NAMES),--names $(NAMES),--learners $(LEARNERS))

# The workshop in a real browser (tests/test_workshop_browser.py: three learners, the tour,
# collect, grade, feedback): about 9 minutes on two cores, so not part of `make test`.
test-workshop: venv
	KUBELAB_WORKSHOP_BROWSER=1 $(BIN)/python -m pytest tests/test_workshop_browser.py

lint: venv
	$(BIN)/ruff check kubelab tests benchmarks scripts notebooks solutions

typecheck: venv
	$(BIN)/mypy

contracts: venv
	$(BIN)/lint-imports

# One worker per core, each test file on one worker (its module fixtures stay together).
pytest: venv
	$(BIN)/python -m pytest -n auto --dist loadfile --durations=25

test: lint typecheck contracts pytest

bench: venv
	$(BIN)/python -m benchmarks

# The issue's 5,000 hollow nodes x 30 pods (150,000 pods): long, so not part of `make bench`.
bench-scale: venv
	KUBELAB_BENCH_SCALE=1 $(BIN)/python -m benchmarks scale

doctor: venv
	$(BIN)/kubelab doctor

# The long checks: the informer's 300 random fault schedules (make test runs 30), then the seeded
# fault-schedule soak: SEEDS seeds, one line per seed, each checked as tests/test_soak.py checks
# the three seeds per family that make test runs (KUBELAB_SOAK=1 runs its hundred there).
.PHONY: soak
SEEDS ?= 1000
soak: venv
	KUBELAB_SOAK=1 $(BIN)/python -m pytest -q tests/test_client_informer.py -k random_faults
	$(BIN)/python -m benchmarks.soak $(SEEDS)

# Regenerate each notebook's .ipynb from its jupytext source (notebooks/*.py), without outputs.
notebooks: venv
	$(BIN)/python scripts/sync_notebooks.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
