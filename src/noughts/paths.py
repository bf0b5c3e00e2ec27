"""Where noughts keeps its files by default, the XDG way.

>>> config_path("panel.toml", "NOUGHTS_PANEL_CONFIG", {"XDG_CONFIG_HOME": "/cfg"}).as_posix()
'/cfg/noughts/panel.toml'
>>> config_path("robot.toml", "NOUGHTS_ROBOT_CONFIG", {"NOUGHTS_ROBOT_CONFIG": "/etc/robot.toml"}).as_posix()
'/etc/robot.toml'
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["config_path"]


def config_path(filename: str, variable: str, environ: Mapping[str, str] | None = None) -> Path:
    """``$variable``, else ``$XDG_CONFIG_HOME/noughts/filename``, else ``~/.config/noughts/filename``."""
    env = os.environ if environ is None else environ
    if env.get(variable):
        return Path(env[variable]).expanduser()
    base = env.get("XDG_CONFIG_HOME", "")
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".config"
    return root / "noughts" / filename
