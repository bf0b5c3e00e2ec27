"""What a look at the sheet found: each cell's verdict and how sure it is.

Every way of reading the sheet gives a :class:`SheetReading`: the camera
(:mod:`noughts.sheet.camera`), the robot's light sensor, a person typing the move. The robot's
game and paper mode (:mod:`noughts.paper_game`) judge moves from it.

>>> cells = (CellReading("X", 0.99), CellReading("", 0.9), CellReading("?", 0.3), CellReading("O", 1.0))
>>> SheetReading(cells).notation(2)
'X./?O'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["SURE", "CellReading", "Changes", "SheetReading", "cell_readings", "changes"]

SURE = 0.8
"""A cell's verdict is certain at this confidence or above; below it, the cell is a question to the person."""


@dataclass(frozen=True)
class CellReading:
    """What a sensor believes is in one cell: ``"X"``, ``"O"``, ``"?"`` (a mark of unknown shape,
    as the seed's light sensor sees a shaded square) or ``""`` (empty), and how sure it is (0–1)."""

    mark: str
    confidence: float


@dataclass(frozen=True)
class SheetReading:
    """One look at the whole sheet. ``found`` is False when the sheet itself could not be seen
    (then ``message`` says why and ``cells`` is empty). ``outline`` is where the sheet's four corners
    (top-left, top-right, bottom-right, bottom-left) are in the picture's pixels, when a camera found
    them (a front end draws it over its live view); empty otherwise."""

    cells: tuple[CellReading, ...]
    found: bool = True
    message: str = ""
    outline: tuple[tuple[float, float], ...] = ()

    def notation(self, cols: int) -> str:
        """The cells in the usual notation, rows joined by ``/`` (marks of unknown shape as ``?``)."""
        marks = [cell.mark or "." for cell in self.cells]
        return "/".join("".join(marks[i:i + cols]) for i in range(0, len(marks), cols))


def cell_readings(marks: str) -> tuple[CellReading, ...]:
    """Certain readings of ``marks`` (``X``, ``O``, ``?`` or ``.`` per cell), for sensors that know."""
    return tuple(CellReading("" if mark == "." else mark, 1.0) for mark in marks)


@dataclass(frozen=True)
class Changes:
    """How a reading differs from what is known to be on the sheet: empty squares read without
    certainty (``doubtful``), taken squares now surely holding another mark (``overdrawn``), and the
    empty squares holding a mark (``new``, with the mark seen)."""

    doubtful: list[int]
    overdrawn: list[int]
    new: list[tuple[int, str]]


def changes(reading: SheetReading, known: Sequence[str | None], sure: float = SURE) -> Changes:
    """Compare ``reading`` with ``known`` (each square's mark, None when empty): what the robot's game
    and paper mode judge a move from.

    >>> changes(SheetReading(cell_readings("X.O?")), ["X", None, "X", None])
    Changes(doubtful=[], overdrawn=[2], new=[(3, '?')])
    """
    cells = reading.cells
    return Changes(
        doubtful=[cell for cell, was in enumerate(known) if was is None and cells[cell].confidence < sure],
        overdrawn=[cell for cell, was in enumerate(known)
                   if was and cells[cell].confidence >= sure and cells[cell].mark not in ("", "?", was)],
        new=[(cell, cells[cell].mark) for cell, was in enumerate(known) if was is None and cells[cell].mark])
