"""The panel's configuration: pin maps, game settings and the serial port, from a TOML file.

A file names a ``build`` (``mega`` or ``uno``) and overrides any of that build's defaults
(:mod:`noughts.hardware.defaults`); unknown keys are refused with the keys that are allowed, so a
typo never passes silently.

>>> config = load_config(text='build = "uno"\\n[game]\\nthinking_seconds = 1.5')
>>> config.build, config.gpio.leds, config.game.thinking_seconds, config.game.opponent
('uno', 'charlieplex', 1.5, 'medium')
>>> load_config(text='[game]\\nopponent = "arduino"').game.opponent  # the seed's own player, one setting away
'arduino'
>>> load_config(text='[game]\\nthinkin_seconds = 1')  # doctest: +ELLIPSIS
Traceback (most recent call last):
  ...
noughts.hardware.config.ConfigError: the panel configuration has no setting game.thinkin_seconds; [game] takes: ...
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from noughts.board import Board
from noughts.errors import NoughtsError
from noughts.hardware.defaults import BUILDS, DEFAULT_TOML
from noughts.match import FIRST_RULES
from noughts.paths import config_path, read_config
from noughts.text import check_name

__all__ = [
    "CONFIG_ENV", "CharlieplexConfig", "ConfigError", "FIRSTS", "GameConfig", "GpioConfig", "LcdConfig",
    "PanelConfig", "SerialConfig", "default_config_path", "first_setting", "load_config", "save_thresholds",
]

CONFIG_ENV = "NOUGHTS_PANEL_CONFIG"
FIRSTS = tuple(FIRST_RULES)  # the match's words for who starts: me, computer, alternate, loser, random
OLD_FIRSTS = {"person": "me"}  # the panel's earlier word, still accepted in files and on the command line


class ConfigError(NoughtsError):
    """A panel configuration file that cannot be used, with the reason."""


@dataclass(frozen=True)
class GameConfig:
    opponents: tuple[str, str, str]  # registry names
    opponent: str
    first: str  # one of FIRSTS
    thinking_seconds: float
    flash: bool
    flash_step_seconds: float
    match_games: int  # a match is best of this many games
    message_seconds: float
    player: str | None  # None: the login name, else You (as noughts play)


def first_setting(value: object, name: str = "game.first") -> str:
    """Who starts, as one of FIRSTS: the match's words, or the panel's older ``person`` (= me).

    >>> first_setting("person"), first_setting("Loser")
    ('me', 'loser')
    """
    word = value.strip().lower() if isinstance(value, str) else None
    if word is not None and (word in FIRSTS or word in OLD_FIRSTS):
        return OLD_FIRSTS.get(word, word)
    raise ConfigError(f"{name} must be one of {', '.join(FIRSTS)} (person is the older word for me), "
                      f"not {value!r:.40}")


@dataclass(frozen=True)
class SerialConfig:
    port: str
    baud: int
    retry_seconds: float
    hello_seconds: float


@dataclass(frozen=True)
class CharlieplexConfig:
    pins: tuple[str, ...]
    green: tuple[int, ...]
    red: tuple[int, ...]
    green_win: int | None
    red_win: int | None
    slot_ms: float

    @property
    def led_numbers(self) -> dict[str, int]:
        """LED name (``green1`` … ``red_win``) → Charlieplex LED number, for the fitted LEDs."""
        numbers = {f"green{i + 1}": n for i, n in enumerate(self.green)}
        numbers.update({f"red{i + 1}": n for i, n in enumerate(self.red)})
        if self.green_win is not None:
            numbers["green_win"] = self.green_win
        if self.red_win is not None:
            numbers["red_win"] = self.red_win
        return numbers


@dataclass(frozen=True)
class GpioConfig:
    leds: str
    buttons: str
    green: tuple[str, ...]
    red: tuple[str, ...]
    green_win: str | None
    red_win: str | None
    cells: tuple[str, ...]
    reset: str
    switch: str | None
    pull_up: bool
    debounce_ms: float
    sample_ms: float
    charlieplex: CharlieplexConfig
    adc_channel: int

    @property
    def led_pins(self) -> dict[str, str]:
        """LED name → pin, for the directly wired LEDs that are fitted."""
        pins = {f"green{i + 1}": p for i, p in enumerate(self.green)}
        pins.update({f"red{i + 1}": p for i, p in enumerate(self.red)})
        if self.green_win:
            pins["green_win"] = self.green_win
        if self.red_win:
            pins["red_win"] = self.red_win
        return pins


@dataclass(frozen=True)
class LcdConfig:
    kind: str
    expander: str
    address: int
    bus: int
    rs: int
    e: int
    data: tuple[int, int, int, int]


@dataclass(frozen=True)
class PanelConfig:
    build: str
    game: GameConfig
    serial: SerialConfig
    gpio: GpioConfig
    lcd: LcdConfig
    thresholds: tuple[int, ...]
    path: Path | None = None


def default_config_path(environ: Mapping[str, str] | None = None) -> Path:
    """``$NOUGHTS_PANEL_CONFIG``, else ``$XDG_CONFIG_HOME/noughts/panel.toml``, else ``~/.config/…``."""
    return config_path("panel.toml", CONFIG_ENV, environ)


# --- parsing --------------------------------------------------------------------------------

_SECTIONS: dict[str, tuple[str, ...]] = {
    "": ("build", "game", "serial", "gpio", "lcd", "ladder"),
    "game": ("opponents", "opponent", "first", "thinking_seconds", "flash", "flash_step_seconds",
             "match_games", "message_seconds", "player"),
    "serial": ("port", "baud", "retry_seconds", "hello_seconds"),
    "gpio": ("leds", "buttons", "green", "red", "green_win", "red_win", "cells", "reset", "switch",
             "pull_up", "debounce_ms", "sample_ms", "charlieplex", "adc"),
    "gpio.charlieplex": ("pins", "green", "red", "green_win", "red_win", "slot_ms"),
    "gpio.adc": ("channel",),
    "lcd": ("kind", "expander", "address", "bus", "rs", "e", "data"),
    "ladder": ("thresholds",),
}


def _merge(base: dict[str, Any], override: Mapping[str, Any], section: str = "") -> dict[str, Any]:
    allowed = _SECTIONS[section]
    merged = dict(base)
    for key, value in override.items():
        name = f"{section}.{key}" if section else key
        if key not in allowed:
            where = f"[{section}]" if section else "the top level"
            raise ConfigError(f"the panel configuration has no setting {name}; {where} takes: {', '.join(allowed)}")
        if name in _SECTIONS:
            if not isinstance(value, dict):
                raise ConfigError(f"{name} must be a table ([{name}]), not {value!r:.40}")
            merged[key] = _merge(base.get(key, {}), value, name)
        else:
            merged[key] = value
    return merged


class _Reader:
    """Typed access to one table, with messages that name the setting."""

    def __init__(self, table: Mapping[str, Any], section: str) -> None:
        self.table, self.section = table, section

    def _fail(self, key: str, wanted: str) -> ConfigError:
        return ConfigError(f"{self.section}.{key} must be {wanted}, not {self.table.get(key)!r:.60}")

    def number(self, key: str, low: float, high: float) -> float:
        value = self.table[key]
        if type(value) not in (int, float) or not low <= value <= high:
            raise self._fail(key, f"a number from {low:g} to {high:g}")
        return float(value)

    def integer(self, key: str, low: int, high: int) -> int:
        value = self.table[key]
        if type(value) is not int or not low <= value <= high:
            raise self._fail(key, f"a whole number from {low} to {high}")
        return value

    def flag(self, key: str) -> bool:
        value = self.table[key]
        if type(value) is not bool:
            raise self._fail(key, "true or false")
        return value

    def text(self, key: str, choices: tuple[str, ...] | None = None) -> str:
        value = self.table[key]
        if not isinstance(value, str) or (choices is not None and value not in choices):
            raise self._fail(key, "one of " + ", ".join(choices) if choices else "text")
        return value

    def pin(self, key: str, optional: bool = False) -> str | None:
        return _pin(self.table[key], f"{self.section}.{key}", optional)

    def pins(self, key: str, count: int | None) -> tuple[str, ...]:
        value = self.table[key]
        if not isinstance(value, list) or (count is not None and len(value) not in (0, count)):
            raise self._fail(key, f"a list of {count} pins (or [] when not fitted)" if count else "a list of pins")
        return tuple(_pin(v, f"{self.section}.{key}", False) or "" for v in value)

    def integers(self, key: str, count: int, low: int, high: int) -> tuple[int, ...]:
        value = self.table[key]
        if (not isinstance(value, list) or len(value) != count
                or not all(type(v) is int and low <= v <= high for v in value)):
            raise self._fail(key, f"a list of {count} whole numbers from {low} to {high}")
        return tuple(value)


def _pin(value: object, name: str, optional: bool) -> str | None:
    if type(value) is int and 0 <= value <= 53:
        return f"GPIO{value}"
    if isinstance(value, str) and value.strip():
        return value.strip()
    if optional and value == "":
        return None
    raise ConfigError(f"{name} must be a pin: a BCM number like 17 or a gpiozero name like \"GPIO17\""
                      + (" (\"\" when not fitted)" if optional else "") + f", not {value!r:.40}")


def _build(data: Mapping[str, Any], path: Path | None) -> PanelConfig:
    from noughts import players

    game = _Reader(data["game"], "game")
    names = players.names()

    def computer(value: object) -> str | None:
        try:
            return players.canonical(value) if isinstance(value, str) else None  # older names too
        except NoughtsError:
            return None

    listed = data["game"]["opponents"]
    opponents = [computer(o) for o in listed] if isinstance(listed, list) else []
    if len(opponents) != 3 or None in opponents:
        raise ConfigError(f"game.opponents must list three computer players (from {', '.join(names)}), "
                          f"not {listed!r:.80}")
    # "" is the opponent every front end offers first (players.default_for); the panel is 3×3
    named = data["game"]["opponent"]
    opponent = players.default_for(Board()) if named == "" else computer(named)
    if opponent is None:
        raise ConfigError(f"game.opponent must be one of {', '.join(names)}, not {data['game']['opponent']!r:.40}")
    player = game.text("player")
    try:
        name = check_name(player, "game.player") if player.strip() else None
    except NoughtsError as error:
        raise ConfigError(str(error)) from None
    game_config = GameConfig(
        opponents=(opponents[0] or "", opponents[1] or "", opponents[2] or ""),
        opponent=opponent,
        first=first_setting(data["game"]["first"]),
        thinking_seconds=game.number("thinking_seconds", 0, 60),
        flash=game.flag("flash"),
        flash_step_seconds=game.number("flash_step_seconds", 0.001, 5),
        match_games=game.integer("match_games", 1, 99),
        message_seconds=game.number("message_seconds", 0.1, 60),
        player=name,
    )
    serial = _Reader(data["serial"], "serial")
    serial_config = SerialConfig(
        port=serial.text("port"), baud=serial.integer("baud", 300, 2_000_000),
        retry_seconds=serial.number("retry_seconds", 0.05, 600), hello_seconds=serial.number("hello_seconds", 0.1, 60),
    )
    gpio = _Reader(data["gpio"], "gpio")
    charlie = _Reader(data["gpio"]["charlieplex"], "gpio.charlieplex")
    charlie_pins = charlie.pins("pins", None)
    if not 2 <= len(charlie_pins) <= 8:
        raise ConfigError(f"gpio.charlieplex.pins must list 2 to 8 pins, not {len(charlie_pins)}")
    most = len(charlie_pins) * (len(charlie_pins) - 1) - 1

    def led_number(key: str) -> int | None:
        value = data["gpio"]["charlieplex"][key]
        return None if value == "" else charlie.integer(key, 0, most)

    charlie_config = CharlieplexConfig(
        pins=charlie_pins, green=charlie.integers("green", 9, 0, most), red=charlie.integers("red", 9, 0, most),
        green_win=led_number("green_win"), red_win=led_number("red_win"), slot_ms=charlie.number("slot_ms", 0.1, 50),
    )
    numbers = list(charlie_config.led_numbers.values())
    if len(set(numbers)) != len(numbers):
        raise ConfigError("gpio.charlieplex gives two LEDs the same number")
    gpio_config = GpioConfig(
        leds=gpio.text("leds", ("direct", "charlieplex")), buttons=gpio.text("buttons", ("direct", "ladder")),
        green=gpio.pins("green", 9), red=gpio.pins("red", 9),
        green_win=gpio.pin("green_win", optional=True), red_win=gpio.pin("red_win", optional=True),
        cells=gpio.pins("cells", 9), reset=gpio.pin("reset") or "", switch=gpio.pin("switch", optional=True),
        pull_up=gpio.flag("pull_up"), debounce_ms=gpio.number("debounce_ms", 0, 1000),
        sample_ms=gpio.number("sample_ms", 1, 100), charlieplex=charlie_config,
        adc_channel=_Reader(data["gpio"]["adc"], "gpio.adc").integer("channel", 0, 7),
    )
    lcd = _Reader(data["lcd"], "lcd")
    data_pins = lcd.integers("data", 4, 0, 27)
    lcd_config = LcdConfig(
        kind=lcd.text("kind", ("none", "i2c", "gpio")),
        expander=lcd.text("expander", ("PCF8574", "MCP23008", "MCP23017")),
        address=lcd.integer("address", 0, 0x7F), bus=lcd.integer("bus", 0, 99), rs=lcd.integer("rs", 0, 27),
        e=lcd.integer("e", 0, 27), data=(data_pins[0], data_pins[1], data_pins[2], data_pins[3]),
    )
    thresholds = _Reader(data["ladder"], "ladder").integers("thresholds", 9, 1, 1022)
    if any(a <= b for a, b in pairwise(thresholds)):
        raise ConfigError(f"ladder.thresholds must fall from cell 1 to cell 9, not {list(thresholds)}")
    _check_wiring(gpio_config, lcd_config)
    return PanelConfig(data["build"], game_config, serial_config, gpio_config, lcd_config, thresholds, path)


def _check_wiring(gpio: GpioConfig, lcd: LcdConfig) -> None:
    """Every part the build uses has its pins, and no pin is used twice."""
    used: dict[str, str] = {}

    def claim(pin: str | None, what: str) -> None:
        if not pin:
            return
        key = pin.upper().removeprefix("BCM").removeprefix("GPIO")
        if key in used:
            raise ConfigError(f"pin {pin} is given to both {used[key]} and {what}")
        used[key] = what

    if gpio.leds == "direct":
        if len(gpio.green) != 9 or len(gpio.red) != 9:
            raise ConfigError('gpio.leds = "direct" needs nine pins in gpio.green and in gpio.red')
        for name, pin in gpio.led_pins.items():
            claim(pin, f"LED {name}")
    else:
        for pin in gpio.charlieplex.pins:
            claim(pin, "the Charlieplex lines")
    if gpio.buttons == "direct":
        if len(gpio.cells) != 9:
            raise ConfigError('gpio.buttons = "direct" needs nine pins in gpio.cells')
        for i, pin in enumerate(gpio.cells):
            claim(pin, f"the button of cell {i + 1}")
    else:
        for pin in ("GPIO8", "GPIO9", "GPIO10", "GPIO11"):
            claim(pin, "the MCP3008 on SPI0")
    claim(gpio.reset, "the reset button")
    claim(gpio.switch, "the two-person switch")
    if lcd.kind == "i2c":
        claim("GPIO2", "the LCD's I2C bus")
        claim("GPIO3", "the LCD's I2C bus")
    elif lcd.kind == "gpio":
        for role, number in zip(("RS", "E", "D4", "D5", "D6", "D7"), (lcd.rs, lcd.e, *lcd.data), strict=True):
            claim(f"GPIO{number}", f"the LCD's {role}")


def load_config(path: str | os.PathLike[str] | None = None, *, build: str | None = None,
                text: str | None = None) -> PanelConfig:
    """The configuration in ``path`` (or ``text``), over the defaults of its build.

    ``build`` overrides the file's ``build``; with neither file nor text, the build's defaults.
    """
    source, user = read_config(path, text, "the panel configuration", ConfigError)
    chosen = build or user.get("build", "mega")
    if chosen not in BUILDS:
        raise ConfigError(f"build must be one of {', '.join(BUILDS)}, not {chosen!r:.40}")
    data = _merge(tomllib.loads(DEFAULT_TOML[chosen]), user)
    data["build"] = chosen
    return _build(data, source)


def save_thresholds(path: str | os.PathLike[str], thresholds: list[int], *, build: str = "uno",
                    write: Callable[[Path, str], None] | None = None) -> Path:
    """Record ladder thresholds in the config file at ``path``, keeping everything else in it.

    The file is created (naming ``build``) if missing. Only the ``thresholds`` line of the
    ``[ladder]`` table is replaced, or the table is added; the result must still load.
    """
    target = Path(path).expanduser()
    try:
        text = target.read_text(encoding="utf-8") if target.exists() else f'build = "{build}"\n'
    except OSError as error:
        raise ConfigError(f"cannot read {target}: {error.strerror or error}") from None
    line = f"thresholds = [{', '.join(str(t) for t in thresholds)}]"
    table = re.search(r"(?m)^[ \t]*\[ladder\][ \t]*(#.*)?$", text)
    if table is None:
        text = text.rstrip("\n") + f"\n\n[ladder]\n{line}\n"
    else:
        rest = text[table.end():]
        next_table = re.search(r"(?m)^[ \t]*\[", rest)
        body = rest[:next_table.start()] if next_table else rest
        existing = re.search(r"(?m)^[ \t]*thresholds[ \t]*=.*$", body)
        body = body[:existing.start()] + line + body[existing.end():] if existing else "\n" + line + body
        text = text[:table.end()] + body + (rest[next_table.start():] if next_table else "")
    loaded = load_config(text=text)  # refuse to write a file that would not load
    if list(loaded.thresholds) != list(thresholds):
        raise ConfigError(f"could not record the thresholds in {target}: a multi-line thresholds setting?")
    if write is not None:
        write(target, text)
    else:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        except OSError as error:
            raise ConfigError(f"cannot write {target}: {error.strerror or error}") from None
    return target
