"""noughts: noughts and crosses (tic-tac-toe) on any m×n board with k in a row.

>>> from noughts import Board
>>> board = Board().play("b2").play("a1")
>>> print(board)
O../.X./...
>>> board.turn, board.legal_moves
('X', (1, 2, 3, 5, 6, 7, 8))
"""

from noughts.board import Board, Geometry
from noughts.budget import Budget
from noughts.errors import (
    BudgetExceeded,
    CellSyntaxError,
    GameRecordError,
    IllegalMoveError,
    ImpossiblePositionError,
    InvalidBudgetError,
    NoughtsError,
    UnsupportedBoardError,
)

__all__ = [
    "Board", "Budget", "BudgetExceeded", "CellSyntaxError", "Game", "GameEvent", "GameRecordError", "Geometry",
    "IllegalMoveError", "ImpossiblePositionError", "InvalidBudgetError", "NoughtsError", "UnsupportedBoardError",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    # Game pulls in json and dataclasses; importing it lazily keeps `import noughts` fast.
    if name in ("Game", "GameEvent"):
        from noughts import game

        return getattr(game, name)
    raise AttributeError(f"module 'noughts' has no attribute {name!r}")
