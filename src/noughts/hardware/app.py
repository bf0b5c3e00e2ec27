"""Running the panel on a backend, and calibrating its resistor ladder (``noughts panel``, whose
options :mod:`noughts.cli.panel` reads).
"""

from __future__ import annotations

import contextlib
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from noughts.errors import NoughtsError
from noughts.hardware.config import PanelConfig, default_config_path, load_config, save_thresholds

if TYPE_CHECKING:
    from noughts.hardware.boardio import BoardIO
    from noughts.hardware.controller import PanelSettings

__all__ = ["BACKENDS", "calibrate", "load_panel_config", "measure_ladder", "open_board", "play", "settings_from",
           "with_choices"]

BACKENDS = ("sim", "gpio", "serial")
READINGS = 5  # ladder readings of one cell that calibration takes the median of, at least


def _say(message: str) -> None:
    print(f"noughts panel: {message}", file=sys.stderr, flush=True)


def load_panel_config(path: str | Path | None = None, build: str | None = None) -> PanelConfig:
    """The panel's configuration: the file at ``path`` (default: the usual place, if a file is there)
    or a build's defaults, with ``build`` over the file's."""
    if path is None and default_config_path().exists():
        path = default_config_path()
    return load_config(path, build=build)


def with_choices(config: PanelConfig, *, opponent: str | None = None, first: str | None = None,
                 thinking: float | None = None, games: int | None = None, flash: bool = True,
                 port: str | None = None) -> PanelConfig:
    """``config`` with the choices made at start-up (checked by the caller) over the file's."""
    game = config.game
    if opponent is not None:
        game = replace(game, opponent=opponent)
    if first is not None:
        game = replace(game, first=first)
    if thinking is not None:
        game = replace(game, thinking_seconds=thinking)
    if games is not None:
        game = replace(game, match_games=games)
    if not flash:
        game = replace(game, flash=False)
    serial = replace(config.serial, port=port) if port else config.serial
    return replace(config, game=game, serial=serial)


def settings_from(config: PanelConfig, seed: int | None = None) -> PanelSettings:
    from noughts.hardware.controller import PanelSettings

    game = config.game
    return PanelSettings(opponents=game.opponents, opponent=game.opponent, first=game.first,
                         thinking_seconds=game.thinking_seconds, flash=game.flash,
                         flash_step_seconds=game.flash_step_seconds, match_games=game.match_games,
                         message_seconds=game.message_seconds, seed=seed, player=game.player)


def play(config: PanelConfig, backend: str = "sim", *, seed: int | None = None, db: str | None = None,
         scores: bool = True) -> int:
    """Run the panel on ``backend`` (sim, gpio or serial) until it is stopped; returns the exit status."""
    from noughts.hardware.controller import PanelController
    from noughts.hardware.loop import PanelLoop

    store = None
    if scores:
        from noughts.store import open_store

        store = open_store(db)  # as noughts play: never fails; a problem is a notice
    sim = None
    try:
        if backend == "sim":
            from noughts.hardware.sim import SimPanel

            sim = SimPanel(config)
            board: BoardIO = sim.board
        else:
            board = open_board(backend, config, _say)
    except BaseException:
        if store is not None:
            store.close()
        raise
    say = sim.say if sim is not None else _say  # the sim's screen would wipe a line on stderr
    for notice in store.notices if store is not None else ():
        say(notice)
    try:
        panel = PanelController(board, settings_from(config, seed), store=store, say=say)
        loop = PanelLoop(panel, board)
        if sim is not None:
            from noughts.hardware.sim import run_terminal

            run_terminal(sim, loop)
        else:
            where = (f"the {config.build} wiring on this Pi's pins" if backend == "gpio"
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


def calibrate(config: PanelConfig, backend: str, path: str | Path | None = None) -> int:
    """Measure the resistor ladder of the gpio or serial board and record its thresholds in the
    configuration file at ``path`` (default: the usual place)."""
    if backend == "sim":
        raise NoughtsError("calibrating measures a real ladder: the gpio or the serial backend's, not the sim's")
    if backend == "gpio" and config.gpio.buttons != "ladder":
        raise NoughtsError('this build has no resistor ladder to calibrate (gpio.buttons = "direct")')
    board = open_board(backend, config, with_lcd=False)
    try:
        read = _gpio_reader(board) if backend == "gpio" else _serial_reader(board)
        readings = measure_ladder(read, ask=input, say=print)
    finally:
        board.close()
    from noughts.hardware.boardio import thresholds_from_readings

    try:
        thresholds = thresholds_from_readings(readings)
    except ValueError as error:
        raise NoughtsError(f"cannot calibrate: {error}") from None
    target = Path(path) if path else default_config_path()
    save_thresholds(target, thresholds, build=config.build)
    print(f"recorded thresholds = {thresholds} in [ladder] of {target}")
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
