# Two set-up commands on a fresh clone:  `make demo`  and  `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test venv bench eval lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=25.1"

venv: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e . --group dev

demo: venv  ## index the bundled sample notes (English, Spanish, Italian) and search them
	PATH="$(abspath $(BIN)):$$PATH" bash scripts/demo.sh

test: venv  ## the whole test suite (what CI runs)
	$(BIN)/python -m pytest -q

lint: venv  ## ruff and mypy (CI runs it after the tests)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy

bench: venv  ## speed and memory figures (prints them; not a test)
	$(BIN)/python benchmarks/bench_core.py

eval: venv  ## retrieval quality on ../shared/eval (BM25 vs vector vs hybrid)
	$(BIN)/python benchmarks/eval_retrieval.py

clean:
	rm -rf $(VENV) .demo .pytest_cache
