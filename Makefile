# The two commands the README promises: `make test` and (with the server) `make serve`.
# Both create .venv on first use; nothing needs installing by hand beyond Python 3.11 and Node 20.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
CLIENTS := tests/clients
NODE_INSTALLED := $(CLIENTS)/node_modules/.installed

.PHONY: test lint typecheck pytest install clean serve

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
pytest: install
	$(BIN)/pytest

test: lint typecheck pytest

# The demo: the deterministic demo agent and the chat page on http://127.0.0.1:8000/ (no API key).
# `make serve SERVE_ARGS="--host 0.0.0.0 --port 9000"` to change where it listens.
serve: $(INSTALLED)
	$(BIN)/python -m uibridge serve $(SERVE_ARGS)

clean:
	rm -rf $(VENV) $(CLIENTS)/node_modules
