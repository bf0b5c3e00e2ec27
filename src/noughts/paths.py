"""Where noughts keeps its files by default, the XDG way.

>>> config_path("panel.toml", "NOUGHTS_PANEL_CONFIG", {"XDG_CONFIG_HOME": "/cfg"}).as_posix()
'/cfg/noughts/panel.toml'
>>> config_path("robot.toml", "NOUGHTS_ROBOT_CONFIG", {"NOUGHTS_ROBOT_CONFIG": "/etc/robot.toml"}).as_posix()
'/etc/robot.toml'
>>> data_path("web-tls", {"XDG_DATA_HOME": "/data", "HOME": "/home/ann"}).as_posix()
'/data/noughts/web-tls'
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from noughts.errors import NoughtsError

__all__ = ["config_path", "data_path", "read_config"]


def config_path(filename: str, variable: str, environ: Mapping[str, str] | None = None) -> Path:
    """``$variable``, else ``$XDG_CONFIG_HOME/noughts/filename``, else ``~/.config/noughts/filename``."""
    env = os.environ if environ is None else environ
    if env.get(variable):
        return Path(env[variable]).expanduser()
    base = env.get("XDG_CONFIG_HOME", "")
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".config"
    return root / "noughts" / filename


def data_path(name: str, environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_DATA_HOME/noughts/name``, else ``~/.local/share/noughts/name`` (a relative
    ``$XDG_DATA_HOME`` is ignored, as the XDG spec says): files noughts makes and keeps."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_DATA_HOME", "")
    if base and Path(base).is_absolute():
        return Path(base) / "noughts" / name
    home = env.get("HOME") or (os.path.expanduser("~") if environ is None else "")
    if not home or home == "~":
        raise NoughtsError(f"there is no home folder to keep {name} in: set XDG_DATA_HOME to a folder")
    return Path(home) / ".local" / "share" / "noughts" / name


def read_config(path: str | os.PathLike[str] | None, text: str | None, what: str,
                error: type[NoughtsError]) -> tuple[Path | None, dict[str, Any]]:
    """The file ``path`` (or ``text``) read as TOML: its path and its settings ({} with neither).

    ``what`` names it in the messages ("the robot configuration") of the ``error`` raised when the
    file cannot be read or is not TOML.
    """
    source: Path | None = None
    if path is not None:
        source = Path(path).expanduser()
        try:
            text = source.read_text(encoding="utf-8")
        except OSError as failure:
            raise error(f"cannot read {what} {source}: {failure.strerror or failure}") from None
        except UnicodeDecodeError:
            raise error(f"{what} {source} is not UTF-8 text; save it as UTF-8 (TOML is)") from None
    if text is None:
        return source, {}
    where = f" {source}" if source else ""
    try:
        return source, tomllib.loads(text)
    except tomllib.TOMLDecodeError as failure:
        raise error(f"{what}{where} is not valid TOML: {failure}") from None
    except RecursionError:  # tomllib reads nested arrays and tables recursively
        raise error(f"{what}{where} nests arrays or tables too deeply to be settings") from None
