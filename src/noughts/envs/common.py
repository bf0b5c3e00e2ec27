"""What every noughts environment shares: cell numbering, observation planes and errors.

Observations are ``int8`` planes stacked on the last axis, seen from one side (the *observer*):

* plane 0, the observer's own marks;
* plane 1, the opponent's marks;
* plane 2, *to move*: all ones while X is to move (an even number of marks on the board),
  all zeros while O is. For the side about to act it says "I play X", which the first two
  planes alone only give away through counting.

Actions are cells. In ``"rows"`` order (the default, and noughts' own) action ``row * cols + col``
is the cell in that row and column: reading order, top-left 0. In ``"columns"`` order action
``col * rows + row`` is, the numbering of PettingZoo's ``tictactoe_v3``. The planes are laid out
to match: ``rows × cols`` in rows order, ``cols × rows`` (the board transposed) in columns order,
so that flattening their first two axes always lists the cells in action order.

>>> from noughts import Board
>>> order = CellOrder(Board(2, 3, 2), "columns")
>>> order.plane_shape, order.cell(1), order.action(1)
((3, 2), 3, 2)
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Literal

import numpy as np

from noughts.errors import IllegalMoveError, NoughtsError

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from noughts.board import Board

__all__ = [
    "CELL_ORDERS", "PLANES", "CellOrder", "EnvDataError", "EnvOptionError", "Order", "bits_array", "check_option",
    "legal_action_mask", "observation_planes", "unpack",
]

Order = Literal["rows", "columns"]
CELL_ORDERS: tuple[Order, ...] = ("rows", "columns")
PLANES = 3  # own marks, the opponent's, X to move


class EnvOptionError(NoughtsError):
    """An environment option that does not exist, such as a cell order or an illegal-action rule."""


class EnvDataError(NoughtsError):
    """An array handed to an environment tool that has the wrong shape or values for the board."""


def check_option(what: str, value: object, allowed: tuple[str, ...]) -> None:
    """Raise :class:`EnvOptionError` unless ``value`` is one of ``allowed``."""
    if value not in allowed:
        raise EnvOptionError(f"{what} must be one of {', '.join(map(repr, allowed))}, not {value!r}")


class CellOrder:
    """Maps between action numbers and board cells (0-based reading order) for one board shape."""

    def __init__(self, board: Board, order: str = "rows") -> None:
        check_option("the cell order", order, CELL_ORDERS)
        self.order: Order = "rows" if order == "rows" else "columns"
        self.rows, self.cols, self.size = board.rows, board.cols, board.size
        self.plane_shape = (self.rows, self.cols) if self.order == "rows" else (self.cols, self.rows)
        if self.order == "rows":
            cells = np.arange(self.size)
        else:  # action a = col * rows + row
            cells = np.array([(a % self.rows) * self.cols + a // self.rows for a in range(self.size)])
        self.cell_of_action: NDArray[np.intp] = cells.astype(np.intp)
        actions = np.empty(self.size, dtype=np.intp)
        actions[cells] = np.arange(self.size)
        self.action_of_cell: NDArray[np.intp] = actions
        self._cells = tuple(int(c) for c in cells)
        self._actions = tuple(int(a) for a in actions)

    def cell(self, action: object) -> int:
        """The cell of an action; :class:`~noughts.errors.IllegalMoveError` if there is no such action."""
        try:
            number = int(action)  # type: ignore[call-overload]  # numpy integers and 0-d arrays too
        except (TypeError, ValueError):
            raise IllegalMoveError(f"an action is a whole number from 0 to {self.size - 1}, not {action!r}") from None
        if number != action or not 0 <= number < self.size:
            raise IllegalMoveError(f"there is no action {action!r}: actions run from 0 to {self.size - 1}")
        cell: int = self._cells[number]
        return cell

    def action(self, cell: int) -> int:
        """The action number of a cell."""
        return self._actions[cell]


def bits_array(bits: int, size: int) -> NDArray[np.bool_]:
    """A bitmask as ``size`` booleans, bit 0 first."""
    raw = np.frombuffer(bits.to_bytes((size + 7) // 8, "little"), dtype=np.uint8)
    return np.unpackbits(raw, count=size, bitorder="little").astype(np.bool_)


UNPACK_TABLE_CELLS = 12
"""Boards of up to this many cells unpack bitmasks with a table (4 096 rows) instead of numpy's unpackbits."""


@lru_cache(maxsize=32)
def _unpack_table(size: int, order: Order, cell_of_action: tuple[int, ...]) -> NDArray[np.int8]:
    every = np.arange(1 << size, dtype=np.int64)
    table: NDArray[np.int8] = (every[:, None] >> np.array(cell_of_action)[None, :] & 1).astype(np.int8)
    table.flags.writeable = False
    return table


def unpack(bits: int, order: CellOrder) -> NDArray[np.int8]:
    """A bitmask of cells as 0/1 per action, in ``order``'s action order (a new array)."""
    if order.size <= UNPACK_TABLE_CELLS:
        row: NDArray[np.int8] = _unpack_table(order.size, order.order, order._cells)[bits].copy()
        return row
    values: NDArray[np.int8] = bits_array(bits, order.size).view(np.int8)
    if order.order == "columns":
        values = values[order.cell_of_action]
    return values


def observation_planes(board: Board, observer: str, order: CellOrder) -> NDArray[np.int8]:
    """The planes of ``board`` seen by ``observer`` (``"X"`` or ``"O"``), in ``order``'s layout."""
    own, other = (board.x, board.o) if observer == "X" else (board.o, board.x)
    planes = np.empty((board.size, PLANES), dtype=np.int8)
    planes[:, 0] = unpack(own, order)
    planes[:, 1] = unpack(other, order)
    planes[:, 2] = board.ply % 2 == 0
    return planes.reshape(*order.plane_shape, PLANES)


def legal_action_mask(board: Board, order: CellOrder) -> NDArray[np.int8]:
    """1 for each action that is a legal move now, 0 for the rest (all 0 once the game is over)."""
    if board.is_over:
        return np.zeros(board.size, dtype=np.int8)
    return unpack(board.geometry.full & ~(board.x | board.o), order)
