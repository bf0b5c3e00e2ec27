"""How the suite collects (pytest reads this file for every path it collects: tests/, src/, README.md, docs/).

Two things keep collection cheap, since every pytest-xdist worker collects the whole suite:
- a file is searched for doctests (`--doctest-modules`, `--doctest-glob=*.md`) only if its text has `>>>`,
  so no module is imported, nor test file scanned, just to find nothing;
- before the workers start, the controller compiles every module once (tests with their assertions
  rewritten, as pytest caches them) and makes Hypothesis's Unicode tables, across every core: on a fresh
  clone each worker would otherwise do all of it again at the same time.
"""

from __future__ import annotations

import compileall
import fnmatch
import os
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from _pytest.doctest import DoctestModule, DoctestTextfile

_has_doctest: dict[Path, bool] = {}


def _contains_doctest(path: Path) -> bool:
    if path not in _has_doctest:
        try:
            _has_doctest[path] = b">>>" in path.read_bytes()
        except OSError:
            _has_doctest[path] = True  # let pytest report it
    return _has_doctest[path]


@pytest.hookimpl(wrapper=True)
def pytest_collect_file(file_path: Path) -> Iterator[None]:
    collectors = yield
    if any(isinstance(c, DoctestModule | DoctestTextfile) for c in collectors) and not _contains_doctest(file_path):
        collectors = [c for c in collectors if not isinstance(c, DoctestModule | DoctestTextfile)]
    return collectors


# --- warming the bytecode caches before pytest-xdist's workers start ---


def _compile(job: tuple[str, bool], config: pytest.Config) -> None:
    """Compile one file: a test module as pytest's assertion rewriter caches it, any other plainly."""
    path, rewrite = job
    if path == _HYPOTHESIS_TABLES:
        _hypothesis_tables()
        return
    if not rewrite:
        compileall.compile_file(path, quiet=2)
        return
    # pytest's own cache functions (internal, hence the broad guard: warming is only an optimisation).
    from _pytest.assertion.rewrite import PYC_TAIL, _read_pyc, _rewrite_test, _write_pyc, assertstate_key, get_cache_dir

    fn = Path(path)
    cache_dir = get_cache_dir(fn)
    cache_dir.mkdir(parents=True, exist_ok=True)
    pyc = cache_dir / (fn.name[:-3] + PYC_TAIL)
    if _read_pyc(fn, pyc, lambda *_: None) is None:
        source_hash, code = _rewrite_test(fn, config)
        _write_pyc(config.stash[assertstate_key], code, source_hash, pyc)


_HYPOTHESIS_TABLES = ""  # a job of its own, the longest


def _hypothesis_tables() -> None:
    """Hypothesis's Unicode tables, which st.text() needs: ~3 s to make in each process, then read from
    .hypothesis/unicode_data (internal functions, hence the guard in the caller)."""
    from hypothesis.errors import HypothesisSideeffectWarning
    from hypothesis.internal.charmap import charmap, intervals_from_codec

    with warnings.catch_warnings():  # it warns that this is slow during start-up: here that is the point
        warnings.simplefilter("ignore", HypothesisSideeffectWarning)
        charmap()
        intervals_from_codec("utf-8")


def _jobs(config: pytest.Config) -> list[tuple[str, bool]]:
    patterns = [*config.getini("python_files"), "conftest.py"]
    jobs = []
    for entry in [*config.getini("testpaths"), "src"]:
        root = config.rootpath / entry
        for path in sorted(root.rglob("*.py")) if root.is_dir() else []:
            rewrite = entry != "src" and any(fnmatch.fnmatch(path.name, p) for p in patterns)
            jobs.append((str(path), rewrite))
    return [(_HYPOTHESIS_TABLES, False), *sorted(set(jobs))]


def _shares(jobs: list[tuple[str, bool]], count: int) -> list[list[tuple[str, bool]]]:
    """``jobs`` in ``count`` shares of about the same work, the longest jobs placed first."""

    def work(job: tuple[str, bool]) -> float:  # in bytes of test source rewritten (~6 µs a byte)
        path, rewrite = job
        if path == _HYPOTHESIS_TABLES:
            return 500_000
        return os.path.getsize(path) * (1.0 if rewrite else 0.15)

    shares: list[list[tuple[str, bool]]] = [[] for _ in range(count)]
    loads = [0.0] * count
    for job in sorted(jobs, key=work, reverse=True):
        least = loads.index(min(loads))
        shares[least].append(job)
        loads[least] += work(job)
    return shares


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    config = session.config
    distributing = getattr(config.option, "dist", "no") != "no" and not hasattr(config, "workerinput")
    if not distributing or sys.dont_write_bytecode or sys.platform == "win32":
        return
    slices = _shares(_jobs(config), os.cpu_count() or 1)
    children = []
    for part in slices[1:]:
        pid = os.fork()
        if pid == 0:  # a child compiles its share and leaves at once, running no exit handlers of pytest's
            status = 1
            try:
                status = _compile_all(part, config)
            finally:
                os._exit(status)
        children.append(pid)
    _compile_all(slices[0], config)
    for pid in children:
        os.waitpid(pid, 0)


def _compile_all(jobs: list[tuple[str, bool]], config: pytest.Config) -> int:
    failed = 0
    for job in jobs:
        try:
            _compile(job, config)
        except Exception:  # warming is only an optimisation: the workers compile what is left, as they always did
            failed = 1
    return failed
