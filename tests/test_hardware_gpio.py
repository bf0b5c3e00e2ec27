"""The gpio backend on gpiozero's MockFactory: whole games through the pins, debounce, the
Charlieplex driver pin by pin, the resistor ladder through a fake MCP3008 on the mock SPI bus,
the LCD through RPLCD on a fake I2C bus, the sim, the configuration and the CLI.

gpiozero, RPLCD and smbus2 are required (``pip install 'noughts[panel]'``): these tests fail,
never skip, without them.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

try:
    import gpiozero
    import RPLCD.i2c
except ImportError as error:  # pragma: no cover - a setup problem, said plainly
    pytest.fail(f"the panel tests need {error.name}: pip install 'noughts[panel]'", pytrace=False)

from noughts import players, text
from noughts.cli.panel import main
from noughts.hardware import (
    INSTALL_HINT,
    PANEL_EXTRA,
    MissingLibraryError,
    checkout_root,
    hint_for,
    install_hint,
    require,
)
from noughts.hardware.app import measure_ladder
from noughts.hardware.boardio import Ladder, MemoryLcd
from noughts.hardware.charlieplex import Charlieplexer, led_lines, lit_leds
from noughts.hardware.config import ConfigError, LcdConfig, PanelConfig, load_config, save_thresholds
from noughts.hardware.controller import ButtonEvent, PanelController, PanelSettings
from noughts.hardware.defaults import MEGA_TOML, UNO_TOML
from noughts.hardware.gpio import GpioBoard
from noughts.hardware.lcd import RplcdDisplay, open_lcd
from noughts.hardware.loop import PanelLoop
from noughts.hardware.mock import CharlieplexProbe, fake_mcp3008, watched_factory
from noughts.hardware.serial_board import open_pyserial
from noughts.hardware.sim import SimPanel, run_terminal
from noughts.text import MARK_ANSI

SEED_THRESHOLDS = (800, 400, 200, 160, 140, 120, 90, 85, 70)

# The seed's Mega wiring needs 30 pins plus the LCD's: a Compute Module 3 (GPIO 0-45) has them.
FULL_MEGA = """
build = "mega"
[gpio]
green = [30, 31, 32, 33, 34, 35, 36, 37, 38]
red = [40, 41, 42, 43, 44, 45, 4, 5, 6]
green_win = 7
red_win = 12
cells = [14, 15, 16, 17, 18, 19, 20, 21, 22]
reset = 23
switch = 24
"""


@pytest.fixture
def factory() -> Iterator[Any]:
    factory = watched_factory()
    gpiozero.Device.pin_factory = factory  # the gpiozero way: every device on mock pins
    yield factory
    gpiozero.Device.pin_factory = None


@pytest.fixture
def cm3() -> Iterator[Any]:
    factory = watched_factory(revision="a020a0")
    gpiozero.Device.pin_factory = factory
    yield factory
    gpiozero.Device.pin_factory = None


class Rig:
    """A GpioBoard on mock pins, a controller against the deterministic parsons player, and a
    made-up clock the test moves on."""

    def __init__(self, factory: Any, config: PanelConfig, *, thinking: float = 1.0, adc: Any = None,
                 lcd: Any = None) -> None:
        self.factory, self.config, self.adc = factory, config, adc
        self.t = 0.0
        self.lcd = lcd if lcd is not None else MemoryLcd()
        self.probe = (CharlieplexProbe(factory, config.gpio.charlieplex.pins)
                      if config.gpio.leds == "charlieplex" else None)
        self.board = GpioBoard(config.gpio, config.thresholds, pin_factory=factory, lcd=self.lcd, refresh=False)
        settings = PanelSettings(flash=False, thinking_seconds=thinking, opponent="parsons",
                                 opponents=("parsons", "arduino", "hard"), seed=1)
        self.panel = PanelController(self.board, settings)
        self.loop = PanelLoop(self.panel, self.board, clock=lambda: self.t)
        self.loop.start()

    def run(self, seconds: float, step: float = 0.005) -> None:
        end = self.t + seconds
        while self.t < end - 1e-9:
            self.t += step
            self.loop.step()

    def drive(self, pin: str, pressed: bool) -> None:
        mock = self.factory.pin(pin)
        mock.drive_high() if pressed else mock.drive_low()  # pull-down wiring: pressed reads high

    def hold(self, cell: int, pressed: bool) -> None:
        if self.adc is not None:
            self.adc.readings[0] = self.board.ladder.reading(cell) if pressed else 0
        else:
            self.drive(self.config.gpio.cells[cell - 1], pressed)

    def press(self, cell: int) -> None:
        self.hold(cell, True)
        self.run(0.05)
        self.hold(cell, False)
        self.run(0.05)

    def reset(self) -> None:
        self.drive(self.config.gpio.reset, True)
        self.run(0.05)
        self.drive(self.config.gpio.reset, False)
        self.run(0.05)

    def lit(self) -> set[str]:
        """The LEDs lit, read back from the pins (a full refresh cycle for Charlieplexed ones)."""
        if self.probe is not None:
            assert self.board.charlieplex is not None
            self.probe.take()
            for _ in range(21):
                self.board.charlieplex.step()
            seen = self.probe.take()
            return {name for name, n in self.config.gpio.charlieplex.led_numbers.items() if n in seen}
        return {name for name, pin in self.config.gpio.led_pins.items() if self.factory.pin(pin).state}

    def cells(self, colour: str) -> set[int]:
        return {int(name[len(colour):]) for name in self.lit() if name.startswith(colour) and name[-1].isdigit()}


def whole_game(rig: Rig) -> None:
    """Person first against parsons, winning with a1 c2 a3 a2; checks LEDs and LCD all the way."""
    parsons = players.get("parsons")
    assert rig.lcd.lines == ("Your turn...", "You:0 Cen:0 D:0") and rig.lit() == set()
    for cell in (1, 8, 7, 4):
        rig.press(cell)
        assert cell in rig.cells("green")
        if rig.panel.state == "over":
            break
        assert rig.lcd.lines[0] == "Centre first"  # its turn; "thinking..." comes after THINKING_AFTER
        reply = parsons.choose(rig.panel.game.board) + 1
        assert reply not in rig.cells("red")
        rig.run(1.0)
        assert reply in rig.cells("red") and rig.lcd.lines[0] == "Your turn..."
    assert rig.cells("green") == {1, 8, 7, 4} and rig.cells("red") == {5, 3, 9}
    assert rig.lcd.lines == ("You win!!!", "Press reset...")


def test_mega_wiring_on_a_pi_plays_a_whole_game(factory: Any) -> None:
    config = load_config(build="mega")
    rig = Rig(factory, config)
    whole_game(rig)
    rig.reset()
    assert rig.lit() == set() and rig.lcd.lines == ("Your turn...", "You:1 Cen:0 D:0")
    rig.board.close()


def test_full_mega_wiring_with_winner_leds_and_the_switch(cm3: Any) -> None:
    config = load_config(text=FULL_MEGA)
    rig = Rig(cm3, config, thinking=0.5)
    whole_game(rig)
    assert rig.lit() >= {"green_win"} and "red_win" not in rig.lit()
    rig.drive("GPIO24", True)  # the two-person switch, then reset
    rig.run(0.05)
    rig.reset()
    assert rig.panel.two_person and rig.lcd.lines[0] == "Green's turn..."
    for cell in (1, 2, 4, 5, 7):  # green 1 4 7, red 2 5
        rig.press(cell)
    assert rig.cells("green") == {1, 4, 7} and rig.cells("red") == {2, 5}
    assert rig.lcd.lines[0] == "Green wins!!!" and "green_win" in rig.lit()
    rig.board.close()


def test_switch_bounce_gives_one_press_and_one_release(factory: Any) -> None:
    config = load_config(build="mega")
    board = GpioBoard(config.gpio, config.thresholds, pin_factory=factory)
    pin = factory.pin(config.gpio.cells[4])
    events: list[ButtonEvent] = []
    t = 0.0
    # contact bounce: 12 ms of chatter, each level shorter than the 20 ms debounce
    for level in (1, 0, 1, 0, 1, 1, 0, 1):
        pin.drive_high() if level else pin.drive_low()
        t += 0.005
        events += board.poll(t)
    assert events == []
    for _ in range(5):  # then it settles
        t += 0.005
        events += board.poll(t)
    assert events == [ButtonEvent("5", True)]
    for level in (0, 1, 0, 1, 0, 0, 0, 0, 0, 0):
        pin.drive_high() if level else pin.drive_low()
        t += 0.005
        events += board.poll(t)
    assert events == [ButtonEvent("5", True), ButtonEvent("5", False)]
    assert board.poll(t + 0.001) == []  # sampling faster than sample_ms does nothing
    board.close()


def test_bouncing_buttons_do_not_play_twice(factory: Any) -> None:
    config = load_config(build="mega")
    rig = Rig(factory, config, thinking=0.2)
    pin = factory.pin(config.gpio.cells[0])
    for level in (1, 0, 1, 0, 1):  # a bouncy press
        pin.drive_high() if level else pin.drive_low()
        rig.run(0.005)
    rig.run(0.05)
    for level in (0, 1, 0, 1, 0):  # and a bouncy release
        pin.drive_high() if level else pin.drive_low()
        rig.run(0.005)
    rig.run(0.3)
    assert rig.panel.game.moves[0] == 0 and len(rig.panel.game.moves) == 2
    rig.board.close()


def test_two_buttons_at_once_and_a_press_on_a_lit_cell(factory: Any) -> None:
    config = load_config(build="mega")
    rig = Rig(factory, config, thinking=0.2)
    rig.hold(3, True)
    rig.hold(7, True)  # both down before the next sample
    rig.run(0.05)
    assert rig.cells("green") == {3}
    rig.hold(3, False)
    rig.run(0.3)  # the computer answers while 7 is still held
    before = rig.lit()
    rig.hold(9, True)  # another press while 7 is down: a chord, ignored
    rig.run(0.05)
    rig.hold(7, False)
    rig.hold(9, False)
    rig.run(0.05)
    assert rig.lit() == before and rig.panel.state == "turn"
    red = rig.cells("red").pop()
    rig.press(3)  # the person's own LED
    rig.press(red)  # the computer's
    assert rig.lit() == before and rig.panel.state == "turn"
    rig.press(9)
    assert 9 in rig.cells("green")
    rig.board.close()


def test_reset_mid_game_clears_the_pins(factory: Any) -> None:
    config = load_config(build="mega")
    rig = Rig(factory, config, thinking=0.2)
    rig.press(5)
    rig.run(0.3)
    assert len(rig.lit()) == 2
    rig.press(1)
    rig.reset()  # during the computer's pause
    assert rig.lit() == set() and rig.panel.game.moves == () and rig.lcd.lines[0] == "Your turn..."
    rig.run(0.5)
    assert rig.lit() == set()
    # hold cell 8 while pressing reset: the third opponent, the computer starts
    rig.hold(8, True)
    rig.run(0.05)
    rig.reset()
    rig.hold(8, False)
    rig.run(0.3)
    assert rig.panel.opponent == "hard" and len(rig.cells("red")) == 1 and rig.cells("green") == set()
    rig.board.close()


# --- Charlieplexing ---------------------------------------------------------------------------

def test_led_numbers_follow_the_documented_pair_order() -> None:
    assert [led_lines(n, 5) for n in range(6)] == [(0, 1), (1, 0), (0, 2), (2, 0), (0, 3), (3, 0)]
    assert [led_lines(n, 5) for n in range(16, 20)] == [(2, 4), (4, 2), (3, 4), (4, 3)]
    assert len({led_lines(n, 5) for n in range(20)}) == 20
    with pytest.raises(ValueError):
        led_lines(20, 5)


def test_at_every_refresh_step_only_the_intended_led_can_light(factory: Any) -> None:
    pins = ["GPIO5", "GPIO6", "GPIO13", "GPIO19", "GPIO26"]
    moments: list[tuple[int | None, frozenset[int]]] = []
    driver = Charlieplexer(pins, pin_factory=factory)
    # Watch every single pin write: the instants between two writes count too.
    probe = CharlieplexProbe(factory, pins, on_change=lambda lit: moments.append((driver.driven, lit)))
    lines = [factory.pin(p) for p in pins]
    assert all(line.function == "input" and line.pull == "floating" for line in lines)
    wanted = {0, 7, 12, 19}
    for number in wanted:
        driver.set(number, True)
    for _ in range(40):
        number = driver.step()
        assert number in wanted and driver.driven == number
        anode, cathode = led_lines(number, 5)
        functions = [line.function for line in lines]
        assert functions.count("output") == 2 and functions[anode] == functions[cathode] == "output"
        assert lines[anode].state and not lines[cathode].state
        assert all(line.function == "input" for i, line in enumerate(lines) if i not in (anode, cathode))
        assert probe.lit_now() == {number}
    assert probe.max_lit == 1
    assert all(len(lit) <= 1 and lit <= wanted for _, lit in moments)
    assert {next(iter(lit)) for _, lit in moments if lit} == wanted  # each took its turn
    driver.set(driver.driven or 0, False)  # an LED turned off goes dark at once
    assert probe.lit_now() == frozenset()
    driver.set_many([])
    assert driver.step() is None and all(line.function == "input" for line in lines)
    driver.close()


def test_the_refresh_thread_shows_every_lit_led(factory: Any) -> None:
    pins = ["GPIO5", "GPIO6", "GPIO13", "GPIO19", "GPIO26"]
    driver = Charlieplexer(pins, pin_factory=factory, slot=0.0005)
    probe = CharlieplexProbe(factory, pins)
    driver.set_many(range(20))
    driver.start()
    deadline = time.monotonic() + 5
    seen: set[int] = set()
    while seen != set(range(20)) and time.monotonic() < deadline:
        time.sleep(0.02)
        seen |= probe.take()
    driver.close()
    assert seen == set(range(20)) and probe.max_lit == 1
    assert all(factory.pin(p).function == "input" for p in pins)


def test_charlieplexing_refuses_a_pin_with_a_fixed_pull_up(factory: Any) -> None:
    with pytest.raises(ValueError, match="GPIO2 has a fixed pull-up"):
        Charlieplexer(["GPIO2", "GPIO6", "GPIO13"], pin_factory=factory)
    Charlieplexer(["GPIO6", "GPIO13"], pin_factory=factory).close()  # and let go of the others


def test_lit_leds_needs_an_output_high_and_an_output_low() -> None:
    assert led_lines(5, 3) == (2, 1) and led_lines(2, 3) == (0, 2) and led_lines(4, 3) == (1, 2)
    assert lit_leds([("input", True), ("output", False), ("output", True)]) == {5}
    assert lit_leds([("output", True), ("output", True), ("output", False)]) == {2, 4}
    assert lit_leds([("input", True), ("input", False), ("output", True)]) == set()


# --- the resistor ladder through the MCP3008 ----------------------------------------------------

def test_the_ladder_decoder_against_the_adc(factory: Any) -> None:
    adc = fake_mcp3008(factory)
    config = load_config(build="uno")
    board = GpioBoard(config.gpio, SEED_THRESHOLDS, pin_factory=factory, refresh=False)
    ladder = Ladder(SEED_THRESHOLDS)
    for reading, cell in [(1023, 1), (801, 1), (800, 0), (799, 2), (401, 2), (400, 0), (300, 3), (170, 4),
                          (150, 5), (130, 6), (100, 7), (87, 8), (86, 8), (80, 9), (71, 9), (70, 0), (0, 0)]:
        adc.readings[0] = reading
        assert board.read_ladder() == reading  # through the SPI exchange, bit by bit
        assert ladder.cell(reading) == cell, reading
    for cell in range(1, 10):
        assert ladder.cell(ladder.reading(cell)) == cell
    adc.readings[0] = 0
    board.close()


def test_ladder_presses_are_debounced_and_sliding_between_cells_releases_first(factory: Any) -> None:
    adc = fake_mcp3008(factory)
    config = load_config(build="uno")
    board = GpioBoard(config.gpio, SEED_THRESHOLDS, pin_factory=factory, refresh=False)
    events: list[ButtonEvent] = []
    t = 0.0

    def sample(reading: int, times: int) -> None:
        nonlocal t
        adc.readings[0] = reading
        for _ in range(times):
            t += 0.005
            events.extend(board.poll(t))

    sample(600, 2)  # a press still settling: cell 2 for 10 ms,
    sample(150, 1)  # a glitch through cell 5,
    assert events == []
    sample(600, 6)  # then a steady cell 2
    assert events == [ButtonEvent("2", True)]
    sample(150, 6)  # straight on to cell 5 (the ladder carries one at a time)
    assert events[1:] == [ButtonEvent("2", False), ButtonEvent("5", True)]
    sample(0, 6)
    assert events[3:] == [ButtonEvent("5", False)]
    board.close()


def test_uno_wiring_plays_a_whole_game(factory: Any) -> None:
    adc = fake_mcp3008(factory)
    config = load_config(build="uno")
    rig = Rig(factory, config, adc=adc)
    whole_game(rig)
    assert "green_win" in rig.lit() and "red_win" not in rig.lit()
    assert rig.probe is not None and rig.probe.max_lit == 1
    rig.reset()
    assert rig.lit() == set()
    rig.board.close()


# --- the LCD through RPLCD --------------------------------------------------------------------

class FakeHD44780Bus:
    """An SMBus with a PCF8574 backpack and an HD44780 behind it (4-bit mode, latched as E falls)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.eight_bit = True  # the controller powers up in 8-bit mode
        self.high: int | None = None
        self.ddram = bytearray(b" " * 128)
        self.address = 0
        self.enable = False
        self.data_writes = 0

    def write_byte(self, address: int, value: int) -> None:
        assert address == 0x27
        enable = bool(value & 0x04)
        if self.enable and not enable:
            self._latch(value)
        self.enable = enable

    def _latch(self, value: int) -> None:
        rs, nibble = value & 0x01, value >> 4
        if self.eight_bit:  # D0-D3 are not wired: an 8-bit instruction with a zero low nibble
            self._execute(rs, nibble << 4)
        elif self.high is None:
            self.high = nibble
        else:
            byte, self.high = self.high << 4 | nibble, None
            self._execute(rs, byte)

    def _execute(self, rs: int, byte: int) -> None:
        if rs:
            self.ddram[self.address] = byte
            self.address = (self.address + 1) % 128
            self.data_writes += 1
        elif byte & 0x80:
            self.address = byte & 0x7F
        elif byte & 0x20:
            self.eight_bit = bool(byte & 0x10)
        elif byte == 0x01:
            self.ddram[:] = b" " * 128
            self.address = 0

    def row(self, row: int) -> str:
        return self.ddram[row * 0x40:row * 0x40 + 16].decode("ascii")

    def close(self) -> None:
        pass


