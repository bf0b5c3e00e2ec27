"""m,n,k noughts and crosses as a PettingZoo AEC environment.

>>> from noughts.envs import mnk_v0
>>> env = mnk_v0.env(rows=3, cols=3, k=3)
>>> env.reset(seed=0)
>>> env.agent_selection
'player_1'
>>> env.step(4)  # X in the centre
>>> observation, reward, termination, truncation, info = env.last()
>>> observation["observation"].shape, observation["action_mask"].tolist()
((3, 3, 3), [1, 1, 1, 1, 0, 1, 1, 1, 1])

Agents: ``player_1`` plays X and moves first, ``player_2`` plays O (the names of PettingZoo's
``tictactoe_v3``). Each observation is a dict: ``observation``, the planes described in
:mod:`noughts.envs.common` seen from that agent (its own marks, the opponent's, X to move),
and ``action_mask``, 1 for each legal action of the agent whose turn it is (all 0 for the other
agent and once the game is over).

Rewards come at the end only: +1 to the winner and −1 to the loser, 0 to both for a draw.

Illegal actions: :func:`env` (the wrapped environment, as PettingZoo's classic games are
made) ends the game with −1 for the agent that tried it and 0 for the other, and logs a
warning; :class:`raw_env` raises :class:`~noughts.errors.IllegalMoveError`.

Cells: ``cell_order="rows"`` (default) numbers actions in reading order, ``row * cols + col``;
``cell_order="columns"`` numbers them ``col * rows + row`` like ``tictactoe_v3``, which then
sees the same own/opponent planes and masks as ``tictactoe_v3`` on 3×3.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from noughts.board import Board
from noughts.envs.common import PLANES, CellOrder, check_option, legal_action_mask, observation_planes
from noughts.envs.render import HumanView, render

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["AGENTS", "RENDER_MODES", "env", "raw_env"]

AGENTS = ("player_1", "player_2")
"""The agents: X (moves first), then O."""
RENDER_MODES = ("ansi", "rgb_array", "human")
_MARKS = {"player_1": "X", "player_2": "O"}

Observation = dict[str, "NDArray[np.int8]"]


def env(rows: int = 3, cols: int = 3, k: int = 3, render_mode: str | None = None,
        cell_order: str = "rows") -> AECEnv[str, Observation, int]:
    """The environment wrapped as PettingZoo's classic games are: an illegal action loses the game.

    Wrappers, outermost first: order enforcing (``step`` before ``reset`` raises), actions out
    of range asserted, illegal actions end the game with −1 for the agent that tried.
    """
    wrapped: AECEnv[str, Observation, int] = raw_env(rows, cols, k, render_mode, cell_order)
    wrapped = wrappers.TerminateIllegalWrapper(wrapped, illegal_reward=-1)
    wrapped = wrappers.AssertOutOfBoundsWrapper(wrapped)
    return wrappers.OrderEnforcingWrapper(wrapped)


class raw_env(AECEnv[str, Observation, int], EzPickle):  # type: ignore[misc]  # PettingZoo has no type information
    """The unwrapped environment: ``rows``×``cols`` with ``k`` in a row; an illegal action raises."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": list(RENDER_MODES), "name": "mnk_v0", "is_parallelizable": False, "render_fps": 2}

    def __init__(self, rows: int = 3, cols: int = 3, k: int = 3, render_mode: str | None = None,
                 cell_order: str = "rows") -> None:
        EzPickle.__init__(self, rows, cols, k, render_mode, cell_order)
        super().__init__()
        if render_mode is not None:
            check_option("the render mode", render_mode, RENDER_MODES)
        self.empty_board = Board(rows, cols, k)  # checks the shape: UnsupportedBoardError
        self.board = self.empty_board
        self.cells = CellOrder(self.empty_board, cell_order)
        self.render_mode = render_mode
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        planes = spaces.Box(0, 1, shape=(*self.cells.plane_shape, PLANES), dtype=np.int8)
        mask = spaces.Box(0, 1, shape=(self.empty_board.size,), dtype=np.int8)
        self.observation_spaces = {
            agent: spaces.Dict({"observation": planes, "action_mask": mask}) for agent in AGENTS}
        self.action_spaces = {agent: spaces.Discrete(self.empty_board.size) for agent in AGENTS}
        self._human = HumanView(f"noughts {rows}×{cols}, {k} in a row") if render_mode == "human" else None
        self.reset()

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    def mark(self, agent: str) -> str:
        """``"X"`` for ``player_1``, ``"O"`` for ``player_2``."""
        return _MARKS[agent]

    def observe(self, agent: str) -> Observation:
        board = self.board
        mask = (legal_action_mask(board, self.cells) if agent == self.agent_selection
                else np.zeros(board.size, dtype=np.int8))
        return {"observation": observation_planes(board, _MARKS[agent], self.cells), "action_mask": mask}

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new game from the empty board; nothing in it is random, so ``seed`` changes nothing."""
        self.board = self.empty_board
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self.agent_selection = AGENTS[0]

    def step(self, action: int) -> None:
        """Play ``action`` for :attr:`agent_selection` (``None`` once it is terminated)."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)  # PettingZoo passes None here
            return
        board = self.board.play(self.cells.cell(action))  # IllegalMoveError on a taken cell
        self.board = board
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        other = AGENTS[1] if agent == AGENTS[0] else AGENTS[0]
        if board.is_over:
            if board.winner is not None:
                self.rewards[agent], self.rewards[other] = 1.0, -1.0
            self.terminations = dict.fromkeys(self.agents, True)
            self._accumulate_rewards()
        self.agent_selection = other
        if self.render_mode == "human":
            self.render()

    def render(self) -> NDArray[np.uint8] | str | None:
        """``ansi``: the text; ``rgb_array``: the image; ``human``: shows it and returns ``None``."""
        return render(self.board, self.render_mode, self._human)

    def close(self) -> None:
        if self._human is not None:
            self._human.close()
