"""Taking connections off the listening socket a few at a time, turning the over-limit ones away there.

asyncio's and uvloop's servers accept every connection waiting on the socket at once (up to
the listen backlog, 2,048) and build a uvicorn protocol for each before anything else runs: a
burst of idle sockets from one address held the event loop for hundreds of ms while honest
players waited for their moves. :class:`Acceptor` takes at most ``batch`` connections each time
the loop finds the socket ready, so a burst is spread over many turns of the loop, between the
players' messages. A connection from an address that already holds all the connections it may
(or when the server does) is answered 503 on the bare socket and closed before uvicorn builds
anything for it: a few µs instead of a protocol, a transport and a log record. The rest go to
uvicorn's protocol (``loop.connect_accepted_socket``), whose guard counts them as before
(:class:`noughts.web.shield.GuardedHTTP`).

:class:`GuardedServer` is uvicorn's server with an acceptor on each listening socket, on event
loops that can watch a socket (every one but Windows' proactor, which keeps uvicorn's way).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import uvicorn

from noughts.web.guard import Guard, client_key

if TYPE_CHECKING:
    import ssl

__all__ = ["ACCEPT_BATCH", "Acceptor", "GuardedServer"]

log = logging.getLogger("noughts.web")

ACCEPT_BATCH = 16  # connections taken each time the loop finds the socket ready
OUT_OF_FILES_PAUSE = 1.0  # seconds without accepting once the process holds all the files it may
OUT_OF_FILES = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}


class Acceptor:
    """Accepts from ``sock`` on ``loop``, ``batch`` at a time, refusing what ``guard()`` would refuse.

    ``factory`` makes the protocol of each connection let in; ``guard`` gives the app's guard
    (None until the app has started, or for an app without one: then everything is let in) and
    ``busy`` is the answer written to a connection turned away.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, sock: socket.socket, factory: Callable[[], asyncio.Protocol],
                 guard: Callable[[], Guard | None], busy: bytes, *, ssl: ssl.SSLContext | None = None,
                 batch: int = ACCEPT_BATCH) -> None:
        self.loop, self.sock, self.factory, self.guard, self.busy = loop, sock, factory, guard, busy
        self.ssl, self.batch = ssl, batch
        self.refused = 0  # connections turned away here, for tests and the curious
        self._handing: set[asyncio.Task[None]] = set()
        self._resume: asyncio.TimerHandle | None = None
        self._closed = False
        self._next_log = 0.0
        sock.setblocking(False)
        loop.add_reader(sock.fileno(), self._ready)

    def _ready(self) -> None:
        guard = self.guard()
        for _ in range(self.batch):
            try:
                conn, peer = self.sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as error:
                if error.errno in OUT_OF_FILES:  # as asyncio does: wait for some to close, then go on
                    log.warning("cannot accept connections (%s); trying again in %g s", error.strerror,
                                OUT_OF_FILES_PAUSE)
                    self.loop.remove_reader(self.sock.fileno())
                    self._resume = self.loop.call_later(OUT_OF_FILES_PAUSE, self._listen_again)
                    return
                continue  # one connection reset before it was taken: the others are still there
            host = peer[0] if isinstance(peer, tuple) else None
            if guard is not None and not guard.has_room(client_key(host), per_address=host not in guard.trusted):
                self.refused += 1
                now = self.loop.time()
                if now >= self._next_log:  # one line per interval, not a log record per refusal
                    self._next_log = now + guard.limits.log_every
                    log.warning("turned away connections: their address (or the server) holds all the "
                                "connections it may (%d so far)", self.refused)
                with contextlib.suppress(OSError):
                    conn.setblocking(False)
                    conn.send(self.busy)  # a new socket's buffer takes it whole
                conn.close()
                continue
            task = self.loop.create_task(self._hand_over(conn))
            self._handing.add(task)  # a task nobody references can be collected mid-flight
            task.add_done_callback(self._handing.discard)

    async def _hand_over(self, conn: socket.socket) -> None:
        try:
            await self.loop.connect_accepted_socket(self.factory, conn, ssl=self.ssl)
        except (OSError, asyncio.CancelledError):
            conn.close()

    def _listen_again(self) -> None:
        self._resume = None
        if not self._closed:
            self.loop.add_reader(self.sock.fileno(), self._ready)

    # what uvicorn asks of a server when it stops
    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._resume is not None:
            self._resume.cancel()
        else:
            self.loop.remove_reader(self.sock.fileno())

    async def wait_closed(self) -> None:
        if self._handing:
            await asyncio.wait(list(self._handing), timeout=1.0)


class GuardedServer(uvicorn.Server):
    """uvicorn's server, taking its connections through an :class:`Acceptor` (see the module)."""

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        from noughts.web.shield import BUSY, GUARD

        loop = asyncio.get_running_loop()
        if not sockets or not _can_watch(loop, sockets[0]):
            await super().startup(sockets=sockets)
            return
        await super().startup(sockets=[])  # the lifespan, and no server of uvicorn's own
        config = self.config

        def create_protocol() -> asyncio.Protocol:
            protocol: Any = config.http_protocol_class(  # type: ignore[call-arg]
                config=config, server_state=self.server_state, app_state=self.lifespan.state, _loop=loop)
            return protocol  # type: ignore[no-any-return]

        def guard() -> Guard | None:
            found = self.lifespan.state.get(GUARD)
            return found if isinstance(found, Guard) else None

        for sock in sockets:
            sock.listen(config.backlog)
            self.servers.append(Acceptor(loop, sock, create_protocol, guard, BUSY, ssl=config.ssl))  # type: ignore[arg-type]


def _can_watch(loop: asyncio.AbstractEventLoop, sock: socket.socket) -> bool:
    """Whether the loop can call back when a socket is ready (Windows' proactor loop cannot)."""
    try:
        loop.add_reader(sock.fileno(), lambda: None)
    except NotImplementedError:
        return False
    loop.remove_reader(sock.fileno())
    return True