@pytest.fixture
def i2c_lcd(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHD44780Bus]:
    buses: list[FakeHD44780Bus] = []

    def bus(port: int) -> FakeHD44780Bus:
        buses.append(FakeHD44780Bus(port))
        return buses[-1]

    monkeypatch.setattr(RPLCD.i2c, "SMBus", bus)
    lcd = open_lcd(LcdConfig("i2c", "PCF8574", 0x27, 1, 25, 24, (23, 17, 18, 22)))
    assert isinstance(lcd, RplcdDisplay) and buses[0].port == 1
    buses[0].display = lcd  # type: ignore[attr-defined]
    yield buses[0]
    lcd.close()


def test_the_lcd_through_rplcd_shows_both_rows_and_rewrites_only_changes(i2c_lcd: FakeHD44780Bus) -> None:
    display: RplcdDisplay = i2c_lcd.display  # type: ignore[attr-defined]
    display.show("Your turn...", "You:0 Me:0 Tie:0")
    assert (i2c_lcd.row(0), i2c_lcd.row(1)) == ("Your turn...    ", "You:0 Me:0 Tie:0")
    written: list[str] = []
    lcd = display._lcd
    original = lcd.write_string
    lcd.write_string = lambda text: (written.append(text), original(text))
    display.show("My turn...", "You:0 Me:0 Tie:0")
    assert i2c_lcd.row(0) == "My turn...      " and written == ["My turn...      "]  # row 1 untouched
    display.show("It's a draw!", "a line that is far too long")
    assert (i2c_lcd.row(0), i2c_lcd.row(1)) == ("It's a draw!    ", "a line that is f")


