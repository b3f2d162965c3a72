# The two commands the README promises: `make test` and (with the server) `make serve`.
# Both create .venv on first use; nothing needs installing by hand beyond Python 3.11 and Node 20.
# `make test-deep` is `make test` with many more Hypothesis examples: a nightly job's run.
# `make test-min` runs the suite again on the lowest versions pyproject.toml allows, in .venv-min (CI runs both).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
CLIENTS := tests/clients
NODE_INSTALLED := $(CLIENTS)/node_modules/.installed

.PHONY: test test-deep test-min lint typecheck pytest install clean serve bench

install: $(INSTALLED) $(NODE_INSTALLED)

$(INSTALLED): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,server]'
	touch $@

$(NODE_INSTALLED): $(CLIENTS)/package.json $(CLIENTS)/package-lock.json
	cd $(CLIENTS) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

lint: $(INSTALLED)
	$(BIN)/ruff check

typecheck: $(INSTALLED)
	$(BIN)/pyright src

# pytest exits 5 when it collected no tests; make fails on any non-zero exit, so that cannot pass silently.
# Property tests run the Hypothesis profile tests/conftest.py loads: `quick` unless HYPOTHESIS_PROFILE says otherwise.
# PYTHONDONTWRITEBYTECODE is emptied for the run (where a shell sets it): without cached bytecode every run
# recompiles src/ and re-rewrites every test module's asserts, and so does each `python -m uibridge` the suite
# starts (several seconds in all). The caches go to __pycache__/, which git ignores.
# Two pytest-xdist workers, each taking whole files (`--dist loadfile`: a module's shared servers, browser and Node
# drives run once): much of the suite waits on Node, Chromium and servers, so the other core has work meanwhile.
pytest: install
	PYTHONDONTWRITEBYTECODE= $(BIN)/pytest -n 2 --dist loadfile

test: lint typecheck pytest

# The suite on the floors: every dependency pyproject.toml declares, and every extra's, at the lowest version it
# allows (tests/dependency_floors.py pins each `>=` bound; pip cannot resolve to lowest versions by itself, and
# exact pins fail loudly where a dependency needs more than a declared floor). What they pull in resolves as usual,
# and so do the dev tools: they run the suite, and none of their versions is a promise to users. Lint and
# type-check are `make test`'s. The floor environment is made anew when pyproject.toml changes, so a dependency
# dropped there is not left installed. Same pytest flags as `make pytest`; exit 5 (no tests) fails here too.
# The floors today: pydantic 2.12.2 (pydantic-core 2.41.4), starlette 0.40.0, anyio 4.10.0, orjson 3.9.0,
# typing-extensions 4.14.1, ag-ui-protocol 1.0.0, uvicorn 0.30.0, httpx 0.28.0, openai 3.45.0, anthropic 0.105.0,
# pydantic-ai-slim 2.68.0, redis 5.0.1, opentelemetry-api 1.30.0, psycopg 3.2.1.
MIN_VENV := .venv-min
MIN_BIN := $(MIN_VENV)/bin
MIN_INSTALLED := $(MIN_VENV)/.installed
FLOORS := tests/dependency_floors.py

$(MIN_INSTALLED): pyproject.toml $(FLOORS) $(INSTALLED)
	rm -rf $(MIN_VENV)
	$(PYTHON) -m venv $(MIN_VENV)
	$(MIN_BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python $(FLOORS) > $(MIN_VENV)/floors.txt
	$(MIN_BIN)/python -m pip install --quiet -c $(MIN_VENV)/floors.txt -e ".[dev,$$($(BIN)/python $(FLOORS) --extras)]"
	touch $@

# `install` too: the JS clients, and the type-check test runs .venv's pyright on uibridge's signatures.
test-min: install $(MIN_INSTALLED)
	PYTHONDONTWRITEBYTECODE= $(MIN_BIN)/pytest -n 2 --dist loadfile

# The `thorough` profile: 1,000 examples a property test instead of 30 (several minutes on 2 cores).
test-deep: lint typecheck install
	$(BIN)/pytest --hypothesis-profile thorough

# The demo: the deterministic demo agent and the chat page on http://127.0.0.1:8000/ (no API key), with
# server-managed history in a SQLite file under .data/ (ignored by git; `make serve STORE=memory:` or
# `STORE=redis://127.0.0.1:6379/0` to change it, `STORE=` for client-held history).
# `make serve SERVE_ARGS="--host 0.0.0.0 --port 9000"` to change where it listens.
STORE ?= sqlite:///.data/uibridge.db
serve: $(INSTALLED)
	$(BIN)/python -m uibridge serve $(if $(STORE),--store $(STORE)) $(SERVE_ARGS)

clean:
	rm -rf $(VENV) $(MIN_VENV) $(CLIENTS)/node_modules

# Benchmarks against the peer (pydantic-ai's UI adapters), in an environment of their own, bench/.venv: the
# peer is installed only there, never as a dependency of uibridge. Not part of `make test`. Runs every
# benchmark and writes bench/RESULTS.md, then fails if a bar was missed; `make bench BENCH_ARGS=framing`
# runs one benchmark (framing, messages, streams, e2e) and only prints its table.
BENCH_VENV := bench/.venv
BENCH_INSTALLED := $(BENCH_VENV)/.installed

$(BENCH_INSTALLED): pyproject.toml bench/requirements.txt
	test -x $(BENCH_VENV)/bin/python || $(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(BENCH_VENV)/bin/python -m pip install --quiet -e '.[server]' -r bench/requirements.txt
	touch $@

bench: $(BENCH_INSTALLED)
	$(BENCH_VENV)/bin/python bench/run_all.py $(BENCH_ARGS)
