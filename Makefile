# Two commands do all the set-up: `make run` and `make test`. Everything else here serves them.
SHELL := /bin/bash
PYTHON ?= python3
TORCH_SPEC ?= torch==2.13.0
VENV ?= .venv
# The legacy Neuron stack (Python 3.10, torch 2.9, numpy 1.26, transformers 4.57) in a venv of its own.
LEGACY_PYTHON ?= python3.10
LEGACY_TORCH ?= torch==2.9.1
# pyproject's torch floor: make test-legacy-torch-floor runs the suite on it too (torch-neuronx 2.8.0.2.x venvs).
LEGACY_TORCH_FLOOR := torch==2.8.0
LEGACY_VENV ?= .venv-legacy
LEGACY_CONSTRAINTS := packaging/legacy-constraints.txt

# An active virtualenv (for example the Neuron DLAMI's) is used as it is; otherwise .venv.
ifdef VIRTUAL_ENV
ENV_DIR := $(VIRTUAL_ENV)
else
ENV_DIR := $(VENV)
endif
PY := $(ENV_DIR)/bin/python
STAMP := $(ENV_DIR)/.neffbench-installed
RUN_STAMP := $(ENV_DIR)/.neffbench-installed-run
LEGACY_PY := $(LEGACY_VENV)/bin/python
LEGACY_STAMP := $(LEGACY_VENV)/.neffbench-installed

.PHONY: run test test-fast lint test-legacy test-legacy-torch-floor bench setup setup-run setup-legacy system-deps window-deps install-desktop clean

# Only what running needs (torch, PySide6, pyqtgraph, numpy, superqt, tomli-w, grandalf); make test adds the test tools.
run: setup-run window-deps
	$(ENV_DIR)/bin/neffbench

# The suite spread over the cores (pytest-xdist: one worker per core, 4 at most, since each holds torch and Qt;
# PYTEST_WORKERS=0 runs it in one process) and, beside it, the habits (make lint); either failing fails it.
PYTEST_WORKERS ?= auto --maxprocesses 4
# The suite starts hundreds of Python processes over the same modules: it keeps their bytecode (in the ignored
# __pycache__ folders, as setup does for app/) even where the shell sets PYTHONDONTWRITEBYTECODE, which would have
# each process compile every module it imports, and pytest rewrite every test file in each worker, again.
SUITE_ENV := QT_QPA_PLATFORM=offscreen PYTHONDONTWRITEBYTECODE=
test: setup system-deps
	@$(MAKE) --no-print-directory lint > "$(ENV_DIR)/lint.log" 2>&1 & lint=$$!; \
	$(SUITE_ENV) $(PY) -m pytest -n $(PYTEST_WORKERS) $(PYTEST_ARGS); suite=$$?; \
	wait $$lint; habits=$$?; cat "$(ENV_DIR)/lint.log"; \
	if [ $$habits -ne 0 ]; then echo "make test: make lint failed (above)"; fi; \
	if [ $$suite -ne 0 ]; then exit $$suite; fi; exit $$habits

# The inner loop: the tests not marked slow (child processes, compiles) or remote (Xvfb, VNC, sshd), without lint.
test-fast: setup system-deps
	$(SUITE_ENV) $(PY) -m pytest -n $(PYTEST_WORKERS) -m "not slow and not remote" $(PYTEST_ARGS)

# Lint rules, format, import layers and types, as pyproject.toml sets them.
lint: setup
	$(ENV_DIR)/bin/ruff check app tests
	$(ENV_DIR)/bin/ruff format --check app tests
	$(ENV_DIR)/bin/lint-imports
	$(ENV_DIR)/bin/mypy

# Not part of .ci/run: the first run downloads several GB (PyPI's torch 2.9 for Linux is the CUDA build).
test-legacy: setup-legacy system-deps
	$(SUITE_ENV) $(LEGACY_PY) -m pytest -n $(PYTEST_WORKERS) $(PYTEST_ARGS)

test-legacy-torch-floor:
	$(MAKE) test-legacy LEGACY_TORCH=$(LEGACY_TORCH_FLOOR) LEGACY_VENV=.venv-legacy-torch2.8

