# Every target sets itself up from nothing: it creates .venv and installs what it needs.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
READY  := $(VENV)/.ready-dev
PLAY_READY := $(VENV)/.ready-play
BENCH_READY := $(VENV)/.ready-bench
TEST_WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) + 1 )))

.PHONY: play test bench docs lint lock clean system-packages

# `play` installs only the front ends' extras (pygame-ce, the web server, the panel's and robot's libraries):
# 20–50 s the first time (README), nothing after. PLAY_ARGS passes options, e.g. make play PLAY_ARGS="--opponent hard".
# Ctrl-C is one way to stop playing: the game says goodbye and exits 130, which is no error of the recipe's
# (the trap keeps the recipe's shell alive to say so; the game itself still gets Ctrl-C).
play: $(PLAY_READY)
	@trap : INT; $(VENV)/bin/noughts play $(PLAY_ARGS) || { status=$$?; [ $$status -eq 130 ] || exit $$status; }

# The suite runs in parallel (pytest-xdist), a test file to a worker (its module fixtures, such as
# the firmware build and the browser, made once), the files marked slow first (tests/conftest.py).
# One worker more than there are cores: many tests wait (for simavr, the browser, a panel's clock).
# Compiled modules are cached (__pycache__, ignored by git) even where PYTHONDONTWRITEBYTECODE is
# set: every worker and every `python -m noughts` a test starts would compile them all again.
# conftest.py compiles them once (tests with pytest's rewritten asserts) before the workers start.
# A crashed worker is not replaced: xdist would run the test it died on again and, with loadfile,
# can then wait forever (pytest-xdist #1313, #1371); the run ends failed instead.
# PYTEST_ARGS adds options, e.g. PYTEST_ARGS="-k engine"; TEST_WORKERS=1 runs one file at a time.
test: system-packages $(READY)
	PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder \
		--max-worker-restart 0 $(PYTEST_ARGS)

# The Debian packages the tests need (Chromium, the AVR toolchain, simavr), installed when missing:
# one dpkg-query when they are all there. SYSTEM_PACKAGES=skip leaves them to you.
system-packages:
ifneq ($(SYSTEM_PACKAGES),skip)
	@sh scripts/system-packages.sh
endif

bench: $(READY) $(BENCH_READY)
	$(PY) benchmarks/run.py $(BENCH_ARGS)
	$(PY) benchmarks/envs.py $(BENCH_ARGS)
	$(PY) benchmarks/web_load.py --redis $(BENCH_ARGS)
	$(PY) benchmarks/web_frames.py $(BENCH_ARGS)
	$(PY) benchmarks/web_floor.py $(BENCH_ARGS)
	$(PY) benchmarks/web_attacks.py $(BENCH_ARGS)
	$(PY) benchmarks/robot.py $(BENCH_ARGS)
	$(PY) benchmarks/paper.py $(BENCH_ARGS)
	$(PY) benchmarks/arena.py $(BENCH_ARGS)
	$(PY) benchmarks/store.py $(BENCH_ARGS)
	$(PY) benchmarks/strong.py $(BENCH_ARGS)
	$(PY) benchmarks/move_times.py $(BENCH_ARGS)
	$(PY) benchmarks/threats.py $(BENCH_ARGS)
	$(PY) benchmarks/proofs.py $(BENCH_ARGS)

# The documentation site in site/: the pages in docs/ and the API from the docstrings (mkdocs.yml);
# strict, so a broken link or reference fails. Open site/index.html.
docs: $(READY)
	$(VENV)/bin/mkdocs build --quiet
	@echo "The documentation is in site/index.html"

lint: $(READY)
	$(VENV)/bin/ruff check src tests benchmarks examples
	$(VENV)/bin/mypy

$(VENV)/.created:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11) and "noughts needs Python 3.11 or newer, not " + sys.version.split()[0])'
	$(PYTHON) -m venv $(VENV)
	@touch $@

# Every install takes its versions from constraints.txt, the ones CI tested, so a fresh machine next
# month gets the same; `make lock` refreshes it.
PIP_INSTALL := $(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt

$(PLAY_READY): pyproject.toml constraints.txt | $(VENV)/.created
	@echo "Setting up noughts in $(VENV) (once)..."
	@$(PIP_INSTALL) -e '.[desktop,web,panel,robot,picture]'
	@touch $@

$(READY): pyproject.toml constraints.txt | $(VENV)/.created
	$(PIP_INSTALL) -e '.[dev,docs,desktop,web,panel,robot,rl,picture,postgres]'
	@touch $@ $(PLAY_READY)

# OpenSpiel is a baseline only: without a wheel for this platform its rows print as n/a.
$(BENCH_READY): benchmarks/requirements.txt constraints.txt
	$(PIP_INSTALL) -r benchmarks/requirements.txt \
		|| echo "OpenSpiel could not be installed: its baseline rows will be n/a"
	@touch $@

# constraints.txt anew: the newest versions pyproject.toml allows, installed in a throwaway virtualenv and
# checked with pip check (scripts/lock.sh). Then run make clean test, and commit the file with the result.
lock:
	sh scripts/lock.sh

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis src/*.egg-info site
	find src tests benchmarks -name __pycache__ -prune -exec rm -rf {} +
