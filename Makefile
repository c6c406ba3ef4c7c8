# Two commands a fresh machine needs:
#   make up     install into .venv and run the whole platform on the embedded default
#   make test   install into .venv and run the test suite
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install up test fuzz lint bench-smoke stubs console

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

install: $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[server,dev]'

up: install
	$(BIN)/outrider up

# PYTEST_ARGS narrows the run (CI leaves out the fuzz gate it ran before).
test: install
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# The fuzz gate alone (`make test` runs it too): schemathesis over the whole
# OpenAPI document with each gate's credential, and the mutation fuzzers of
# every NATS subject, of /v1/traces and of the engine-facing gRPC methods,
# each with a fixed seed and a bounded budget.
FUZZ := tests/integration/platform/test_*fuzz.py

fuzz: install
	$(BIN)/python -m pytest $(FUZZ)

# The checks that keep the code's shape: lint and format, types, and the
# import contracts in pyproject.toml; then the console's ESLint and tsc
# (console/eslint.config.js), which need its packages and Node 20.19+.
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	cd console && { [ -d node_modules ] || npm ci --no-audit --no-fund; } && npm run --silent lint

stubs: install
	$(BIN)/python scripts/codegen.py

# Rebuild the operator console (API types from the gateway's OpenAPI, then the
# bundle committed in gateway/console_dist). Needs Node 20.19+; `make up` does not.
console: install
	cd console && npm ci --no-audit --no-fund
	$(BIN)/python scripts/console.py
