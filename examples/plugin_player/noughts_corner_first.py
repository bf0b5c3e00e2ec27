"""An example plug-in player for noughts: win, else block, else a free corner, else any cell.

The class is the factory the entry point names: noughts calls ``CornerFirstPlayer(rng, budget=...)``
for each game and then ``choose(board)`` for each move. ``label``, ``description`` and ``boards``
are what menus show and which boards it is offered on.
"""

from __future__ import annotations

import random

from noughts import Board, Budget


class CornerFirstPlayer:
    """Win, block, a free corner, any cell."""

    name = "corner-first"
    label = "Corner first (plug-in)"
    description = "win, block, else a free corner, else any cell"
    boards = "any"  # or "3x3", "solvable", or a function boards(board) -> reason or None

    def __init__(self, rng: random.Random | None = None, *, budget: Budget | None = None) -> None:
        self.rng = rng if rng is not None else random.Random()  # budget: nothing to search, so unused

    def choose(self, board: Board) -> int:
        moves = board.legal_moves
        me = board.turn
        for cell in moves:  # a move that wins
            if board.play(cell).winner == me:
                return cell
        for cell in moves:  # a cell the opponent would win on
            if _opponent_wins_at(board, cell):
                return cell
        corners = [c for c in (0, board.cols - 1, board.size - board.cols, board.size - 1) if c in moves]
        return corners[0] if corners else self.rng.choice(moves)


def _opponent_wins_at(board: Board, cell: int) -> bool:
    """Whether the other side would complete a line by playing ``cell``."""
    them = "O" if board.turn == "X" else "X"
    bit = 1 << cell
    marks = (board.o if them == "O" else board.x) | bit
    return any(marks & line == line for line in board.geometry.lines_through[cell])
