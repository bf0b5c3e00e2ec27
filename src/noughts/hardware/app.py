"""``noughts panel``: run the panel on a backend, calibrate the ladder, or print a build's defaults.

::

    noughts panel [--sim | --backend gpio|serial|sim] [--config FILE] [--build mega|uno] [--port PORT] ...
    noughts panel calibrate [--backend gpio|serial] [--config FILE]
    noughts panel config [--build mega|uno]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from noughts.errors import NoughtsError
from noughts.hardware.config import (
    FIRSTS,
    ConfigError,
    PanelConfig,
    default_config_path,
    first_setting,
    load_config,
    save_thresholds,
)
from noughts.hardware.defaults import BUILDS, DEFAULT_TOML, GRID_FIRST
from noughts.text import first_label

if TYPE_CHECKING:
    from noughts.hardware.boardio import BoardIO
    from noughts.hardware.controller import PanelSettings

__all__ = ["build_parser", "main", "settings_from"]

BACKENDS = ("sim", "gpio", "serial")
READINGS = 5  # ladder readings of one cell that calibration takes the median of, at least


def build_parser() -> argparse.ArgumentParser:
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


def _say(message: str) -> None:
    print(f"noughts panel: {message}", file=sys.stderr, flush=True)


def _config(args: argparse.Namespace) -> PanelConfig:
    path = args.config
    if path is None and default_config_path().exists():
        path = default_config_path()
    config = load_config(path, build=args.build)
    game = config.game
    if args.opponent is not None:
        from noughts import players

        game = replace(game, opponent=players.canonical(args.opponent))  # an unknown name fails, with the list
    if args.first is not None:
        game = replace(game, first=first_setting(args.first, "--first"))
    if args.thinking is not None:
        if not 0 <= args.thinking <= 60:
            raise ConfigError(f"--thinking takes 0 to 60 seconds, not {args.thinking:g}")
        game = replace(game, thinking_seconds=args.thinking)
    if args.games is not None:
        if not 1 <= args.games <= 99:
            raise ConfigError(f"--games takes 1 to 99, not {args.games}")
        game = replace(game, match_games=args.games)
    if args.no_flash:
        game = replace(game, flash=False)
    serial = replace(config.serial, port=args.port) if args.port else config.serial
    return replace(config, game=game, serial=serial)


def settings_from(config: PanelConfig, seed: int | None = None) -> PanelSettings:
    from noughts.hardware.controller import PanelSettings

    game = config.game
    return PanelSettings(opponents=game.opponents, opponent=game.opponent, first=game.first,
                         thinking_seconds=game.thinking_seconds, flash=game.flash,
                         flash_step_seconds=game.flash_step_seconds, match_games=game.match_games,
                         message_seconds=game.message_seconds, seed=seed, player=game.player)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.action == "config":
            print(DEFAULT_TOML[args.build or "mega"], end="")
            return 0
        config = _config(args)
        if args.action == "calibrate":
            return _calibrate(args, config)
        return _play(args, config)
    except NoughtsError as error:
        print(f"noughts: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _play(args: argparse.Namespace, config: PanelConfig) -> int:
    from noughts.hardware.controller import PanelController
    from noughts.hardware.loop import PanelLoop

    store = None
    if not args.no_scores:
        from noughts.store import open_store

        store = open_store(args.db)  # as noughts play: never fails; a problem is a notice
    sim = None
    try:
        if args.backend == "sim":
            from noughts.hardware.sim import SimPanel

            sim = SimPanel(config)
            board: BoardIO = sim.board
        else:
            board = open_board(args.backend, config, _say)
    except BaseException:
        if store is not None:
            store.close()
        raise
    say = sim.say if sim is not None else _say  # the sim's screen would wipe a line on stderr
    for notice in store.notices if store is not None else ():
        say(notice)
    try:
        panel = PanelController(board, settings_from(config, args.seed), store=store, say=say)
        loop = PanelLoop(panel, board)
        if sim is not None:
            from noughts.hardware.sim import run_terminal

            run_terminal(sim, loop)
        else:
            where = (f"the {config.build} wiring on this Pi's pins" if args.backend == "gpio"
                     else f"the board on {config.serial.port}")
            _say(f"running on {where}; Ctrl-C stops")
            with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how this backend stops
                loop.run()
    finally:
        (sim or board).close()
        if store is not None:
            store.close()
    return 0


def open_board(backend: str, config: PanelConfig, say: Callable[[str], None] = _say, *,
               with_lcd: bool = True) -> BoardIO:
    """The gpio or serial board the configuration describes."""
    if backend == "gpio":
        from noughts.hardware.gpio import GpioBoard
        from noughts.hardware.lcd import open_lcd

        lcd = open_lcd(config.lcd) if with_lcd else None
        try:
            return GpioBoard(config.gpio, config.thresholds, lcd=lcd)
        except BaseException:
            if lcd is not None:
                lcd.close()
            raise
    from noughts.hardware import require
    from noughts.hardware.serial_board import SerialBoard

    require("serial", "the serial backend")  # said now, not once the game is waiting for the board
    serial = config.serial
    return SerialBoard(serial.port, baud=serial.baud, thresholds=config.thresholds,
                       retry_seconds=serial.retry_seconds, hello_seconds=serial.hello_seconds, notify=say)


def _calibrate(args: argparse.Namespace, config: PanelConfig) -> int:
    if args.backend == "sim":
        raise NoughtsError("calibrate measures a real ladder: use --backend gpio or --backend serial")
    if args.backend == "gpio" and config.gpio.buttons != "ladder":
        raise NoughtsError('this build has no resistor ladder to calibrate (gpio.buttons = "direct")')
    board = open_board(args.backend, config, with_lcd=False)
    try:
        read = _gpio_reader(board) if args.backend == "gpio" else _serial_reader(board)
        readings = measure_ladder(read, ask=input, say=print)
    finally:
        board.close()
    from noughts.hardware.boardio import thresholds_from_readings

    try:
        thresholds = thresholds_from_readings(readings)
    except ValueError as error:
        raise NoughtsError(f"cannot calibrate: {error}") from None
    path = Path(args.config) if args.config else default_config_path()
    save_thresholds(path, thresholds, build=config.build)
    print(f"recorded thresholds = {thresholds} in [ladder] of {path}")
    return 0


def measure_ladder(read: Callable[[], list[int]], *, ask: Callable[[str], str],
                   say: Callable[[str], None]) -> list[int]:
    """Each cell's reading while a person holds it: the median of what ``read`` returns."""
    readings = []
    for cell in range(1, 10):
        ask(f"Hold cell {cell} down and press Enter (keep holding until its reading shows)... ")
        samples = read()
        if not samples:
            raise NoughtsError("no readings came from the ladder")
        value = int(statistics.median(samples))
        if value <= 2:
            raise NoughtsError(f"cell {cell} reads {value}, as if nothing were pressed: is the ladder on "
                               "the ADC input the configuration names?")
        say(f"  cell {cell}: {value}")
        readings.append(value)
    return readings