def test_a_game_on_the_pins_shows_on_the_rplcd(factory: Any, i2c_lcd: FakeHD44780Bus) -> None:
    config = load_config(build="mega")
    rig = Rig(factory, config, lcd=i2c_lcd.display)  # type: ignore[attr-defined]
    assert i2c_lcd.row(0).rstrip() == "Your turn..."
    rig.press(5)
    rig.run(0.3)
    assert (i2c_lcd.row(0).rstrip(), i2c_lcd.row(1).rstrip()) == ("Centre first", "thinking...")
    rig.board.lcd = None  # the fixture closes it
    rig.board.close()


def test_open_lcd_reports_a_missing_bus(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_bus(port: int) -> None:
        raise FileNotFoundError(2, "No such file or directory")

    monkeypatch.setattr(RPLCD.i2c, "SMBus", no_bus)
    with pytest.raises(ValueError, match="cannot open the LCD on I2C bus 1 at 0x27"):
        open_lcd(LcdConfig("i2c", "PCF8574", 0x27, 1, 25, 24, (23, 17, 18, 22)))
    assert open_lcd(LcdConfig("none", "PCF8574", 0x27, 1, 25, 24, (23, 17, 18, 22))) is None


# --- the sim ------------------------------------------------------------------------------------

@pytest.mark.parametrize("build", ["mega", "uno"])
def test_the_sim_presses_buttons_and_draws_the_pins(build: str) -> None:
    config = load_config(build=build)
    sim = SimPanel(config)
    panel = PanelController(sim.board, PanelSettings(flash=False, thinking_seconds=0.0, opponent="parsons"))
    clock = [0.0]
    loop = PanelLoop(panel, sim.board, clock=lambda: clock[0])
    loop.start()

    def run(seconds: float) -> None:
        for _ in range(int(seconds / 0.005)):
            clock[0] += 0.005
            sim.update(clock[0])
            loop.step()
            if sim.board.charlieplex is not None:
                sim.board.charlieplex.step()

    try:
        assert sim.key("5", clock[0])
        run(0.3)
        frame = "\n".join(sim.render(colour=False))
        # parsons answers a centre opening in a corner: the marks as letters, whatever the LED colours
        assert "│Your turn...    │" in frame and "      .  .  .\n      .  X  .\n      .  .  O" in frame
        run(0.1)
        assert sim.lit() == {"green5", "red9"}
        run(0.05)
        drawn = "".join(sim.render(colour=True, sides=panel.sides()))
        assert f"{MARK_ANSI['X']}X\x1b[0m" in drawn and f"{MARK_ANSI['O']}O\x1b[0m" in drawn
        assert "\x1b[31m" not in drawn and "\x1b[32m" not in drawn  # never red against green
        plain = "\n".join(sim.render(colour=False, sides=panel.sides()))
        assert f"X = green LEDs: {panel.match.name_of(0)}    O = red LEDs: Centre first" in plain
        sim.key("t", clock[0])
        if build == "uno":
            assert sim.switch_on and "switch on" in sim.message
        else:
            assert "no two-person switch" in sim.message
        run(0.1)
        for key in "h3r":  # hold cell 3 (take turns) and press reset
            sim.key(key, clock[0])
        run(0.5)
        sim.lit()  # a Charlieplexed frame shows what lit since the last one: start a new frame
        run(0.05)
        assert panel.first == "alternate" and sim.held_cell is None and sim.lit() == set()
        assert panel.two_person == (build == "uno")
        plain = "\n".join(sim.render(colour=False, sides=panel.sides()))
        if build == "uno":
            assert "X = green LEDs: Green    O = red LEDs: Red" in plain and "winner LEDs: X off  O off" in plain
        else:
            assert "winner LEDs: not fitted" in plain
        assert not sim.key("q", clock[0])
    finally:
        sim.close()
        gpiozero.Device.pin_factory = None


class Drawn(io.StringIO):
    """What the sim draws: a typist waits on it for what a person would wait to see."""

    def __init__(self, tty: bool = False) -> None:
        super().__init__()
        self.tty = tty
        self.changed = threading.Condition()

    def isatty(self) -> bool:
        return self.tty  # a terminal: the sim redraws in place on it

    def write(self, text: str) -> int:
        with self.changed:
            written = super().write(text)
            self.changed.notify_all()
        return written

    def wait_for(self, seen: Callable[[str], bool], timeout: float = 20) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: seen(self.getvalue()), timeout)


