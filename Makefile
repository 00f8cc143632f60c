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

# The whole suite, on SQLite and on PostgreSQL (started here if it is installed but down), then
# the real_llm tests against a real llama.cpp server when `make llm-server` has built one (CI
# builds it first and never leaves them out). Those run on their own, after the rest, one test
# at a time: one server with two slots on a small machine is slow enough without a second one
# or the rest of the suite beside it.
test: install
	.ci/ensure-postgres
	$(BIN)/ruff check .
	$(BIN)/pytest -n 2 -q -m "not real_llm"
	@case "$${CI:-}" in 1|true|TRUE|True|yes) in_ci=1 ;; *) in_ci= ;; esac; \
	if [ -z "$$in_ci" ] && ! scripts/llm-server --cached >/dev/null; then \
	  echo "real_llm tests left out: no local llama.cpp server built (make llm-server builds one)"; \
	else \
	  $(BIN)/pytest -q -m real_llm; \
	fi

# Build llama.cpp's server and the Gemma 3 270M model once per machine (cached under
# ~/.cache/yzos-jobs/llm) and print how to start it and point yzos-jobs at it.
llm-server:
	scripts/llm-server

lint: install
	$(BIN)/ruff check .

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
