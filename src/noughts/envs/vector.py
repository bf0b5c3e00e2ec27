"""Thousands of m,n,k games stepped at once with numpy, for self-play training.

>>> import numpy as np
>>> envs = VectorMnkEnv(4, rows=3, cols=3, k=3)
>>> observations, masks = envs.reset()
>>> observations.shape, masks.shape
((4, 3, 3, 3), (4, 9))
>>> step = envs.step(np.array([4, 0, 8, 2]))
>>> step.rewards.tolist(), step.terminated.tolist(), step.observations[0, 1, 1].tolist()
([0.0, 0.0, 0.0, 0.0], [False, False, False, False], [0, 1, 0])

Each of the ``num_envs`` boards is a game of its own in which the caller plays both sides, as
in self-play: an action is always for the side to move on that board. After a step:

* ``observations[i]`` and ``masks[i]`` are what the side to move on board ``i`` sees, exactly as
  :mod:`noughts.envs.mnk_v0` shows it to that agent (planes: its own marks, the opponent's, X
  to move; mask: its legal actions), in the same cell order;
* ``rewards[i]`` is the reward of the side that just moved: +1 if it won, else 0 (the other
  side's is its negative, −1 for a loss);
* ``terminated[i]`` says the game on board ``i`` ended with this move. Such a board is reset at
  once (automatic reset, in the same step): ``observations[i]`` is then the empty board of its
  next game, and ``final_observations[i]`` the finished position as the agent that would move
  next sees it (what ``mnk_v0``'s ``last()`` shows at the end); ``winners[i]`` is ``1`` when X
  won, ``-1`` when O did, ``0`` for a draw or a game still going.

An action that is not legal on its board (a taken cell, or one off the board) raises
:class:`~noughts.errors.IllegalMoveError` naming the board, and no board moves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from noughts.board import Board
from noughts.envs.common import PLANES, CellOrder
from noughts.errors import IllegalMoveError, NoughtsError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

__all__ = ["VectorMnkEnv", "VectorStep"]

_EMPTY, _X, _O = 0, 1, 2
BITBOARD_CELLS = 16
"""Boards of up to this many cells are kept as bitmasks with lookup tables (3×3, 4×4: fastest)."""


@dataclass(frozen=True)
class VectorStep:
    """What :meth:`VectorMnkEnv.step` returns; every array has ``num_envs`` rows."""

    observations: NDArray[np.int8]
    masks: NDArray[np.int8]
    rewards: NDArray[np.float32]
    terminated: NDArray[np.bool_]
    winners: NDArray[np.int8]
    final_observations: NDArray[np.int8]


class VectorMnkEnv:
    """``num_envs`` games of ``rows``×``cols`` with ``k`` in a row, stepped together.

    Boards of up to :data:`BITBOARD_CELLS` cells are kept as two bitmasks each (the side to move's
    marks and the other side's) with tables for wins, legal moves and planes; bigger boards as
    an array of marks, with wins found along the lines through the cell just played.
    """

    def __init__(self, num_envs: int, rows: int = 3, cols: int = 3, k: int = 3, cell_order: str = "rows") -> None:
        if type(num_envs) is not int or num_envs < 1:
            raise NoughtsError(f"the number of boards must be a whole number of at least 1, not {num_envs!r}")
        board = Board(rows, cols, k)
        self.num_envs, self.rows, self.cols, self.k = num_envs, rows, cols, k
        self.size = size = board.size
        self.cells = CellOrder(board, cell_order)
        self.plane_shape = self.cells.plane_shape
        self._reorder = self.cells.order == "columns"
        self._index = np.arange(num_envs)
        self._fresh = np.zeros((*self.plane_shape, PLANES), dtype=np.int8)
        self._fresh[..., 2] = 1
        self.ply = np.zeros(num_envs, dtype=np.int64)
        self.bitboards = size <= BITBOARD_CELLS
        if self.bitboards:
            every = np.arange(1 << size, dtype=np.int64)
            wins = np.zeros(1 << size, dtype=np.bool_)
            for mask in board.geometry.line_masks:
                wins |= every & mask == mask
            self._wins = wins
            # Row b of _unpacked: bitmask b as 0/1 per action, in action order.
            unpacked = (every[:, None] >> self.cells.cell_of_action[None, :] & 1).astype(np.int8)
            self._unpacked = unpacked
            # Row b of _empty_cells: the cells not in b, ascending, then padding; _empty_counts: how many.
            empty = unpacked[:, self.cells.action_of_cell] == 0
            self._empty_counts = empty.sum(axis=1)
            order = np.argsort(~empty, axis=1, kind="stable")
            self._empty_cells = order.astype(np.int64)
            self._full = (1 << size) - 1
            self.to_move_bits = np.zeros(num_envs, dtype=np.int64)
            self.waiting_bits = np.zeros(num_envs, dtype=np.int64)
        else:
            # Lines through each cell, as cell indices padded with a column that is always empty.
            through = [[board.geometry.line_cells(m) for m in masks] for masks in board.geometry.lines_through]
            most = max(1, max(map(len, through)))
            padded = np.full((size, most, k), size, dtype=np.intp)
            for cell, lines in enumerate(through):
                for i, line in enumerate(lines):
                    padded[cell, i] = line
            self._lines_through = padded.reshape(size, most * k)
            self._lines_shape = (most, k)
            # Marks in reading order, one extra always-empty column: 0 empty, 1 X, 2 O.
            self.marks = np.zeros((num_envs, size + 1), dtype=np.int8)

    def reset(self, seed: int | None = None) -> tuple[NDArray[np.int8], NDArray[np.int8]]:
        """Empty every board; returns ``(observations, masks)``. Nothing is random: ``seed`` is ignored."""
        self.ply[:] = 0
        if self.bitboards:
            self.to_move_bits[:] = 0
            self.waiting_bits[:] = 0
        else:
            self.marks[:] = _EMPTY
        return self.observe()

    def observe(self) -> tuple[NDArray[np.int8], NDArray[np.int8]]:
        """``(observations, masks)`` of every board for its side to move."""
        observations = np.empty((self.num_envs, self.size, PLANES), dtype=np.int8)
        x_to_move = self.ply % 2 == 0
        if self.bitboards:
            unpacked = self._unpacked
            observations[..., 0] = unpacked[self.to_move_bits]
            observations[..., 1] = unpacked[self.waiting_bits]
            masks = unpacked[self._full ^ (self.to_move_bits | self.waiting_bits)]
        else:
            cells = self.marks[:, :self.size]
            mover = np.where(x_to_move, _X, _O).astype(np.int8)[:, None]
            own = cells == mover
            other = (cells != mover) & (cells != _EMPTY)
            empty = cells == _EMPTY
            if self._reorder:
                own, other, empty = (a[:, self.cells.cell_of_action] for a in (own, other, empty))
            observations[..., 0] = own
            observations[..., 1] = other
            masks = empty.astype(np.int8)
        observations[..., 2] = x_to_move[:, None]
        return observations.reshape(self.num_envs, *self.plane_shape, PLANES), masks

    def positions(self) -> list[Board]:
        """Every board as a :class:`~noughts.board.Board` (slow: for tests and inspection)."""
        boards = []
        for i in range(self.num_envs):
            if self.bitboards:
                x, o = int(self.to_move_bits[i]), int(self.waiting_bits[i])
                if self.ply[i] % 2:
                    x, o = o, x
            else:
                row = self.marks[i, :self.size]
                x = sum(1 << c for c in np.flatnonzero(row == _X).tolist())
                o = sum(1 << c for c in np.flatnonzero(row == _O).tolist())
            boards.append(Board.from_bits(x, o, self.rows, self.cols, self.k))
        return boards

    def random_actions(self, rng: np.random.Generator) -> NDArray[np.intp]:
        """A uniformly random legal action on every board."""
        if self.bitboards:
            occupied = self.to_move_bits | self.waiting_bits
            picks = (rng.random(self.num_envs) * self._empty_counts[occupied]).astype(np.int64)
            cells = self._empty_cells[occupied, picks]
        else:
            scores = rng.random((self.num_envs, self.size))
            scores[self.marks[:, :self.size] != _EMPTY] = -1.0
            cells = scores.argmax(axis=1)
        chosen: NDArray[np.intp] = self.cells.action_of_cell[cells] if self._reorder else cells
        return chosen

    def step(self, actions: ArrayLike) -> VectorStep:
        """Play ``actions[i]`` on board ``i`` for its side to move; finished boards start again."""
        chosen = np.asarray(actions)
        if chosen.shape != (self.num_envs,) or not np.issubdtype(chosen.dtype, np.integer):
            raise IllegalMoveError(f"step needs one whole-number action per board ({self.num_envs}), "
                                   f"not an array of shape {chosen.shape} and type {chosen.dtype}")
        off = (chosen < 0) | (chosen >= self.size)
        if off.any():
            i = int(np.flatnonzero(off)[0])
            raise IllegalMoveError(f"board {i}: there is no action {int(chosen[i])}, actions run from 0 to "
                                   f"{self.size - 1}")
        cells = self.cells.cell_of_action[chosen] if self._reorder else chosen.astype(np.int64, copy=False)
        x_moved = self.ply % 2 == 0
        won = self._play_bits(chosen, cells) if self.bitboards else self._play_marks(chosen, cells, x_moved)
        self.ply += 1
        terminated = won | (self.ply == self.size)
        rewards = won.astype(np.float32)
        winners = np.where(won, np.where(x_moved, 1, -1), 0).astype(np.int8)
        observations, masks = self.observe()
        final_observations = observations.copy()
        if terminated.any():
            self.ply[terminated] = 0
            if self.bitboards:
                self.to_move_bits[terminated] = 0
                self.waiting_bits[terminated] = 0
            else:
                self.marks[terminated] = _EMPTY
            observations[terminated] = self._fresh
            masks[terminated] = 1
        return VectorStep(observations, masks, rewards, terminated, winners, final_observations)

    def _taken(self, chosen: NDArray[np.integer], taken: NDArray[np.bool_]) -> IllegalMoveError:
        i = int(np.flatnonzero(taken)[0])
        return IllegalMoveError(f"board {i}: action {int(chosen[i])} is not legal, that cell is taken")

    def _play_bits(self, chosen: NDArray[np.integer], cells: NDArray[np.int64]) -> NDArray[np.bool_]:
        bit = np.left_shift(1, cells, dtype=np.int64)
        if ((self.to_move_bits | self.waiting_bits) & bit).any():
            raise self._taken(chosen, (self.to_move_bits | self.waiting_bits) & bit != 0)
        moved = self.to_move_bits | bit
        # The other side moves next: swap the roles of the two arrays (no copy).
        self.to_move_bits, self.waiting_bits = self.waiting_bits, moved
        won: NDArray[np.bool_] = self._wins[moved]
        return won

    def _play_marks(self, chosen: NDArray[np.integer], cells: NDArray[np.int64],
                    x_moved: NDArray[np.bool_]) -> NDArray[np.bool_]:
        index = self._index
        taken = self.marks[index, cells] != _EMPTY
        if taken.any():
            raise self._taken(chosen, taken)
        mover = np.where(x_moved, _X, _O).astype(np.int8)
        self.marks[index, cells] = mover
        # The move wins if one of the lines through its cell is all the mover's.
        line_marks = np.take_along_axis(self.marks, self._lines_through[cells], axis=1)
        lines = (line_marks == mover[:, None]).reshape(self.num_envs, *self._lines_shape)
        won: NDArray[np.bool_] = lines.all(axis=2).any(axis=1)
        return won