def screen() -> Drawn:
    """A terminal's output."""
    return Drawn(tty=True)


# Each key is typed once the drawing so far shows what it waits for (and, if given, at least so
# many seconds after the key before it).
Key = tuple[Callable[[str], bool], bytes] | tuple[Callable[[str], bool], bytes, float]


def showing(*texts: str) -> Callable[[str], bool]:
    """Waits for ``texts`` drawn in this order (a later frame may repeat an earlier text)."""
    def seen(drawn: str) -> bool:
        at = 0
        for wanted in texts:
            at = drawn.find(wanted, at)
            if at < 0:
                return False
            at += len(wanted)
        return True
    return seen


@contextlib.contextmanager
def typed(keys: list[Key], drawn: Drawn) -> Iterator[io.TextIOWrapper]:
    """A stdin on which each key arrives once the sim has drawn what a person would wait for."""
    read_end, write_end = os.pipe()
    missed: list[bytes] = []
    ended = threading.Event()

    def typist() -> None:
        last = time.monotonic()
        for seen, key, *gap in keys:
            if not drawn.wait_for(seen):
                missed.append(key)  # never shown: end the input, so that the sim stops and the test says so
                os.close(write_end)
                ended.set()
                return
            if gap:
                time.sleep(max(0.0, last + gap[0] - time.monotonic()))
            os.write(write_end, key)
            last = time.monotonic()

    thread = threading.Thread(target=typist)
    thread.start()
    try:
        with open(read_end) as stdin:
            yield stdin
    finally:
        thread.join()
        if not ended.is_set():
            os.close(write_end)
    assert not missed, f"the sim never showed what {missed[0]!r} waited for; it drew {drawn.getvalue()[-2000:]!r}"


