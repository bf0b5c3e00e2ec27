"""The 16×2 character LCD: RPLCD for a real HD44780 (I2C backpack or GPIO), or a fake.

A display is anything with ``show(line1, line2)`` and ``close()``. :class:`RplcdDisplay` rewrites
only the rows that changed, each padded to 16 characters so a shorter text leaves nothing behind.
"""

from __future__ import annotations

from typing import Any, Protocol

from noughts.errors import NoughtsError
from noughts.hardware import require
from noughts.hardware.config import LcdConfig

__all__ = ["LCD_COLUMNS", "LcdDisplay", "RplcdDisplay", "open_lcd"]

LCD_COLUMNS = 16


class LcdDisplay(Protocol):
    def show(self, line1: str, line2: str) -> None: ...

    def close(self) -> None: ...


def _fit(text: str) -> str:
    # The HD44780's character ROM has ASCII; anything else would show as a stray glyph.
    ascii_text = "".join(c if " " <= c <= "~" else "?" for c in text)
    return ascii_text[:LCD_COLUMNS].ljust(LCD_COLUMNS)


class RplcdDisplay:
    """An RPLCD ``CharLCD`` (any of its interfaces) behind the panel's two-line interface."""

    def __init__(self, lcd: Any) -> None:
        self._lcd = lcd
        self._rows: list[str | None] = [None, None]
        lcd.clear()

    def show(self, line1: str, line2: str) -> None:
        for row, text in enumerate((line1, line2)):
            padded = _fit(text)
            if self._rows[row] != padded:
                self._lcd.cursor_pos = (row, 0)
                self._lcd.write_string(padded)
                self._rows[row] = padded

    def close(self) -> None:
        self._lcd.close(clear=True)


def open_lcd(config: LcdConfig) -> RplcdDisplay | None:
    """The LCD the configuration describes, or None when ``kind = "none"``."""
    if config.kind == "none":
        return None
    try:
        if config.kind == "i2c":
            i2c: Any = require("RPLCD.i2c", "the I2C LCD")
            lcd = i2c.CharLCD(i2c_expander=config.expander, address=config.address, port=config.bus,
                              cols=LCD_COLUMNS, rows=2, auto_linebreaks=False)
        else:
            gpio_lcd: Any = require("RPLCD.gpio", "the GPIO LCD")
            rpi_gpio: Any = require("RPi.GPIO", "the GPIO LCD",
                                    "pip install RPi.GPIO (or apt-get install python3-rpi.gpio)")
            lcd = gpio_lcd.CharLCD(numbering_mode=rpi_gpio.BCM, pin_rs=config.rs, pin_e=config.e, pin_rw=None,
                                   pins_data=list(config.data), cols=LCD_COLUMNS, rows=2, auto_linebreaks=False)
    except (OSError, RuntimeError) as error:
        where = f"on I2C bus {config.bus} at {config.address:#04x}" if config.kind == "i2c" else "on its GPIO pins"
        raise NoughtsError(f"cannot open the LCD {where}: {error} (or set kind = \"none\" in [lcd])") from None
    return RplcdDisplay(lcd)
