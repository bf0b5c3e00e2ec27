"""The computer players, by name.

>>> from noughts.players import get, names
>>> names()[:3]
['easy', 'medium', 'hard']
>>> import random
>>> from noughts import Board
>>> player = get("parsons", random.Random(1))
>>> player.name, player.choose(Board())
('parsons', 4)

Every player has a ``name`` and ``choose(board) -> int``; players that break ties at random
take a ``random.Random`` (``rng``) and also offer ``candidates(board)``, the cells ``choose``
picks among. Player modules are imported only when a player is asked for, so importing this
package stays cheap.

Not every player plays every board. Before a game starts, :func:`unable` says why a player
cannot play it (``None`` if it can) and :func:`able` names the players that can:

>>> unable("parsons", Board(4, 4)) is not None, unable("minimax", Board(4, 4))
(True, None)
>>> able(Board(26, 26))
['easy', 'random', 'arduino', 'minimax']
"""

from __future__ import annotations

from noughts.errors import NoughtsError

TYPE_CHECKING = False  # typing costs milliseconds at import; mypy still reads the block

if TYPE_CHECKING:
    import random

    from noughts.board import Board
    from noughts.budget import Budget
    from noughts.players.base import Player

__all__ = ["PROBE_NODES", "PROBE_SECONDS", "UnknownPlayerError", "able", "describe", "get", "names", "unable"]

# name -> (module, class, one line for menus, the boards it plays); the order is the menu order.
# Boards: "any"; "3x3" (rules written for 3×3 only); "solvable" (moves from the exact solver).
_PLAYERS: dict[str, tuple[str, str, str, str]] = {
    "easy": ("presets", "EasyPlayer", "Easy: plays any free cell at random (the EV3 robot's easy mode)", "any"),
    "medium": ("presets", "MediumPlayer",
               "Medium: each move a coin flip between the best move and a random one (the robot's medium)",
               "solvable"),
    "hard": ("presets", "HardPlayer", "Hard: always a best move, so it never loses (the robot's hard mode)",
             "solvable"),
    "random": ("random_player", "RandomPlayer", "Random: a uniformly random free cell, any board", "any"),
    "arduino": ("arduino", "ArduinoPlayer",
                "Arduino: wins if it can, else blocks, else plays at random (Nick Harvey's Arduino game)", "any"),
    "parsons": ("parsons", "ParsonsPlayer",
                "Parsons: centre, win, block, first free corner, first free cell (Sam Parsons' game, 3×3)", "3x3"),
    "mdttt": ("mdttt", "MdtttPlayer",
              "MD_TTT: scores each cell by the line sums it would make (the win-matrix library, 3×3)", "3x3"),
    "newell-simon": ("newell_simon", "NewellSimonPlayer",
                     "Newell-Simon: win, block, fork, stop forks, centre, corners, sides; never loses (3×3)", "3x3"),
    "seed001-rules": ("newell_simon", "Seed001RulesPlayer",
                      "Seed 001 rules: win, block, fork, centre, corners, sides; no fork defence (3×3)", "3x3"),
    "minimax": ("minimax", "MinimaxPlayer",
                "Minimax: the EV3 robot's alpha-beta search; exact on 3×3, depth-limited on big boards", "any"),
    "perfect": ("perfect", "PerfectPlayer", "Perfect: a best move from the exact solver; never loses", "solvable"),
}
_SEARCHERS = frozenset({"medium", "hard", "minimax", "perfect"})  # the players that take a budget

PROBE_NODES = 100_000
"""Positions the solver may search to show that a solver-backed player can play a board."""
PROBE_SECONDS = 1.0
"""Seconds it may take: a person will not wait long for each move."""
_VERDICTS_KEPT = 64
_verdicts: dict[tuple[tuple[int, int, int], int], bool] = {}  # (shape, position key) -> solvable in time


class UnknownPlayerError(NoughtsError):
    """A computer player name that is not in the registry."""


def names() -> list[str]:
    """Every player name, in menu order: the difficulty presets first."""
    return list(_PLAYERS)


def _entry(name: str) -> tuple[str, str, str, str]:
    entry = _PLAYERS.get(name.strip().lower()) if isinstance(name, str) else None
    if entry is None:
        raise UnknownPlayerError(
            f"there is no computer player called {name!r}; choose one of: {', '.join(_PLAYERS)}")
    return entry


def describe(name: str) -> str:
    """One line about the player, for menus."""
    return _entry(name)[2]


def get(name: str, rng: random.Random | None = None, *, budget: Budget | None = None) -> Player:
    """A new player by name; all its randomness comes from ``rng`` (``None``: a fresh generator).

    ``budget`` bounds each move of the players that search (medium, hard, minimax, perfect:
    each move gets a fresh copy); ``None`` keeps their own. The other players answer at once
    and ignore it.
    """
    module_name, class_name, _, _ = _entry(name)
    from importlib import import_module

    module = import_module(f"noughts.players.{module_name}")
    make = getattr(module, class_name)
    searches = name.strip().lower() in _SEARCHERS
    player: Player = make(rng, budget=budget) if searches and budget is not None else make(rng)
    return player


def unable(name: str, board: Board, *, budget: Budget | None = None) -> str | None:
    """Why the player called ``name`` cannot play a game from ``board``, or ``None`` if it can.

    The 3×3 players need 3×3 with 3 in a row. The solver-backed players (perfect, hard,
    medium) must work out every move exactly, so they are asked to solve ``board`` within
    :data:`PROBE_NODES` positions and :data:`PROBE_SECONDS` (or ``budget``): the first move is
    the hardest, and what it solves stays in the solver's tables for the game. Verdicts are
    kept per shape and position, so asking again costs nothing.

    >>> from noughts import Board
    >>> unable("perfect", Board(5, 5))  # doctest: +ELLIPSIS
    'the perfect player cannot work out every move on a 5×5 board with 5 in a row quickly enough...'
    """
    _, _, _, boards = _entry(name)
    player_name = name.strip().lower()
    if boards == "any":
        return None
    if boards == "3x3":
        from noughts.players.base import classic_board_problem

        return classic_board_problem(board, player_name)
    if _solvable(board, budget):
        return None
    return (f"the {player_name} player cannot work out every move on a {board.rows}×{board.cols} board "
            f"with {board.k} in a row quickly enough to play it; minimax, arduino, random and easy "
            "play any board")


def able(board: Board) -> list[str]:
    """The names of the players that can play a game from ``board``, in menu order."""
    return [name for name in _PLAYERS if unable(name, board) is None]


def _solvable(board: Board, budget: Budget | None) -> bool:
    """Whether the solver works out ``board`` within the probe's budget (or ``budget``)."""
    if board.is_over or (board.rows, board.cols, board.k) == (3, 3, 3):
        return True  # nothing to play, or every 3×3 position is in the solver's table
    key = ((board.rows, board.cols, board.k), board.key)
    if budget is None and key in _verdicts:
        return _verdicts[key]
    from noughts import solver
    from noughts.board import keep_newest
    from noughts.budget import Budget
    from noughts.errors import BudgetExceeded

    try:
        solver.solve(board, budget=budget if budget is not None else Budget(PROBE_NODES, PROBE_SECONDS))
        solvable = True
    except BudgetExceeded:
        solvable = False
    if budget is None:
        _verdicts[key] = solvable
        keep_newest(_verdicts, _VERDICTS_KEPT)
    return solvable
