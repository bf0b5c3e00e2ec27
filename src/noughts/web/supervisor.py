"""The supervisor of ``noughts web --workers N``: uvicorn's, made to stop promptly on SIGTERM.

uvicorn's supervisor checks each worker in turn, waiting up to ``timeout_worker_healthcheck``
(5 s) for each to answer, and looks at its signals only between rounds. A worker that is slow to
answer (one just started, still importing on a busy machine; one that is stuck) holds up a
SIGTERM by 5 s per worker per round, and a worker still starting when the round ends is killed
and started again, so the wait can repeat: a test's server once took more than 15 s to stop.

:class:`Supervisor` waits for each answer in short slices and handles signals between them, so
a SIGTERM is acted on within a fraction of a second; once stopping it starts no new worker; and
it waits at most ``STOP_WAIT_S`` for the workers to finish (their open games are saved on the
way out, see :mod:`noughts.web.recording`) before killing any that has not, with a log line.

A supervisor killed outright (``kill -9``) cannot stop its workers: each worker calls
:func:`die_with_supervisor` as it starts, so it gets SIGTERM (and stops as on Ctrl-C) when its
supervisor is gone, rather than serving the port on its own and keeping the next server off it.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
from typing import TYPE_CHECKING

from uvicorn.config import STARTUP_FAILURE
from uvicorn.supervisors.multiprocess import Multiprocess, Process

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

__all__ = ["STOP_WAIT_S", "Supervisor", "die_with_supervisor"]

log = logging.getLogger("uvicorn.error")

SLICE_S = 0.1  # how long one wait for a worker's answer lasts before signals are looked at again
STOP_WAIT_S = 60.0  # the most the workers together are given to stop after SIGTERM
WATCH_S = 0.5  # how often a worker without prctl looks whether its supervisor is still there
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def die_with_supervisor(supervisor: int, *, kernel: bool = True) -> None:
    """Have this worker get SIGTERM once its parent, the process ``supervisor``, is gone.

    On Linux the kernel sends it (``prctl(PR_SET_PDEATHSIG)``); the parent may have died before
    that took effect, so it is checked once after. Elsewhere (or with ``kernel=False``), a thread
    watches whether the parent changed (an orphan's parent becomes another process).
    """
    if kernel and _ask_kernel(signal.SIGTERM):
        if os.getppid() != supervisor:
            os.kill(os.getpid(), signal.SIGTERM)
        return
    threading.Thread(target=_watch_supervisor, args=(supervisor,), name="noughts-watch-supervisor",
                     daemon=True).start()


def _ask_kernel(signum: int) -> bool:
    """Whether Linux will send ``signum`` to this process when its parent dies."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_PDEATHSIG, int(signum), 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _watch_supervisor(supervisor: int) -> None:
    while os.getppid() == supervisor:
        time.sleep(WATCH_S)
    log.warning("the supervisor process [%s] is gone; this worker stops", supervisor)
    os.kill(os.getpid(), signal.SIGTERM)


class Supervisor(Multiprocess):
    """uvicorn's ``Multiprocess`` that hears signals while it waits for a worker (see the module)."""

    def keep_subprocess_alive(self) -> None:
        for index, process in enumerate(self.processes):
            if self.should_exit.is_set():
                return
            if self._answers(process):
                continue
            if self.should_exit.is_set():
                return  # stopping: the worker is stopped with the others, not replaced
            worker = process.process
            process.kill()  # dead or stuck
            worker.join()
            if worker.exitcode == STARTUP_FAILURE:  # the app cannot start: every new worker would fail alike
                log.error("Child process [%s] failed to start, stopping the parent process.", worker.pid)
                self.should_exit.set()
                return
            log.info("Child process [%s] died", worker.pid)
            replacement = Process(self.config, self.sockets)
            replacement.start()
            self.processes[index] = replacement

    def _answers(self, process: Process) -> bool:
        """Whether the worker answers a health check in time (True also once stopping: no verdict is needed)."""
        connection: Connection = process.parent_conn
        try:
            while connection.poll(0):  # late answers to earlier checks
                connection.recv()
            connection.send(b"ping")
            deadline = time.monotonic() + self.config.timeout_worker_healthcheck
            while time.monotonic() < deadline:
                if connection.poll(SLICE_S):
                    connection.recv()
                    return True
                self.handle_signals()
                if self.should_exit.is_set():
                    return True
                if not process.process.is_alive():
                    return False
        except (OSError, EOFError, ValueError):
            return False
        return False

    def join_all(self) -> None:
        deadline = time.monotonic() + STOP_WAIT_S
        for process in self.processes:
            process.process.join(max(0.0, deadline - time.monotonic()))
            if process.process.is_alive():
                log.error("Child process [%s] did not stop within %.0f s of the signal; killing it",
                          process.process.pid, STOP_WAIT_S)
                process.process.kill()
                process.process.join()
