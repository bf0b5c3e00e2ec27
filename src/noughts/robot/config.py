"""The robot's configuration: the machine, the backends' connections and pens, the sensors'
calibration and the game's defaults, from a TOML file over built-in defaults.

Unknown settings are refused with the ones that are allowed, and every value is checked against
the type of its default, so a typo never passes silently.

>>> config = load_config(text='backend = "grbl"\\n[grbl]\\nport = "/dev/ttyUSB0"\\n[machine]\\ntravel = [300, 200]')
>>> config.backend, config.section("grbl")["port"], config.machine().travel
('grbl', '/dev/ttyUSB0', (300.0, 200.0))
>>> load_config(text='[grbl]\\nprot = "x"')  # doctest: +ELLIPSIS
Traceback (most recent call last):
  ...
noughts.robot.config.ConfigError: the robot configuration has no setting grbl.prot; [grbl] takes: port, baud, ...
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from noughts.paths import config_path, read_config
from noughts.sheet.geometry import Machine, RobotError

__all__ = ["CONFIG_ENV", "DEFAULT_TOML", "ConfigError", "RobotConfig", "default_config_path", "load_config",
           "save_setting"]

CONFIG_ENV = "NOUGHTS_ROBOT_CONFIG"

DEFAULT_TOML = """\
# noughts robot configuration (docs/robot.md). Every setting is optional.
backend = "sim"        # sim | grbl | ebb | ev3
sense = "keyboard"     # keyboard | camera | light

[machine]              # millimetres, sheet coordinates: x right, y down from the sheet's top-left
travel = [200.0, 200.0]
sheet_origin = [0.0, 0.0]   # where the sheet's top-left corner is, in the machine's coordinates
y_down = true               # the machine's y grows down the sheet
draw_speed = 25.0           # mm/s with the pen down
travel_speed = 80.0         # mm/s with the pen up
pen_dwell = 0.15            # seconds to wait after the pen goes up or down
arcs = false                # draw each O as one circle (G2/G3) where the machine can

[game]
opponent = ""          # empty: the seed's menu (easy, medium, hard)
first = "alternate"    # me | computer | alternate | loser | random
marks = "shapes"       # shapes (real X and O) | dot (the seed's dot)

[grbl]
port = "/dev/ttyUSB0"
baud = 115200
homing = true          # $H at the start (needs limit switches); false: go to X0 Y0
lift = "servo"         # servo (M3 S… / M5) | z
down_s = 1000.0        # servo: the S that puts the pen on the paper
z_down = -1.0          # z: pen on the paper
z_up = 2.0             # z: pen lifted

[ebb]
port = "/dev/ttyACM0"
pen_up = 60.0          # servo heights and speeds in percent, as the AxiDraw software has them
pen_down = 30.0
raise_rate = 75.0
lower_rate = 50.0

[ev3]                  # the seed's gantry; every setting of docs/robot.md's EV3 table may go here
host = "ev3dev.local"
port = 4455

[light]                # `noughts robot calibrate` measures white and black
white = 72.0           # reflected light (percent) over bare paper
black = 6.0            # over solid ink
threshold = 25.0       # shade mode: a reading below this is a mark (the seed's 25)
mode = "sweep"         # sweep (tells X from O) | shade (the seed: one reading, shaded squares)

