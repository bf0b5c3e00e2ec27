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

``noughts panel --backend gpio|serial|sim [--config FILE]`` runs it (:func:`main`);
``docs/hardware.md`` has the wiring, the configuration and the protocol. The hardware libraries
(gpiozero, pyserial, RPLCD) are optional and imported only by the backend that needs them.
"""

from __future__ import annotations

from collections.abc import Sequence

from noughts.errors import NoughtsError

__all__ = ["INSTALL_HINT", "MissingLibraryError", "main", "require"]

INSTALL_HINT = "pip install 'noughts[panel]'"


class MissingLibraryError(NoughtsError):
    """A hardware library the chosen backend needs is not installed."""


def require(module: str, purpose: str, hint: str = INSTALL_HINT) -> object:
    """Import ``module`` (gpiozero, serial, RPLCD…) or explain how to install it."""
    from importlib import import_module

    try:
        return import_module(module)
    except ImportError as error:
        missing = (error.name or module).partition(".")[0]  # the module itself or one it needs
        raise MissingLibraryError(
            f"{purpose} needs the Python package {missing!r}, which is not installed: {_this_python(hint)}") from None


def _this_python(hint: str) -> str:
    """``pip install …`` for the Python running noughts: a bare ``pip`` may belong to another one."""
    import shlex
    import sys

    if not hint.startswith("pip install "):
        return hint
    return f"{shlex.quote(sys.executable)} -m {hint}"


def main(argv: Sequence[str] | None = None) -> int:
    """``noughts panel …``: run the panel; returns the exit status."""
    from noughts.hardware.app import main as app_main

    return app_main(argv)
