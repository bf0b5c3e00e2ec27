"""The sim backend: the gpio backend on gpiozero's mock pins, drawn in the terminal.

The keys press the buttons by driving the mock pins (or, for a ladder build, by setting the
fake MCP3008's reading), and the drawing reads the LED pins back — for Charlieplexed LEDs every
LED that lit since the last frame — so what you see is what the wiring would do. A lit green or
red LED is drawn as the mark its player has in this game, X or O in the marks' colours
(``noughts.text.MARK_ANSI``; none with ``NO_COLOR``), so nothing depends on telling red from green.

Keys: ``1``-``9`` press a cell, ``h`` then ``1``-``9`` holds a cell down (for choosing at reset:
``h5r``), ``r`` reset, ``t`` the two-person switch, ``q`` quit.
"""

from __future__ import annotations

import os
import select
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from noughts import text
from noughts.hardware import require
from noughts.hardware.boardio import MemoryLcd
from noughts.hardware.config import PanelConfig
from noughts.hardware.gpio import GpioBoard
from noughts.hardware.loop import PanelLoop
from noughts.hardware.mock import CharlieplexProbe, fake_mcp3008, watched_factory

__all__ = ["KEYS_HELP", "SimPanel", "run_terminal"]

PRESS_SECONDS = 0.15  # how long a key holds its button down: well over the debounce time
KEYS_HELP = "1-9 press a cell   h then 1-9 hold a cell   r reset   t two-person switch   q quit"
Sides = Mapping[str, tuple[str, str]]  # LED colour -> (the mark it stands for, who plays it)
NO_SIDES: Sides = {"green": ("X", ""), "red": ("O", "")}
_RESET, _DIM = "\x1b[0m", "\x1b[2m"


class SimPanel:
    """A panel on mock pins: :meth:`key` presses its buttons, :meth:`render` draws it."""

    def __init__(self, config: PanelConfig) -> None:
        gpiozero: Any = require("gpiozero", "the sim backend")
        self.config = config
        self.factory = watched_factory()
        gpiozero.Device.pin_factory = self.factory  # the gpiozero way: every device on mock pins
        gpio = config.gpio
        self.adc = fake_mcp3008(self.factory) if gpio.buttons == "ladder" else None
        self.lcd = MemoryLcd()
        self.probe = CharlieplexProbe(self.factory, gpio.charlieplex.pins) if gpio.leds == "charlieplex" else None
        self.board = GpioBoard(gpio, config.thresholds, pin_factory=self.factory, lcd=self.lcd)
        self.switch_on = False
        self.held_cell: int | None = None
        self.message = ""  # about the last key
        self.notice = ""  # from the game (the score store's problems), until the next one
        self._hold_next = False
        self._releases: list[tuple[float, Callable[[], None]]] = []

    # --- buttons ---------------------------------------------------------------------------
    def _drive(self, pin: str, pressed: bool) -> None:
        level = pressed != self.config.gpio.pull_up  # pull-downs: a press reads high
        mock = self.factory.pin(pin)
        mock.drive_high() if level else mock.drive_low()

    def _cell(self, cell: int, pressed: bool) -> None:
        if self.adc is not None:
            self.adc.readings[self.config.gpio.adc_channel] = self.board.ladder.reading(cell) if pressed else 0
        else:
            self._drive(self.config.gpio.cells[cell - 1], pressed)

    def say(self, message: str) -> None:
        """Show a notice under the panel (the terminal's stderr would be drawn over)."""
        self.notice = " ".join(message.split())

    def key(self, char: str, now: float) -> bool:
        """Act on one key; False means quit."""
        self.message = ""
        if char in "qQ\x03\x04":
            return False
        if char in "hH":
            self._hold_next = not self._hold_next
            if self.held_cell is not None:
                self._cell(self.held_cell, False)
                self.held_cell = None
                self._hold_next = False
            self.message = "hold which cell? (1-9)" if self._hold_next else ""
        elif char.isdigit() and char != "0":
            cell = int(char)
            self._cell(cell, True)
            if self._hold_next:
                self.held_cell, self._hold_next = cell, False
                self.message = f"holding cell {cell}: r to reset with it, h to let go"
            else:
                self._later(now + PRESS_SECONDS, lambda: self._cell(cell, False))
        elif char in "rR":
            self._drive(self.config.gpio.reset, True)
            self._later(now + PRESS_SECONDS, lambda: self._drive(self.config.gpio.reset, False))
            if self.held_cell is not None:
                self._later(now + 2 * PRESS_SECONDS, self._let_go)
        elif char in "tT":
            if self.config.gpio.switch:
                self.switch_on = not self.switch_on
                self._drive(self.config.gpio.switch, self.switch_on)
                self.message = f"two-person switch {'on' if self.switch_on else 'off'}: it counts at the next reset"
            else:
                self.message = text.PANEL_NO_SWITCH
        return True

    def _let_go(self) -> None:
        if self.held_cell is not None:
            self._cell(self.held_cell, False)
            self.held_cell = None

    def _later(self, when: float, action: Callable[[], None]) -> None:
        self._releases.append((when, action))

    def update(self, now: float) -> None:
        """Let go of buttons whose time is up."""
        due = [action for when, action in self._releases if when <= now]
        self._releases = [(when, action) for when, action in self._releases if when > now]
        for action in due:
            action()

    # --- drawing ---------------------------------------------------------------------------
    def lit(self) -> set[str]:
        """The LEDs lit now (Charlieplexed: lit at any moment since the last call)."""
        gpio = self.config.gpio
        if self.probe is not None:
            seen = self.probe.take()
            return {name for name, number in gpio.charlieplex.led_numbers.items() if number in seen}
        return {name for name, pin in gpio.led_pins.items() if self.factory.pin(pin).state}

    def render(self, colour: bool = True, sides: Sides = NO_SIDES) -> list[str]:
        """The panel as lines of text; ``sides`` says which mark and name each LED colour stands for."""
        lit = self.lit()

        def mark(letter: str) -> str:
            return f"{text.MARK_ANSI[letter]}{letter}{_RESET}" if colour else letter

        def cell(number: int) -> str:
            green, red = f"green{number}" in lit, f"red{number}" in lit
            if green and red:  # never on a working panel: show it rather than hide it
                return "#"
            if green or red:
                return mark(sides["green" if green else "red"][0])
            return f"{_DIM}·{_RESET}" if colour else "."

        gpio = self.config.gpio
        fitted = set(gpio.charlieplex.led_numbers if self.probe is not None else gpio.led_pins)
        winners = "  ".join(
            f"{mark(sides[side][0])} " + (("lit" if f"{side}_win" in lit else "off") if f"{side}_win" in fitted
                                          else "not fitted")
            for side in ("green", "red")) if fitted & {"green_win", "red_win"} else "not fitted"
        switch = ("on" if self.switch_on else "off") if gpio.switch else "not fitted"
        line1, line2 = (shown[:16].ljust(16) for shown in self.lcd.lines)
        rows = [f"  noughts panel (sim: {self.config.build} wiring, {gpio.leds} LEDs, {gpio.buttons} buttons)", "",
                "  ┌────────────────┐", f"  │{line1}│", f"  │{line2}│", "  └────────────────┘", ""]
        rows += ["      " + "  ".join(cell(c) for c in range(r * 3 + 1, r * 3 + 4)) for r in range(3)]
        def drawn(letter: str) -> str:  # the mark as drawn here: in colour, say which
            return f"{text.MARK_COLOUR_NAMES[letter]} {mark(letter)}" if colour else letter

        legend = "    ".join(f"{drawn(sides[side][0])} = {side} LEDs"
                             + (f": {sides[side][1]}" if sides[side][1] else "") for side in ("green", "red"))
        rows += ["", f"  {legend}", f"  winner LEDs: {winners}    two-person switch: {switch}", "",
                 f"  {KEYS_HELP}", f"  {self.message}"]
        if self.notice:
            rows.append(f"  {self.notice}")
        return rows

    def close(self) -> None:
        self.board.close()
        gpiozero: Any = require("gpiozero", "the sim backend")
        if gpiozero.Device.pin_factory is self.factory:
            gpiozero.Device.pin_factory = None  # the next device gets the real default again


