"""Terminal input and output: lines read safely as bytes, the board drawn as text, colour only where wanted.

>>> print(render(Board.parse("X../.O./...")))
     a   b   c
 1   X | 2 | 3
    ---+---+---
 2   4 | O | 6
    ---+---+---
 3   7 | 8 | 9
>>> print(render(Board.parse("XXX/OO./..."), last=2, line=(0, 1, 2)))
     a   b   c
 1  *X*|*X*|*X*
    ---+---+---
 2   O | O | 6
    ---+---+---
 3   7 | 8 | 9
"""

from __future__ import annotations

from noughts.board import Board
from noughts.text import MARK_ANSI, colour_wanted

TYPE_CHECKING = False  # typing costs milliseconds at import; mypy still reads the block
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import IO

MAX_INPUT_BYTES = 256  # nobody types a longer line; longer lines are skipped, not stored
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

_QUIT = frozenset({"q", "quit", "exit"})
_HELP = frozenset({"?", "h", "help"})
_UNDO = frozenset({"u", "undo"})
_HINT = frozenset({"hint"})
_YES = frozenset({"y", "yes"})
_NO = frozenset({"n", "no"})
_TOO_LONG = "\0too long\0"  # compared by identity: no line read from input is this object

# ANSI colours, only ever used on a terminal that has not asked for none (NO_COLOR).
_RESET = "\x1b[0m"
_STYLE: dict[str | None, str] = {"X": MARK_ANSI["X"], "O": MARK_ANSI["O"], None: "\x1b[2m"}
_WIN = "\x1b[1;7m"
_BOLD = "\x1b[1m"


def use_colour(stream: IO[str], environ: Mapping[str, str] | None = None) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set (https://no-color.org) or TERM=dumb."""
    if not colour_wanted(environ):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or fake stream
        return False


def render(board: Board, *, last: int | None = None, line: Iterable[int] | None = None,
           colour: bool = False) -> str:
    """The board with column letters and row numbers; an empty cell shows the number to type.

    ``last`` is shown in brackets and the cells of ``line`` between stars (and, with
    ``colour``, in reverse video), so both show without colour too.
    """
    width = len(str(board.size))
    rule = "+".join("-" * (width + 2) for _ in range(board.cols))
    margin = len(str(board.rows)) + 2
    # letters, numbers and marks all line up on the cell's last character
    header = " " * (margin + 1) + "".join(f" {chr(ord('a') + c):>{width}}  " for c in range(board.cols))
    winning = set(line or ())
    lines = [header.rstrip()]
    for r in range(board.rows):
        cells = []
        for c in range(board.cols):
            cell = r * board.cols + c
            mark = board[cell]
            text = mark or str(cell + 1)
            if colour:
                text = f"{_WIN if cell in winning else ''}{_STYLE[mark]}{text}{_RESET}"
            left, right = ("*", "*") if cell in winning else ("[", "]") if cell == last else (" ", " ")
            pad = " " * (width - (len(mark) if mark else len(str(cell + 1))))
            cells.append(f"{pad}{left}{text}{right}")
        if r:
            lines.append(" " * (margin + 1) + rule)
        lines.append(f" {r + 1:<{margin}}" + "|".join(cells).rstrip())
    return "\n".join(lines)


class _Input:
    """Lines typed by the person, read as bytes so that no input whatever can crash the game."""

    def __init__(self, source: IO[bytes], out: IO[str]) -> None:
        self.source = source
        self.out = out

    def ask(self, prompt: str) -> str | None:
        """Show ``prompt`` and read a line: stripped text, ``_TOO_LONG``, or ``None`` at end of input."""
        self.out.write(prompt)
        self.out.flush()
        raw = self.source.readline(MAX_INPUT_BYTES + 1)
        if not raw:
            return None
        if len(raw) > MAX_INPUT_BYTES and not raw.endswith(b"\n"):
            while True:  # drop the rest in bounded pieces: memory stays small whatever arrives
                more = self.source.readline(MAX_INPUT_BYTES)
                if not more or more.endswith(b"\n"):
                    break
            return _TOO_LONG
        return raw.decode("utf-8", "replace").strip()
