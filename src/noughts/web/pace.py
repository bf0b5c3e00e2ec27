"""Which computer players answer so fast that their moves are made on the event loop, not a worker thread.

Handing a move to a worker thread and back (a queue, a thread's wake-up, the GIL, a call back
into the event loop) costs the server more CPU than most players take on a small board: every
player answers 3×3 in tens of µs, the hand-off costs about a hundred. :class:`Pace` notes the CPU
time each player takes on each board and lets the lobby make the quick ones' moves in place.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from noughts.match import ComputerMove

__all__ = ["Pace"]


class Pace:
    """How long each computer player takes on each board, so the quick ones need no worker thread.

    A player's moves on a board go to a thread until ``TRIES`` in a row have each taken under
    ``QUICK_S`` of CPU; after that they are made on the event loop, until one takes over ``SLOW_S``
    there (then the thread again, until the player has shown itself quick once more). CPU time, not
    the clock: a busy machine changes nothing.
    """

    TRIES = 8
    QUICK_S = 0.0005
    SLOW_S = 0.002

    def __init__(self) -> None:
        self.clock = time.thread_time  # CPU time of the thread that runs the move (tests: a fake)
        self._quick: dict[tuple[str, int, int, int], int] = {}  # (player, rows, cols, k) → quick moves in a row

    @staticmethod
    def key(job: ComputerMove) -> tuple[str, int, int, int]:
        board = job.board
        return job.player, board.rows, board.cols, board.k

    def quick(self, job: ComputerMove) -> bool:
        return self._quick.get(self.key(job), 0) >= self.TRIES

    def run(self, job: ComputerMove) -> int:
        """Work the move out (on whichever thread calls this), noting the CPU time it took."""
        return self.run_timed(job)[0]

    def run_timed(self, job: ComputerMove) -> tuple[int, float]:
        """As :meth:`run`, with the CPU time the move took (charged to the address that asked for it)."""
        started = self.clock()
        cell = job.run()
        took = self.clock() - started
        key = self.key(job)
        count = self._quick.get(key, 0)
        if took < self.QUICK_S:
            if count < self.TRIES:
                self._quick[key] = count + 1
        elif took > self.SLOW_S or count < self.TRIES:
            self._quick.pop(key, None)
        return cell, took
