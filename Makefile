# Two entry points, both usable on a fresh machine: `make quickstart` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: quickstart test lint bench install llm-server llm-eval

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[test]'
	touch $@

install: $(BIN)/.installed

# The main job on the embedded defaults: SQLite file ./yzos.db, LLM backend dry_run.
quickstart: install
	$(BIN)/yzos-jobs import jsonl examples/observations.jsonl
	$(BIN)/yzos-jobs once entity_promote
	$(BIN)/yzos-jobs status

# Lint and format check, the whole suite on SQLite and on PostgreSQL (started here if it is
# installed but down), then the real_llm tests when a local llama.cpp server is built (always in
# CI); the time of each part at the end. .ci/test says how.
test: install
	.ci/ensure-postgres
	BIN=$(BIN) .ci/test

# Build llama.cpp's server and the Gemma 3 270M model once per machine (cached under
# ~/.cache/yzos-jobs/llm) and print how to start it and point yzos-jobs at it.
llm-server:
	scripts/llm-server

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# Every benchmark, each printing its figures beside a baseline measured in the same run (about
# an hour on two cores). `make llm-eval` runs the real model separately.
bench: install
	.ci/ensure-postgres
	$(BIN)/python bench/startup.py
	$(BIN)/python bench/classify.py
	$(BIN)/python bench/promote.py
	$(BIN)/python bench/llm_path.py
	$(BIN)/python bench/ingest.py
	$(BIN)/python bench/ingest.py --postgres
	$(BIN)/python bench/extraction.py
	$(BIN)/python bench/review.py

# `yzos-jobs eval` against the local llama.cpp server in both constraint modes (several minutes).
llm-eval: install
	scripts/llm-server --path >/dev/null
	$(BIN)/python bench/llm_eval.py
