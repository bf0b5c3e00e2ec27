"""The errors a person can cause, each with a message written for that person.

Every error is a :class:`NoughtsError`, which is a :class:`ValueError`, so callers that
only care that the input was bad can catch either.
"""

from __future__ import annotations


class NoughtsError(ValueError):
    """Base class of every error noughts raises on purpose."""


class CellSyntaxError(NoughtsError):
    """A cell name that cannot be read, such as ``z9`` or ``10`` on a 3×3 board."""


class IllegalMoveError(NoughtsError):
    """A move onto an occupied cell, off the board, or after the game is over."""


class CellTaken(IllegalMoveError):
    """A move onto a cell that already holds a mark (``cell``, ``mark``)."""

    def __init__(self, message: str, *, cell: int, mark: str) -> None:
        super().__init__(message)
        self.cell = cell
        self.mark = mark


class NotYourTurn(IllegalMoveError):
    """A move by a seat whose turn it is not, or while the computer works out its move."""


class GameOver(IllegalMoveError):
    """A move, undo or hint when no game is in play: none has started, or it has ended."""


class ImpossiblePositionError(NoughtsError):
    """A position that cannot be read or cannot arise in a real game."""


class UnsupportedBoardError(NoughtsError):
    """A player or tool asked to work on a board geometry it does not support."""


class GameRecordError(NoughtsError):
    """A game record (text or JSON) that cannot be read."""


class BudgetExceeded(NoughtsError):
    """A search gave up because it ran out of its time or node budget.

    ``reason`` is ``"nodes"`` or ``"time"`` (``None`` when not known), ``spent`` the positions
    searched and ``elapsed`` the seconds taken.
    """

    def __init__(self, message: str, *, reason: str | None = None, spent: int = 0, elapsed: float = 0.0) -> None:
        super().__init__(message)
        self.reason = reason
        self.spent = spent
        self.elapsed = elapsed


class InvalidBudgetError(NoughtsError):
    """A budget that cannot be kept: negative positions or seconds, or limits given twice."""


class StoreError(NoughtsError):
    """The score store cannot do what was asked; the message is a sentence for the person."""


class GameNotFoundError(StoreError):
    """No stored game has that number."""


class SettingError(NoughtsError):
    """A setting's value that cannot be used, said without any front end's name for the setting.

    ``setting`` names it (``"public_url"``, ``"workers"``, ``"port"``, ``"sense"``, …). A value that
    is malformed has ``takes`` (what the setting takes, "addresses or networks, like 10.0.0.0/8") and
    ``shown`` (the value as a sentence quotes it); ``instead`` holds values that would do (``("sim",)``;
    empty: another value of the setting). A front end that names its settings (the command's
    ``--public-url``) words the refusal or the advice from these: see ``noughts.cli.common.flag_said``.
    """

    def __init__(self, message: str, *, setting: str, takes: str | None = None, shown: str | None = None,
                 instead: tuple[str, ...] | None = None) -> None:
        super().__init__(message)
        self.setting = setting
        self.takes = takes
        self.shown = shown
        self.instead = instead