def test_run_terminal_reads_keys_from_a_pipe_until_q() -> None:
    config = load_config(build="mega")
    sim = SimPanel(config)
    panel = PanelController(sim.board, PanelSettings(flash=False, thinking_seconds=0.8, opponent="parsons"))
    loop = PanelLoop(panel, sim.board)
    out = Drawn()
    with typed([(showing("│Your turn...    │"), b"5"), (showing("│thinking...     │"), b"q")], out) as keys:
        run_terminal(sim, loop, stdin=keys, stdout=out)
    sim.close()
    gpiozero.Device.pin_factory = None
    frames = out.getvalue()
    assert "│Your turn...    │" in frames and "│thinking...     │" in frames
    assert "\x1b[" not in frames  # not a terminal: plain frames


def type_into_sim(keys: list[Key], stdout: Drawn, thinking: float = 0.4, say: str = "") -> str:
    """Run the sim in run_terminal with ``keys`` typed as the sim shows what they wait for; what it drew."""
    sim = SimPanel(load_config(build="mega"))
    if say:
        sim.say(say)
    panel = PanelController(sim.board, PanelSettings(flash=False, thinking_seconds=thinking, opponent="parsons"))
    loop = PanelLoop(panel, sim.board)
    try:
        with typed(keys, stdout) as stdin:
            run_terminal(sim, loop, stdin=stdin, stdout=stdout)
    finally:
        sim.close()
        gpiozero.Device.pin_factory = None
    return stdout.getvalue()


