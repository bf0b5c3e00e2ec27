"""The firmware for real: firmware/noughts_panel compiled for the Uno and the Mega with Debian's
avr toolchain and arduino-mk, then run in simavr (firmware/simavr/panel_sim.c, built against
libsimavr) with its UART on a pty, driven by the Python host: buttons pressed on the simulated
pins (or the ladder's voltage on ADC0), LEDs read off the simulated ports, the LCD read out of
simavr's HD44780.

Needs: apt-get install make gcc gcc-avr avr-libc arduino-core-avr arduino-mk simavr libsimavr-dev
libelf-dev (and pyserial). Missing tools fail these tests with that list; they never skip.
"""

from __future__ import annotations

import hashlib
import os
import re
import select
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from noughts import players
from noughts.cli.panel import main
from noughts.hardware.boardio import Ladder
from noughts.hardware.charlieplex import led_lines
from noughts.hardware.config import load_config
from noughts.hardware.controller import LED_NAMES, PanelController, PanelSettings
from noughts.hardware.loop import PanelLoop
from noughts.hardware.serial_board import SerialBoard

pytestmark = pytest.mark.slow  # started first: make test runs the files in parallel, slow ones first
ROOT = Path(__file__).resolve().parent.parent
FIRMWARE = ROOT / "firmware"
ARDUINO = Path("/usr/share/arduino")
APT = "make gcc gcc-avr avr-libc arduino-core-avr arduino-mk simavr libsimavr-dev libelf-dev"
SEED_THRESHOLDS = (800, 400, 200, 160, 140, 120, 90, 85, 70)

# The firmware's wiring (firmware/noughts_panel/noughts_panel.ino), in Arduino pin numbers.
MEGA = {
    "mcu": "atmega2560", "variant": "mega",
    "leds": [*range(30, 39), *range(40, 49), 50, 51],  # mask bit order: green 1-9, red 1-9, winners
    "cells": list(range(2, 11)), "reset": 11, "switch": 12,
    "lcd": [58, 59, 57, 56, 55, 54],  # RS=A4 E=A5 D4=A3 D5=A2 D6=A1 D7=A0
}
UNO = {
    "mcu": "atmega328p", "variant": "standard",
    "charlieplex": [5, 6, 9, 10, 11],
    "numbers": [0, 8, 14, 2, 10, 16, 4, 12, 6, 1, 9, 15, 3, 11, 17, 5, 13, 7, 18, 19],  # the seed's
    "reset": 13, "switch": 15,  # A1
    "lcd": [2, 3, 4, 7, 8, 12],
}


def arduino_pins(variant: str) -> dict[int, str]:
    """Arduino pin number -> AVR port and bit ("E4"), from the core's own pins_arduino.h."""
    text = (ARDUINO / "hardware/arduino/avr/variants" / variant / "pins_arduino.h").read_text()
    text = re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)

    def table(name: str) -> str:
        found = re.search(name + r"\[\]\s*=\s*\{(.*?)\};", text, re.S)
        assert found, name
        return found.group(1)

    ports = re.findall(r"\bP([A-L])\b", table("digital_pin_to_port_PGM"))
    bits = re.findall(r"_BV\(\s*(\d)\s*\)", table("digital_pin_to_bit_mask_PGM"))
    assert len(ports) == len(bits) > 19
    return {pin: f"{port}{bit}" for pin, (port, bit) in enumerate(zip(ports, bits, strict=True))}