[camera]
source = "0"           # a device number, a video file, or an image sequence like shots/photo_%03d.png
"""

_CHOICES = {("", "backend"): ("sim", "grbl", "ebb", "ev3"), ("", "sense"): ("keyboard", "camera", "light"),
            ("game", "marks"): ("shapes", "dot"), ("grbl", "lift"): ("servo", "z"),
            ("light", "mode"): ("sweep", "shade")}


_OPEN_SECTIONS = ("ev3",)  # tables whose other keys the backend checks itself

# Each number's range (inclusive; None: open on that side). A number not named here is only checked to be
# finite and within ±_LARGEST, so nan, inf and 1e300 never reach a machine.
_LARGEST = 1e6
_RANGES: dict[tuple[str, str], tuple[float, float]] = {
    ("machine", "travel"): (0.1, 10_000.0), ("machine", "sheet_origin"): (-10_000.0, 10_000.0),
    ("machine", "draw_speed"): (0.1, 10_000.0), ("machine", "travel_speed"): (0.1, 10_000.0),
    ("machine", "pen_dwell"): (0.0, 60.0),
    ("grbl", "baud"): (300, 10_000_000), ("grbl", "down_s"): (0.0, 1_000_000.0),
    ("grbl", "z_down"): (-1000.0, 1000.0), ("grbl", "z_up"): (-1000.0, 1000.0),
    ("ebb", "pen_up"): (0.0, 100.0), ("ebb", "pen_down"): (0.0, 100.0), ("ebb", "raise_rate"): (0.0, 100.0),
    ("ebb", "lower_rate"): (0.0, 100.0), ("ev3", "port"): (1, 65_535),
    ("light", "white"): (0.0, 100.0), ("light", "black"): (0.0, 100.0), ("light", "threshold"): (0.0, 100.0),
}


class ConfigError(RobotError):
    """A robot configuration file that cannot be used, with the reason."""


def default_config_path(environ: Mapping[str, str] | None = None) -> Path:
    """``$NOUGHTS_ROBOT_CONFIG``, else ``$XDG_CONFIG_HOME/noughts/robot.toml``, else ``~/.config/…``."""
    return config_path("robot.toml", CONFIG_ENV, environ)


def _checked(name: str, value: Any, default: Any) -> Any:
    """``value`` if it has the default's type (a whole number does for a decimal one), else an error."""
    if isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, float):
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        value = float(value) if ok else value
    elif isinstance(default, list):
        ok = (isinstance(value, list) and len(value) == len(default)
              and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value))
        value = [float(v) for v in value] if ok else value
    else:
        ok = isinstance(value, type(default)) and not isinstance(value, bool)
    if not ok:
        kind = {bool: "true or false", float: "a number", int: "a whole number", str: "text",
                list: f"a list of {len(default) if isinstance(default, list) else 0} numbers"}[type(default)]
        raise ConfigError(f"{name} must be {kind}, not {value!r:.40}")
    return value


def _in_range(name: str, value: Any, where: tuple[str, str]) -> None:
    """Refuse a number (or a number in a list or table) that is not finite or outside its range."""
    if isinstance(value, dict):
        for key, inner in value.items():
            _in_range(f"{name}.{key}", inner, where)
    elif isinstance(value, list):
        for inner in value:
            _in_range(name, inner, where)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        low, high = _RANGES.get(where, (-_LARGEST, _LARGEST))
        if not (math.isfinite(value) and low <= value <= high):
            raise ConfigError(f"{name} must be a number from {low:.12g} to {high:.12g}, not {value!r:.40}")


def _merge(defaults: Mapping[str, Any], user: Mapping[str, Any], section: str = "") -> dict[str, Any]:
    merged = dict(defaults)
    for key, value in user.items():
        name = f"{section}.{key}" if section else key
        if section in _OPEN_SECTIONS and key not in defaults:
            _in_range(name, value, (section, key))
            merged[key] = value  # checked by the backend's own settings (Ev3Config.from_mapping)
            continue
        if key not in defaults:
            where = f"[{section}]" if section else "the top level"
            raise ConfigError(f"the robot configuration has no setting {name}; {where} takes: "
                              f"{', '.join(defaults)}")
        if isinstance(defaults[key], dict):
            if not isinstance(value, dict):
                raise ConfigError(f"{name} must be a table ([{name}]), not {value!r:.40}")
            merged[key] = _merge(defaults[key], value, name)
            continue
        merged[key] = _checked(name, value, defaults[key])
        _in_range(name, value, (section, key))  # as written: 150, not 150.0
        choices = _CHOICES.get((section, key))
        if choices is not None and merged[key] not in choices:
            raise ConfigError(f"{name} must be one of {', '.join(choices)}, not {value!r:.40}")
    return merged


