"""``noughts panel``: run the panel on a backend, calibrate the ladder, or print a build's defaults.

::

    noughts panel [--sim | --backend gpio|serial|sim] [--config FILE] [--build mega|uno] [--port PORT] ...
    noughts panel calibrate [--backend gpio|serial] [--config FILE]
    noughts panel config [--build mega|uno]

The options are read and checked here; :mod:`noughts.hardware.app` runs the panel.
"""

from __future__ import annotations

import sys

from noughts.cli.common import flag_said
from noughts.errors import NoughtsError, SettingError

TYPE_CHECKING = False  # typing and argparse cost milliseconds; `noughts --help` only needs SUMMARY
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

    from noughts.hardware.config import PanelConfig

__all__ = ["SUMMARY", "build_parser", "main", "panel_config"]

SUMMARY = ("the LED-and-button panel: a terminal simulator, a Raspberry Pi or an Arduino "
           "(see 'noughts panel --help')")


def build_parser() -> argparse.ArgumentParser:
    import argparse

    from noughts.hardware.app import BACKENDS
    from noughts.hardware.config import FIRSTS, default_config_path
    from noughts.hardware.defaults import BUILDS, GRID_FIRST
    from noughts.text import first_label

    parser = argparse.ArgumentParser(
        prog="noughts panel",
        description="The seed's LED-and-button tic-tac-toe panel: on a Raspberry Pi's pins (gpio), on an "
                    "Arduino running firmware/noughts_panel (serial), or simulated in this terminal (sim).",
        epilog="Hold a cell button while pressing reset to choose: rows = opponent (the [game] opponents), "
               f"columns = who starts ({', '.join(first_label(rule) for rule in GRID_FIRST)}). "
               "docs/hardware.md has the wiring.")
    parser.add_argument("action", nargs="?", default="play", choices=("play", "calibrate", "config"),
                        help="play (the default); calibrate: measure the resistor ladder and record its thresholds "
                             "in the config file; config: print a build's default configuration")
    parser.add_argument("--backend", choices=BACKENDS, default="sim", help="where the panel is (default: sim)")
    parser.add_argument("--sim", dest="backend", action="store_const", const="sim",
                        help="the simulator in this terminal (the same as --backend sim, the default)")
    parser.add_argument("--config", metavar="FILE",
                        help=f"the panel's TOML configuration (default: {default_config_path()} if it exists)")
    parser.add_argument("--build", choices=BUILDS, help="the wiring: the seed's mega or uno (overrides the file)")
    parser.add_argument("--port", help="serial: the board's port or pyserial URL (overrides [serial] port)")
    parser.add_argument("--opponent", help="the computer player at power-on (overrides [game] opponent)")
    parser.add_argument("--first", metavar="WHO",
                        help=f"who starts at power-on: {', '.join(FIRSTS)} (overrides [game] first)")
    parser.add_argument("--thinking", type=float, metavar="SECONDS", help="the computer's thinking pause")
    parser.add_argument("--games", type=int, metavar="N", help="games in a match (overrides [game] match_games)")
    parser.add_argument("--no-flash", action="store_true", help="skip the start-up flash")
    parser.add_argument("--seed", type=int, help="seed the computer's random choices, to replay a session")
    parser.add_argument("--db", metavar="PATH",
                        help="the scores and history database, as for 'noughts play' (default: $NOUGHTS_DB, else "
                             "~/.local/share/noughts/noughts.db)")
    parser.add_argument("--no-scores", action="store_true", help="record nothing: no scores, no history")
    return parser


def panel_config(args: argparse.Namespace) -> PanelConfig:
    """The configuration file (or a build's defaults) with the command line's choices over it."""
    from noughts.hardware.app import load_panel_config, with_choices
    from noughts.hardware.config import ConfigError, first_setting

    config = load_panel_config(args.config, build=args.build)
    opponent = None
    if args.opponent is not None:
        from noughts import players

        opponent = players.canonical(args.opponent)  # an unknown name fails, with the list
    first = None if args.first is None else first_setting(args.first, "--first")
    if args.thinking is not None and not 0 <= args.thinking <= 60:
        raise ConfigError(f"--thinking takes 0 to 60 seconds, not {args.thinking:g}")
    if args.games is not None and not 1 <= args.games <= 99:
        raise ConfigError(f"--games takes 1 to 99, not {args.games}")
    return with_choices(config, opponent=opponent, first=first, thinking=args.thinking, games=args.games,
                        flash=not args.no_flash, port=args.port)


def main(argv: Sequence[str] | None = None) -> int:
    """``noughts panel …``; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        if args.action == "config":
            from noughts.hardware.defaults import DEFAULT_TOML

            print(DEFAULT_TOML[args.build or "mega"], end="")
            return 0
        config = panel_config(args)
        from noughts.hardware import app

        if args.action == "calibrate":
            if args.backend == "sim":
                raise NoughtsError("calibrate measures a real ladder: use --backend gpio or --backend serial")
            return app.calibrate(config, args.backend, args.config)
        return app.play(config, args.backend, seed=args.seed, db=args.db, scores=not args.no_scores)
    except SettingError as error:  # the panel's words, said again with the flag
        print(f"noughts: {flag_said(error, {'backend': '--backend', 'build': '--build'})}", file=sys.stderr)
        return 2
    except NoughtsError as error:
        print(f"noughts: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
