# Two entry points people and CI share: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,spark,browser]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/commerce-reports demo

test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist loadgroup

lint: $(STAMP)
	$(BIN)/ruff check src tests bench examples notebooks/build_notebooks.py
	$(BIN)/ruff format --check src tests bench examples notebooks/build_notebooks.py
	$(BIN)/mypy --strict

bench: $(STAMP)
	$(BIN)/python bench/parse_bench.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