@dataclass(frozen=True)
class RobotConfig:
    """A loaded configuration: ``backend``, ``sense``, and each table as a dict (``section``)."""

    data: Mapping[str, Any]
    source: Path | None = None

    @property
    def backend(self) -> str:
        return str(self.data["backend"])

    @property
    def sense(self) -> str:
        return str(self.data["sense"])

    def section(self, name: str) -> dict[str, Any]:
        return dict(self.data[name])

    def machine(self) -> Machine:
        m = self.data["machine"]
        if min(m["travel"]) <= 0 or m["draw_speed"] <= 0 or m["travel_speed"] <= 0 or m["pen_dwell"] < 0:
            raise ConfigError("the machine's travel and speeds must be above 0 (and pen_dwell 0 or more)")
        origin = m["sheet_origin"]
        return Machine(travel=(m["travel"][0], m["travel"][1]), sheet_origin=(origin[0], origin[1]), y_down=m["y_down"],
                       draw_speed=m["draw_speed"], travel_speed=m["travel_speed"],
                       pen_dwell=m["pen_dwell"], arcs=m["arcs"])

    def identity(self) -> str:
        """A short name for the machine this configuration drives: its backend and the settings that
        place and draw the sheet (not the serial port, which changes as cables are plugged in).

        >>> load_config().identity() == load_config(text='[grbl]\\nport = "COM3"').identity()
        True
        >>> load_config().identity() == load_config(text='backend = "grbl"').identity()
        False
        """
        settings = {key: value for key, value in self.section(self.backend).items() if key not in ("port", "baud")} \
            if self.backend in ("grbl", "ebb", "ev3") else {}
        machine = {} if self.backend == "ev3" else self.section("machine")  # the EV3 keeps its machine in [ev3]
        described = json.dumps({"backend": self.backend, "machine": machine, "settings": settings}, sort_keys=True)
        return hashlib.sha256(described.encode()).hexdigest()[:12]

    def describe(self) -> str:
        """The machine in words, for a person choosing whether to carry on a game kept on it.

        >>> load_config(text='backend = "grbl"').describe()
        'the grbl robot on /dev/ttyUSB0'
        """
        where = {"grbl": " on {port}", "ebb": " on {port}", "ev3": " at {host}"}.get(self.backend, "")
        said = f"the {self.backend} robot" + where.format(**self.section(self.backend)) if where else \
            f"the {self.backend} robot"
        return said + (f" ({self.source})" if self.source is not None else "")

    def with_overrides(self, **settings: Any) -> RobotConfig:
        """A copy with ``section__key=value`` (or top-level ``key=value``) settings changed; None keeps."""
        data = {key: dict(value) if isinstance(value, dict) else value for key, value in self.data.items()}
        for dotted, value in settings.items():
            if value is None:
                continue
            section, _, key = dotted.rpartition("__")
            (data[section] if section else data)[key] = value
        return RobotConfig(_merge(tomllib.loads(DEFAULT_TOML), data), self.source)


def load_config(path: str | os.PathLike[str] | None = None, *, text: str | None = None) -> RobotConfig:
    """The configuration in ``path`` (or ``text``) over the defaults; neither: the defaults."""
    source, user = read_config(path, text, "the robot configuration", ConfigError)
    config = RobotConfig(_merge(tomllib.loads(DEFAULT_TOML), user), source)
    from noughts.robot.backends.ev3 import Ev3Config  # stdlib only: the host side of the EV3 link

    try:
        Ev3Config.from_mapping(config.section("ev3"))
    except (RobotError, TypeError, ValueError) as error:
        raise ConfigError(f"the robot configuration's [ev3] table: {error}") from None
    return config


def save_setting(path: str | os.PathLike[str], section: str, values: Mapping[str, float]) -> Path:
    """Set ``values`` in table ``[section]`` of the file at ``path`` (created if missing), keeping
    every other line as it was; the result must still load."""
    target = Path(path).expanduser()
    try:
        lines = target.read_text(encoding="utf-8").splitlines() if target.exists() else []
    except OSError as error:
        raise ConfigError(f"cannot read {target}: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{target} is not UTF-8 text, so it cannot be updated; save it as UTF-8") from None
    start = next((i for i, line in enumerate(lines) if line.strip() == f"[{section}]"), None)
    if start is None:
        lines += ["", f"[{section}]"]
        start = len(lines) - 1
    end = next((i for i in range(start + 1, len(lines)) if lines[i].lstrip().startswith("[")), len(lines))
    kept = [line for line in lines[start + 1:end] if line.split("=")[0].strip() not in values]
    lines[start + 1:end] = [f"{key} = {value!r}" for key, value in values.items()] + kept
    text = "\n".join(lines).lstrip("\n") + "\n"
    load_config(text=text)  # refuses to write a file that would not load
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, target)
    return target
