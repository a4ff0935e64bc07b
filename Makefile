# Two commands set up and run everything on a fresh Debian machine:
#   make test   the whole test suite (installs what it needs first)
#   make demo   see below
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
TEST_DEBS := chromium xvfb xdotool

.PHONY: test lint venv debs demo

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

#   make demo   the whole loop on the bundled sample app (teach → compile → store → replay on a changed app → feedback)
DEMO_DEBS := chromium xvfb

demo: venv
	./scripts/ensure-debs $(DEMO_DEBS)
	$(BIN)/teachd demo
