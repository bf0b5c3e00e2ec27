"""noughts: noughts and crosses (tic-tac-toe) on any m×n board with k in a row.

>>> from noughts import Board
>>> board = Board().play("b2").play("a1")
>>> print(board)
O../.X./...
>>> board.turn, board.legal_moves
('X', (1, 2, 3, 5, 6, 7, 8))
"""

from noughts.board import Board, Geometry
from noughts.errors import (
    BudgetExceeded,
    CellSyntaxError,
    GameRecordError,
    IllegalMoveError,
    ImpossiblePositionError,
    NoughtsError,
    UnsupportedBoardError,
)

__all__ = [
    "Board", "BudgetExceeded", "CellSyntaxError", "GameRecordError", "Geometry",
    "IllegalMoveError", "ImpossiblePositionError", "NoughtsError", "UnsupportedBoardError",
]
__version__ = "0.1.0"