def _gpio_reader(board: BoardIO) -> Callable[[], list[int]]:
    from noughts.hardware.gpio import GpioBoard

    assert isinstance(board, GpioBoard)

    def read() -> list[int]:
        samples = []
        for _ in range(25):
            samples.append(board.read_ladder())
            time.sleep(0.02)
        return samples

    return read


def _serial_reader(board: BoardIO) -> Callable[[], list[int]]:
    from noughts.hardware.serial_board import SerialBoard

    assert isinstance(board, SerialBoard)
    deadline = time.monotonic() + board.hello_seconds + 1
    while not board.connected:
        board.poll(time.monotonic())
        if time.monotonic() > deadline:
            raise NoughtsError(f"no panel answered on {board.port}")
        time.sleep(0.01)
    if board.board != "uno":
        raise NoughtsError(f"the board on {board.port} is a {board.board}: only the Uno wiring has a ladder")

    def read() -> list[int]:
        # The board sends a reading every 100 ms. The first to arrive may have been on its way when
        # the last cell's readings were turned off: it is dropped, and enough are taken after it
        # for the median, however slowly the board (or a simulated one) runs.
        board.raw_readings.clear()
        board.raw_mode(True)
        start = time.monotonic()
        while time.monotonic() - start < 0.6 or len(board.raw_readings) < READINGS + 1:
            if time.monotonic() - start > 5:
                break
            board.poll(time.monotonic())
            time.sleep(0.01)
        board.raw_mode(False)
        return list(board.raw_readings)[1:]

    return read