# The window's figures on a real X display (Xvfb and Qt's xcb platform: the window as users see it, locally, over
# ssh -X or VNC); without xvfb-run on the offscreen platform, which paints to no server and so flatters start-up.
bench: setup system-deps
	@if command -v xvfb-run > /dev/null; then \
	    xvfb-run -a -s "-screen 0 1600x1000x24" env QT_QPA_PLATFORM=xcb $(PY) -m tests.bench $(BENCH_ARGS); \
	else \
	    echo "make bench: no xvfb-run, so the window's figures are the offscreen platform's"; \
	    QT_QPA_PLATFORM=offscreen $(PY) -m tests.bench $(BENCH_ARGS); \
	fi

setup-run: $(RUN_STAMP)

$(RUN_STAMP): pyproject.toml
	@if [ ! -x "$(PY)" ]; then echo "Creating $(ENV_DIR)"; $(PYTHON) -m venv "$(ENV_DIR)"; fi
	@# torch is installed only when missing, so a Neuron venv keeps its own build.
	@if "$(PY)" -c "import torch" 2>/dev/null; then \
	    echo "torch present: $$("$(PY)" -c 'import torch; print(torch.__version__)')"; \
	else \
	    echo "Installing $(TORCH_SPEC)"; "$(PY)" -m pip install --quiet "$(TORCH_SPEC)"; \
	fi
	@echo "Installing NEFF Workbench and what it needs to run (PySide6-Essentials, pyqtgraph, numpy, superqt, tomli-w, cloudpickle, grandalf)"
	@"$(PY)" -m pip install --quiet -e .
	@# An editable install compiles nothing: byte-compile now so that the first launch does not.
	@"$(PY)" -m compileall -q app/neffbench > /dev/null
	@touch "$(RUN_STAMP)"

# The test and lint tools too (pytest, hypothesis, transformers, Ray, ruff, mypy): what make test and make lint use.
setup: $(STAMP)

$(STAMP): $(RUN_STAMP)
	@echo "Installing the test and lint tools (pytest, hypothesis, transformers, Ray, ruff, mypy, import-linter)"
	@"$(PY)" -m pip install --quiet -e ".[test,lint]"
	@touch "$(STAMP)"

setup-legacy: $(LEGACY_STAMP)

$(LEGACY_STAMP): pyproject.toml $(LEGACY_CONSTRAINTS)
	@if ! "$(LEGACY_PYTHON)" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 10))' 2>/dev/null; then \
	    echo "make test-legacy needs Python 3.10 (the Neuron DLAMIs' Python), and $(LEGACY_PYTHON) is not one."; \
	    echo "Install it (Ubuntu 22.04: sudo apt-get install python3.10 python3.10-venv; elsewhere pyenv install 3.10)"; \
	    echo "or name one: make test-legacy LEGACY_PYTHON=/path/to/python3.10"; \
	    exit 2; \
	fi
	@if [ ! -x "$(LEGACY_PY)" ]; then echo "Creating $(LEGACY_VENV) with $$("$(LEGACY_PYTHON)" --version)"; "$(LEGACY_PYTHON)" -m venv "$(LEGACY_VENV)"; fi
	@echo "Installing $(LEGACY_TORCH) and the floors in $(LEGACY_CONSTRAINTS) (the first time: several GB)"
	"$(LEGACY_PY)" -m pip install --quiet "$(LEGACY_TORCH)" -c "$(LEGACY_CONSTRAINTS)"
	"$(LEGACY_PY)" -m pip install --quiet -e ".[test]" "$(LEGACY_TORCH)" -c "$(LEGACY_CONSTRAINTS)"
	@touch "$(LEGACY_STAMP)"

system-deps:
	@bash packaging/qt-system-deps.sh

# What the window needs from the system (Qt's libraries, its X11 platform's): installed as root with apt or dnf,
# else the exact install line.
window-deps:
	@bash packaging/qt-system-deps.sh --window

install-desktop: setup
	@bash packaging/install-desktop.sh "$(abspath $(ENV_DIR))/bin/neffbench"

clean:
	rm -rf build dist .pytest_cache .hypothesis
