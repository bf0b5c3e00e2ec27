"""Regenerate the audit table in docs/audit.md: ``python scripts/audit_docs.py`` (``--check`` only compares).

The table is the exhaustive 3×3 audit of every built-in player (``noughts.audit``); the text around it
is kept. tests/test_audit.py checks that the committed table matches a fresh audit.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from noughts.audit import TABLE_BEGIN, TABLE_END, builtin_reports, markdown_table  # noqa: E402

DOC = ROOT / "docs" / "audit.md"


def regenerated(text: str, table: str) -> str:
    """``text`` with the part between the markers replaced by ``table``."""
    before, begin, rest = text.partition(TABLE_BEGIN)
    _, end, after = rest.partition(TABLE_END)
    if not begin or not end:
        raise SystemExit(f"{DOC}: the markers {TABLE_BEGIN!r} and {TABLE_END!r} are missing")
    return f"{before}{TABLE_BEGIN}\n{table}{TABLE_END}{after}"


def main(argv: list[str]) -> int:
    started = time.perf_counter()
    table = markdown_table(builtin_reports())
    seconds = time.perf_counter() - started
    text = DOC.read_text(encoding="utf-8")
    new = regenerated(text, table)
    if "--check" in argv:
        print("docs/audit.md is up to date" if new == text else "docs/audit.md is out of date")
        return 0 if new == text else 1
    DOC.write_text(new, encoding="utf-8")
    print(f"docs/audit.md: table regenerated (the audit of every built-in player took {seconds:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
