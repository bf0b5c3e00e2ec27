"""A griffe extension for `make docs`: doctest examples in docstrings are shown as code.

Sphinx roles such as ``:class:`Board``` are shown as code too.

The docstrings are plain text whose examples are doctests (run by the test suite); without this,
Markdown would read ``[...]`` in their output as links.
"""

from __future__ import annotations

import re
from typing import Any

from griffe import Extension, Object

_ROLE = re.compile(r":(?:class|func|meth|data|attr|mod|exc):`~?([^`]+)`")  # Sphinx roles, shown as code


def fence_doctests(text: str) -> str:
    """Put each run of doctest lines (a ``>>>`` line, its ``...`` lines and its output) in a fence."""
    lines = _ROLE.sub(r"`\1`", text).splitlines()
    shown: list[str] = []
    in_example = False
    for line in lines:
        starts = line.lstrip().startswith(">>>")
        if starts and not in_example:
            shown.append("```pycon")
            in_example = True
        elif in_example and not line.strip():
            shown.append("```")
            in_example = False
        shown.append(line)
    if in_example:
        shown.append("```")
    return "\n".join(shown)


class DoctestsAsCode(Extension):
    def on_instance(self, *, obj: Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = fence_doctests(obj.docstring.value)
