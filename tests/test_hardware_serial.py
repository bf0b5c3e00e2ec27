"""The serial backend against a fake firmware on a pseudo-terminal (and a TCP socket): whole
games, garbage on the line, a board that vanishes mid-game and comes back, a wrong firmware.

pyserial is required (``pip install 'noughts[panel]'``): these tests fail, never skip, without it.
"""

from __future__ import annotations

import os
import select
import socket
import threading
import time
import tty
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

try:
    import serial  # noqa: F401 - the backend imports it lazily; say plainly when it is missing
except ImportError:  # pragma: no cover
    pytest.fail("the panel tests need pyserial: pip install 'noughts[panel]'", pytrace=False)

from noughts import players
from noughts.hardware.app import open_board
from noughts.hardware.config import load_config
from noughts.hardware.controller import FLASH_FRAMES, LED_NAMES, ButtonEvent, PanelController, PanelSettings
from noughts.hardware.loop import PanelLoop
from noughts.hardware.protocol import LED_BITS, led_command, parse_line, text_command, thresholds_command
from noughts.hardware.serial_board import FirmwareMismatchError, SerialBoard


class FakeFirmware:
    """The board's side of protocol 1 on the master end of a pty; the host opens ``link``."""

    def __init__(self, link: Path, board: str = "mega", version: int = 1, answer: bool = True) -> None:
        # answer=False: a board without our firmware, which says nothing at all
        self.link, self.board, self.version, self.answer = link, board, version, answer
        self.mask = 0
        self.rows = ["", ""]
        self.masks: list[int] = []
        self.commands: list[str] = []
        self.held: set[str] = set()
        self.lock = threading.Lock()
        self.master = self.slave = -1
        self._stop = False
        self.plug()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    # the cable -------------------------------------------------------------------------------
    def plug(self) -> None:
        """A new pty behind the same name, as a board that comes back on USB."""
        master, slave = os.openpty()
        tty.setraw(master)
        with self.lock:
            self.master, self.slave = master, slave  # the slave stays open: the pty keeps its buffer
        temporary = self.link.with_suffix(".new")
        temporary.unlink(missing_ok=True)
        temporary.symlink_to(os.ttyname(slave))
        temporary.replace(self.link)
        if self.answer:
            self.send(f"NOUGHTS {self.version} {self.board}")  # the board boots as the port opens

    def unplug(self) -> None:
        with self.lock:
            master, slave, self.master, self.slave = self.master, self.slave, -1, -1
        os.close(master)
        os.close(slave)
        self.link.unlink()

    def close(self) -> None:
        self._stop = True
        if self.master >= 0:
            self.unplug()
        self.thread.join()

    # the board -------------------------------------------------------------------------------
    def send(self, line: str | bytes) -> None:
        data = line if isinstance(line, bytes) else line.encode() + b"\r\n"
        with self.lock:
            if self.master >= 0:
                os.write(self.master, data)

    def press(self, button: str) -> None:
        self.held.add(button)
        self.send(f"P {button}")

    def release(self, button: str) -> None:
        self.held.discard(button)
        self.send(f"U {button}")

    def tap(self, button: str) -> None:
        self.press(button)
        time.sleep(0.03)
        self.release(button)

    def lit(self) -> set[str]:
        return {name for name, bit in LED_BITS.items() if self.mask >> bit & 1}

    def _serve(self) -> None:
        buffer = b""
        while not self._stop:
            master = self.master
            if master < 0:
                time.sleep(0.01)
                continue
            try:
                ready, _, _ = select.select([master], [], [], 0.02)
                data = os.read(master, 1024) if ready else b""
            except OSError:
                time.sleep(0.01)  # unplugged under our feet
                continue
            buffer += data
            *lines, buffer = buffer.split(b"\n")
            for raw in lines:
                self._command(raw.decode().strip())

    def _command(self, line: str) -> None:
        if not line:
            return
        self.commands.append(line)
        if not self.answer:
            return
        if line == "?":
            self.send(f"NOUGHTS {self.version} {self.board}")
            for button in sorted(self.held):
                self.send(f"P {button}")
        elif line.startswith("L "):
            self.mask = int(line[2:], 16)
            self.masks.append(self.mask)
        elif line[:2] == "T " and line[2] in "01":
            self.rows[int(line[2])] = line[4:]
        elif line.startswith(("K ", "A ")) and self.board == "uno":
            pass
        else:
            self.send("E unknown command")


