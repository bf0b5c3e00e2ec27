"""One side of m,n,k noughts and crosses against any noughts player, as a Gymnasium environment.

>>> import gymnasium, noughts.envs
>>> env = gymnasium.make("noughts/Mnk-v0", rows=3, cols=3, k=3, opponent="perfect")
>>> observation, info = env.reset(seed=1)
>>> info["agent_mark"], observation["action_mask"].tolist()
('X', [1, 1, 1, 1, 1, 1, 1, 1, 1])
>>> observation, reward, terminated, truncated, info = env.step(4)
>>> int(observation["action_mask"].sum()), reward, terminated  # the opponent has replied
(7, 0.0, False)

The agent plays ``agent_mark``: ``"X"`` (moves first), ``"O"`` (the opponent moves first, in
``reset``) or ``"either"`` (drawn at each reset). The opponent is made by
:func:`noughts.players.get` from ``opponent`` (a name such as ``"perfect"`` or ``"random"``) and
every random choice it makes comes from the environment's generator, so
``reset(seed=...)`` replays a whole game.

Observations are those of :mod:`noughts.envs.mnk_v0`, seen from the agent: a dict with the
planes (own marks, the opponent's, X to move) and the ``action_mask`` of its legal actions.
Rewards: +1 when the agent wins, −1 when the opponent does, 0 otherwise.

Illegal actions (a taken cell; a number off the board always raises):
``illegal_action="lose"`` (default) ends the episode with reward −1 and ``info["illegal"]``
true, the board unchanged; ``"raise"`` raises :class:`~noughts.errors.IllegalMoveError`.
``info`` always holds ``agent_mark`` and, once the episode is over, ``winner`` (``"X"``,
``"O"`` or ``None``).
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, cast

import gymnasium
import numpy as np
from gymnasium import spaces

from noughts import players
from noughts.board import Board
from noughts.envs.common import PLANES, CellOrder, check_option, legal_action_mask, observation_planes
from noughts.envs.render import HumanView, render
from noughts.errors import IllegalMoveError, UnsupportedBoardError

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["AGENT_MARKS", "ILLEGAL_ACTIONS", "MnkEnv"]

AGENT_MARKS = ("X", "O", "either")
ILLEGAL_ACTIONS = ("lose", "raise")

Observation = dict[str, "NDArray[np.int8]"]


class MnkEnv(gymnasium.Env[Observation, np.int64]):
    """The agent plays ``agent_mark`` on ``rows``×``cols`` with ``k`` in a row against ``opponent``."""

    metadata = {"render_modes": ["ansi", "rgb_array", "human"], "render_fps": 2}  # noqa: RUF012  # Gymnasium's form

    def __init__(self, rows: int = 3, cols: int = 3, k: int = 3, opponent: str = "perfect",
                 agent_mark: str = "X", illegal_action: str = "lose", cell_order: str = "rows",
                 render_mode: str | None = None) -> None:
        check_option("agent_mark", agent_mark, AGENT_MARKS)
        check_option("illegal_action", illegal_action, ILLEGAL_ACTIONS)
        if render_mode is not None:
            check_option("the render mode", render_mode, tuple(self.metadata["render_modes"]))
        self.empty_board = Board(rows, cols, k)
        self.cells = CellOrder(self.empty_board, cell_order)
        problem = players.unable(opponent, self.empty_board)
        if problem is not None:
            raise UnsupportedBoardError(f"{players.label(opponent)} cannot play this board: {problem}")
        self._opponent_rng = random.Random()
        self.opponent = players.get(opponent, self._opponent_rng)
        self.agent_mark_option = agent_mark
        self.illegal_action = illegal_action
        self.render_mode = render_mode
        self.board = self.empty_board
        self._episode_over = False
        self.agent_mark = "X" if agent_mark == "either" else agent_mark
        self.observation_space = cast("spaces.Space[Observation]", spaces.Dict({
            "observation": spaces.Box(0, 1, shape=(*self.cells.plane_shape, PLANES), dtype=np.int8),
            "action_mask": spaces.Box(0, 1, shape=(self.empty_board.size,), dtype=np.int8),
        }))
        self.action_space = spaces.Discrete(self.empty_board.size)
        self._human = HumanView(f"noughts {rows}×{cols}, {k} in a row") if render_mode == "human" else None

    def _observation(self) -> Observation:
        board = self.board
        return {"observation": observation_planes(board, self.agent_mark, self.cells),
                "action_mask": legal_action_mask(board, self.cells)}

    def _info(self, illegal: bool = False) -> dict[str, Any]:
        info: dict[str, Any] = {"agent_mark": self.agent_mark}
        if self.board.is_over or illegal:
            info["winner"] = self.board.winner
        if illegal:
            info["illegal"] = True
        return info

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[Observation, dict[str, Any]]:
        """A new game; with ``agent_mark="O"`` the opponent has already played its first move."""
        super().reset(seed=seed)
        if seed is not None:  # the opponent's choices follow from the seed too
            self._opponent_rng.seed(int(self.np_random.integers(2**63)))
        if self.agent_mark_option == "either":
            self.agent_mark = "X" if self.np_random.integers(2) == 0 else "O"
        self.board = self.empty_board
        self._episode_over = False
        if self.agent_mark == "O":
            self.board = self.board.play(self.opponent.choose(self.board))
        if self.render_mode == "human":
            self.render()
        return self._observation(), self._info()

    def step(self, action: np.int64 | int) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        """The agent plays ``action``, then the opponent replies unless the game is over."""
        if self._episode_over:
            raise IllegalMoveError("the game is over: call reset() to start another")
        cell = self.cells.cell(action)
        if not (self.board.x | self.board.o) >> cell & 1:
            self.board = self.board.play(cell)
        elif self.illegal_action == "raise":
            self.board.play(cell)  # raises IllegalMoveError with the reason
        else:
            self._episode_over = True
            return self._observation(), -1.0, True, False, self._info(illegal=True)
        if not self.board.is_over:
            self.board = self.board.play(self.opponent.choose(self.board))
        if self.render_mode == "human":
            self.render()
        winner = self.board.winner
        self._episode_over = self.board.is_over
        reward = 0.0 if winner is None else 1.0 if winner == self.agent_mark else -1.0
        return self._observation(), reward, self.board.is_over, False, self._info()

    def render(self) -> NDArray[np.uint8] | str | None:
        """``ansi``: the text; ``rgb_array``: the image; ``human``: shows it and returns ``None``."""
        return render(self.board, self.render_mode, self._human)

    def close(self) -> None:
        if self._human is not None:
            self._human.close()
