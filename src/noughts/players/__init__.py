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

    from noughts.players.base import Player

__all__ = ["UnknownPlayerError", "describe", "get", "names"]

# name -> (module, class, one line for menus); the order is the menu order.
_PLAYERS: dict[str, tuple[str, str, str]] = {
    "easy": ("presets", "EasyPlayer", "Easy: plays any free cell at random (the EV3 robot's easy mode)"),
    "medium": ("presets", "MediumPlayer",
               "Medium: each move a coin flip between the best move and a random one (the robot's medium)"),
    "hard": ("presets", "HardPlayer", "Hard: always a best move, so it never loses (the robot's hard mode)"),
    "random": ("random_player", "RandomPlayer", "Random: a uniformly random free cell, any board"),
    "arduino": ("arduino", "ArduinoPlayer",
                "Arduino: wins if it can, else blocks, else plays at random (Nick Harvey's Arduino game)"),
    "parsons": ("parsons", "ParsonsPlayer",
                "Parsons: centre, win, block, first free corner, first free cell (Sam Parsons' game, 3×3)"),
    "mdttt": ("mdttt", "MdtttPlayer",
              "MD_TTT: scores each cell by the line sums it would make (the win-matrix library, 3×3)"),
    "newell-simon": ("newell_simon", "NewellSimonPlayer",
                     "Newell-Simon: win, block, fork, stop forks, centre, corners, sides; never loses (3×3)"),
    "seed001-rules": ("newell_simon", "Seed001RulesPlayer",
                      "Seed 001 rules: win, block, fork, centre, corners, sides; no fork defence (3×3)"),
    "minimax": ("minimax", "MinimaxPlayer",
                "Minimax: the EV3 robot's alpha-beta search; exact on 3×3, depth-limited on big boards"),
    "perfect": ("perfect", "PerfectPlayer", "Perfect: a best move from the exact solver; never loses"),
}


class UnknownPlayerError(NoughtsError):
    """A computer player name that is not in the registry."""


def names() -> list[str]:
    """Every player name, in menu order: the difficulty presets first."""
    return list(_PLAYERS)


def _entry(name: str) -> tuple[str, str, str]:
    entry = _PLAYERS.get(name.strip().lower()) if isinstance(name, str) else None
    if entry is None:
        raise UnknownPlayerError(
            f"there is no computer player called {name!r}; choose one of: {', '.join(_PLAYERS)}")
    return entry


def describe(name: str) -> str:
    """One line about the player, for menus."""
    return _entry(name)[2]


def get(name: str, rng: random.Random | None = None) -> Player:
    """A new player by name; all its randomness comes from ``rng`` (``None``: a fresh generator)."""
    module_name, class_name, _ = _entry(name)
    from importlib import import_module

    module = import_module(f"noughts.players.{module_name}")
    player: Player = getattr(module, class_name)(rng)
    return player
