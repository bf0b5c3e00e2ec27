"""The gpio backend: the panel on a Raspberry Pi's pins, through gpiozero.

LEDs are wired one per pin (``leds = "direct"``, an ``LEDBoard``, the seed's Mega wiring) or
Charlieplexed (``leds = "charlieplex"``, the seed's Uno wiring); the cell buttons one per pin
(``buttons = "direct"``) or on the seed's resistor ladder read through an MCP3008
(``buttons = "ladder"``). Reset and the two-person switch are buttons on pins too.

Buttons are sampled every ``sample_ms`` from the panel loop and debounced here (a level must hold
for ``debounce_ms``), the same way on every pin factory, mock pins included; presses come out in
cell order. They are gpiozero ``DigitalInputDevice`` inputs, not ``Button`` devices: a ``Button``
keeps a thread for its ``when_held`` event that nothing here uses, and closing one waits for that
thread, up to its one-second hold time. Pass ``pin_factory`` (e.g. gpiozero's ``MockFactory``) to
run anywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from noughts.errors import NoughtsError, SettingError
from noughts.hardware import require
from noughts.hardware.boardio import Debounced, Ladder
from noughts.hardware.charlieplex import Charlieplexer
from noughts.hardware.config import GpioConfig
from noughts.hardware.controller import ButtonEvent
from noughts.hardware.lcd import LcdDisplay

__all__ = ["GpioBoard"]


class GpioBoard:
    """The panel's LEDs, buttons and LCD on gpiozero pins (see the module docstring)."""

    connected = True  # pins do not come and go

    def __init__(self, config: GpioConfig, thresholds: Sequence[int], *, pin_factory: Any = None,
                 lcd: LcdDisplay | None = None, refresh: bool = True) -> None:
        gpiozero: Any = require("gpiozero", "the gpio backend")
        self.config = config
        self.lcd = lcd
        self._devices: list[Any] = []
        self._leds: dict[str, Any] = {}
        self._numbers: dict[str, int] = {}
        self.charlieplex: Charlieplexer | None = None
        self._cells: Any = None
        self.adc: Any = None
        self.ladder = Ladder(thresholds)
        hold = config.debounce_ms / 1000
        self._sample = config.sample_ms / 1000
        self._last_sample: float | None = None
        self._cell_inputs = [Debounced(False, hold) for _ in range(9)]
        self._ladder_input = Debounced(0, hold)
        self._reset_input = Debounced(False, hold)
        self._switch_input = Debounced(False, hold)
        try:
            if config.leds == "direct":
                pins = config.led_pins
                board = gpiozero.LEDBoard(*pins.values(), pin_factory=pin_factory)
                self._devices.append(board)
                self._leds = dict(zip(pins, board.leds, strict=True))
            else:
                self.charlieplex = Charlieplexer(config.charlieplex.pins, pin_factory=pin_factory,
                                                 slot=config.charlieplex.slot_ms / 1000)
                self._numbers = config.charlieplex.led_numbers
                if refresh:
                    self.charlieplex.start()
            if config.buttons == "direct":
                self._cells = []
                for pin in config.cells:
                    self._cells.append(self._button(gpiozero, pin, pin_factory))
            else:
                if pin_factory is not None and gpiozero.Device.pin_factory is None:
                    # gpiozero 2.0's software SPI bus asks for the default factory even when given
                    # one, which fails off a Pi: let the given factory be the default.
                    gpiozero.Device.pin_factory = pin_factory
                self.adc = gpiozero.MCP3008(channel=config.adc_channel, pin_factory=pin_factory)
                self._devices.append(self.adc)
            self._reset = self._button(gpiozero, config.reset, pin_factory)
            self._switch = None
            if config.switch:
                self._switch = self._button(gpiozero, config.switch, pin_factory)
        except gpiozero.BadPinFactory:
            self.close()
            raise SettingError("gpiozero found no way to drive GPIO pins here: on a Raspberry Pi install "
                               "lgpio or RPi.GPIO; anywhere else choose the simulator", setting="backend",
                               instead=("sim",)) from None
        except gpiozero.GPIOZeroError as error:
            self.close()
            raise NoughtsError(f"cannot set up the panel's pins: {error}") from None
        except BaseException:
            self.close()
            raise

    def _button(self, gpiozero: Any, pin: str, pin_factory: Any) -> Any:
        """A button's input: active while pressed, whichever way it is wired (pull_up)."""
        device = gpiozero.DigitalInputDevice(pin, pull_up=self.config.pull_up, pin_factory=pin_factory)
        self._devices.append(device)
        return device

    # --- output ----------------------------------------------------------------------------
    def set_led(self, name: str, on: bool) -> None:
        if self.charlieplex is not None:
            number = self._numbers.get(name)
            if number is not None:
                self.charlieplex.set(number, on)
        else:
            led = self._leds.get(name)
            if led is not None:  # LEDs the build leaves out are simply not lit
                led.value = on

    def lcd_write(self, line1: str, line2: str) -> None:
        if self.lcd is not None:
            self.lcd.show(line1, line2)

    def flush(self) -> None:
        """Pins change at once; nothing is buffered."""

    # --- input -----------------------------------------------------------------------------
    def read_ladder(self) -> int:
        """The ladder's raw reading (0-1023), for calibration."""
        if self.adc is None:
            raise NoughtsError('this build has no resistor ladder (gpio.buttons = "direct")')
        return int(self.adc.raw_value)

    def poll(self, now: float) -> list[ButtonEvent]:
        """Sample the buttons (at most every ``sample_ms``) and return the debounced changes."""
        if self._last_sample is not None and now - self._last_sample < self._sample - 1e-9:
            return []
        self._last_sample = now
        events: list[ButtonEvent] = []
        if self._cells is not None:
            for index, level in enumerate(cell.value for cell in self._cells):
                change = self._cell_inputs[index].update(bool(level), now)
                if change:
                    events.append(ButtonEvent(str(index + 1), change[1]))
        else:
            ladder_change = self._ladder_input.update(self.ladder.cell(self.read_ladder()), now)
            if ladder_change:  # a ladder carries one cell at a time: release, then press
                old, new = ladder_change
                if old:
                    events.append(ButtonEvent(str(old), False))
                if new:
                    events.append(ButtonEvent(str(new), True))
        change = self._reset_input.update(bool(self._reset.is_active), now)
        if change:
            events.append(ButtonEvent("reset", change[1]))
        if self._switch is not None:
            change = self._switch_input.update(bool(self._switch.is_active), now)
            if change:
                events.append(ButtonEvent("switch", change[1]))
        return events

    def close(self) -> None:
        if self.charlieplex is not None:
            self.charlieplex.close()
        for device in reversed(self._devices):
            device.close()
        self._devices = []
        if self.lcd is not None:
            self.lcd.close()
