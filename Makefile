# Two entry points do all set-up: `make run` (offline CoffeeBench) and `make test`.
# `make run` installs the package with its base dependencies only (no torch: the offline
# economy needs none of the training stack); `make test` adds the dev, train and docs extras
# (the suite builds the documentation site with `mkdocs build --strict`).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
BASE_STAMP := $(VENV)/.installed-base
TEST_STAMP := $(VENV)/.installed-test
PIP := $(BIN)/pip install --quiet --disable-pip-version-check

.PHONY: run test lint docs install install-test clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip

# The bytecode is compiled at install, as pip does for a wheel: where the environment sets
# PYTHONDONTWRITEBYTECODE, every process (a sweep's workers too) would compile econbench again.
$(BASE_STAMP): pyproject.toml | $(BIN)/python
	$(PIP) -e .
	$(BIN)/python -m compileall -q src > /dev/null
	touch $(BASE_STAMP)

$(TEST_STAMP): $(BASE_STAMP)
	$(PIP) -e '.[dev,train,docs]'
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

# The documentation site, built strictly into site/ (tests/test_docs.py builds it in CI).
docs: $(TEST_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

lint: $(TEST_STAMP)
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) runs site