@pytest.fixture
def link(tmp_path: Path) -> Path:
    return tmp_path / "ttyPANEL"


class Host:
    """The host side: a SerialBoard, a controller against parsons, and a clock of the host's own.

    Each turn of the loop moves the clock on by TICK, and then lets the real time of a short sleep
    pass, in which the fake firmware's thread answers. The panel's timing (the flash, thinking,
    retries, the wait for a hello) runs on that clock, so it goes by without being waited for in
    real time, the same however busy the machine; the line itself is real, a pty or a socket.
    """

    TICK = 0.01  # seconds of the host's clock per turn of the loop: the flash's frames last 0.025

    def __init__(self, port: str, *, thinking: float = 0.2, flash: bool = False, retry: float = 0.1,
                 hello: float = 2.0, thresholds: tuple[int, ...] | None = None) -> None:
        self.messages: list[str] = []
        self.now = 0.0
        self.board = SerialBoard(port, retry_seconds=retry, hello_seconds=hello, notify=self.messages.append,
                                 thresholds=thresholds)
        settings = PanelSettings(flash=flash, flash_step_seconds=0.025, thinking_seconds=thinking,
                                 opponent="parsons", seed=1)
        self.panel = PanelController(self.board, settings)
        self.loop = PanelLoop(self.panel, self.board, clock=self.clock)

    def clock(self) -> float:
        return self.now

    def until(self, condition: Callable[[], bool], timeout: float = 5.0, what: str = "") -> None:
        deadline = time.monotonic() + timeout  # real time: only a test that is stuck gets there
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what or condition}; host said {self.messages}")
            self.loop.step()
            self.now += self.TICK
            time.sleep(0.002)

    def run(self, seconds: float) -> None:
        """Let ``seconds`` of the host's clock go by, the loop turning all the while."""
        end = self.now + seconds - 1e-9
        self.until(lambda: self.now >= end, seconds + 5)

    def shown(self, firmware: FakeFirmware) -> bool:
        """The board shows exactly what the controller shows."""
        lit = {name for name, on in self.panel.leds.items() if on}
        return firmware.lit() == lit and firmware.rows == [text.rstrip() for text in self.panel.lcd]


@pytest.fixture
def firmware(link: Path) -> Iterator[FakeFirmware]:
    fake = FakeFirmware(link)
    yield fake
    fake.close()


def test_the_protocol_lines() -> None:
    assert led_command(LED_NAMES) == "L FFFFF" and led_command([]) == "L 00000"
    assert led_command(["green1", "red1", "green_win"]) == "L 40201"
    assert text_command(0, "It's a draw!") == "T 0 It's a draw!" and text_command(1, "") == "T 1"
    assert text_command(1, "ünïcode\nand far too long") == "T 1 ?n?code?and far"
    assert thresholds_command([800, 400, 200, 160, 140, 120, 90, 85, 70]) == "K 800 400 200 160 140 120 90 85 70"
    assert [parse_line(x) for x in (b"P 10", b"U R\r", b"A 1024", b"NOUGHTS 1 due", b"E", b"\xff")] == \
        [None, parse_line(b"U R"), None, None, None, None]
    assert parse_line(b"E bad thing").message == "bad thing"  # type: ignore[union-attr]


