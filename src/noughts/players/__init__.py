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
    from collections.abc import Callable

    from noughts.board import Board
    from noughts.budget import Budget
    from noughts.players.base import Player

__all__ = [
    "PROBE_NODES", "PROBE_SECONDS", "UnknownPlayerError", "able", "canonical", "describe", "get", "label", "names",
    "unable",
]

# name -> (module, class, the name people see, what it does, the boards it plays); the order is
# the menu order. Which document each player comes from is told in its module and in the docs,
# not in menus. Boards: "any"; "3x3" (rules written for 3×3 only); "solvable" (moves from the
# exact solver).
_PLAYERS: dict[str, tuple[str, str, str, str, str]] = {
    "easy": ("presets", "EasyPlayer", "Easy", "plays any free cell at random", "any"),
    "medium": ("presets", "MediumPlayer", "Medium", "a coin flip each move: a best move or a random one",
               "solvable"),
    "hard": ("presets", "HardPlayer", "Hard", "always a best move, so it never loses", "solvable"),
    "random": ("random_player", "RandomPlayer", "Random", "a uniformly random free cell, any board", "any"),
    "arduino": ("arduino", "ArduinoPlayer", "Arduino rules", "win, block, random", "any"),
    "parsons": ("parsons", "ParsonsPlayer", "Centre first", "centre, win, block, a corner, any cell (3×3)", "3x3"),
    "mdttt": ("mdttt", "MdtttPlayer", "Win matrix", "scores cells by the lines they make (3×3)", "3x3"),
    "newell-simon": ("newell_simon", "NewellSimonPlayer", "Newell–Simon", "eight rules in order; never loses (3×3)",
                     "3x3"),
    "simple-rules": ("newell_simon", "Seed001RulesPlayer", "Simple rules",
                     "win, block, fork, centre, corner, side (3×3)", "3x3"),
    "minimax": ("minimax", "MinimaxPlayer", "Minimax", "alpha-beta search, depth-limited on big boards", "any"),
    "perfect": ("perfect", "PerfectPlayer", "Perfect", "a best move from the exact solver", "solvable"),
}
# Older names, still accepted wherever a player is named.
_ALIASES = {"seed001-rules": "simple-rules"}
_SEARCHERS = frozenset({"medium", "hard", "minimax", "perfect"})  # the players that take a budget
_classes: dict[str, Callable[..., Player]] = {}  # registry name -> the player's class, once imported

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


def canonical(name: str) -> str:
    """The registry name for ``name`` as typed (any case, an older alias); raises UnknownPlayerError."""
    key = name.strip().lower() if isinstance(name, str) else ""
    key = _ALIASES.get(key, key)
    if key not in _PLAYERS:
        raise UnknownPlayerError(
            f"there is no computer player called {name!r}; choose one of: {', '.join(_PLAYERS)}")
    return key


def _entry(name: str) -> tuple[str, str, str, str, str]:
    return _PLAYERS[canonical(name)]


def label(name: str) -> str:
    """The name people see: ``Arduino rules`` for ``arduino``."""
    return _entry(name)[2]


def describe(name: str) -> str:
    """One line about the player, for menus: ``Arduino rules: win, block, random``."""
    _, _, shown, what, _ = _entry(name)
    return f"{shown}: {what}"


def get(name: str, rng: random.Random | None = None, *, budget: Budget | None = None) -> Player:
    """A new player by name; all its randomness comes from ``rng`` (``None``: a fresh generator).

    ``budget`` bounds each move of the players that search (medium, hard, minimax, perfect:
    each move gets a fresh copy); ``None`` keeps their own. The other players answer at once
    and ignore it.
    """
    key = canonical(name)
    make = _classes.get(key)
    if make is None:  # the first of its kind: import its module (once; an engine asks for many)
        from importlib import import_module

        module_name, class_name, _, _, _ = _PLAYERS[key]
        make = _classes[key] = getattr(import_module(f"noughts.players.{module_name}"), class_name)
    player: Player = make(rng, budget=budget) if key in _SEARCHERS and budget is not None else make(rng)
    return player


def unable(name: str, board: Board, *, budget: Budget | None = None) -> str | None:
    """Why the player called ``name`` cannot play a game from ``board``, or ``None`` if it can.

    The 3×3 players need 3×3 with 3 in a row. The solver-backed players (perfect, hard,
    medium) must work out every move exactly, so they are asked to solve ``board`` within
    :data:`PROBE_NODES` positions and :data:`PROBE_SECONDS` (or ``budget``): the first move is
    the hardest, and what it solves stays in the solver's tables for the game. Verdicts are
    kept per shape and position, so asking again costs nothing.

    The sentence fits after the player's label: "Perfect cannot play this board: <reason>".

    >>> from noughts import Board
    >>> unable("perfect", Board(5, 5))
    'it works out every move exactly, and this board is too big for that'
    >>> unable("parsons", Board(4, 4))
    'it only plays 3×3 with 3 in a row'
    """
    boards = _entry(name)[4]
    if boards == "any":
        return None
    if boards == "3x3":
        return None if (board.rows, board.cols, board.k) == (3, 3, 3) else "it only plays 3×3 with 3 in a row"
    if _solvable(board, budget):
        return None
    return "it works out every move exactly, and this board is too big for that"


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