@pytest.mark.parametrize("no_color", [False, True])
def test_the_sim_on_a_terminal_colours_the_marks_unless_no_color(no_color: bool,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm-256color")
    if no_color:
        monkeypatch.setenv("NO_COLOR", "1")
    else:
        monkeypatch.delenv("NO_COLOR", raising=False)
    # q once the computer has answered: its O is drawn with the "Your turn..." after "thinking..."
    frames = type_into_sim([(showing("│Your turn..."), b"5"), (showing("│thinking...", "│Your turn..."), b"q")],
                           screen(), thinking=0.8)
    assert "\x1b[H" in frames and "│thinking...     │" in frames  # drawn in place either way
    letters = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", frames)
    assert ("      .  X  ." if no_color else "      ·  X  ·") in letters  # the letters either way
    coloured = MARK_ANSI["X"] in frames and MARK_ANSI["O"] in frames
    assert coloured is not no_color
    if no_color:
        assert "\x1b[2m" not in frames and "\x1b[1;3" not in frames  # no colour, no styling


def test_the_sim_shows_the_games_notices_under_the_panel() -> None:
    frames = type_into_sim([(showing("│Your turn..."), b"q")], Drawn(), say="Scores are off:\n the disk is full.")
    assert "  Scores are off: the disk is full." in frames.splitlines()


# --- configuration and the command line -------------------------------------------------------

def test_the_default_builds_load_and_the_pi_mega_build_uses_every_gpio_once() -> None:
    mega, uno = load_config(build="mega"), load_config(build="uno")
    pins = [*mega.gpio.green, *mega.gpio.red, *mega.gpio.cells, mega.gpio.reset]
    assert sorted(pins, key=lambda p: int(p[4:])) == [f"GPIO{n}" for n in range(28)]
    assert mega.gpio.green_win is None and mega.gpio.switch is None and mega.lcd.kind == "none"
    assert (uno.gpio.leds, uno.gpio.buttons, uno.lcd.kind) == ("charlieplex", "ladder", "i2c")
    assert uno.gpio.charlieplex.led_numbers["green1"] == 0 and uno.gpio.charlieplex.led_numbers["red_win"] == 19
    assert uno.thresholds == SEED_THRESHOLDS and uno.game.thinking_seconds == 3.0
    assert load_config(text=MEGA_TOML) == mega and load_config(text=UNO_TOML) == uno


@pytest.mark.parametrize(("text", "message"), [
    ("build = 'due'", "build must be one of mega, uno"),
    ("[game]\nfirst = 'whoever'", "game.first must be one of me, computer, alternate, loser, random"),
    ("[game]\nplayer = '" + "x" * 41 + "'", "game.player is at most 40 characters long"),
    ("[game]\nopponent = 'person'", "game.opponent must be one of easy"),
    ("[game]\nopponents = ['easy', 'nobody', 'hard']", "game.opponents must list three computer players"),
    ("[gpio]\nreset = 2\ncells = [2, 3, 4, 5, 6, 7, 8, 9, 10]", "pin GPIO2 is given to both"),
    ("[gpio]\ngreen = [1, 2]", "gpio.green must be a list of 9 pins"),
    ("[ladder]\nthresholds = [1, 2, 3, 4, 5, 6, 7, 8, 9]", "ladder.thresholds must fall"),
    ("[lcd]\nkind = 'i2c'", "pin GPIO2 is given to both"),
    ("[serial]\nbaud = 'fast'", "serial.baud must be a whole number"),
    ("[gpio.charlieplex]\ngreen = [0, 0, 1, 2, 3, 4, 5, 6, 7]", "two LEDs the same number"),
    ("[game", "not valid TOML"),
])
def test_bad_configurations_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        load_config(text=text)


@pytest.mark.parametrize(("content", "said"), [
    (b"build = 'mega\xff'\n", "is not UTF-8 text"),
    (b"a = " + b"[" * 100_000 + b"]" * 100_000 + b"\n", "nests arrays or tables too deeply"),
])
def test_a_panel_file_that_is_not_toml_text_is_a_sentence(content: bytes, said: str, tmp_path: Path) -> None:
    path = tmp_path / "panel.toml"
    path.write_bytes(content)
    with pytest.raises(ConfigError, match=f"^the panel configuration {re.escape(str(path))} .*{said}"):
        load_config(path)


def test_who_starts_and_the_players_take_the_matchs_words_and_the_older_ones() -> None:
    assert load_config(text="[game]\nfirst = 'person'").game.first == "me"  # the panel's older word
    for word in ("me", "computer", "alternate", "loser", "random"):
        assert load_config(text=f"[game]\nfirst = '{word}'").game.first == word
    game = load_config(text="[game]\nopponents = ['easy', 'seed001-rules', 'Hard']\nopponent = 'seed001-rules'").game
    assert game.opponents == ("easy", "simple-rules", "hard") and game.opponent == "simple-rules"
    assert load_config(build="mega").game.player is None  # the login name, else You, as noughts play
    assert load_config(text="[game]\nplayer = '  Ann  Lee '").game.player == "Ann Lee"


def test_save_thresholds_keeps_the_rest_of_the_file(tmp_path: Path) -> None:
    path = tmp_path / "panel.toml"
    save_thresholds(path, [900, 500, 250, 170, 145, 125, 95, 80, 40])  # a new file
    assert load_config(path).thresholds == (900, 500, 250, 170, 145, 125, 95, 80, 40)
    assert load_config(path).build == "uno"
    path.write_text('build = "uno"\n# mine\n[ladder]\nthresholds = [800, 400, 200, 160, 140, 120, 90, 85, 70]\n'
                    "[game]\nthinking_seconds = 1.0\n")
    save_thresholds(path, [1000, 600, 300, 160, 140, 120, 90, 85, 70])
    config = load_config(path)
    assert config.thresholds[:3] == (1000, 600, 300) and config.game.thinking_seconds == 1.0
    assert "# mine" in path.read_text()
    path.write_text('build = "uno"\n[game]\nflash = false\n')
    save_thresholds(path, list(SEED_THRESHOLDS))
    assert load_config(path).game.flash is False and load_config(path).thresholds == SEED_THRESHOLDS
    with pytest.raises(ConfigError, match=r"ladder\.thresholds must fall"):
        save_thresholds(path, [1, 2, 3, 4, 5, 6, 7, 8, 9])


def test_calibrate_on_the_pins_records_the_thresholds(factory: Any, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    adc = fake_mcp3008(factory)
    measured = [1000, 600, 300, 180, 150, 130, 100, 88, 80]

    def person(prompt: str) -> str:  # holds the cell the prompt names
        cell = int(prompt.split("cell ")[1].split()[0])
        adc.readings[0] = measured[cell - 1]
        return ""

    monkeypatch.setattr("builtins.input", person)
    monkeypatch.setattr(time, "sleep", lambda seconds: None)
    path = tmp_path / "panel.toml"
    assert main(["calibrate", "--backend", "gpio", "--build", "uno", "--config", str(path)]) == 2  # no file yet
    path.write_text('build = "uno"\n')
    assert main(["calibrate", "--backend", "gpio", "--config", str(path)]) == 0
    assert load_config(path).thresholds == (800, 450, 240, 165, 140, 115, 94, 84, 40)
    assert "cell 9: 80" in capsys.readouterr().out
    assert main(["calibrate", "--backend", "sim", "--config", str(path)]) == 2
    assert "use --backend gpio or --backend serial" in capsys.readouterr().err


def test_measure_ladder_refuses_a_silent_ladder() -> None:
    with pytest.raises(ValueError, match="cell 1 reads 0"):
        measure_ladder(lambda: [0, 0, 0], ask=lambda prompt: "", say=print)


def test_the_cli_prints_a_builds_defaults_and_reports_errors(capsys: pytest.CaptureFixture[str],
                                                             tmp_path: Path) -> None:
    assert main(["config", "--build", "uno"]) == 0
    assert capsys.readouterr().out == UNO_TOML
    bad = tmp_path / "bad.toml"
    bad.write_text("[game]\nthinking_seconds = -1\n")
    assert main(["--config", str(bad)]) == 2
    assert "game.thinking_seconds must be a number from 0 to 60" in capsys.readouterr().err
    assert main(["--opponent", "nobody", "--config", str(tmp_path / "missing.toml")]) == 2
    assert "cannot read the panel configuration" in capsys.readouterr().err


def test_the_cli_takes_who_starts_in_the_matchs_words(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from noughts.cli.panel import build_parser, panel_config

    def config(*argv: str) -> PanelConfig:
        return panel_config(build_parser().parse_args([*argv, "--config", str(tmp_path / "none.toml")]))

    (tmp_path / "none.toml").write_text("")
    assert config("--first", "person").game.first == "me" and config("--first", "Loser").game.first == "loser"
    assert config("--opponent", "seed001-rules").game.opponent == "simple-rules"
    assert config("--sim").game == config().game and build_parser().parse_args(["--sim"]).backend == "sim"
    assert main(["--first", "whoever", "--config", str(tmp_path / "none.toml")]) == 2
    assert "--first must be one of me, computer, alternate, loser, random" in capsys.readouterr().err


def answered(replies: int) -> Callable[[str], bool]:
    """The last frame drawn shows the computer's reply number ``replies`` and the person's turn."""
    def seen(drawn: str) -> bool:
        frame = drawn.rstrip("\n").rsplit("\n\n  noughts panel", 1)[-1]
        rows = re.findall(r"^      ([.XO#])  ([.XO#])  ([.XO#])$", frame, re.M)
        return len(rows) == 3 and sum(row.count("O") for row in rows) == replies and "│Your turn..." in frame
    return seen


def test_noughts_panel_sim_plays_and_keeps_the_game_in_the_scores(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from noughts.hardware.sim import PRESS_SECONDS
    from noughts.store import open_store

    # A win against parsons, a key once the computer has answered the last; a key also waits until
    # the last one's button was let go and that was debounced, as a person's next press would.
    let_go = PRESS_SECONDS + 0.2
    keys: list[Key] = [(answered(0), b"1"), (answered(1), b"8", let_go), (answered(2), b"7", let_go),
                       (answered(3), b"4", let_go), (showing("│You win!!!"), b"q")]
    db = tmp_path / "noughts.db"
    drawn = Drawn()
    monkeypatch.setattr("sys.stdout", drawn)
    with typed(keys, drawn) as stdin:
        monkeypatch.setattr("sys.stdin", stdin)
        status = main(["--sim", "--no-flash", "--thinking", "0", "--opponent", "parsons", "--db", str(db),
                       "--config", os.devnull])
    out = drawn.getvalue()
    assert status == 0 and "│You win!!!      │" in out
    store = open_store(db)
    (game,) = store.games()
    assert (game.x.name, game.o.name, game.result) == (text.default_name(), "parsons", "X")
    store.close()


def test_a_missing_hardware_library_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(__import__("sys").modules, "gpiozero", None)
    hint = install_hint()
    expected = r"'gpiozero', which is not installed: " + re.escape(hint)
    with pytest.raises(MissingLibraryError, match=expected):
        require("gpiozero", "the gpio backend")
    config = load_config(build="mega")
    with pytest.raises(MissingLibraryError, match=re.escape(hint)):
        GpioBoard(config.gpio, config.thresholds)
    assert main(["--sim", "--no-scores", "--config", str(Path(os.devnull))]) == 2  # a line, not a traceback
    assert f"the sim backend needs the Python package 'gpiozero', which is not installed: {hint}" in \
        capsys.readouterr().err
    monkeypatch.setitem(__import__("sys").modules, "serial", None)
    with pytest.raises(MissingLibraryError, match=r"'serial', which is not installed: " + re.escape(hint)):
        open_pyserial("loop://", 57600)
    assert main(["--backend", "serial", "--port", "loop://", "--no-scores", "--config", os.devnull]) == 2
    err = capsys.readouterr().err
    assert f"the serial backend needs the Python package 'serial', which is not installed: {hint}" in err
    assert "running on" not in err  # said at once, not after announcing a board it cannot talk to


def test_the_install_hint_names_a_command_that_installs_the_panels_packages() -> None:
    import tomllib

    root = checkout_root()
    assert root is not None  # the tests run from the checkout
    hint = install_hint()
    command = hint.split("`")[1]
    python, *words = command.split()
    assert (root / python).exists() or Path(python).exists(), hint
    assert hint.startswith(f"in {root} ") and words[:3] == ["-m", "pip", "install"]
    assert words[-1] == f"'.[{PANEL_EXTRA}]'"
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    wanted = {name.split(">")[0].split("=")[0].lower() for name in extras[PANEL_EXTRA]}
    assert {"gpiozero", "pyserial", "rplcd"} <= wanted  # every backend's library: gpio, sim, serial, the LCD
    assert hint_for(None, "python3") == INSTALL_HINT == "pip install 'noughts[panel]'"
    assert checkout_root(str(root / "elsewhere" / "a" / "b" / "c.py")) is None


def test_buttons_wired_to_ground_with_pull_ups(factory: Any) -> None:
    config = load_config(text="build = 'mega'\n[gpio]\npull_up = true")
    board = GpioBoard(config.gpio, config.thresholds, pin_factory=factory)
    pin = factory.pin(config.gpio.cells[0])
    assert pin.pull == "up" and pin.state  # released reads high
    events: list[ButtonEvent] = []
    pin.drive_low()  # pressed: shorted to ground
    for step in range(1, 7):
        events += board.poll(step * 0.005)
    pin.drive_high()
    for step in range(7, 14):
        events += board.poll(step * 0.005)
    assert events == [ButtonEvent("1", True), ButtonEvent("1", False)]
    board.close()


# --- issue 28: one vocabulary, one rulebook, no silent waits ------------------------------------

def test_a_cell_held_at_reset_on_the_pins_swallows_no_press_after_it(factory: Any) -> None:
    config = load_config(build="mega")
    rig = Rig(factory, config, thinking=0.5)
    rig.hold(1, True)  # parsons, you first: held while reset is pressed...
    rig.run(0.05)
    rig.reset()
    rig.run(2.5)  # ...and long after, as a hand resting on the panel
    assert rig.lcd.lines == ("Your turn...", text.let_go(1)) == ("Your turn...", "Let go of cell 1")
    rig.press(3)  # a press while cell 1 is still down counts
    assert rig.cells("green") == {3}
    rig.run(1.0)
    rig.hold(1, False)  # letting go plays nothing
    rig.run(0.1)
    assert rig.cells("green") == {3} and rig.lcd.lines[1] == "You:0 Cen:0 D:0"
    rig.press(1)  # and then it is a cell like any other
    assert rig.cells("green") == {1, 3}
    rig.board.close()


def test_a_cell_held_at_power_on_swallows_no_press_after_the_flash(factory: Any) -> None:
    config = load_config(build="mega")
    board = GpioBoard(config.gpio, config.thresholds, pin_factory=factory, lcd=MemoryLcd(), refresh=False)
    factory.pin(config.gpio.cells[4]).drive_high()  # cell 5 down before the panel starts
    panel = PanelController(board, PanelSettings(flash=True, flash_step_seconds=0.01, opponent="parsons"))
    clock = [0.0]
    loop = PanelLoop(panel, board, clock=lambda: clock[0])
    loop.start()
    for _ in range(200):  # the flash, 0.42 s here, and then some
        clock[0] += 0.005
        loop.step()
    assert panel.state == "turn" and panel.lcd == ("Your turn...", "Let go of cell 5")
    factory.pin(config.gpio.cells[0]).drive_high()
    for _ in range(10):
        clock[0] += 0.005
        loop.step()
    assert panel.game.moves == (0,)
    board.close()


def test_the_sims_legend_names_the_colours_it_draws() -> None:
    sim = SimPanel(load_config(build="mega"))
    try:
        sides = {"green": ("O", "Ann"), "red": ("X", "Hard")}
        legend = next(line for line in sim.render(colour=True, sides=sides) if "LEDs:" in line)
        plain = re.sub(r"\x1b\[[0-9;]*m", "", legend).strip()
        names = text.MARK_COLOUR_NAMES
        assert plain == f"{names['O']} O = green LEDs: Ann    {names['X']} X = red LEDs: Hard"
        assert plain == "orange O = green LEDs: Ann    blue X = red LEDs: Hard"
        assert f"orange {MARK_ANSI['O']}O" in legend and f"blue {MARK_ANSI['X']}X" in legend  # as drawn
        without = next(line for line in sim.render(colour=False, sides=sides) if "LEDs:" in line)
        assert without.strip() == "O = green LEDs: Ann    X = red LEDs: Hard"  # no colour drawn, none named
    finally:
        sim.close()
        gpiozero.Device.pin_factory = None


def test_the_power_on_opponent_is_noughts_default_unless_the_file_names_one(tmp_path: Path) -> None:
    from noughts.board import Board
    from noughts.hardware.app import settings_from

    for build in ("mega", "uno"):
        config = load_config(build=build)
        assert config.game.opponent == players.default_for(Board()) == "medium"
        panel = PanelController(MemoryOut(), settings_from(config))
        assert panel.opponent == "medium" and panel.match.name_of(1) == "Medium"
    seeds = load_config(text='[game]\nopponent = "arduino"')  # the seed's own game: one setting away
    assert PanelController(MemoryOut(), settings_from(seeds)).opponent == "arduino"
    with pytest.raises(ConfigError, match=r"game\.opponent must be one of"):
        load_config(text='[game]\nopponent = "nobody"')


class MemoryOut:
    def set_led(self, name: str, on: bool) -> None:
        pass

    def lcd_write(self, line1: str, line2: str) -> None:
        pass


def test_pins_that_cannot_be_driven_are_one_line_and_the_command_names_the_simulators_flag(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import gpiozero

    from noughts.errors import SettingError

    monkeypatch.setattr(gpiozero.Device, "pin_factory", None)
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "nowhere")  # as off a Pi: no pin factory loads
    refused = ("gpiozero found no way to drive GPIO pins here: on a Raspberry Pi install lgpio or RPi.GPIO; "
               "anywhere else choose the simulator")
    mega = load_config(text=MEGA_TOML)
    with pytest.raises(SettingError) as caught:
        GpioBoard(mega.gpio, mega.thresholds)
    assert str(caught.value) == refused and (caught.value.setting, caught.value.instead) == ("backend", ("sim",))
    assert main(["--backend", "gpio", "--build", "mega", "--no-scores"]) == 2
    assert capsys.readouterr().err == f"noughts: {refused} (try --backend sim)\n"
