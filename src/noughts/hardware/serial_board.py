"""The serial backend: an Arduino running ``firmware/noughts_panel``, over USB (pyserial).

The board does the I/O, the game stays here. :class:`SerialBoard` keeps the whole display (the
LED mask and both LCD rows) and sends what changed; after the board says hello — when the port
is opened, when it comes back, or when the board restarts — it sends the whole display again.

A port that vanishes (USB unplugged, the board reset) is reported once through ``notify``, its
held buttons are released, and it is reopened every ``retry_seconds``; ``connected`` is False
meanwhile, and the panel loop stops the game's clock until it is back.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any

from noughts.errors import NoughtsError
from noughts.hardware import MissingLibraryError, require
from noughts.hardware.controller import ButtonEvent
from noughts.hardware.protocol import (
    PROTOCOL_VERSION,
    Hello,
    RawReading,
    Refused,
    led_command,
    parse_line,
    text_command,
    thresholds_command,
)

__all__ = ["FirmwareMismatchError", "SerialBoard", "open_pyserial"]

MAX_LINE = 256
HELLO_REPEAT = 0.5  # ask again this often while waiting for the board's hello

Opener = Callable[[str, int], Any]


class FirmwareMismatchError(NoughtsError):
    """The board runs firmware that speaks another version of the protocol."""


def open_pyserial(port: str, baud: int) -> Any:
    """Open ``port`` (a device or any pyserial URL: ``loop://``, ``socket://host:port``…)."""
    serial: Any = require("serial", "the serial backend")
    return serial.serial_for_url(port, baudrate=baud, timeout=0, write_timeout=2)


class SerialBoard:
    """The panel on a board running the project's firmware (see :mod:`noughts.hardware.protocol`)."""

    def __init__(self, port: str, *, baud: int = 57600, thresholds: Sequence[int] | None = None,
                 retry_seconds: float = 1.0, hello_seconds: float = 5.0,
                 notify: Callable[[str], None] | None = None, opener: Opener | None = None) -> None:
        self.port = port
        self.baud = baud
        self.thresholds = tuple(thresholds) if thresholds else None
        self.retry_seconds = retry_seconds
        self.hello_seconds = hello_seconds
        self.notify = notify or (lambda message: None)
        self._open = opener or open_pyserial
        self.board: str | None = None  # "mega" or "uno", once it has said hello
        self.garbage = 0  # lines that meant nothing, for the curious
        self.refusals: list[str] = []
        self.raw_readings: list[int] = []
        self.connections = 0
        self._serial: Any = None
        self._state = "closed"  # closed -> hello -> ready
        self._retry_at = 0.0
        self._now = 0.0
        self._hello_since = 0.0
        self._asked_at = 0.0
        self._reported: str | None = None  # the kind of trouble last reported, so it is said once
        self._buffer = b""
        self._lit: set[str] = set()
        self._rows = ["", ""]
        self._sent_mask: str | None = None
        self._sent_rows: list[str | None] = [None, None]
        self._held: set[str] = set()
        self._events: list[ButtonEvent] = []

    @property
    def connected(self) -> bool:
        return self._state == "ready"

    # --- the display ------------------------------------------------------------------------
    def set_led(self, name: str, on: bool) -> None:
        self._lit.add(name) if on else self._lit.discard(name)

    def lcd_write(self, line1: str, line2: str) -> None:
        self._rows = [line1, line2]

    def flush(self) -> None:
        """Send whatever changed since the board last heard (everything after a hello)."""
        if self._state != "ready":
            return
        commands = []
        mask = led_command(self._lit)
        if mask != self._sent_mask:
            commands.append(mask)
        for row, text in enumerate(self._rows):
            command = text_command(row, text)
            if command != self._sent_rows[row]:
                commands.append(command)
        if commands and self._send(commands):
            self._sent_mask = mask
            self._sent_rows = [text_command(row, text) for row, text in enumerate(self._rows)]

    def raw_mode(self, on: bool) -> None:
        """Uno: have the board report raw ladder readings (``raw_readings``), for calibration."""
        if self._state == "ready":
            self._send([f"A {int(on)}"])

    # --- the connection ---------------------------------------------------------------------
    def poll(self, now: float) -> list[ButtonEvent]:
        """Keep the connection going and return the button events the board sent."""
        self._now = now
        if self._state == "closed" and now >= self._retry_at:
            self._connect(now)
        if self._state != "closed":
            self._read(now)
        if self._state == "hello" and now - self._asked_at >= HELLO_REPEAT:
            if now - self._hello_since >= self.hello_seconds:
                self._lost(now, f"no hello from the panel firmware in {self.hello_seconds:g} s "
                                f"(is firmware/noughts_panel on the board, at {self.baud} baud?)", kind="hello")
            else:
                self._ask(now)
        events, self._events = self._events, []
        return events

    def _connect(self, now: float) -> None:
        try:
            self._serial = self._open(self.port, self.baud)
        except MissingLibraryError:
            raise  # a missing pyserial is a setup problem, not a port to retry
        except Exception as error:  # pyserial raises SerialException, OSError, ValueError…
            self._retry_at = now + self.retry_seconds
            self._report("open", f"cannot open the panel on {self.port}: {_reason(error)}; "
                                 f"retrying every {self.retry_seconds:g} s")
            return
        self._state = "hello"
        self._hello_since = now
        self._buffer = b""
        self._ask(now)

    def _ask(self, now: float) -> None:
        self._asked_at = now
        self._send(["", "?"])  # the empty line ends any half line the board was holding

    def _send(self, commands: list[str]) -> bool:
        try:
            self._serial.write(("\n".join(commands) + "\n").encode("ascii"))
        except Exception as error:
            self._lost(self._now, _reason(error))
            return False
        return True

    def _read(self, now: float) -> None:
        try:
            data = self._serial.read(4096)
        except Exception as error:
            self._lost(now, _reason(error))
            return
        if not data:
            return
        self._buffer += data
        *lines, self._buffer = self._buffer.replace(b"\r", b"\n").split(b"\n")
        if len(self._buffer) > MAX_LINE:  # no newline in sight: noise, not a line
            self._buffer = b""
            self.garbage += 1
        for line in lines:
            if line.strip():
                self._line(line, now)
            if self._state == "closed":
                return

    def _line(self, line: bytes, now: float) -> None:
        message = parse_line(line)
        if isinstance(message, Hello):
            self._hello(message, now)
        elif self._state != "ready":
            pass  # before the hello, lines are left over from an earlier session
        elif isinstance(message, ButtonEvent):
            self._held.add(message.button) if message.pressed else self._held.discard(message.button)
            self._events.append(message)
        elif isinstance(message, RawReading):
            self.raw_readings.append(message.value)
        elif isinstance(message, Refused):
            self.refusals.append(message.message)
            self.notify(f"the panel refused a command: {message.message}")
        else:
            self.garbage += 1

    def _hello(self, hello: Hello, now: float) -> None:
        if hello.version != PROTOCOL_VERSION:
            self.close()
            raise FirmwareMismatchError(
                f"the panel on {self.port} runs firmware for protocol {hello.version}, and this noughts "
                f"speaks protocol {PROTOCOL_VERSION}: flash firmware/noughts_panel from this version")
        self._release_all()  # a board that (re)starts holds nothing we know of yet
        self.board = hello.board
        if self._state != "ready":
            self.connections += 1
            self.notify(f"connected to the {hello.board} on {self.port}")
        self._state = "ready"
        self._reported = None
        self._sent_mask = None
        self._sent_rows = [None, None]
        if self.thresholds and hello.board == "uno":
            self._send([thresholds_command(self.thresholds)])
        self.flush()

    def _release_all(self) -> None:
        for button in sorted(self._held):
            self._events.append(ButtonEvent(button, False))
        self._held.clear()

    def _lost(self, now: float, reason: str, kind: str = "lost") -> None:
        self._drop()
        self._release_all()
        self._retry_at = now + self.retry_seconds
        self._report(kind, f"lost the panel on {self.port}: {reason}; retrying every {self.retry_seconds:g} s "
                           "(the game waits)")

    def _report(self, kind: str, message: str) -> None:
        if kind != self._reported:
            self.notify(message)
            self._reported = kind

    def _drop(self) -> None:
        if self._serial is not None:
            with contextlib.suppress(Exception):  # closing a port that is already gone
                self._serial.close()
        self._serial = None
        self._state = "closed"

    def close(self) -> None:
        self._drop()


def _reason(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return text[:200]
