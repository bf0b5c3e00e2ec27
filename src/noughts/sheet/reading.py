"""What a look at the sheet found: each cell's verdict and how sure it is.

Every way of reading the sheet gives a :class:`SheetReading`: the camera
(:mod:`noughts.sheet.camera`), the robot's light sensor, a person typing the move. The robot's
game and paper mode (:mod:`noughts.paper_game`) judge moves from it.

>>> cells = (CellReading("X", 0.99), CellReading("", 0.9), CellReading("?", 0.3), CellReading("O", 1.0))
>>> SheetReading(cells).notation(2)
'X./?O'
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SURE", "CellReading", "SheetReading", "cell_readings"]

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
