# huichat — the two commands of the README's Quick start, and their parts.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test setup lint typecheck pytest bench clean

run: $(STAMP)
	$(BIN)/huichat $(ARGS)

test: $(STAMP) lint typecheck pytest

setup: $(STAMP)

# Re-installs only when the project or its pins change; torch comes from the pinned CPU
# build (constraints.txt), never the multi-GB CUDA wheels.
$(STAMP): pyproject.toml benchmarks/pyproject.toml constraints.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "huichat needs Python 3.11 or newer (set PYTHON=...)")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev]' -e ./benchmarks
	touch $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy

# The end-to-end test drives the real program in tmux, the dashboard test a real headless
# chromium (Debian's, driven by Playwright); install them when we may.
pytest: $(STAMP)
	@command -v tmux >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
		(apt-get update -qq && apt-get install -y -qq tmux >/dev/null) ; } || \
		echo "tmux not found: the end-to-end test will be skipped"
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
		(apt-get update -qq && apt-get install -y -qq chromium chromium-driver >/dev/null) ; } || \
		echo "chromium not found: the dashboard browser test will be skipped"
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/huichat bench $(ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
