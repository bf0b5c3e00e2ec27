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
"""

from __future__ import annotations

from noughts.errors import NoughtsError

TYPE_CHECKING = False  # typing costs milliseconds at import; mypy still reads the block

if TYPE_CHECKING:
    import random

    from noughts.board import Board
    from noughts.players.base import Player

__all__ = ["UnknownPlayerError", "able", "canonical", "describe", "get", "label", "names", "unable"]

# name -> (module, class, the name people see, what it does); the order is the menu order.
# Which document each player comes from is told in its module and in the docs, not in menus.
_PLAYERS: dict[str, tuple[str, str, str, str]] = {
    "easy": ("presets", "EasyPlayer", "Easy", "plays any free cell at random"),
    "medium": ("presets", "MediumPlayer", "Medium", "a coin flip each move: a best move or a random one"),
    "hard": ("presets", "HardPlayer", "Hard", "always a best move, so it never loses"),
    "random": ("random_player", "RandomPlayer", "Random", "a uniformly random free cell, any board"),
    "arduino": ("arduino", "ArduinoPlayer", "Arduino rules", "win, block, random"),
    "parsons": ("parsons", "ParsonsPlayer", "Centre first",
                "centre, win, block, a corner, any cell (3×3)"),
    "mdttt": ("mdttt", "MdtttPlayer", "Win matrix", "scores cells by the lines they make (3×3)"),
    "newell-simon": ("newell_simon", "NewellSimonPlayer", "Newell–Simon",
                     "eight rules in order; never loses (3×3)"),
    "simple-rules": ("newell_simon", "Seed001RulesPlayer", "Simple rules",
                     "win, block, fork, centre, corner, side (3×3)"),
    "minimax": ("minimax", "MinimaxPlayer", "Minimax",
                "alpha-beta search, depth-limited on big boards"),
    "perfect": ("perfect", "PerfectPlayer", "Perfect", "a best move from the exact solver"),
}
# Older names, still accepted wherever a player is named.
_ALIASES = {"seed001-rules": "simple-rules"}


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


def _entry(name: str) -> tuple[str, str, str, str]:
    return _PLAYERS[canonical(name)]


def label(name: str) -> str:
    """The name people see: ``Arduino rules`` for ``arduino``."""
    return _entry(name)[2]


def describe(name: str) -> str:
    """One line about the player, for menus: ``Arduino rules: win, block, random``."""
    _, _, shown, what = _entry(name)
    return f"{shown}: {what}"


def get(name: str, rng: random.Random | None = None) -> Player:
    """A new player by name; all its randomness comes from ``rng`` (``None``: a fresh generator)."""
    module_name, class_name, _, _ = _entry(name)
    from importlib import import_module

    module = import_module(f"noughts.players.{module_name}")
    player: Player = getattr(module, class_name)(rng)
    return player


_CLASSIC_ONLY = frozenset({"parsons", "mdttt", "newell-simon", "simple-rules"})
_SOLVED = frozenset({"medium", "hard", "perfect"})
_ABLE_CACHE: dict[tuple[str, int, int, int], str | None] = {}


def unable(name: str, board: Board) -> str | None:
    """Why player ``name`` cannot play ``board`` (a sentence), or None if it can; at most about a second."""
    name = canonical(name)
    if name in _CLASSIC_ONLY and (board.rows, board.cols, board.k) != (3, 3, 3):
        return "it only plays 3×3 with 3 in a row"
    if name not in _SOLVED:
        return None
    shape = (name, board.rows, board.cols, board.k)
    if shape not in _ABLE_CACHE:
        import time

        from noughts import solver
        from noughts.errors import BudgetExceeded

        try:
            solver.solve(board, deadline=time.monotonic() + 1.0)
            _ABLE_CACHE[shape] = None
        except BudgetExceeded:
            _ABLE_CACHE[shape] = "it plays only boards the solver can work out, and this one is too big"
    return _ABLE_CACHE[shape]


def able(board: Board) -> list[str]:
    """The players that can play ``board``, in menu order."""
    return [name for name in _PLAYERS if unable(name, board) is None]
