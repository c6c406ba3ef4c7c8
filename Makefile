# Two commands a fresh machine needs:
#   make up     install into .venv and run the whole platform on the embedded default
#   make test   install into .venv and run the test suite
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install up test bench-smoke stubs

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

install: $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[server,dev]'

up: install
	$(BIN)/outrider up

test: install
	$(BIN)/python -m pytest

stubs: install
	$(BIN)/python scripts/codegen.py
