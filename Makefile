# Two commands set up and run everything on a fresh Debian machine:
#   make test   the whole test suite (installs what it needs first)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
TEST_DEBS := chromium xvfb xdotool

.PHONY: test lint venv debs

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q -e '.[test]'
	touch $@

venv: $(BIN)/.installed

debs:
	./scripts/ensure-debs $(TEST_DEBS)

lint: venv
	$(BIN)/ruff check .

test: venv debs lint
	$(BIN)/python -m pytest -q
