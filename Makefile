# Every target sets itself up from nothing: it creates .venv and installs what it needs.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
READY  := $(VENV)/.ready-dev
BENCH_READY := $(VENV)/.ready-bench

.PHONY: play test bench lint clean

# The game needs nothing but Python itself, so a fresh clone plays at once: no venv, no install
# (installing the dev tools first took about 20 s). PLAY_ARGS passes options, e.g. --opponent hard.
play:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11) and "noughts needs Python 3.11 or newer, not " + sys.version.split()[0])'
	@PYTHONPATH=src $(PYTHON) -m noughts play $(PLAY_ARGS)

test: $(READY)
	$(PY) -m pytest

bench: $(READY) $(BENCH_READY)
	$(PY) benchmarks/run.py $(BENCH_ARGS)

lint: $(READY)
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/mypy

$(READY): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev,desktop,web]'
	@touch $@

# OpenSpiel is a baseline only: without a wheel for this platform its rows print as n/a.
$(BENCH_READY): benchmarks/requirements.txt
	$(PY) -m pip install --quiet --disable-pip-version-check -r benchmarks/requirements.txt \
		|| echo "OpenSpiel could not be installed: its baseline rows will be n/a"
	@touch $@

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis src/*.egg-info