def test_a_whole_game_over_a_pty(firmware: FakeFirmware, link: Path) -> None:
    host = Host(str(link), flash=True)
    host.loop.start()
    host.until(lambda: host.board.connected, what="the hello")
    assert host.board.board == "mega" and host.messages == [f"connected to the mega on {link}"]
    host.until(lambda: host.panel.state == "turn", what="the flash")
    host.run(0.05)
    # the seed's start-up flash reached the board frame by frame, in order (a busy machine may
    # have slept through the odd 25 ms frame)
    flash = [mask for mask in firmware.masks if mask]
    expected = [sum(1 << LED_BITS[name] for name in frame) for frame in FLASH_FRAMES]
    frames = iter(expected)
    assert all(mask in frames for mask in flash) and len(flash) >= 35 and flash[0] == expected[0]
    assert host.shown(firmware) and firmware.rows == ["Your turn...", "You:0 Cen:0 D:0"]
    parsons = players.get("parsons")
    for cell in ("1", "8", "7", "4"):
        if host.panel.state == "over":
            break
        firmware.tap(cell)
        host.until(lambda c=cell: f"green{c}" in firmware.lit(), what=f"green {cell}")
        game = host.panel.game
        after = game.positions[game.moves.index(int(cell) - 1) + 1]  # the computer may have answered already
        if not after.is_over:
            reply = parsons.choose(after) + 1
            host.until(lambda r=reply: f"red{r}" in firmware.lit(), what=f"red {reply}")
    host.run(0.05)
    assert host.panel.game.result == "X" and host.shown(firmware)
    assert firmware.rows == ["You win!!!", "Press reset..."] and "green_win" in firmware.lit()
    firmware.tap("R")
    host.until(lambda: firmware.lit() == set() and firmware.rows[1] == "You:1 Cen:0 D:0", what="the reset")
    host.board.close()


def test_garbage_on_the_line_is_ignored(firmware: FakeFirmware, link: Path) -> None:
    host = Host(str(link))
    host.loop.start()
    host.until(lambda: host.board.connected)
    for junk in (b"\x00\xff\xfe\r\n", b"P 99\r\n", b"NOUGHTS x mega\r\n", b"U\r\n", b"x" * 300, b"\r\n",
                 b"P", b" 5\r\n"):  # the last two are one line split across reads
        firmware.send(junk)
        host.run(0.01)
    host.until(lambda: "green5" in firmware.lit(), what="the split press")
    assert host.board.garbage >= 4 and host.board.connected
    firmware.send("E unknown command")
    host.run(0.05)
    assert host.board.refusals == ["unknown command"] and "refused a command" in host.messages[-1]
    host.board.close()


def test_a_board_that_vanishes_mid_game_is_retried_and_shown_again(firmware: FakeFirmware, link: Path) -> None:
    host = Host(str(link), thinking=1.0)
    host.loop.start()
    host.until(lambda: host.board.connected)
    firmware.press("5")  # and it stays held as the cable goes
    host.until(lambda: host.panel.state == "thinking")
    firmware.unplug()
    host.until(lambda: not host.board.connected, what="the loss")
    assert any("lost the panel" in m and "retrying" in m for m in host.messages)
    host.run(1.5)  # longer than the thinking pause: the game waits for the board
    assert host.panel.state == "thinking" and host.panel.game.moves == (4,)
    assert host.loop.paused >= 1.4 and "5" not in host.panel.held  # its held button was let go
    firmware.mask, firmware.rows = 0, ["", ""]  # a board that restarts shows nothing
    firmware.plug()
    host.until(lambda: host.board.connected, what="the reconnection")
    host.until(lambda: host.shown(firmware), what="the whole display again")
    # 0.2 s to think, less than THINKING_AFTER: the computer's name, and no word of thinking
    assert firmware.lit() == {"green5"} and firmware.rows == ["Centre first", "You:0 Cen:0 D:0"]
    # the board says what is still held, in the lines after its hello (a read may end between them)
    host.until(lambda: "5" in host.panel.held, what="the held button")
    host.until(lambda: host.panel.state == "turn", what="the computer's move")
    host.until(lambda: host.shown(firmware) and len(firmware.lit()) == 2)
    assert host.board.connections == 2 and host.messages[-1] == f"connected to the mega on {link}"
    host.board.close()


def test_a_board_that_restarts_gets_the_whole_display(firmware: FakeFirmware, link: Path) -> None:
    host = Host(str(link))
    host.loop.start()
    host.until(lambda: host.board.connected)
    firmware.tap("5")
    host.until(lambda: len(firmware.lit()) == 2)
    sent = len(firmware.commands)
    firmware.mask, firmware.rows = 0, ["noughts panel", "waiting for host"]
    firmware.send("NOUGHTS 1 mega")  # a reset on the board, the port still open
    host.until(lambda: host.shown(firmware), what="the display again")
    assert len(firmware.commands) > sent
    host.board.close()


