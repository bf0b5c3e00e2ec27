"""Terminal input and output: lines read safely as bytes, colour only where wanted.

The board itself is drawn by :func:`noughts.text.board_diagram`, which `noughts status` uses too.
"""

from __future__ import annotations

from noughts.text import colour_wanted

TYPE_CHECKING = False  # typing costs milliseconds at import; mypy still reads the block
if TYPE_CHECKING:
    from collections.abc import Mapping
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

# ANSI bold, only ever used on a terminal that has not asked for no colour (NO_COLOR).
_RESET = "\x1b[0m"
_BOLD = "\x1b[1m"


def use_colour(stream: IO[str], environ: Mapping[str, str] | None = None) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set (https://no-color.org) or TERM=dumb."""
    if not colour_wanted(environ):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or fake stream
        return False


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
