"""Costly work (a hint, the players of a new board) away from the event loop, and what each took of the CPU.

A hint on 7×7 or a board's players takes the solver up to seconds. On a worker thread of the
server's own process it holds the GIL: the event loop, which lets go of the GIL at every read and
write, then waits for it again each time, and honest players' moves took 70–160 ms instead of
5 (``benchmarks/web_attacks.py``, the costly-messages window). ``noughts web`` therefore works
them out in a small pool of processes of its own (:class:`CostlyWork` with ``processes``),
started with the server (a new process's imports take half a second of CPU: not while people
play), at a lower priority than the server (the kernel gives the event loop its core first),
and with at most ``MOST_WAITING`` jobs a process waiting: however many addresses ask, the costly
work takes at most those processes' cores, and a request beyond is refused with a sentence
(``busy``) instead of waiting for minutes. Without ``processes`` (an app made in tests) the work
runs on the default thread pool, where ``clock`` times it.

What goes to a process must pickle: a :class:`~noughts.board.Board` does (as its bits), and the
work is one of this module's functions.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Any, TypeVar

from noughts import text
from noughts.web.protocol import Rejection

if TYPE_CHECKING:
    from noughts.board import Board

__all__ = ["CostlyWork", "board_players", "hint_for", "own_processes"]

log = logging.getLogger("noughts.web")

T = TypeVar("T")
NICENESS = 10  # the kernel gives a nice-0 event loop about nine tenths of a core both want
MOST_WAITING = 8  # jobs per process queued or running; beyond, a request is refused (``busy``)


def own_processes() -> int:
    """How many processes ``noughts web`` gives costly work: half the cores (at least one, at most four)."""
    return max(1, min(4, (os.cpu_count() or 2) // 2))


class CostlyWork:
    """Runs costly work on ``processes`` processes of its own (0: the default thread pool), timed in CPU seconds.

    ``clock`` times work on threads (tests: a fake); a process times its own with ``time.thread_time``.
    """

    def __init__(self, processes: int = 0, clock: Callable[[], float] = time.thread_time) -> None:
        self.processes = processes
        self.clock = clock
        self.waiting = 0  # jobs handed over and not yet back
        self.pools_started = 0
        self._pool: ProcessPoolExecutor | None = None

    @property
    def most_waiting(self) -> int:
        return MOST_WAITING * max(1, self.processes)

    async def start(self) -> None:
        """Start the processes and have each import what the work needs (nothing to do on threads)."""
        if self.processes:
            await asyncio.gather(*(self.run(board_players, (3, 3, 3)) for _ in range(self.processes)))

    def refuse_if_busy(self) -> None:
        """Refuse (``busy``) if as much work as is allowed is waiting already."""
        if self.waiting >= self.most_waiting:
            raise Rejection("busy", text.WEB_THINKING_FOR_MANY)

    async def run(self, work: Callable[..., T], *args: Any) -> tuple[T, float]:
        """``work(*args)`` and the CPU seconds it took; ``busy`` if too much is waiting already."""
        self.refuse_if_busy()
        loop = asyncio.get_running_loop()
        self.waiting += 1
        try:
            if not self.processes:
                return await loop.run_in_executor(None, _timed, self.clock, work, args)
            pool = self._pool or self._start()
            try:
                return await loop.run_in_executor(pool, _timed, time.thread_time, work, args)
            except BrokenProcessPool:  # a process was killed (out of memory, say): a new pool next time
                log.error("a process working out hints and boards died; starting new ones")
                self._drop(pool)
                raise
        finally:
            self.waiting -= 1

    def _start(self) -> ProcessPoolExecutor:
        import multiprocessing

        # spawned, not forked: the server's threads and locks stay out of the new process
        self._pool = ProcessPoolExecutor(self.processes, mp_context=multiprocessing.get_context("spawn"),
                                         initializer=_set_up_process, initargs=(os.getpid(),))
        self.pools_started += 1
        return self._pool

    def _drop(self, pool: ProcessPoolExecutor, *, wait: bool = False) -> None:
        if self._pool is pool:
            self._pool = None
        pool.shutdown(wait=wait, cancel_futures=True)

    def close(self) -> None:
        """Stop the processes, waiting for work still running (a hint's few seconds at most): a pool
        left behind at exit leaves its semaphores to multiprocessing's resource tracker, which warns."""
        if self._pool is not None:
            self._drop(self._pool, wait=True)


def _timed(clock: Callable[[], float], work: Callable[..., T], args: tuple[Any, ...]) -> tuple[T, float]:
    started = clock()
    return work(*args), clock() - started


def _set_up_process(server: int) -> None:
    """A costly-work process: below the server in priority, deaf to Ctrl-C (the server stops it), gone with it."""
    with contextlib.suppress(OSError, AttributeError):
        os.nice(NICENESS)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from noughts.web.supervisor import die_with_supervisor

    die_with_supervisor(server)


def hint_for(board: Board, seconds: float, nodes: int) -> tuple[int | None, str]:
    """The solver's hint in ``board`` (see :func:`noughts.match.hint`)."""
    from noughts import match

    return match.hint(board, seconds, nodes)


def board_players(shape: tuple[int, int, int]) -> tuple[dict[str, str | None], str, str]:
    """Every computer player with why it cannot play ``shape`` (None: it can), the one offered first,
    and the players that cannot in a sentence for the page."""
    from noughts import players
    from noughts.board import Board

    board = Board(*shape)
    unable = {name: players.unable(name, board) for name in players.names()}
    sentence = text.web_not_for_board((players.label(name), why) for name, why in unable.items() if why is not None)
    return unable, players.default_for(board), sentence
