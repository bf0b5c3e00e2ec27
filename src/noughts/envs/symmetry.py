"""Data augmentation: observations, masks, policies and actions through the board's symmetries.

A square board has 8 symmetries (rotations and reflections), any other 4 (the reflections and
the half turn); a 1×n board fewer, as several maps coincide. They are the board's own
(:attr:`noughts.board.Geometry.symmetries`, in the same order, the identity first), so
symmetry ``s`` maps a position exactly as ``board.symmetries()[s]`` does.

>>> import numpy as np
>>> group = Symmetries(3, 3)
>>> len(group)
8
>>> policy = np.zeros(9); policy[0] = 1.0  # all on a1, the top-left corner
>>> [int(p.argmax()) for p in group.policies(policy)]  # where a1 goes under each symmetry
[0, 2, 6, 8, 0, 6, 2, 8]
>>> group.actions(0).tolist() == [int(p.argmax()) for p in group.policies(policy)]
True

Observations are laid out as the environments lay them out (``[..., rows, cols, planes]`` in
rows order; ``[..., cols, rows, planes]`` in columns order, see :mod:`noughts.envs.common`), and
per-action arrays (masks, policy targets, values per move) in the same cell order. Give the
same ``cell_order`` as the environment; the maps then keep an observation, its mask, its policy
target and the action taken consistent with each other: whatever action ``a`` means in the
original, ``actions(a)[s]`` means in image ``s``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from noughts.board import Board
from noughts.envs.common import CellOrder, EnvDataError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

__all__ = ["Symmetries"]


class Symmetries:
    """The symmetries of a ``rows``×``cols`` board as permutations of its actions."""

    def __init__(self, rows: int, cols: int, cell_order: str = "rows") -> None:
        board = Board(rows, cols, min(rows, cols))  # symmetries do not depend on k
        self.rows, self.cols, self.size = rows, cols, board.size
        self.cells = CellOrder(board, cell_order)
        self.plane_shape = self.cells.plane_shape
        to_cell, to_action = self.cells.cell_of_action, self.cells.action_of_cell
        # Geometry's permutation p: cell `new` of the image holds what cell p[new] held. In actions:
        cell_perms = np.array(board.geometry.symmetries, dtype=np.intp)
        self.sources: NDArray[np.intp] = to_action[cell_perms[:, to_cell]]
        """``sources[s, a]``: the action whose contents image ``s`` shows at action ``a``."""
        targets = np.empty_like(self.sources)
        rows_index = np.arange(len(self.sources))[:, None]
        targets[rows_index, self.sources] = np.arange(self.size)[None, :]
        self.targets: NDArray[np.intp] = targets
        """``targets[s, a]``: where action ``a`` of the original lands in image ``s``."""

    def __len__(self) -> int:
        return len(self.sources)

    def per_action(self, values: ArrayLike) -> NDArray[np.generic]:
        """Any array whose last axis runs over the actions (masks, policies, Q-values), under every symmetry.

        The result has one more leading axis, one entry per symmetry.
        """
        array = np.asarray(values)
        if array.shape[-1:] != (self.size,):
            raise EnvDataError(f"the last axis must have one entry per action ({self.size}), not shape {array.shape}")
        return np.stack([array[..., perm] for perm in self.sources])

    masks = per_action
    policies = per_action

    def observations(self, observations: ArrayLike) -> NDArray[np.generic]:
        """Observations ``[..., plane rows, plane cols, planes]`` under every symmetry (a new leading axis)."""
        array = np.asarray(observations)
        if array.ndim < 3 or array.shape[-3:-1] != self.plane_shape:
            raise EnvDataError(f"observations must end in {self.plane_shape} and a plane axis, not shape {array.shape}")
        flat = array.reshape(*array.shape[:-3], self.size, array.shape[-1])
        images = np.stack([flat[..., perm, :] for perm in self.sources])
        return images.reshape(len(self), *array.shape)

    def actions(self, actions: ArrayLike) -> NDArray[np.intp]:
        """The image of each action under every symmetry (a new leading axis)."""
        chosen = np.asarray(actions)
        if not np.issubdtype(chosen.dtype, np.integer) or ((chosen < 0) | (chosen >= self.size)).any():
            raise EnvDataError(f"actions are whole numbers from 0 to {self.size - 1}")
        return self.targets[:, chosen]

    def boards(self, board: Board) -> tuple[Board, ...]:
        """``board`` under every symmetry, in the same order (``board.symmetries()``)."""
        return board.symmetries()
