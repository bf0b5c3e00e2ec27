"""The line protocol between the host and ``firmware/noughts_panel`` (version 1).

ASCII lines ending in ``\\n`` (the board sends ``\\r\\n``; either is accepted). The board only
does I/O; the host sends the whole display and the board reports the buttons, debounced.

Host to board::

    ?                  who are you: the board answers with its hello, then P lines for held inputs
    L hhhhh            the LED mask, hex: bits 0-8 green cells 1-9, 9-17 red, 18 green winner, 19 red winner
    T r text           LCD row r (0 or 1): up to 16 characters, padded with spaces by the board
    K t1 t2 … t9       Uno: the ladder thresholds, falling, 1-1022
    A 1 | A 0          Uno: raw ladder readings every 100 ms on or off (calibration)

Board to host::

    NOUGHTS 1 uno      hello: protocol version and board (mega or uno), at start-up and on ?
    P id | U id        input pressed or released: id 1-9 a cell, R reset, S the two-person switch
    A nnn              a raw ladder reading (0-1023)
    E message          the last command was refused

Anything else the host ignores (boot noise, garbage on the line).

>>> led_command({"green5", "red1", "red_win"})
'L 80210'
>>> parse_line(b"P 5\\r\\n"), parse_line(b"NOUGHTS 1 uno"), parse_line(b"\\x00garbage")
(ButtonEvent(button='5', pressed=True), Hello(version=1, board='uno'), None)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from noughts.hardware.controller import LED_NAMES, ButtonEvent

__all__ = [
    "BUTTON_IDS", "Hello", "LED_BITS", "PROTOCOL_VERSION", "RawReading", "Refused", "led_command",
    "parse_line", "text_command", "thresholds_command",
]

PROTOCOL_VERSION = 1
LED_BITS = {name: bit for bit, name in enumerate(LED_NAMES)}
BUTTON_IDS = {**{str(i): str(i) for i in range(1, 10)}, "R": "reset", "S": "switch"}
MAX_TEXT = 16


@dataclass(frozen=True)
class Hello:
    version: int
    board: str


@dataclass(frozen=True)
class RawReading:
    value: int


@dataclass(frozen=True)
class Refused:
    message: str


Message = Hello | ButtonEvent | RawReading | Refused


def led_mask(lit: Iterable[str]) -> int:
    return sum(1 << LED_BITS[name] for name in lit)


def led_command(lit: Iterable[str]) -> str:
    return f"L {led_mask(lit):05X}"


def text_command(row: int, text: str) -> str:
    # The board stores at most 16 printable ASCII characters a row; a newline would end the command.
    clean = "".join(c if " " <= c <= "~" else "?" for c in text)[:MAX_TEXT].rstrip()
    return f"T {row} {clean}".rstrip() if clean else f"T {row}"


def thresholds_command(thresholds: Sequence[int]) -> str:
    return "K " + " ".join(str(t) for t in thresholds)


def parse_line(raw: bytes) -> Message | None:
    """One line from the board, or None for a line that means nothing."""
    try:
        line = raw.decode("ascii").strip()
    except UnicodeDecodeError:
        return None
    words = line.split()
    if len(words) == 3 and words[0] == "NOUGHTS" and words[1].isdigit() and words[2] in ("mega", "uno"):
        return Hello(int(words[1]), words[2])
    if len(words) == 2 and words[0] in ("P", "U") and words[1] in BUTTON_IDS:
        return ButtonEvent(BUTTON_IDS[words[1]], words[0] == "P")
    if len(words) == 2 and words[0] == "A" and words[1].isdigit() and int(words[1]) <= 1023:
        return RawReading(int(words[1]))
    if words[:1] == ["E"] and len(words) > 1:
        return Refused(line[2:].strip())
    return None
