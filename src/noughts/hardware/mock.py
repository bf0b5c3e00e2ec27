"""Mock hardware on gpiozero's MockFactory: what the sim runs on, and what the tests check.

* :func:`watched_factory`: a ``MockFactory`` whose pins tell ``factory.watchers`` about every
  change of function (input/output) and state, so a probe sees each instant between two writes;
* :class:`CharlieplexProbe`: which Charlieplexed LEDs can light, at every such instant;
* :func:`fake_mcp3008`: an MCP3008 on the mock SPI bus (GPIO 8-11, as gpiozero's MCP3008 uses it
  by default) answering with readings the caller sets.

gpiozero is imported only when one of these is used (``pip install 'noughts[panel]'``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from noughts.hardware import require
from noughts.hardware.charlieplex import lit_leds

__all__ = ["CharlieplexProbe", "fake_mcp3008", "watched_factory"]

_classes: dict[str, Any] = {}


def _mock_classes() -> dict[str, Any]:
    if _classes:
        return _classes
    mock: Any = require("gpiozero.pins.mock", "the simulated panel")

    class WatchedPin(mock.MockPin):  # type: ignore[misc]
        """A mock pin that reports every change of function or state to its factory's watchers."""

        def _set_function(self, value: str) -> None:
            super()._set_function(value)
            self._tell()

        def _change_state(self, value: bool) -> bool:
            changed: bool = super()._change_state(value)
            self._tell()
            return changed

        def _tell(self) -> None:
            for watcher in list(getattr(self.factory, "watchers", ())):
                watcher(self)

    class FakeMCP3008(mock.MockSPIDevice):  # type: ignore[misc]
        """The ADC side of the MCP3008's SPI exchange: a start bit, single/differential, three
        channel bits, then a null bit and ten result bits. ``readings[channel]`` is the answer."""

        rx_buf: list[int]

        def __init__(self, pin_factory: Any) -> None:
            super().__init__(11, 10, 9, 8, pin_factory=pin_factory)
            self.readings = [0] * 8
            self.phase = "idle"

        def on_start(self) -> None:
            super().on_start()
            self.phase = "idle"

        def on_bit(self) -> None:
            if self.phase == "idle":
                if self.rx_buf[-1]:  # the start bit
                    self.phase, self.rx_buf = "mode", []
            elif self.phase == "mode":
                self.phase, self.rx_buf = ("single" if self.rx_buf[-1] else "differential"), []
            elif self.phase in ("single", "differential") and len(self.rx_buf) == 3:
                value = max(0, min(1023, int(self.readings[self.rx_word()])))
                self.tx_word(value, 12)  # a don't-care bit, the null bit, then ten bits
                self.phase = "result"
            elif self.phase == "result" and not self.tx_buf:
                self.phase, self.rx_buf = "idle", []

    _classes.update(WatchedPin=WatchedPin, FakeMCP3008=FakeMCP3008, MockFactory=mock.MockFactory)
    return _classes


def watched_factory(revision: str | None = None) -> Any:
    """A gpiozero ``MockFactory`` of watched pins; append callables ``f(pin)`` to ``.watchers``.

    ``revision`` picks the Pi it pretends to be (gpiozero's default: a 3B with GPIO 0-27;
    ``"a020a0"``, a Compute Module 3, has GPIO 0-45).
    """
    classes = _mock_classes()
    factory = classes["MockFactory"](revision=revision, pin_class=classes["WatchedPin"])
    factory.watchers = []
    return factory


def fake_mcp3008(factory: Any) -> Any:
    """An MCP3008 on ``factory``'s SPI pins; set ``.readings[channel]`` (0-1023).

    Make it before the gpiozero ``MCP3008`` so that the SPI clock and select pins are its own.
    """
    return _mock_classes()["FakeMCP3008"](factory)


class CharlieplexProbe:
    """Watches Charlieplex lines on a :func:`watched_factory` and records which LEDs can light.

    ``changes`` lists every distinct set of lit LEDs in order (each instant between two pin
    writes included); ``max_lit`` is the most LEDs lit at once; :meth:`take` returns the LEDs lit
    at any time since the last call, which is what an eye sees of a refreshed display.
    """

    def __init__(self, factory: Any, pins: Sequence[str], on_change: Callable[[frozenset[int]], None] | None = None):
        self.lines = [factory.pin(name) for name in pins]
        self.on_change = on_change
        self.changes: list[frozenset[int]] = []
        self.max_lit = 0
        self._seen: set[int] = set()
        self._lock = threading.Lock()
        self._last: frozenset[int] = frozenset()
        factory.watchers.append(self._pin_changed)

    def lit_now(self) -> frozenset[int]:
        return lit_leds([(line.function, bool(line.state)) for line in self.lines])

    def _pin_changed(self, pin: Any) -> None:
        if not any(pin is line for line in self.lines):
            return
        lit = self.lit_now()
        with self._lock:
            if lit == self._last:
                return
            self._last = lit
            self.changes.append(lit)
            self._seen |= lit
            self.max_lit = max(self.max_lit, len(lit))
        if self.on_change is not None:
            self.on_change(lit)

    def take(self) -> frozenset[int]:
        with self._lock:
            seen = frozenset(self._seen | self._last)
            self._seen = set()
        return seen
