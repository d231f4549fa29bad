# Two entry points people and CI share: `make demo` and `make test`; `make fmt` and `make test-fast`
# while working (see CONTRIBUTING.md).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
CORE := $(VENV)/.core
STAMP := $(VENV)/.installed
LINTED := src tests bench examples notebooks/build_notebooks.py docs/hooks

.PHONY: demo test test-fast fmt lint docs bench clean

# What the demo needs: the package and its core dependencies, shown as they install.
$(CORE): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	@echo "installing commerce-reports and its core dependencies into $(VENV) ..."
	$(BIN)/python -m pip install --progress-bar on -e .
	touch $(CORE)

# Everything else: tests, lint, Spark, the browser check, the documentation site.
$(STAMP): $(CORE)
	@echo "installing the development, Spark, browser, served-dashboard and docs extras ..."
	$(BIN)/python -m pip install --quiet -e '.[dev,spark,browser,serve,docs]'
	@# JupyterLab's jupyter-events asks for jsonschema[format-nongpl], whose IRI checker
	@# (rfc3987-syntax) compiles 38 grammars at every `import jsonschema`: 1.8 CPU s in each of the
	@# suite's processes that imports altair. No schema here checks an IRI; without the checker
	@# jsonschema leaves that format unchecked (as it does on a core install).
	$(BIN)/python -m pip uninstall --quiet --yes rfc3987-syntax
	touch $(STAMP)

demo: $(CORE)
	$(BIN)/commerce-reports demo

# The tests start hundreds of processes (the CLI, kernels, syncs): each reads the package's bytecode
# written by the first instead of compiling its modules again, even where the environment says
# PYTHONDONTWRITEBYTECODE (as installing a wheel compiles it); pytest keeps its rewritten tests too.
# Where Debian's eatmydata is installed (.ci/run installs it), fsync returns at once: every sync
# the tests run stores each partition and manifest with an fsync, a fifth of a daily-sync test's
# time on this machine's disk. fsync only decides what survives a power cut, which no test makes;
# a kill, a full disk and a crash of the process behave the same without it.
EATMYDATA := $(shell command -v eatmydata 2>/dev/null)
RUN_TESTS := PYTHONDONTWRITEBYTECODE= $(EATMYDATA) $(BIN)/python -m pytest -q -n 2 --dist loadgroup
test: $(STAMP)
	$(RUN_TESTS)

# The quick loop: every test not marked slow (no kernel, browser, Spark or whole sandbox lake).
test-fast: $(STAMP)
	$(RUN_TESTS) -m "not slow"

# Format and fix what ruff can; `make lint` then checks what is left.
fmt: $(STAMP)
	$(BIN)/ruff format $(LINTED)
	$(BIN)/ruff check --fix $(LINTED)

lint: $(STAMP)
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)
	$(BIN)/mypy --strict

# The documentation site into site/; --strict: a broken reference or page fails the build.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

bench: $(STAMP)
	$(BIN)/python bench/parse_bench.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache site .cache
