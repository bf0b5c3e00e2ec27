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
['easy', 'hard', 'random', 'arduino', 'minimax', 'strong']
"""

from __future__ import annotations

from noughts.errors import NoughtsError

TYPE_CHECKING = False  # typing costs milliseconds at import; mypy still reads the block

if TYPE_CHECKING:
    import random
    from collections.abc import Callable
    from typing import Any

    from noughts.board import Board
    from noughts.budget import Budget
    from noughts.players.base import Player

__all__ = [
    "DEFAULT", "DEFAULT_ELSEWHERE", "ENTRY_POINT_GROUP", "PROBE_NODES", "PROBE_SECONDS", "PluginError",
    "PluginWarning", "UnknownPlayerError", "able", "canonical", "default_for", "describe", "get", "label", "names",
    "register", "unable", "unregister",
]

# name -> (module, class, the name people see, what it does, the boards it plays); the order is
# the menu order. Which document each player comes from is told in its module and in the docs,
# not in menus. Boards: "any"; "3x3" (rules written for 3×3 only); "solvable" (moves from the
# exact solver).
_PLAYERS: dict[str, tuple[str, str, str, str, str]] = {
    "easy": ("presets", "EasyPlayer", "Easy", "plays any free cell at random", "any"),
    "medium": ("presets", "MediumPlayer", "Medium", "a coin flip each move: a best move or a random one",
               "solvable"),
    "hard": ("presets", "HardPlayer", "Hard", "perfect where it can be proved, else strong", "any"),
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
    "strong": ("strong", "StrongPlayer", "Strong", "threat search for forced wins, then patterns", "any"),
}
# Older names, still accepted wherever a player is named.
_ALIASES = {"seed001-rules": "simple-rules"}
_SEARCHERS = frozenset({"medium", "hard", "minimax", "perfect", "strong"})  # the players that take a budget
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
    """Every player name, in menu order: the difficulty presets first, plug-in players last."""
    _discover()
    return [*_PLAYERS, *_plugins]


def canonical(name: str) -> str:
    """The registry name for ``name`` as typed (any case, an older alias); raises UnknownPlayerError."""
    key = name.strip().lower() if isinstance(name, str) else ""
    key = _ALIASES.get(key, key)
    if key not in _PLAYERS and key not in _plugins:
        _discover()
        if key not in _plugins:
            raise UnknownPlayerError(
                f"there is no computer player called {name!r}; choose one of: {', '.join(names())}")
    return key


def _entry(name: str) -> tuple[str, str, str, str, str]:
    return _PLAYERS[canonical(name)]


def label(name: str) -> str:
    """The name people see: ``Arduino rules`` for ``arduino``."""
    plugin = _plugin(name)
    if plugin is not None:
        return plugin.label
    return _entry(name)[2]


def describe(name: str) -> str:
    """One line about the player, for menus: ``Arduino rules: win, block, random``."""
    plugin = _plugin(name)
    if plugin is not None:
        what = plugin.description if plugin.problem is None else f"cannot be used: {plugin.problem}"
        return f"{plugin.label}: {what}" if what else plugin.label
    _, _, shown, what, _ = _entry(name)
    return f"{shown}: {what}"


def get(name: str, rng: random.Random | None = None, *, budget: Budget | None = None) -> Player:
    """A new player by name; all its randomness comes from ``rng`` (``None``: a fresh generator).

    ``budget`` bounds each move of the players that search (medium, hard, minimax, perfect:
    each move gets a fresh copy); ``None`` keeps their own. The other players answer at once
    and ignore it. A plug-in player's factory is called as ``factory(rng, budget=budget)``.
    """
    plugin = _plugin(name)
    if plugin is not None:
        return plugin.make(canonical(name), rng, budget)
    key = canonical(name)
    make = _classes.get(key)
    if make is None:  # the first of its kind: import its module (once; an engine asks for many)
        module_name, class_name, _, _, _ = _entry(name)
        # __import__ with a fromlist gives the module itself; importlib would be one more import
        # (half a millisecond) before a new process's first move
        module = __import__(f"noughts.players.{module_name}", fromlist=[class_name])
        make = _classes[key] = getattr(module, class_name)
    player: Player = make(rng, budget=budget) if key in _SEARCHERS and budget is not None else make(rng)
    return player


def unable(name: str, board: Board, *, budget: Budget | None = None) -> str | None:
    """Why the player called ``name`` cannot play a game from ``board``, or ``None`` if it can.

    The 3×3 players need 3×3 with 3 in a row. The solver-backed players (perfect, medium)
    must work out every move exactly, so they are asked to solve ``board`` within
    :data:`PROBE_NODES` positions and :data:`PROBE_SECONDS` (or ``budget``): the first move is
    the hardest, and what it solves stays in the solver's tables for the game. Verdicts are
    kept per shape and position, so asking again costs nothing.

    The sentence fits after the player's label: "Perfect cannot play this board: <reason>".

    >>> from noughts import Board
    >>> unable("perfect", Board(15, 15))
    'it works out every move exactly, and this board is too big for that'
    >>> unable("parsons", Board(4, 4))
    'it only plays 3×3 with 3 in a row'
    """
    plugin = _plugin(name)
    if plugin is not None:
        if plugin.problem is not None or callable(plugin.boards):
            return plugin.unable(board)
        boards = plugin.boards
    else:
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
    return [name for name in names() if unable(name, board) is None]


DEFAULT = "medium"
"""The opponent offered first: it wins some and loses some, so a newcomer's first game is winnable."""
DEFAULT_ELSEWHERE = "arduino"
"""The opponent offered first where :data:`DEFAULT` cannot play: win, block, else random, on any board."""


