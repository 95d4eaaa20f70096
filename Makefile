# Two entry points do all set-up: `make run` (offline CoffeeBench) and `make test`.
# `make run` installs the package with its base dependencies only (no torch: the offline
# economy needs none of the training stack); `make test` adds the dev and train extras.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
BASE_STAMP := $(VENV)/.installed-base
TEST_STAMP := $(VENV)/.installed-test
PIP := $(BIN)/pip install --quiet --disable-pip-version-check

.PHONY: run test lint install install-test clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip

$(BASE_STAMP): pyproject.toml | $(BIN)/python
	$(PIP) -e .
	touch $(BASE_STAMP)

$(TEST_STAMP): $(BASE_STAMP)
	$(PIP) -e '.[dev,train]'
	touch $(TEST_STAMP)

install: $(BASE_STAMP)

install-test: $(TEST_STAMP)

run: $(BASE_STAMP)
	$(BIN)/econbench coffee run $(ARGS)

# Bytecode is written even where the environment sets PYTHONDONTWRITEBYTECODE: otherwise every
# worker and every test subprocess compiles econbench and the test modules again.
test: $(TEST_STAMP)
	$(BIN)/ruff check .
	PYTHONDONTWRITEBYTECODE= $(BIN)/pytest -n 2

lint: $(TEST_STAMP)
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) runs
