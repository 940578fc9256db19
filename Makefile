# Developer entry points. Everything runs from the project's own virtualenv.
PYTHON ?= python3.11
VENV   ?= .venv
PY     := $(VENV)/bin/python
# Why a stamp: reinstall only when the dependencies (pyproject.toml) change.
STAMP  := $(VENV)/.installed-stamp
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: run test lint bench migrate clean chromium openapi

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -e '.[test]'
	touch $(STAMP)

# Without DATABASE_URL an embedded PostgreSQL keeps its files in ./data/postgres.
# `serve` migrates the database before it starts the workers.
run: $(STAMP)
	$(VENV)/bin/cardroom serve --host $(HOST) --port $(PORT)

migrate: $(STAMP)
	$(VENV)/bin/cardroom migrate

# TEST_DATABASE_URL (an admin URL) if set; else Docker (testcontainers); else embedded PostgreSQL.
test: $(STAMP) chromium
	$(PY) -m pytest -n auto tests

# The web page's browser tests (tests/test_web_*.py) drive Debian's chromium through Playwright;
# Playwright's own browser download is never used. As root on Debian, install it if missing.
chromium:
	@command -v chromium >/dev/null || [ -n "$$CARDROOM_CHROMIUM" ] || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	    { apt-get install -y --no-install-recommends chromium || \
	      { apt-get update && apt-get install -y --no-install-recommends chromium; }; }; } || \
	  { echo "The browser tests need Chromium: apt-get install chromium, or set CARDROOM_CHROMIUM" >&2; exit 1; }

# The contract is generated from the routes and the marshmallow schemas (service/http/contract.py).
openapi: $(STAMP)
	$(VENV)/bin/cardroom openapi > openapi.yaml

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

bench: $(STAMP)
	$(PY) -m bench.run

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
	@echo "kept ./data (the embedded database); remove it by hand to start afresh"