@pytest.fixture(scope="module")
def build(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The firmware and the harness, built by make, kept in pytest's cache under a hash of everything the
    build reads (the sources, the toolchain's versions, the Arduino core's and simavr's files): built
    again whenever any of it changes, and not on every run (~5 s of CPU on two cores)."""
    missing = [tool for tool in ("make", "cc", "avr-gcc", "avr-g++") if shutil.which(tool) is None]
    missing += [str(p) for p in (ARDUINO / "Arduino.mk", ARDUINO / "hardware/arduino/avr/cores/arduino",
                                 Path("/usr/include/simavr/sim_avr.h"), Path("/usr/include/simavr/parts/hd44780.h"),
                                 Path("/usr/include/libelf.h")) if not p.exists()]
    if missing:
        pytest.fail(f"the firmware tests need {', '.join(missing)}: apt-get install {APT}", pytrace=False)
    cache = getattr(request.config, "cache", None)  # None with -p no:cacheprovider
    kept = cache.mkdir(f"firmware-{build_key()}") if cache is not None else None
    if kept is not None and (kept / "built").exists():
        return kept
    out = tmp_path_factory.mktemp("firmware")
    result = subprocess.run(["make", "-j4", "-C", str(FIRMWARE), f"BUILD={out}", "uno", "mega", "harness"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    if kept is None:
        return out
    shutil.rmtree(kept)
    shutil.copytree(out, kept, symlinks=True)
    (kept / "built").write_text(result.stdout[-3000:])
    return kept


def build_key() -> str:
    """A hash of what the firmware build reads: make changes nothing that this does not see."""
    digest = hashlib.sha256()
    for path in sorted(p for p in FIRMWARE.rglob("*") if p.is_file() and "build" not in p.relative_to(FIRMWARE).parts):
        digest.update(f"{path.relative_to(FIRMWARE)}\0".encode() + path.read_bytes())
    for tool in ("avr-gcc", "avr-g++", "cc"):
        digest.update(subprocess.run([tool, "--version"], capture_output=True).stdout)
    for folder in (ARDUINO, Path("/usr/lib/avr"), Path("/usr/include/simavr"), Path("/usr/include/libelf.h"),
                   *Path("/usr/lib").glob("*/libsimavr*"), *Path("/usr/lib").glob("libsimavr*")):
        for path in sorted(folder.rglob("*")) if folder.is_dir() else [folder]:
            if path.is_file():
                stat = path.stat()
                digest.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:20]


def test_the_sketch_compiles_for_the_uno_and_the_mega(build: Path) -> None:
    for board, flash in (("uno", 32_256), ("mega", 253_952)):
        elf, hexfile = build / board / "noughts_panel.elf", build / board / "noughts_panel.hex"
        assert elf.stat().st_size > 0 and hexfile.read_text().startswith(":")
        sizes = subprocess.run(["avr-size", str(elf)], capture_output=True, text=True, check=True).stdout
        text, data = (int(v) for v in sizes.splitlines()[1].split()[:2])
        assert 2000 < text + data < flash  # it fits, with the bootloader
    assert os.access(build / "panel_sim", os.X_OK)


class SimulatedBoard:
    """The compiled firmware running in simavr through firmware/simavr/panel_sim.c."""

    def __init__(self, build: Path, board: str, log: Path) -> None:
        self.board = board
        self.wiring = MEGA if board == "mega" else UNO
        self.pins = arduino_pins(str(self.wiring["variant"]))
        self.process = subprocess.Popen(
            [str(build / "panel_sim"), str(build / board / "noughts_panel.elf"), str(self.wiring["mcu"])],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log.open("w"), text=True, bufsize=1)
        try:
            first = self._read_line(10)
        except BaseException:
            self.process.kill()
            raise
        assert first.startswith("pty "), first
        self.pty = first.split()[1]
        if board == "mega":
            for bit, pin in enumerate(self.wiring["leds"]):  # type: ignore[arg-type]
                self.send(f"led {bit} {self.pins[pin]} GND")
        else:
            lines = self.wiring["charlieplex"]
            for bit, number in enumerate(self.wiring["numbers"]):  # type: ignore[arg-type]
                anode, cathode = led_lines(number, 5)
                self.send(f"led {bit} {self.pins[lines[anode]]} {self.pins[lines[cathode]]}")  # type: ignore[index]
        self.send("lcd " + " ".join(self.pins[p] for p in self.wiring["lcd"]))  # type: ignore[attr-defined]
        self.send("run")
        self.max_lit = 0

    def _read_line(self, timeout: float) -> str:
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        assert ready, "panel_sim did not answer"
        line = self.process.stdout.readline()
        assert line, f"panel_sim stopped ({self.process.poll()})"
        assert not line.startswith("error"), line
        return line.strip()

    def send(self, command: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()

    def ask(self, command: str) -> str:
        self.send(command)
        return self._read_line(10)

    def set_pin(self, arduino_pin: int, level: bool) -> None:
        self.send(f"pin {self.pins[arduino_pin]} {int(level)}")

    def set_ladder(self, reading: int) -> None:
        """Put the voltage on A0 that the Uno's ADC reads as ``reading`` (5 V reference)."""
        self.send(f"adc 0 {(reading * 5000 + 1022) // 1023}")

    def cycles(self) -> int:
        return int(self.ask("time").split()[1])

    def wait_sim(self, seconds: float) -> None:
        """Wait until the simulated AVR has run ``seconds`` (16 MHz), however busy this machine is."""
        end = self.cycles() + int(seconds * 16_000_000)
        deadline = time.monotonic() + 30
        while self.cycles() < end:
            assert time.monotonic() < deadline, "the simulation is not running"
            time.sleep(0.003)

    def leds(self) -> set[str]:
        """The LEDs that lit at all over a fresh window of 20 ms (two refresh cycles of the Uno)."""
        self.ask("leds")
        self.wait_sim(0.02)
        words = self.ask("leds").split()
        most, cycles = int(words[2]), [int(w) for w in words[3:]]
        self.max_lit = max(self.max_lit, most)
        return {LED_NAMES[bit] for bit, lit in enumerate(cycles) if lit}

    def lcd(self) -> tuple[str, str]:
        line = self.ask("lcd?")
        assert line.startswith("lcd ")
        first, second = line[4:].split("|")
        return first.rstrip(), second.rstrip()

    def close(self) -> None:
        if self.process.poll() is None:
            self.send("quit")
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()


@pytest.fixture(params=["uno", "mega"])
def simulated(request: pytest.FixtureRequest, build: Path, tmp_path: Path) -> Iterator[SimulatedBoard]:
    board = SimulatedBoard(build, request.param, tmp_path / "simavr.log")
    yield board
    board.close()


class Host:
    def __init__(self, port: str, thresholds: tuple[int, ...] = SEED_THRESHOLDS) -> None:
        self.messages: list[str] = []
        self.board = SerialBoard(port, thresholds=thresholds, retry_seconds=0.2, notify=self.messages.append)
        self.panel = PanelController(self.board, PanelSettings(flash=False, thinking_seconds=0.2,
                                                               opponent="parsons", seed=1))
        self.loop = PanelLoop(self.panel, self.board)

    def until(self, condition: Callable[[], bool], timeout: float = 10.0, what: str = "") -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; the host said {self.messages}")
            self.loop.step()
            time.sleep(0.002)

    def lit(self) -> set[str]:
        return {name for name, on in self.panel.leds.items() if on}


def press(sim: SimulatedBoard, host: Host, cell: int, reading: Callable[[int], int] | None = None) -> None:
    """Press a cell button on the simulated board until the host hears of it, then let go."""
    button = str(cell)
    if sim.board == "mega":
        sim.set_pin(MEGA["cells"][cell - 1], True)  # type: ignore[index]
    else:
        sim.set_ladder((reading or Ladder(SEED_THRESHOLDS).reading)(cell))
    host.until(lambda: button in host.panel.held, what=f"the press of {cell}")
    if sim.board == "mega":
        sim.set_pin(MEGA["cells"][cell - 1], False)  # type: ignore[index]
    else:
        sim.set_ladder(0)
    host.until(lambda: button not in host.panel.held, what=f"the release of {cell}")


def toggle(sim: SimulatedBoard, host: Host, button: str, level: bool) -> None:
    sim.set_pin(int(sim.wiring[button]), level)  # type: ignore[call-overload]
    host.until(lambda: (button in host.panel.held or button == "switch") and
               (button != "switch" or host.panel.switch_on == level), what=f"{button} {level}")


def shows(sim: SimulatedBoard, host: Host) -> bool:
    return sim.leds() == host.lit() and sim.lcd() == tuple(t.rstrip() for t in host.panel.lcd)


def test_a_whole_game_through_the_firmware_in_simavr(simulated: SimulatedBoard) -> None:
    sim = simulated
    sim.wait_sim(0.2)  # the board boots (its LCD start-up takes 50 ms) before the host opens the port
    assert sim.lcd() == ("noughts panel", "waiting for host") and sim.leds() == set()
    host = Host(sim.pty)
    host.loop.start()
    host.until(lambda: host.board.connected, what="the hello")
    assert host.board.board == sim.board
    host.until(lambda: shows(sim, host), what="the first display")
    assert sim.lcd() == ("Your turn...", "You:0 Cen:0 D:0")
    parsons = players.get("parsons")
    slow, quick = replace(host.panel.settings, thinking_seconds=60.0), host.panel.settings
    for cell in (1, 8, 7, 4):  # a win against parsons
        host.panel.settings = slow  # the computer waits until the board has been checked
        before = len(host.panel.game.moves)
        press(sim, host, cell)
        assert host.panel.game.moves[before] == cell - 1
        if host.panel.state == "over":
            break
        host.until(lambda: shows(sim, host), what="the person's move on the board")
        assert f"green{cell}" in sim.leds() and sim.lcd()[0] == "Centre first"  # its turn (thinking... after 0.3 s)
        reply = parsons.choose(host.panel.game.board) + 1
        host.panel.settings = quick
        host.until(lambda: host.panel.state != "thinking", what="the computer's move")
        host.until(lambda: shows(sim, host), what="the computer's move on the board")
        assert f"red{reply}" in sim.leds() and sim.lcd()[0] == "Your turn..."
    host.until(lambda: shows(sim, host), what="the win on the board")
    assert host.panel.game.result == "X"
    assert sim.leds() == {"green1", "green8", "green7", "green4", "red5", "red3", "red9", "green_win"}
    assert sim.lcd() == ("You win!!!", "Press reset...")
    # the two-person switch, then reset: the next game is green against red
    toggle(sim, host, "switch", True)
    sim.set_pin(int(sim.wiring["reset"]), True)  # type: ignore[call-overload]
    host.until(lambda: host.panel.two_person, what="the reset")
    sim.set_pin(int(sim.wiring["reset"]), False)  # type: ignore[call-overload]
    host.until(lambda: shows(sim, host), what="the new game")
    assert sim.leds() == set() and sim.lcd() == ("Green's turn...", "Gre:0 Red:0 D:0")
    press(sim, host, 5)
    press(sim, host, 1)
    host.until(lambda: shows(sim, host), what="both moves on the board")
    assert sim.leds() == {"green5", "red1"} and sim.lcd()[0] == "Green's turn..."
    assert sim.max_lit <= (20 if sim.board == "mega" else 1)  # Charlieplexed: one LED at a time, never two
    host.board.close()


def test_the_firmware_speaks_the_protocol(simulated: SimulatedBoard) -> None:
    import serial

    sim = simulated
    port = serial.Serial(sim.pty, 57600, timeout=0.2)
    hello = f"NOUGHTS 1 {sim.board}".encode()

    def lines_until(done: Callable[[list[bytes]], bool]) -> list[bytes]:
        """The board's lines until ``done`` says enough: waits for what it waits for, never a fixed time."""
        lines: list[bytes] = []
        buffer = b""
        deadline = time.monotonic() + 10  # only a board that stopped answering gets here
        while not done(lines):
            assert time.monotonic() < deadline, f"the board stopped answering; it said {lines}"
            buffer += port.read(max(1, port.in_waiting))
            *complete, buffer = buffer.split(b"\n")
            lines += [line.strip() for line in complete if line.strip()]
        return lines

    def exchange(command: bytes) -> list[bytes]:
        """What the board says after ``command``, up to its answer to a ? sent next (closed by a bogus line's
        error): the board answers in order, so this is all it had to say, however slow the machine."""
        port.write(command + b"\n?\nsync\n")
        hellos = 2 if command == b"?" else 1
        lines = lines_until(lambda ls: ls.count(hello) >= hellos and ls[-1] == b"E unknown command")
        return lines[:len(lines) - 1 - lines[::-1].index(hello)]

    def answer(command: bytes) -> list[bytes]:
        exchange(b"")  # what the board said before (a boot hello, a button) is not the answer
        return exchange(command)

    port.write(b"?\n")
    assert hello in lines_until(lambda ls: hello in ls)

    assert answer(b"L 40201") == []
    assert sim.leds() == {"green1", "red1", "green_win"}
    assert answer(b"T 0 hello") == [] and answer(b"T 1") == [] and sim.lcd() == ("hello", "")
    assert answer(b"L FFFFF") == [] and sim.leds() == set(LED_NAMES)
    assert sim.max_lit <= (20 if sim.board == "mega" else 1)
    assert answer(b"L 100000") == [b"E L takes a hex mask of 20 LEDs"]
    assert answer(b"T 0 seventeen characters") == [b"E T takes at most 16 characters"]
    assert answer(b"x" * 60) == [b"E line too long"]
    assert answer(b"bogus") == [b"E unknown command"]
    assert answer(b"L 0") == [] and sim.leds() == set()
    if sim.board == "uno":
        assert answer(b"K 1 2 3 4 5 6 7 8 9") == [b"E K takes 9 falling thresholds from 1022 to 1"]
        sim.set_ladder(555)
        port.write(b"A 1\n")
        readings = lines_until(lambda ls: ls.count(b"A 555") >= 2)  # raw readings come every 100 ms
        readings += exchange(b"A 0")
        assert readings.count(b"A 555") >= 2 and set(readings) == {b"A 555", b"P 2"}  # 555 is cell 2's band
        sim.set_ladder(0)
        sim.wait_sim(0.05)
        assert exchange(b"") == [b"U 2"]
    else:
        assert answer(b"K 800 400 200 160 140 120 90 85 70") == [b"E unknown command"]
    sim.set_pin(int(sim.wiring["reset"]), True)  # type: ignore[call-overload]
    sim.wait_sim(0.05)  # past the debounce
    assert answer(b"?") == [f"NOUGHTS 1 {sim.board}".encode(), b"P R"]  # and what is held
    port.close()


def test_calibrating_the_uno_over_serial_then_playing_with_its_thresholds(build: Path, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    sim = SimulatedBoard(build, "uno", tmp_path / "simavr.log")
    try:
        ladder = [1000, 700, 500, 400, 300, 200, 150, 100, 50]  # not the seed's resistors

        def person(prompt: str) -> str:  # holds the cell the prompt names
            sim.set_ladder(ladder[int(prompt.split("cell ")[1].split()[0]) - 1])
            sim.wait_sim(0.05)
            return ""

        class SimulatedTime:  # calibration reads the ladder for 0.6 s: of the board's time, however busy this machine
            monotonic = staticmethod(lambda: sim.cycles() / 16_000_000)
            sleep = staticmethod(time.sleep)

        monkeypatch.setattr("builtins.input", person)
        monkeypatch.setattr("noughts.hardware.app.time", SimulatedTime)
        config = tmp_path / "panel.toml"
        config.write_text('build = "uno"\n')
        assert main(["calibrate", "--backend", "serial", "--port", sim.pty, "--config", str(config)]) == 0
        thresholds = load_config(config).thresholds
        assert thresholds == (850, 600, 450, 350, 250, 175, 125, 75, 25)
        sim.set_ladder(0)
        host = Host(sim.pty, thresholds)
        host.panel.settings = replace(host.panel.settings, thinking_seconds=60.0)  # no reply yet: the press alone
        host.loop.start()
        host.until(lambda: host.board.connected, what="the hello")
        press(sim, host, 3, reading=lambda cell: ladder[cell - 1])  # 500: cell 2 by the seed's thresholds
        assert host.panel.game.moves == (2,)
        host.board.close()
    finally:
        sim.close()
