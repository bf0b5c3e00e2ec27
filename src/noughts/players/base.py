"""What the computer players share: the :class:`Player` protocol and the checks they all make."""

from __future__ import annotations

import random
from _random import Random as _CoreRandom  # random.Random's base, written in C

from noughts.board import Board
from noughts.errors import IllegalMoveError, UnsupportedBoardError

TYPE_CHECKING = False  # typing takes longer to import than a perfect player's first move; mypy reads the block
if TYPE_CHECKING:
    from typing import Any, Protocol
else:
    Protocol = object  # Player only documents the shape: nothing checks against it at run time

__all__ = [
    "CORNERS", "SIDES", "Player", "classic_board_problem", "completing_cells", "empty_cells", "ensure_classic_board",
    "ensure_playable", "make_rng", "own_and_opponent", "SeededOnFirstDraw",
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


class SeededOnFirstDraw(random.Random):
    """``random.Random(seed)`` that seeds itself only when first drawn from: every draw is the same.

    Seeding the Mersenne Twister takes longer than a perfect move on 3×3, and a player with one
    best move draws nothing; the engine makes one of these per seeded request. The seed is a
    whole number.

    >>> SeededOnFirstDraw(7).random() == random.Random(7).random()
    True
    """

    def __init__(self, seed: int) -> None:  # random.Random.__init__ would seed now
        if type(seed) is not int:
            raise TypeError(f"SeededOnFirstDraw takes a whole number as its seed, not {type(seed).__name__}")
        self._pending: int | None = seed
        self.gauss_next = None  # what random.Random.__init__ sets

    def start_again(self, seed: int) -> None:
        """Start again as ``random.Random(seed)`` would (seeded at the next draw), keeping this object."""
        if type(seed) is not int:
            raise TypeError(f"SeededOnFirstDraw takes a whole number as its seed, not {type(seed).__name__}")
        self._pending = seed
        self.gauss_next = None

    def _seed_pending(self) -> None:
        seed, self._pending = self._pending, None
        _CoreRandom.seed(self, seed)  # what random.Random.seed does with a whole number, past its checks

    # every draw comes through random() or getrandbits(); the state through getstate()
    def random(self) -> float:
        if self._pending is not None:
            self._seed_pending()
        return super().random()

    def getrandbits(self, k: int, /) -> int:
        if self._pending is not None:
            self._seed_pending()
        return super().getrandbits(k)

    def getstate(self) -> tuple[Any, ...]:
        if self._pending is not None:
            self._seed_pending()
        return super().getstate()

    def seed(self, a: Any = None, version: int = 2) -> None:
        self._pending = None
        super().seed(a, version)

    def setstate(self, state: tuple[Any, ...]) -> None:
        self._pending = None
        super().setstate(state)

    def __reduce__(self) -> tuple[Any, ...]:  # a copy or pickle is a plain generator in the same state
        return random.Random, (), self.getstate()


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
