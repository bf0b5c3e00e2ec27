"""The panel loop: poll the board, hand the events and the time to the controller, flush.

The controller's clock is the wall clock minus the time the board was away (a serial panel
unplugged mid-game): the computer does not move, the flash does not run and messages do not
alternate while nobody can see them.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from noughts.hardware.boardio import BoardIO
from noughts.hardware.controller import PanelController

__all__ = ["PanelLoop"]


class PanelLoop:
    def __init__(self, controller: PanelController, board: BoardIO, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.controller = controller
        self.board = board
        self.clock = clock
        self.paused = 0.0  # seconds the board has been away, in total
        self._last: float | None = None

    def game_time(self, now: float) -> float:
        return now - self.paused

    def start(self) -> None:
        now = self.clock()
        self._last = now
        self.controller.start(self.game_time(now))
        self.board.flush()  # a board that is not there yet gets it all when it says hello

    def step(self) -> None:
        """One turn of the loop."""
        now = self.clock()
        if self._last is None:
            self.start()
            return
        was_connected = self.board.connected
        events = self.board.poll(now)
        if not was_connected:
            self.paused += now - self._last
        self._last = now
        game_now = self.game_time(now)
        for event in events:
            self.controller.handle(event, game_now)
        self.controller.tick(game_now)
        self.board.flush()

    def run(self, *, should_stop: Callable[[], bool] = lambda: False, period: float = 0.005,
            sleep: Callable[[float], None] = time.sleep, on_step: Callable[[], object] | None = None) -> None:
        """Step every ``period`` seconds until ``should_stop()``; Ctrl-C ends it too."""
        if self._last is None:
            self.start()
        while not should_stop():
            self.step()
            if on_step is not None:
                on_step()
            sleep(period)
