"""A plain game in the terminal: the person is X and moves first, a computer player is O.

>>> print(render(Board.parse("X../.O./...")))
     a   b   c
 1   X | 2 | 3
    ---+---+---
 2   4 | O | 6
    ---+---+---
 3   7 | 8 | 9
"""

from __future__ import annotations

import random
import sys
from typing import IO

from noughts.board import Board
from noughts.errors import NoughtsError

__all__ = ["DEFAULT_OPPONENT", "MAX_INPUT_BYTES", "play", "render"]

DEFAULT_OPPONENT = "hard"
MAX_INPUT_BYTES = 256  # nobody types a longer move; longer lines are skipped, not stored
_QUIT = frozenset({"q", "quit", "exit"})
_HELP = frozenset({"?", "h", "help"})


def render(board: Board) -> str:
    """The board with column letters and row numbers; an empty cell shows the number to type."""
    width = len(str(board.size))
    rule = "+".join("-" * (width + 2) for _ in range(board.cols))
    margin = len(str(board.rows)) + 2
    header = " " * (margin + 1) + "".join(f" {chr(ord('a') + c):^{width}}  " for c in range(board.cols))
    lines = [header.rstrip()]
    for r in range(board.rows):
        cells = []
        for c in range(board.cols):
            cell = r * board.cols + c
            cells.append(f" {board[cell] or str(cell + 1):>{width}} ")
        if r:
            lines.append(" " * (margin + 1) + rule)
        lines.append(f" {r + 1:<{margin}}" + "|".join(cells).rstrip())
    return "\n".join(lines)


def play(opponent: str = DEFAULT_OPPONENT, seed: int | None = None,
         stdin: IO[bytes] | None = None, stdout: IO[str] | None = None) -> int:
    """Play one game; returns the exit status (0 when it ends or on end of input, 130 on Ctrl-C).

    Raises :class:`~noughts.errors.NoughtsError` if ``opponent`` is not a player's name.
    """
    from noughts import players
    from noughts.game import Game

    source = stdin if stdin is not None else sys.stdin.buffer
    out = stdout if stdout is not None else sys.stdout
    computer = players.get(opponent, rng=random.Random(seed))
    game = Game(x_name="you", o_name=opponent)

    def say(text: str = "") -> None:
        out.write(text + "\n")
        out.flush()

    try:
        say(f"noughts: you are X and move first; the computer ({opponent}) is O.")
        say(_instructions(game.board))
        say()
        say(render(game.board))
        while not game.board.is_over:
            cell = _ask(game.board, source, out)
            if cell is None:
                say("\nGoodbye.")
                return 0
            game.play(cell)
            if not game.board.is_over:  # the computer answers at once; one redraw shows both moves
                reply = game.play_computer(computer)
                say(f"Computer move: {game.board.cell_name(reply)}")
            say()
            say(render(game.board))
        say(_result(game.board))
        return 0
    except KeyboardInterrupt:
        say("\nInterrupted: game abandoned.")
        return 130


def _instructions(board: Board) -> str:
    last_col = chr(ord("a") + board.cols - 1)
    return (f"Type a cell as a number 1-{board.size} or as column and row, a1-{last_col}{board.rows}; "
            "'quit' or Ctrl-D leaves.")


def _ask(board: Board, source: IO[bytes], out: IO[str]) -> int | None:
    """Prompt until the person types a free cell; ``None`` when they leave."""
    while True:
        out.write("Your move (X): ")
        out.flush()
        raw = source.readline(MAX_INPUT_BYTES + 1)
        if not raw:
            return None
        if len(raw) > MAX_INPUT_BYTES and not raw.endswith(b"\n"):
            while True:  # drop the rest in bounded pieces
                more = source.readline(MAX_INPUT_BYTES)
                if not more or more.endswith(b"\n"):
                    break
            out.write("That line is far too long to be a move. " + _instructions(board) + "\n")
            continue
        text = raw.decode("utf-8", "replace").strip()
        if not text:
            out.write(_instructions(board) + "\n")
            continue
        if text.lower() in _QUIT:
            return None
        if text.lower() in _HELP:
            out.write(_instructions(board) + "\n")
            continue
        try:
            cell = board.parse_cell(text)
            board.play(cell)  # only to check the cell is free
        except NoughtsError as error:  # the message names the cell: "z9 is off the board: ..."
            out.write(f"{error}\n")
            continue
        return cell


def _result(board: Board) -> str:
    line = board.winning_line
    cells = " ".join(board.cell_name(c) for c in line) if line else ""
    if board.winner == "X":
        return f"You win with {cells}!"
    if board.winner == "O":
        return f"The computer wins with {cells}."
    return "It's a draw."
