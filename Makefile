# Two commands set up and run everything on a fresh Debian machine:
#   make test   the whole test suite (installs what it needs first)
#   make demo   see below
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Debian packages, each list defined before it is used (`:=` expands at once: a list named before
# it is defined is empty, which once left the desktop apps out of `make test`). tests/test_packages.py
# checks every program the code starts against `make print-debs`.
DEMO_DEBS := chromium chromium-headless-shell xvfb  # the shell: headless runs, a third of the CPU
# a desktop with an accessibility bus (tests/desktop.py): a GTK editor, a GTK calculator, an app without one
DESKTOP_DEBS := dbus-x11 at-spi2-core libatk-adaptor gir1.2-atspi-2.0 openbox x11-utils mousepad zenity x11-apps \
  galculator featherpad
TEST_DEBS := $(DEMO_DEBS) xdotool postgresql $(DESKTOP_DEBS)
# npm for axe-core and the MCP Inspector (tests/axe.py, tests/inspector.py), installed only where no npm is on
# the PATH (a machine's Node.js may carry its own)
NPM_DEB := npm
# what pip needs to build PyGObject (the desktop extra)
BUILD_DEBS := pkg-config libgirepository1.0-dev libcairo2-dev

.PHONY: test test-fast lint venv debs print-debs demo docs wheel-demo test-under-load

$(BIN)/.installed: pyproject.toml
	./scripts/ensure-debs $(BUILD_DEBS)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --no-compile -e '.[test]'  # bytecode is written on first import, only for what runs
	touch $@

venv: $(BIN)/.installed

debs:
	./scripts/ensure-debs $(TEST_DEBS)
	command -v npm > /dev/null || ./scripts/ensure-debs $(NPM_DEB)

#   make print-debs   every Debian package `make test` and `make demo` install, one a line
print-debs:
	@printf '%s\n' $(TEST_DEBS) $(BUILD_DEBS) $(NPM_DEB) | sort -u

# ruff (complexity ceilings included), mypy, vulture over everything and then over the product alone
# (nothing in the wheel may serve only tests/), and import-linter's layers
LINT = $(BIN)/ruff check . && $(BIN)/mypy && $(BIN)/vulture && $(BIN)/vulture teachd recorder compiler \
	&& $(BIN)/lint-imports --no-cache

lint: venv
	$(LINT)

# Two workers a core. Half of a test's time is waiting (a browser starting, a page settling, a
# daemon answering, a step timing out on purpose), and a second worker on the core fills it: on 2
# cores at 1631790 pytest took 10 min 39 s with two workers and 7 min 16 s with four (the cores
# 83 % busy, against about half with two). On a machine where the CPU is the bound (about 20
# CPU-minutes at d8a3d1a), four were as fast as two (14 min 29 s against 13 min 40 s to 16 min
# 8 s), and green beside `stress --cpu 2` (docs/testing.md). `--dist loadgroup`: a module that
# builds its fixtures once runs on one worker (tests/conftest.py marks it), instead of on each.
PYTEST_WORKERS := -n $(shell echo $$((2 * $$(nproc)))) --dist loadgroup

# The real apps' own environments (Django LTS and newest, Wagtail old and new: tests/realapps.py,
# cached in build/real-apps), the MCP Inspector (npm, with its Node.js 22: tests/inspector.py, in
# build/inspector) and the linters all run beside pytest rather than before it: the workers leave
# part of the cores idle while their tests wait on browsers and apps, and a test that needs an
# environment first installs it itself, under the lock the background install holds. The linters'
# report follows pytest's; either failing fails `make test`.
test: venv debs
	mkdir -p build; $(BIN)/python -m tests.realapps > build/real-apps.log 2>&1 & apps=$$!; \
	  $(BIN)/python -m tests.inspector > build/inspector.log 2>&1 & inspector=$$!; \
	  ( $(LINT) ) > build/lint.log 2>&1 & lint=$$!; \
	  $(BIN)/python -m pytest -q $(PYTEST_WORKERS) --durations=30; tests=$$?; \
	  wait $$lint; linted=$$?; echo "== lint (ruff, mypy, vulture, import-linter)"; cat build/lint.log; \
	  wait $$apps || { cat build/real-apps.log; exit 1; }; \
	  wait $$inspector || { cat build/inspector.log; exit 1; }; \
	  test $$linted -eq 0 || { echo "lint failed"; exit 1; }; exit $$tests

#   make test-fast   the inner loop (about a minute): ruff, then every test that needs no browser, daemon,
#                    child process, desktop, PostgreSQL or real app (markers: tests/conftest.py)
test-fast: venv
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q -n 2 -m "not (e2e or realapps or desktop or postgres)"

#   make test-under-load   `make test` LOAD_RUNS times in a row (3) while Debian's `stress --cpu 2`
#                          keeps both cores busy beside it: the suite must not depend on a quiet machine
LOAD_RUNS ?= 3

test-under-load: venv debs
	./scripts/ensure-debs stress
	stress --cpu 2 > /dev/null 2>&1 & load=$$!; trap 'kill $$load' EXIT; \
	  for i in $$(seq $(LOAD_RUNS)); do echo "== make test beside stress --cpu 2: run $$i of $(LOAD_RUNS)"; \
	    $(MAKE) test || exit 1; done

#   make demo   the whole loop on the bundled sample app (teach → compile → store → replay on a changed app → feedback),
#               then the sample app and the web UI kept up on the demo's home to run it again (Ctrl+C stops them)

demo: venv
	./scripts/ensure-debs $(DEMO_DEBS)
	$(BIN)/teachd demo --serve

#   make docs   the documentation site (docs/, mkdocs.yml) built with --strict into build/site: a broken link,
#               a missing anchor or a page left out of the nav fails it. The `docs` extra is installed
#               into the venv first, again whenever pyproject.toml changes (as the venv target does for [test])
docs: venv
	test $(BIN)/.docs-installed -nt pyproject.toml || { $(BIN)/pip install -q -e '.[docs]' && touch $(BIN)/.docs-installed; }
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict -d build/site

#   make wheel-demo   build the wheel, install it in a clean virtual environment, run `teachd demo` from it,
#                     then speak MCP to its `teachd mcp`
WHEEL_VENV := build/wheel-venv

wheel-demo: venv
	./scripts/ensure-debs $(DEMO_DEBS)
	rm -rf dist build/lib build/bdist* $(WHEEL_VENV)  # a stale build/lib would ship removed modules
	$(BIN)/pip wheel -q --no-deps -w dist .
	$(PYTHON) -m venv $(WHEEL_VENV)
	$(WHEEL_VENV)/bin/pip install -q dist/teachd-*.whl
	cd /tmp && $(CURDIR)/$(WHEEL_VENV)/bin/teachd demo --json > $(CURDIR)/build/wheel-demo.json
	$(BIN)/python -c "import json,sys; d=json.load(open('build/wheel-demo.json')); print('wheel demo:', d['status'], 'effect ok:', d['effect_ok'], 'leaks:', d['leaks']); sys.exit(0 if d['effect_ok'] and not d['leaks'] else 1)"
	cd /tmp && $(CURDIR)/$(WHEEL_VENV)/bin/python $(CURDIR)/scripts/mcp-smoke.py
