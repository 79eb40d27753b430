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
	PINKY_BIN="$(abspath $(BIN))" bash scripts/demo.sh

test: venv  ## the whole test suite (what CI runs): one test file per process, on up to 4 processes
	$(BIN)/python -m pytest -q -n auto --maxprocesses 4 --dist loadfile

lint: venv  ## ruff and mypy (CI runs it after the tests)
	$(BIN)/ruff check src tests benchmarks plugin
	$(BIN)/mypy

bench: venv  ## speed and memory figures (prints them; not a test; ~30 minutes on 2 cores the first time)
	$(BIN)/python benchmarks/bench_all.py --keep .bench
	$(BIN)/python benchmarks/bench_capture.py
	$(BIN)/python benchmarks/bench_sync.py
	$(BIN)/python benchmarks/bench_contradictions.py
	$(BIN)/python benchmarks/bench_age_ranking.py
	$(BIN)/python benchmarks/bench_hygiene.py
	$(BIN)/python benchmarks/bench_linear.py

eval: venv  ## pinky eval on examples/golden.jsonl, then retrieval quality on EVAL_DATA=DIR (SciFact and CoSQA: BM25, vectors, hybrid, then the e5 second stage: ~30 min the first time)
	@test -n "$(EVAL_DATA)" || { \
	  echo "make eval needs EVAL_DATA=DIR: the folder of the retrieval datasets, DIR/{scifact,cosqa}/{notes,queries}.jsonl (documentation/HOW-IT-WORKS.md, Measurements behind the defaults)" >&2; exit 2; }
	@test -d "$(EVAL_DATA)/scifact" -a -d "$(EVAL_DATA)/cosqa" || { \
	  echo "make eval: $(EVAL_DATA) holds no scifact/ and cosqa/ folders with notes.jsonl and queries.jsonl" >&2; exit 2; }
	PINKY_BIN="$(abspath $(BIN))" bash scripts/eval-examples.sh
	$(BIN)/python benchmarks/eval_retrieval.py --data "$(EVAL_DATA)"
	$(BIN)/python benchmarks/calibrate_gaps.py --data "$(EVAL_DATA)"

clean:
	rm -rf $(VENV) .demo .bench .pytest_cache
