"""The small interface every backend offers the controller, and the pieces backends share.

A board shows LEDs (``set_led``) and text (``lcd_write``), reports buttons as debounced
:class:`~noughts.hardware.controller.ButtonEvent` from ``poll(now)``, sends what changed on
``flush()``, and says whether it is ``connected`` (only the serial panel can go away).

:class:`Debounced` turns sampled levels into changes once they have held long enough, and
:class:`Ladder` decodes a resistor-ladder reading into a cell the way the seed's Uno sketch does:

>>> ladder = Ladder((800, 400, 200, 160, 140, 120, 90, 85, 70))
>>> [ladder.cell(v) for v in (1023, 801, 800, 600, 150, 80, 70, 0)]
[1, 1, 0, 2, 5, 9, 0, 0]
>>> switch = Debounced(False, hold=0.02)
>>> [switch.update(level, t) for level, t in ((True, 0.0), (False, 0.005), (True, 0.01), (True, 0.03))]
[None, None, None, (False, True)]
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Generic, Protocol, TypeVar

from noughts.hardware.controller import ButtonEvent

__all__ = ["BoardIO", "Debounced", "Ladder", "MemoryLcd", "thresholds_from_readings"]

T = TypeVar("T")


class BoardIO(Protocol):
    """What the panel loop needs from a backend."""

    @property
    def connected(self) -> bool: ...

    def set_led(self, name: str, on: bool) -> None: ...

    def lcd_write(self, line1: str, line2: str) -> None: ...

    def poll(self, now: float) -> list[ButtonEvent]: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


class Debounced(Generic[T]):
    """A sampled input whose value changes only after the new value has held for ``hold`` seconds."""

    def __init__(self, value: T, hold: float) -> None:
        self.value = value
        self.hold = hold
        self._raw = value
        self._since = 0.0

    def update(self, raw: T, now: float) -> tuple[T, T] | None:
        """Feed one sample; returns ``(old, new)`` when the debounced value changes."""
        if raw != self._raw:
            self._raw, self._since = raw, now
        if raw != self.value and now - self._since >= self.hold - 1e-9:  # sums of float times
            old, self.value = self.value, raw
            return old, raw
        return None


class Ladder:
    """The seed's resistor-ladder decoding: cell ``n`` reads between ``thresholds[n-1]`` and
    ``thresholds[n-2]`` (cell 1 has no upper bound); a reading on a threshold, or below the last,
    is no button. ``thresholds`` fall from cell 1 to cell 9, in ADC counts (10 bits)."""

    def __init__(self, thresholds: Sequence[int]) -> None:
        if len(thresholds) != 9 or any(a <= b for a, b in pairwise(thresholds)):
            raise ValueError(f"a ladder needs 9 falling thresholds, not {list(thresholds)}")
        self.thresholds = tuple(thresholds)

    def cell(self, reading: int) -> int:
        """The cell (1-9) a reading means, or 0 for none."""
        upper = 10_000
        for index, threshold in enumerate(self.thresholds):
            if threshold < reading < upper:
                return index + 1
            upper = threshold
        return 0

    def reading(self, cell: int) -> int:
        """A reading in the middle of ``cell``'s band (for simulators and tests)."""
        upper = 1023 if cell == 1 else self.thresholds[cell - 2]
        return (upper + self.thresholds[cell - 1] + 1) // 2


def thresholds_from_readings(readings: Sequence[int]) -> list[int]:
    """Ladder thresholds from each cell's measured reading (cell 1 first): halfway between
    neighbours, and halfway to zero below cell 9.

    >>> thresholds_from_readings([1000, 600, 300, 180, 150, 130, 100, 88, 80])
    [800, 450, 240, 165, 140, 115, 94, 84, 40]
    >>> thresholds_from_readings([1000, 600, 601, 180, 150, 130, 100, 88, 80])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
      ...
    ValueError: cells 2 and 3 read 600 and 601: each cell must read at least 4 below the one before; ...
    """
    if len(readings) != 9:
        raise ValueError(f"a ladder has 9 cells, not {len(readings)} readings")
    for cell, (high, low) in enumerate(pairwise(readings), start=1):
        if high - low < 4:
            raise ValueError(f"cells {cell} and {cell + 1} read {high} and {low}: each cell must read at least 4 "
                             "below the one before; check the ladder's resistors")
    if readings[-1] < 4:
        raise ValueError(f"cell 9 reads {readings[-1]}, too close to no button at all")
    return [(high + low) // 2 for high, low in zip(readings, [*readings[1:], 0], strict=True)]


class MemoryLcd:
    """A 16×2 LCD that only remembers: the sim's display and the tests' fake."""

    def __init__(self) -> None:
        self.lines = ("", "")
        self.history: list[tuple[str, str]] = []
        self.closed = False

    def show(self, line1: str, line2: str) -> None:
        self.lines = (line1, line2)
        self.history.append(self.lines)

    def close(self) -> None:
        self.closed = True