def default_for(board: Board) -> str:
    """The opponent every front end offers first for a game from ``board``.

    >>> from noughts import Board
    >>> default_for(Board()), default_for(Board(15, 15))
    ('medium', 'arduino')
    """
    return DEFAULT if unable(DEFAULT, board) is None else DEFAULT_ELSEWHERE


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


# plug-in players ----------------------------------------------------------------------------
# Players from other packages: registered in code with register(), or found through the
# "noughts.players" entry-point group the first time the registry is asked about names. A
# plug-in that cannot be loaded stays listed with the reason; it never stops noughts.

ENTRY_POINT_GROUP = "noughts.players"
"""The entry-point group packages list their players in: ``corner-first = "my_package:CornerFirst"``."""
_BOARDS = ("any", "3x3", "solvable")


class PluginError(NoughtsError):
    """A plug-in player that cannot be registered, made, or that failed while choosing a move."""


class PluginWarning(UserWarning):
    """A plug-in player that was skipped (its name is taken, or is not a name)."""


class _Plugin:
    """What the registry knows of one plug-in player."""

    def __init__(self, factory: Callable[..., Any] | None, label: str, description: str,
                 boards: str | Callable[[Board], str | None], problem: str | None = None) -> None:
        self.factory = factory
        self.label = label
        self.description = description
        self.boards = boards
        self.problem = problem  # why it cannot be used (it could not be loaded), or None

    def make(self, key: str, rng: random.Random | None, budget: Budget | None) -> Player:
        if self.problem is not None or self.factory is None:
            raise PluginError(f"the plug-in player {key!r} cannot be used: {self.problem}")
        try:
            player = self.factory(rng, budget=budget)
        except NoughtsError:
            raise
        except Exception as error:
            raise PluginError(f"the plug-in player {key!r} could not be made: {type(error).__name__}: {error}"
                              ) from None
        if not callable(getattr(player, "choose", None)):
            raise PluginError(f"the plug-in player {key!r} has no choose(board) method")
        return _Guarded(key, player)

    def unable(self, board: Board) -> str | None:
        if self.problem is not None:
            return f"it cannot be used: {self.problem}"
        assert callable(self.boards)
        try:
            reason = self.boards(board)
        except Exception as error:
            return f"its check of the board failed: {type(error).__name__}: {error}"
        return None if reason is None else str(reason)


