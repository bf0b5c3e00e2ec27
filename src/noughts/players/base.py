"""What the computer players share: the :class:`Player` protocol and the checks they all make."""

from __future__ import annotations

import random

from noughts.board import Board
from noughts.errors import IllegalMoveError, UnsupportedBoardError

TYPE_CHECKING = False  # typing takes longer to import than a perfect player's first move; mypy reads the block
if TYPE_CHECKING:
    from typing import Protocol
else:
    Protocol = object  # Player only documents the shape: nothing checks against it at run time

__all__ = [
    "CORNERS", "SIDES", "Player", "classic_board_problem", "completing_cells", "empty_cells", "ensure_classic_board",
    "ensure_playable", "make_rng", "own_and_opponent",
]

CORNERS = (0, 2, 6, 8)  # 3×3 corners in reading order
SIDES = (1, 3, 5, 7)  # 3×3 edge middles in reading order


class Player(Protocol):
    """A computer player: it has a name and picks a legal cell for the side to move."""

    name: str

    def choose(self, board: Board) -> int: ...


def make_rng(rng: random.Random | None) -> random.Random:
    """The caller's generator, or a fresh unseeded one when they gave none."""
    return rng if rng is not None else random.Random()


def ensure_playable(board: Board) -> None:
    """Refuse to pick a move in a finished game."""
    if board.winner is not None:
        raise IllegalMoveError(f"the game is over: {board.winner} has won, so there is no move to choose")
    if board.is_draw:
        raise IllegalMoveError("the game is over: the board is full, so there is no move to choose")


def ensure_classic_board(board: Board, player_name: str) -> None:
    """Refuse any board but 3×3 with 3 in a row (for players whose rules only make sense there)."""
    problem = classic_board_problem(board, player_name)
    if problem is not None:
        raise UnsupportedBoardError(problem)


def classic_board_problem(board: Board, player_name: str) -> str | None:
    """Why a 3×3-only player cannot play ``board``, or ``None`` on 3×3 with 3 in a row."""
    if (board.rows, board.cols, board.k) == (3, 3, 3):
        return None
    return (f"the {player_name} player only plays 3×3 noughts and crosses with 3 in a row; "
            f"this board is {board.rows}×{board.cols} with {board.k} in a row "
            "(random, arduino, minimax and perfect play any board)")


def own_and_opponent(board: Board) -> tuple[int, int]:
    """Bitmasks of the marks of the side to move and of the other side."""
    return (board.o, board.x) if board.ply & 1 else (board.x, board.o)


def empty_cells(mask: int) -> list[int]:
    """The cells of a bitmask, ascending."""
    cells = []
    while mask:
        low = mask & -mask
        cells.append(low.bit_length() - 1)
        mask ^= low
    return cells


def completing_cells(board: Board, mine: int, theirs: int) -> int:
    """Bitmask of empty cells that would give ``mine`` k in a row (lines ``theirs`` has not blocked)."""
    need = board.k - 1
    found = 0
    for mask in board.geometry.line_masks:
        if not theirs & mask and (mine & mask).bit_count() == need:
            found |= mask & ~mine
    return found