def test_the_uno_gets_the_ladder_thresholds(link: Path) -> None:
    firmware = FakeFirmware(link, board="uno")
    try:
        host = Host(str(link), thresholds=(900, 500, 250, 170, 145, 125, 95, 80, 40))
        host.loop.start()
        host.until(lambda: "K 900 500 250 170 145 125 95 80 40" in firmware.commands, what="the thresholds")
        host.board.close()
    finally:
        firmware.close()


def test_firmware_for_another_protocol_is_refused(link: Path) -> None:
    firmware = FakeFirmware(link, version=2)
    try:
        host = Host(str(link))
        host.loop.start()
        with pytest.raises(FirmwareMismatchError, match="protocol 2, and this noughts speaks protocol 1"):
            host.until(lambda: False, timeout=3)
    finally:
        firmware.close()


def test_silent_boards_and_missing_ports_are_reported_and_retried(link: Path) -> None:
    host = Host(str(link), hello=0.3)
    host.loop.start()
    host.run(0.2)
    assert not host.board.connected and host.messages == [
        f"cannot open the panel on {link}: {host.messages[0].split(': ', 1)[1]}"]
    assert "retrying every 0.1 s" in host.messages[0]
    firmware = FakeFirmware(link, answer=False)
    try:
        host.until(lambda: firmware.commands.count("?") >= 2 and  # asked, and asked again after reopening
                   any("no hello from the panel firmware in 0.3 s" in m for m in host.messages),
                   what="the silent board reported and asked again")
        firmware.answer = True
        host.until(lambda: host.board.connected, what="the hello")
    finally:
        host.board.close()
        firmware.close()


def test_a_pyserial_url_works_too(tmp_path: Path) -> None:
    """socket://: the board behind a TCP bridge (ser2net and the like)."""
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    received: list[str] = []

    def board() -> None:
        connection, _ = server.accept()
        with connection:
            buffer = b""
            while True:
                data = connection.recv(1024)
                if not data:
                    return
                buffer += data
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    received.append(line.decode())
                    if line == b"?":
                        connection.sendall(b"NOUGHTS 1 mega\r\nP 5\r\n")

    thread = threading.Thread(target=board, daemon=True)
    thread.start()
    config = load_config(text=f'[serial]\nport = "socket://127.0.0.1:{port}"\nretry_seconds = 0.1')
    board_io = open_board("serial", config, say=lambda message: None)
    assert isinstance(board_io, SerialBoard)
    host = Host(board_io.port)
    host.board = board_io
    host.panel = PanelController(board_io, host.panel.settings)
    host.loop = PanelLoop(host.panel, board_io)
    host.loop.start()
    host.until(lambda: any(line.startswith("L ") and int(line[2:], 16) for line in received),
               what=f"green 5 {received}")
    assert host.panel.game.moves == (4,)
    board_io.close()
    thread.join(2)
    server.close()


class SlowLadder(SerialBoard):
    """An Uno that reports a raw reading every 0.3 s of a made-up clock, after one reading left
    over from the cell measured before (it was on the line when raw readings were turned off)."""

    def __init__(self, clock: list[float], reading: int, left_over: int) -> None:
        super().__init__("slow://")
        self.clock, self.reading, self.left_over = clock, reading, [left_over]
        self.board = "uno"
        self.on = False
        self.next_at = 0.0

    @property
    def connected(self) -> bool:
        return True

    def raw_mode(self, on: bool) -> None:
        self.on, self.next_at = on, self.clock[0] + 0.3

    def poll(self, now: float) -> list[ButtonEvent]:
        if self.left_over:
            self.raw_readings.append(self.left_over.pop())
        elif self.on and now >= self.next_at:
            self.raw_readings.append(self.reading)
            self.next_at += 0.3
        return []


def test_calibration_over_serial_ignores_a_reading_left_over_from_the_last_cell(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import statistics

    from noughts.hardware import app

    clock = [0.0]

    def sleep(seconds: float) -> None:
        clock[0] += seconds

    monkeypatch.setattr(app.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(app.time, "sleep", sleep)
    read = app._serial_reader(SlowLadder(clock, reading=200, left_over=300))
    samples = read()
    assert 300 not in samples and len(samples) >= app.READINGS and statistics.median(samples) == 200
