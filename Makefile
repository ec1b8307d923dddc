# COVR graph service — every command a developer or CI needs.
# `make run` and `make test` install everything they need first (idempotent, stamped).

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PY_STAMP := $(VENV)/.installed
RUN_STAMP := $(VENV)/.installed-run
NODE_STAMP := tools/cypher-lint/node_modules/.installed
NEO4J_STAMP := server/neo4j-launcher/target/.built
# pip-audit lives in a venv of its own: its dependencies are not the project's, and are not audited.
AUDIT_VENV ?= .venv-audit
AUDIT_STAMP := $(AUDIT_VENV)/.installed
PIP_AUDIT_VERSION ?= 2.10.1
# `make run` installs only what running needs (no dev or training extras, no Node/Java) and
# builds the managed Neo4j only when it is the chosen store.
RUN_DEPS := $(RUN_STAMP) $(if $(filter neo4j,$(COVR_GRAPH_BACKEND)),$(NEO4J_STAMP))
PYTEST_ARGS ?=
# `make test` runs the suite in this many worker processes (pytest-xdist; a test file stays in one
# worker, so module fixtures start once). 1 runs it in this process. Files are handed out in
# collection order, where tests/conftest.py puts the slowest first (xdist's default order, most
# tests first, started two-minute files last and left one worker finishing alone).
TEST_WORKERS ?= 2
# `make bench` runs these benchmarks (every one by default) with --quick, each one's output in
# BENCH_LOGS/<name>.log (benchmarks/harness.py: quick runs write under /tmp/covr-bench-quick).
BENCHES ?= $(sort $(wildcard benchmarks/bench_*.py))
BENCH_LOGS ?= /tmp/covr-bench-quick/logs
# setuptools tells every editable install (a meta path finder here, as package-dir maps the rooms)
# "Editable installation ... be careful with folders in your working directory with the same name
# as your package", and pip shows it as a BuildBackendWarning even with --quiet. Only that notice
# is filtered; any other backend warning still prints.
EDITABLE_QUIET := PYTHONWARNINGS='ignore:Editable installation:UserWarning:setuptools.command.editable_wheel'

.PHONY: help setup run test lint format typecheck audit unit integration e2e bench clean proto models

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

setup: $(PY_STAMP) $(NODE_STAMP) $(NEO4J_STAMP) ## install Python, Debian, npm and Maven dependencies (once)

$(RUN_STAMP): pyproject.toml clients/python/pyproject.toml scripts/setup-system.sh
	bash scripts/setup-system.sh run
	$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11+ is required")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(EDITABLE_QUIET) $(BIN)/python -m pip install --quiet -e . -e clients/python
	touch $@

# The checks also need the dev tools and the training extra (scikit-learn, onnx: the tests retrain).
$(PY_STAMP): $(RUN_STAMP)
	bash scripts/setup-system.sh
	$(EDITABLE_QUIET) $(BIN)/python -m pip install --quiet -e '.[dev,train]' -e clients/python
	touch $@

$(NODE_STAMP): tools/cypher-lint/package.json tools/cypher-lint/package-lock.json scripts/setup-system.sh
	bash scripts/setup-system.sh
	npm ci --prefix tools/cypher-lint --no-audit --no-fund --loglevel=error
	touch $@

$(NEO4J_STAMP): server/neo4j-launcher/pom.xml server/neo4j-launcher/src/main/java/covr/neo4j/Launcher.java scripts/build-neo4j.sh scripts/setup-system.sh
	bash scripts/setup-system.sh
	bash scripts/build-neo4j.sh
	touch $@

run: $(RUN_DEPS) ## the main job on the embedded default: start store, schema, sample data, print stats
	$(BIN)/covr quickstart

test: setup lint typecheck audit ## everything CI checks: ruff, mypy, pip-audit, unit, integration and e2e on FalkorDB and the managed Neo4j
	$(BIN)/pytest $(if $(filter-out 1,$(TEST_WORKERS)),-n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder) --durations=25 $(PYTEST_ARGS)

lint: setup ## ruff check, format check, and the size review (modules over 600 lines, functions over 80, with their reasons)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python tools/size_report.py

format: setup ## apply ruff fixes and formatting
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

typecheck: setup ## mypy --strict on our packages (generated stubs excluded)
	$(BIN)/mypy

$(AUDIT_STAMP):
	$(PYTHON) -m venv $(AUDIT_VENV)
	$(AUDIT_VENV)/bin/python -m pip install --quiet pip-audit==$(PIP_AUDIT_VERSION)
	touch $@

audit: $(PY_STAMP) $(AUDIT_STAMP) ## pip-audit of .venv; says "could not audit N packages" when its service gives no answer
	$(BIN)/python tools/audit_deps.py --pip-audit $(AUDIT_VENV)/bin/pip-audit

unit: setup ## the unit tier: tests/unit but its slow tests (each under 5 s, no servers or sockets)
	$(BIN)/pytest -m unit $(PYTEST_ARGS)

integration: setup ## integration tests on the embedded FalkorDB and the managed Neo4j (COVR_TEST_BACKENDS narrows)
	$(BIN)/pytest -m integration $(PYTEST_ARGS)

e2e: setup ## end-to-end tests on the Neo4j in COVR_GRAPH_URI, else on the managed Neo4j
	$(BIN)/pytest tests/e2e $(PYTEST_ARGS)

bench: setup ## every benchmark of benchmarks/ in its --quick mode (does each still run? not a measurement)
	@mkdir -p $(BENCH_LOGS); failed=0; \
	for bench in $(BENCHES); do \
	  name=$$(basename $$bench .py); start=$${EPOCHREALTIME/./}; \
	  if $(BIN)/python $$bench --quick > $(BENCH_LOGS)/$$name.log 2>&1; then status=ok; \
	  else status="FAILED (exit $$?)"; failed=$$((failed + 1)); tail -n 25 $(BENCH_LOGS)/$$name.log; fi; \
	  tenths=$$(( ($${EPOCHREALTIME/./} - start) / 100000 )); \
	  printf '  %-22s %5d.%d s  %s\n' $$name $$((tenths / 10)) $$((tenths % 10)) "$$status"; \
	done; \
	if [ $$failed -gt 0 ]; then echo "$$failed benchmark(s) failed; logs in $(BENCH_LOGS)"; exit 1; fi

models: setup ## retrain both ONNX classifiers from the project's resources and compare with the bundled files
	$(BIN)/covr models train exclusivity --seed 0 --compare
	$(BIN)/covr models train presence --seed 0 --compare

proto: setup ## regenerate the gRPC stubs of proto/covr/v1: the server's (server/covr/v1) and the SDK's (covr_client/_proto)
	$(BIN)/python scripts/gen_proto.py

clean: ## remove the virtual environment and node modules (not your data)
	rm -rf $(VENV) $(AUDIT_VENV) tools/cypher-lint/node_modules server/neo4j-launcher/target .mypy_cache .ruff_cache .pytest_cache
