# Two entry points do all set-up: `make run` (offline CoffeeBench) and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint install clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[dev,train]'
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/econbench coffee run $(ARGS)

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/pytest -n 2

lint: $(STAMP)
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) runs
