# Two entry points, both usable on a fresh machine: `make quickstart` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: quickstart test lint bench install

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

# The whole suite, on SQLite and on PostgreSQL (started here if it is installed but down).
test: install
	.ci/ensure-postgres
	$(BIN)/ruff check .
	$(BIN)/pytest -n 2 -q

lint: install
	$(BIN)/ruff check .

bench: install
	$(BIN)/python bench/classify.py
	$(BIN)/python bench/promote.py
	$(BIN)/python bench/ingest.py
	$(BIN)/python bench/review.py
