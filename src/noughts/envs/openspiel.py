"""m,n,k noughts and crosses as an OpenSpiel game, and noughts players as OpenSpiel bots.

Importing this module registers the Python game ``python_noughts_mnk`` with parameters ``rows``,
``cols`` and ``k`` (default 3, 3, 3):

>>> import pyspiel
>>> import noughts.envs.openspiel
>>> game = pyspiel.load_game("python_noughts_mnk(rows=4,cols=4,k=3)")
>>> state = game.new_initial_state()
>>> state.apply_action(5)
>>> str(state).splitlines()
['....', '.x..', '....', '....']
>>> game.observation_tensor_shape()
[3, 4, 4]

It is the game OpenSpiel's own ``tic_tac_toe`` and ``mnk`` (``m`` = columns, ``n`` = rows) play,
with noughts' rules behind it: the same actions (cells in reading order, ``row * cols + col``),
players (0 is x and moves first), returns (+1/−1 at a win, 0 for a draw), strings (rows of
``.``, ``x``, ``o``) and observation tensor (planes for empty, o and x, each ``rows × cols``).
States serialise as OpenSpiel serialises any game, by their history of actions, and pickle.

:class:`NoughtsBot` lets OpenSpiel's algorithms play any noughts player:

>>> import random
>>> bot = NoughtsBot("perfect", random.Random(0))
>>> pyspiel.evaluate_bots(pyspiel.load_game("tic_tac_toe").new_initial_state(), [bot, bot], 0)
[0.0, 0.0]
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

import numpy as np
import pyspiel

from noughts import players
from noughts.board import Board
from noughts.envs.common import bits_array
from noughts.errors import UnsupportedBoardError

if TYPE_CHECKING:
    from noughts.players.base import Player

__all__ = ["GAME_NAME", "GAME_TYPE", "MnkGame", "MnkState", "NoughtsBot", "board_of"]

GAME_NAME = "python_noughts_mnk"
_DEFAULTS = {"rows": 3, "cols": 3, "k": 3}
_CELL_CHARS = ".ox"  # plane order of OpenSpiel's tic_tac_toe: empty, nought, cross

GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Python noughts m,n,k",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC,
    information=pyspiel.GameType.Information.PERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=2,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=dict(_DEFAULTS),
)


class MnkGame(pyspiel.Game):  # type: ignore[misc]  # pyspiel has no type information
    """``rows``×``cols`` noughts and crosses with ``k`` in a row."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        values = {**_DEFAULTS, **(params or {})}
        board = Board(int(values["rows"]), int(values["cols"]), int(values["k"]))
        size = board.size
        info = pyspiel.GameInfo(num_distinct_actions=size, max_chance_outcomes=0, num_players=2,
                                min_utility=-1.0, max_utility=1.0, utility_sum=0.0, max_game_length=size)
        super().__init__(GAME_TYPE, info, params or {})
        self.empty_board = board

    def new_initial_state(self) -> MnkState:
        """The empty board, x to move."""
        return MnkState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> Any:
        """The board for observations; the history for perfect-recall information states."""
        if iig_obs_type is None or (iig_obs_type.public_info and not iig_obs_type.perfect_recall):
            return BoardObserver(self.empty_board, params)
        from open_spiel.python.observation import IIGObserverForPublicInfoGame

        return IIGObserverForPublicInfoGame(iig_obs_type, params)


class MnkState(pyspiel.State):  # type: ignore[misc]  # pyspiel has no type information
    """A position of :class:`MnkGame`; :attr:`board` is the noughts :class:`~noughts.board.Board`."""

    def __init__(self, game: MnkGame) -> None:
        super().__init__(game)
        self.board = game.empty_board

    def current_player(self) -> int:
        """0 (x) or 1 (o), or ``pyspiel.PlayerId.TERMINAL`` once the game is over."""
        if self.board.is_over:
            return int(pyspiel.PlayerId.TERMINAL)
        return self.board.ply % 2

    def _legal_actions(self, player: int) -> list[int]:
        return list(self.board.legal_moves)

    def _apply_action(self, action: int) -> None:
        self.board = self.board.play(int(action))

    def _action_to_string(self, player: int, action: int) -> str:
        row, col = divmod(int(action), self.board.cols)
        return f"{'x' if player == 0 else 'o'}({row},{col})"

    def is_terminal(self) -> bool:
        return self.board.is_over

    def returns(self) -> list[float]:
        winner = self.board.winner
        if winner is None:
            return [0.0, 0.0]
        return [1.0, -1.0] if winner == "X" else [-1.0, 1.0]

    def __str__(self) -> str:
        return _board_string(self.board)


class BoardObserver:
    """OpenSpiel's PyObserver for the board: planes for empty, o and x cells."""

    def __init__(self, board: Board, params: Any) -> None:
        if params:
            raise UnsupportedBoardError(f"observation parameters are not supported; passed {params}")
        shape = (3, board.rows, board.cols)
        self.tensor = np.zeros(int(np.prod(shape)), np.float32)
        self.dict = {"observation": np.reshape(self.tensor, shape)}

    def set_from(self, state: MnkState, player: int) -> None:
        """Fill the tensor with ``state`` (the same for both players: perfect information)."""
        board = state.board
        planes = self.tensor.reshape(3, board.size)
        for plane, bits in enumerate((board.geometry.full & ~(board.x | board.o), board.o, board.x)):
            planes[plane] = bits_array(bits, board.size)

    def string_from(self, state: MnkState, player: int) -> str:
        return _board_string(state.board)


def _board_string(board: Board) -> str:
    return "\n".join(str(board).lower().split("/")) if board.rows > 1 else str(board).lower().rstrip("/")


def board_of(state: Any) -> Board:
    """The noughts board of an OpenSpiel state: of ``python_noughts_mnk``, ``tic_tac_toe`` or ``mnk``."""
    if isinstance(state, MnkState):
        return state.board
    game = state.get_game()
    name = game.get_type().short_name
    params = game.get_parameters()
    if name == "tic_tac_toe":
        rows, cols, k = 3, 3, 3
    elif name == "mnk":
        rows, cols, k = int(params["n"]), int(params["m"]), int(params["k"])
    else:
        raise UnsupportedBoardError(f"a noughts player plays python_noughts_mnk, tic_tac_toe and mnk, not {name}")
    x = o = 0
    for number, action in enumerate(state.history()):
        if number % 2:
            o |= 1 << action
        else:
            x |= 1 << action
    return Board.from_bits(x, o, rows, cols, k)


class NoughtsBot(pyspiel.Bot):  # type: ignore[misc]  # pyspiel has no type information
    """An OpenSpiel bot that plays as a noughts player (a name for :func:`noughts.players.get`, or a player).

    It plays ``python_noughts_mnk``, OpenSpiel's ``tic_tac_toe`` and its ``mnk`` games, for
    whichever player is to move; all its randomness comes from ``rng``.
    """

    def __init__(self, player: str | Player = "perfect", rng: random.Random | None = None) -> None:
        pyspiel.Bot.__init__(self)
        self.player: Player = players.get(player, rng) if isinstance(player, str) else player

    def restart_at(self, state: Any) -> None:
        """Nothing to forget: each move is chosen from the position alone."""

    def inform_action(self, state: Any, player_id: int, action: int) -> None:
        """Nothing to remember: each move is chosen from the position alone."""

    def provides_policy(self) -> bool:
        return False

    def step(self, state: Any) -> int:
        """The player's move in ``state``."""
        return self.player.choose(board_of(state))


if GAME_NAME not in pyspiel.registered_names():
    pyspiel.register_game(GAME_TYPE, MnkGame)