class _Guarded:
    """A plug-in player whose failures are noughts errors (one line for a person), never a crash."""

    def __init__(self, name: str, player: Any) -> None:
        self.name = name
        self.player = player

    def choose(self, board: Board) -> int:
        try:
            cell = self.player.choose(board)
        except NoughtsError:
            raise
        except Exception as error:
            raise PluginError(f"the plug-in player {self.name!r} failed: {type(error).__name__}: {error}") from None
        if type(cell) is not int or cell not in board.legal_moves:
            raise PluginError(f"the plug-in player {self.name!r} chose {cell!r:.30}, which is not a legal move")
        return cell

    def __getattr__(self, attribute: str) -> Any:  # candidates() and the like, when the player has them
        return getattr(self.player, attribute)


_plugins: dict[str, _Plugin] = {}
_discovery: list[bool] = []  # [True] once the entry points have been read


def register(name: str, factory: Callable[..., Any], *, label: str | None = None, description: str = "",
             boards: str | Callable[[Board], str | None] = "any") -> None:
    """Add a computer player: ``factory(rng, budget=budget)`` makes one (see :func:`get`).

    ``label`` is the name people see (default: ``name``), ``description`` a few words for menus,
    ``boards`` ``"any"``, ``"3x3"``, ``"solvable"`` or a function ``boards(board)`` returning why
    the player cannot play ``board`` (``None`` if it can). Registering a plug-in's name again
    replaces it; a built-in player's name cannot be taken.
    """
    _discover()
    key = _plugin_key(name)
    if key is None:
        raise PluginError(f"a player's name is a word such as 'corner-first', not {name!r:.40}")
    if key in _PLAYERS or key in _ALIASES:
        raise PluginError(f"{key!r} is a built-in player's name; choose another")
    if not callable(factory):
        raise PluginError(f"the factory of player {key!r} must be callable, not {type(factory).__name__}")
    if not (boards in _BOARDS or callable(boards)):
        raise PluginError(f"boards is 'any', '3x3', 'solvable' or a function, not {boards!r:.40}")
    _plugins[key] = _Plugin(factory, label or name, description, boards)


def unregister(name: str) -> None:
    """Remove a plug-in player (a name that is not one is left alone)."""
    key = _plugin_key(name)
    if key is not None:
        _plugins.pop(key, None)


def _plugin(name: str) -> _Plugin | None:
    key = canonical(name)
    return _plugins.get(key)


def _plugin_key(name: object) -> str | None:
    key = name.strip().lower() if isinstance(name, str) else ""
    return key if key and key.isprintable() and not any(c.isspace() for c in key) and len(key) <= 40 else None


def _discover() -> None:
    """Read the entry points of the ``noughts.players`` group, once; nothing a plug-in does stops noughts."""
    if _discovery:
        return
    _discovery.append(True)
    import warnings

    try:
        from importlib.metadata import entry_points

        found = sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda point: point.name)
    except Exception as error:  # broken metadata of some installed package
        warnings.warn(f"noughts: plug-in players could not be looked for: {error}", PluginWarning, stacklevel=3)
        return
    for point in found:
        source = point.dist.name if point.dist is not None else "an unknown package"
        key = _plugin_key(point.name)
        if key is None or key in _PLAYERS or key in _ALIASES or key in _plugins:
            why = "its name is taken" if key is not None else "its name is not a word"
            warnings.warn(f"noughts: skipped the plug-in player {point.name!r} from {source}: {why}",
                          PluginWarning, stacklevel=3)
            continue
        try:
            factory = point.load()
        except (Exception, SystemExit) as error:  # a plug-in's import must not end noughts
            _plugins[key] = _Plugin(None, point.name, "", "any",
                                    f"{point.value} from {source} cannot be loaded: {type(error).__name__}: {error}")
            continue
        boards = getattr(factory, "boards", "any")
        problem = None
        if not callable(factory):
            problem = f"{point.value} from {source} is not a class or function that makes a player"
        elif not (boards in _BOARDS or callable(boards)):
            problem = f"{point.value} from {source} says it plays boards={boards!r:.40}: not 'any', '3x3' or 'solvable'"
        label = getattr(factory, "label", None)
        description = getattr(factory, "description", None)
        if not isinstance(description, str):
            description = ((getattr(factory, "__doc__", None) or "").strip().splitlines() or [""])[0]
        _plugins[key] = _Plugin(factory if problem is None else None,
                                label if isinstance(label, str) and label else point.name,
                                description, boards if problem is None else "any", problem)
