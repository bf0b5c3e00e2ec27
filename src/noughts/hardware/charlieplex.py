"""Charlieplexing: n(n-1) LEDs on n pins, one LED at a time, the unused pins tri-stated.

Every ordered pair of lines can light one LED (anode on the first, cathode on the second). LED
number ``k`` uses the ``k // 2``-th pair of lines in the order 01 02 03 04 12 13 … and for odd
``k`` the pair the other way round, so an even/odd pair of numbers is a bi-colour LED (the seed
puts a cell's green and red LED on the same two pins this way: green 0, red 1):

>>> [led_lines(k, 5) for k in (0, 1, 2, 19)]
[(0, 1), (1, 0), (0, 2), (4, 3)]

:class:`Charlieplexer` drives the lines through gpiozero and a refresh thread; each step lights
the next lit LED. Between two LEDs every driven line goes back to input first, then the new
cathode is driven low and only then the anode high, so no other LED ever sees a voltage, even
for the instant between two pin writes.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import Any

from noughts.errors import NoughtsError
from noughts.hardware import require

__all__ = ["Charlieplexer", "led_lines", "lit_leds"]


def led_lines(number: int, lines: int) -> tuple[int, int]:
    """The (anode, cathode) line indices of LED ``number`` on ``lines`` Charlieplex lines."""
    pairs = [(a, b) for a in range(lines) for b in range(a + 1, lines)]
    if not 0 <= number < 2 * len(pairs):
        raise ValueError(f"{lines} lines drive LEDs 0 to {2 * len(pairs) - 1}, not {number}")
    first, second = pairs[number // 2]
    return (first, second) if number % 2 == 0 else (second, first)


def lit_leds(states: Sequence[tuple[str, bool]]) -> frozenset[int]:
    """The LEDs that can light when line ``i`` has function and state ``states[i]``.

    An LED lights when its anode line is an output driven high and its cathode line an output
    driven low; lines set to input are high impedance.

    >>> sorted(lit_leds([("output", True), ("output", False), ("input", False)]))
    [0]
    """
    count = len(states)
    high = [f == "output" and s for f, s in states]
    low = [f == "output" and not s for f, s in states]
    lit = set()
    for number in range(count * (count - 1)):
        anode, cathode = led_lines(number, count)
        if high[anode] and low[cathode]:
            lit.add(number)
    return frozenset(lit)


class Charlieplexer:
    """LEDs Charlieplexed on gpiozero pins, refreshed by a thread (``start()``) or by ``step()``.

    ``slot`` is each lit LED's turn in seconds: with all 20 of the seed's LEDs lit and the
    default 1 ms, every LED is refreshed 50 times a second.
    """

    def __init__(self, pins: Sequence[str], *, pin_factory: Any = None, slot: float = 0.001) -> None:
        gpiozero: Any = require("gpiozero", "Charlieplexed LEDs")
        self.slot = slot
        self._devices: list[Any] = []
        self._lines: list[Any] = []
        self._lit: tuple[int, ...] = ()
        self._next = 0
        self._on: int | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        try:
            for name in pins:
                device = gpiozero.GPIODevice(name, pin_factory=pin_factory)
                self._devices.append(device)
                if device.pin.info.pull:
                    raise NoughtsError(
                        f"{name} has a fixed pull-up resistor, which would light Charlieplexed LEDs "
                        "through the lines meant to be off: use another pin")
                device.pin.function = "input"
                device.pin.pull = "floating"  # high impedance: a pull resistor would leak current
        except BaseException:
            self.close()
            raise
        self._lines = [device.pin for device in self._devices]
        self.count = len(pins) * (len(pins) - 1)

    @property
    def lit(self) -> frozenset[int]:
        """The LEDs that are on (each lit in turn by the refresh)."""
        return frozenset(self._lit)

    @property
    def driven(self) -> int | None:
        """The LED whose lines are driven right now."""
        return self._on

    def set(self, number: int, on: bool) -> None:
        if not 0 <= number < self.count:
            raise ValueError(f"there is no Charlieplexed LED {number}")
        with self._lock:
            lit = set(self._lit)
            lit.add(number) if on else lit.discard(number)
            self._lit = tuple(sorted(lit))
            if not on and self._on == number:
                self._release()  # dark at once, not at the next step

    def set_many(self, numbers: Iterable[int]) -> None:
        with self._lock:
            self._lit = tuple(sorted(set(numbers)))
            if self._on is not None and self._on not in self._lit:
                self._release()

    def step(self) -> int | None:
        """One refresh step: drive the next lit LED; returns it (None when all are off)."""
        with self._lock:
            if not self._lit:
                self._release()
                return None
            if self._next >= len(self._lit):
                self._next = 0
            number = self._lit[self._next]
            self._next += 1
            if number != self._on:
                self._release()
                self._drive(number)
            return number

    def _release(self) -> None:
        if self._on is None:
            return
        anode, cathode = led_lines(self._on, len(self._lines))
        self._lines[anode].state = False  # so a line's remembered state is always low
        self._lines[anode].function = "input"
        self._lines[cathode].function = "input"
        self._on = None

    def _drive(self, number: int) -> None:
        anode, cathode = led_lines(number, len(self._lines))
        self._lines[cathode].output_with_state(False)
        self._lines[anode].output_with_state(True)
        self._on = number

    def start(self) -> None:
        """Refresh from a daemon thread until :meth:`close`."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="charlieplex", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.slot):
            self.step()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        with self._lock:
            if self._lines:
                self._release()
        for device in self._devices:
            device.close()
        self._devices = []
