"""An older revision's source, for the benchmarks' ``--before REV`` rows."""

from __future__ import annotations

import io
import subprocess
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def older_source(revision: str) -> Path:
    """The ``src`` folder of a git revision, unpacked in a temporary folder (git archive: read only)."""
    root = Path(tempfile.mkdtemp(prefix="noughts-before-"))
    archive = subprocess.run(["git", "archive", "--format=tar", revision, "src"], cwd=HERE.parent,
                             capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(root, filter="data")
    return root / "src"