def run_terminal(sim: SimPanel, loop: PanelLoop, *, stdin: TextIO | None = None, stdout: TextIO | None = None,
                 frame_seconds: float = 0.05) -> None:
    """Run the sim in this terminal until q (or the end of input, when it is not a terminal)."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    fd = stdin.fileno()
    tty = os.isatty(fd)
    screen = stdout.isatty()  # redraw in place; otherwise frames one after another, plain
    colour = screen and text.colour_wanted()
    saved: Any = None
    if tty:
        import termios
        import tty as tty_mode

        saved = termios.tcgetattr(fd)
        tty_mode.setcbreak(fd)  # keys arrive one at a time, without Enter
    if screen:
        stdout.write("\x1b[?25l\x1b[2J")
    last_frame: list[str] = []
    next_frame = 0.0
    try:
        loop.start()
        running = True
        while running:
            readable, _, _ = select.select([fd], [], [], 0.005)
            now = time.monotonic()
            if readable:
                data = os.read(fd, 64)
                if not data:
                    break  # end of input
                for char in data.decode("utf-8", "replace"):
                    if not sim.key(char, now):
                        running = False
                        break
            sim.update(now)
            loop.step()
            if now >= next_frame:
                next_frame = now + frame_seconds
                frame = sim.render(colour, loop.controller.sides())
                if frame != last_frame:
                    last_frame = frame
                    if screen:
                        stdout.write("\x1b[H" + "\n".join(f"{line}\x1b[K" for line in frame) + "\x1b[J")
                    else:
                        stdout.write("\n".join(frame) + "\n\n")
                    stdout.flush()
    finally:
        if tty:
            import termios

            termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        if screen:
            stdout.write("\x1b[?25h\n")
            stdout.flush()
