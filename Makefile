# Two commands do all the set-up: `make run` and `make test`. Everything else here serves them.
SHELL := /bin/bash
PYTHON ?= python3
TORCH_SPEC ?= torch==2.13.0
VENV ?= .venv

# An active virtualenv (for example the Neuron DLAMI's) is used as it is; otherwise .venv.
ifdef VIRTUAL_ENV
ENV_DIR := $(VIRTUAL_ENV)
else
ENV_DIR := $(VENV)
endif
PY := $(ENV_DIR)/bin/python
STAMP := $(ENV_DIR)/.neffbench-installed

.PHONY: run test bench setup system-deps install-desktop clean

run: setup
	$(ENV_DIR)/bin/neffbench

test: setup system-deps
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest $(PYTEST_ARGS)

bench: setup system-deps
	QT_QPA_PLATFORM=offscreen $(PY) -m tests.bench $(BENCH_ARGS)

setup: $(STAMP)

$(STAMP): pyproject.toml
	@if [ ! -x "$(PY)" ]; then echo "Creating $(ENV_DIR)"; $(PYTHON) -m venv "$(ENV_DIR)"; fi
	@# torch is installed only when missing, so a Neuron venv keeps its own build.
	@if "$(PY)" -c "import torch" 2>/dev/null; then \
	    echo "torch present: $$("$(PY)" -c 'import torch; print(torch.__version__)')"; \
	else \
	    echo "Installing $(TORCH_SPEC)"; "$(PY)" -m pip install --quiet "$(TORCH_SPEC)"; \
	fi
	"$(PY)" -m pip install --quiet -e ".[test]"
	@touch "$(STAMP)"

system-deps:
	@bash packaging/qt-system-deps.sh

install-desktop: setup
	@bash packaging/install-desktop.sh "$(abspath $(ENV_DIR))/bin/neffbench"

clean:
	rm -rf build dist .pytest_cache .hypothesis
