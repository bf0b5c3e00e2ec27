"""Every sentence a person reads about a game, in one place, and the names people see.

Front ends (terminal, window, web page, panel) take their wording from here, so a result is
announced the same way everywhere.
"""

from __future__ import annotations

import os

from noughts.board import Board
from noughts.errors import NoughtsError

TYPE_CHECKING = False  # typing costs milliseconds at import; mypy still reads the block
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

MAX_NAME = 40  # a name is shown in tables and prompts


def describe_line(board: Board, line: Sequence[int], dash: str = "–") -> str:
    """Name a line of cells: 'the top row a1–c1', 'the left column a1–a3', 'the diagonal a1–c3'.

    >>> board = Board()
    >>> describe_line(board, (0, 1, 2)), describe_line(board, (2, 4, 6), "-")
    ('the top row a1–c1', 'the diagonal c1-a3')
    >>> describe_line(Board(4, 4), (1, 5, 9, 13))
    'column b b1–b4'
    """
    rows, cols = board.rows, board.cols
    (r0, c0), (r1, c1) = divmod(line[0], cols), divmod(line[-1], cols)
    if r0 == r1:
        name = ("the top row" if r0 == 0 else "the bottom row" if r0 == rows - 1
                else "the middle row" if rows == 3 else f"row {r0 + 1}")
    elif c0 == c1:
        name = ("the left column" if c0 == 0 else "the right column" if c0 == cols - 1
                else "the middle column" if cols == 3 else f"column {chr(ord('a') + c0)}")
    else:
        name = "the diagonal"
    return f"{name} {board.cell_name(line[0])}{dash}{board.cell_name(line[-1])}"


def shown(text: str, limit: int = 20) -> str:
    """Echo what someone typed safely: quoted, control characters escaped, cut short."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + "…"


def plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else plural or word + 's'}"


def check_name(text: str, what: str) -> str:
    name = " ".join(text.split())
    if not name:
        raise NoughtsError(f"{what} cannot be empty")
    if len(name) > MAX_NAME:
        raise NoughtsError(f"{what} is at most {MAX_NAME} characters long, not {len(name)}")
    if not name.isprintable():
        raise NoughtsError(f"{what} can only hold printable characters, not {shown(name)}")
    return name


def default_name(environ: Mapping[str, str] | None = None, fallback: str = "You") -> str:
    """The person's name when none is given: the login name, else ``fallback``."""
    env = os.environ if environ is None else environ
    for variable in ("USER", "USERNAME", "LOGNAME"):
        try:
            return check_name(env.get(variable, ""), "a name")
        except NoughtsError:
            continue
    return fallback
