"""The physical panel: the seed's LED-and-button tic-tac-toe board, driven by noughts.

One piece of logic (:class:`~noughts.hardware.controller.PanelController`) drives three
backends through the same small board interface (``set_led``, ``lcd_write``, ``poll`` for button
events):

* ``gpio``: a Raspberry Pi with gpiozero: the seed's Mega wiring (one pin per LED and button) or
  its Uno wiring (20 LEDs Charlieplexed on five pins, the buttons on a resistor ladder read through
  an MCP3008), and an HD44780 LCD through RPLCD;
* ``serial``: an Arduino Mega or Uno wired as in the seed, running ``firmware/noughts_panel``,
  which only does I/O and speaks a line protocol over USB;
* ``sim``: the gpio backend on gpiozero's mock pins, drawn in the terminal.

``noughts panel --backend gpio|serial|sim [--config FILE]`` runs it (:mod:`noughts.hardware.app`);
``docs/hardware.md`` has the wiring, the configuration and the protocol. The hardware libraries
(gpiozero, pyserial, RPLCD) are optional and imported only by the backend that needs them.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from noughts.errors import NoughtsError

__all__ = ["INSTALL_HINT", "MissingLibraryError", "checkout_root", "hint_for", "install_hint", "require"]

INSTALL_HINT = "pip install 'noughts[panel]'"
PANEL_EXTRA = "panel"  # pyproject's optional dependencies for every backend: gpiozero, pyserial, RPLCD


class MissingLibraryError(NoughtsError):
    """A hardware library the chosen backend needs is not installed."""


def checkout_root(package_file: str | None = None) -> Path | None:
    """The source checkout noughts runs from (its pyproject.toml names noughts), or None."""
    here = Path(package_file or __file__).resolve()
    if len(here.parents) < 4 or here.parents[1] != here.parents[3] / "src" / "noughts":
        return None  # installed (site-packages/noughts/...), not <root>/src/noughts/hardware/__init__.py
    root = here.parents[3]
    try:
        pyproject = (root / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return None
    return root if 'name = "noughts"' in pyproject else None


def install_hint() -> str:
    """The command that installs the panel's packages for the Python running now."""
    return hint_for(checkout_root(), sys.executable or "python3")


def hint_for(root: Path | None, python: str) -> str:
    """From a checkout, its own pip (and ``make play``, which installs the extra into its .venv); else the extra.

    >>> hint_for(Path("/src/noughts"), "/src/noughts/.venv/bin/python")
    "in /src/noughts run `.venv/bin/python -m pip install -e '.[panel]'` (or `make play`)"
    >>> hint_for(Path("/src/noughts"), "/opt/venv/bin/python")
    "in /src/noughts run `/opt/venv/bin/python -m pip install -e '.[panel]'`"
    >>> hint_for(None, "/usr/bin/python3")
    "pip install 'noughts[panel]'"
    """
    if root is None:
        return INSTALL_HINT
    in_venv = Path(python).is_relative_to(root / ".venv")  # the one `make play` sets up
    shown = os.path.relpath(python, root) if in_venv else python
    return f"in {root} run `{shown} -m pip install -e '.[{PANEL_EXTRA}]'`" + (" (or `make play`)" if in_venv else "")


def require(module: str, purpose: str, hint: str | None = None) -> object:
    """Import ``module`` (gpiozero, serial, RPLCD…) or explain how to install it."""
    from importlib import import_module

    try:
        return import_module(module)
    except ImportError as error:
        missing = (error.name or module).partition(".")[0]  # the module itself or one it needs
        raise MissingLibraryError(
            f"{purpose} needs the Python package {missing!r}, which is not installed: "
            f"{hint or install_hint()}") from None

