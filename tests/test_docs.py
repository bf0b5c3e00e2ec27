"""The documentation: every Python example in the README and docs/ runs, and `make docs` builds the site.

The ``>>>`` examples are doctests (pytest collects README.md and docs/*.md); the engine protocol's
``→``/``←`` exchanges are run by test_engine.py. Here the plain ``python`` blocks run, a file's blocks
in order in one namespace, as a reader would paste them.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import noughts

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def python_blocks(page: Path) -> list[str]:
    """The page's ``python`` blocks that are not doctests (those run as doctests)."""
    return [block for block in _BLOCK.findall(page.read_text(encoding="utf-8")) if ">>>" not in block]


def test_the_pages_have_python_examples_to_run() -> None:
    assert sum(len(python_blocks(page)) for page in PAGES) >= 6


@pytest.mark.parametrize("page", [p for p in PAGES if python_blocks(p)], ids=lambda p: p.name)
def test_every_python_example_runs(page: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    # The examples run `noughts` as a reader's shell would find it: next to this Python.
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("NOUGHTS_DB", str(tmp_path / "noughts.db"))
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__docs__"}
    for number, block in enumerate(python_blocks(page), 1):
        try:
            exec(compile(block, f"{page.name}, python block {number}", "exec"), namespace)
        except Exception as error:  # the block and its error, not only a traceback into exec
            pytest.fail(f"{page.name}, python block {number} failed: {error!r}\n{block}")
    capsys.readouterr()


@pytest.mark.slow
def test_make_docs_builds_the_site_strictly(tmp_path: Path) -> None:
    # mkdocs.yml is strict: a broken link, a missing page or an unknown API name fails the build.
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--quiet", "--strict", "--site-dir",
                           str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    board_page = (tmp_path / "site" / "api" / "board" / "index.html").read_text(encoding="utf-8")
    assert "legal_moves" in board_page and "winning_line" in board_page  # from the docstrings
    assert ":class:" not in board_page  # Sphinx roles are shown as code
    assert '<code class="language-pycon">&gt;&gt;&gt; board = Board.parse(' in board_page  # doctests as code


def test_the_version_has_one_source() -> None:
    assert importlib.metadata.version("noughts") == noughts.__version__
    assert 'dynamic = ["version"]' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


def test_the_licence_is_mit_and_shipped() -> None:
    metadata = importlib.metadata.metadata("noughts")
    assert metadata["License-Expression"] == "MIT"
    assert "MIT License" in (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert any(c.startswith("Topic :: Games/Entertainment") for c in metadata.get_all("Classifier") or [])


def test_the_changelog_names_this_version() -> None:
    assert f"## {noughts.__version__}" in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
