"""One websocket per browser tab: accepting it, reading its messages within limits, writing to it.

:func:`serve_socket` is the websocket endpoint: it checks the connection limit, greets the
client, reads one message at a time (a token bucket refuses floods, a socket silent for too long
is closed), hands each to the lobby, and on the way out takes the connection out of its room. :class:`Connection` holds
what the server knows about one socket and sends through a queue of its own, so a client that
stops reading never holds up the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from noughts.text import WEB_NOT_TEXT, web_too_many_messages
from noughts.web.guard import client_key
from noughts.web.protocol import Limits, encode, error_message

if TYPE_CHECKING:
    from noughts.web.lobby import Lobby, _Answers
    from noughts.web.paper import FrameLink

__all__ = ["OUTBOX", "Connection", "serve_socket"]

log = logging.getLogger("noughts.web")

OUTBOX = 256  # messages queued for a player by default (Limits.outbox); a client this far behind is not reading
STATE_PREFIX = '{"type":"state"'  # how encode() begins a state: a snapshot that a newer one replaces

class Connection:
    """One open websocket: which room and seat it is in, its message allowance, its outbox.

    The outbox holds at most ``limits.outbox`` messages for a player and ``limits.watcher_outbox``
    for anyone else (spectators cost the server least, and are dropped first). A ``state`` is a
    snapshot: one still waiting at the end of the outbox is replaced by the newer, so people
    coming and going around a slow reader never pile states up in its outbox.
    """

    def __init__(self, ws: WebSocket, limits: Limits, address: str = "?") -> None:
        self.ws = ws
        self.limits = limits
        self.address = address  # whose share of rooms, joins and connections this uses (noughts.web.guard)
        self.room: str | None = None
        self.seat: int | None = None
        self.shown: tuple[int, str] | None = None  # with rooms in Redis: the version and text of the last state sent
        self.created = 0  # rooms made over the connection's life
        self.allowance = limits.burst
        self.stamp = time.monotonic()
        self.refused = 0  # messages refused for rate since the client was last calm
        self.open = True
        self.answers: _Answers | None = None  # the lobby's note of this socket's recent request ids and answers
        self.frames: FrameLink | None = None  # a paper game's camera frames from this socket (noughts.web.paper)
        # Sends go through a queue and a task of their own, so a client that stops reading
        # never holds up the others (a send can wait for the socket's buffer to drain).
        self._outbox: deque[str | tuple[int, str]] = deque()
        self._ready = asyncio.Event()
        self._closing: asyncio.Task[None] | None = None
        self.writer = asyncio.create_task(self._write())

    @property
    def pending(self) -> int:
        """Messages waiting to be sent."""
        return len(self._outbox)

    def allow(self, limits: Limits) -> bool:
        """A token bucket: ``burst`` messages at once, ``rate`` a second after that."""
        now = time.monotonic()
        self.allowance = min(limits.burst, self.allowance + (now - self.stamp) * limits.rate)
        self.stamp = now
        if self.allowance >= limits.burst:
            self.refused = 0  # calm again: a steady trickle over the rate is still a flood, this is not
        if self.allowance < 1:
            return False
        self.allowance -= 1
        return True

    def push(self, message: str | dict[str, Any]) -> None:
        if not self.open:
            return
        text = message if isinstance(message, str) else encode(message)
        outbox = self._outbox
        if outbox and text.startswith(STATE_PREFIX) and isinstance(outbox[-1], str) \
                and outbox[-1].startswith(STATE_PREFIX):
            outbox[-1] = text  # not sent yet: the newer snapshot replaces it
            return
        budget = self.limits.outbox if self.seat is not None else self.limits.watcher_outbox
        if len(outbox) >= budget:
            self.drop(f"{'a player' if self.seat is not None else 'a spectator'} stopped reading")
            return
        outbox.append(text)
        self._ready.set()

    def push_all(self, texts: tuple[str, ...]) -> None:
        """Send several messages in order."""
        for text in texts:
            self.push(text)

    def drop(self, why: str) -> None:
        """Stop sending to a client that does not read; it gets a close frame (1008) if it ever reads again.

        A player's seat stays theirs (their token takes it back); only this socket goes.
        """
        log.info("closing a websocket: %s", why)
        self.open = False
        self._outbox.clear()
        self.writer.cancel()
        self._closing = asyncio.create_task(self._close_quietly(1008, "too slow: messages were not read"))

    async def _close_quietly(self, code: int, reason: str) -> None:
        with contextlib.suppress(Exception, asyncio.TimeoutError):
            await asyncio.wait_for(self.ws.close(code, reason), self.limits.stall_timeout)

    def close(self, code: int, reason: str) -> None:
        """Close after whatever is already queued has been sent."""
        if self.open:
            self._outbox.append((code, reason))
            self._ready.set()
            self.open = False

    async def _write(self) -> None:
        outbox, ready = self._outbox, self._ready
        try:
            while True:
                while not outbox:
                    ready.clear()
                    await ready.wait()
                item = outbox.popleft()
                if isinstance(item, tuple):
                    await self.ws.close(*item)
                    return
                await self.ws.send_text(item)
        except (WebSocketDisconnect, RuntimeError, OSError):
            self.open = False  # the client went away; its receive loop cleans up

    async def finish(self) -> None:
        """Let queued messages (and a requested close) go out briefly, then stop the writer."""
        self.open = False
        if not self.writer.done():
            if not self._outbox:
                self.writer.cancel()
            with contextlib.suppress(asyncio.CancelledError, asyncio.TimeoutError, Exception):
                await asyncio.wait_for(self.writer, 1.0)
        if self._closing is not None:
            with contextlib.suppress(asyncio.CancelledError, asyncio.TimeoutError, Exception):
                await asyncio.wait_for(self._closing, 1.0)


class _Idle(Exception):
    """The client said nothing for longer than it may."""


class _IdleTimer:
    """Ends a receive that waits longer than the idle limit, with one timer per quiet spell, not one per message.

    (``asyncio.wait_for`` around each receive made a task and a timer for every message: a tenth of a move's CPU.)
    A socket in no room must speak now and then; in a room, the room's own expiry ends it.
    """

    def __init__(self, conn: Connection, limits: Limits) -> None:
        self.conn, self.limits = conn, limits
        self.loop = asyncio.get_running_loop()
        self.last = self.loop.time()
        self.waiting: asyncio.Task[Any] | None = None
        self.expired = False
        self.timer: asyncio.TimerHandle | None = self.loop.call_at(self.last + self.limit, self._check)

    @property
    def limit(self) -> float:
        limits = self.limits
        return limits.idle_timeout if self.conn.room is None else max(limits.idle_timeout, limits.room_ttl)

    def _check(self) -> None:
        due = self.last + self.limit
        if self.loop.time() < due:  # a message came meanwhile: wait for the rest of the new spell
            self.timer = self.loop.call_at(due, self._check)
            return
        self.timer = None
        if self.waiting is not None:
            self.expired = True
            self.waiting.cancel()
        else:  # busy with a message (a computer's move, say): look again when it is done
            self.expired = True

    async def receive(self, get: Callable[[], Awaitable[Any]]) -> Any:
        if self.expired:
            raise _Idle
        due = self.last + self.limit
        if self.timer is not None and self.timer.when() > due:  # it left its room: the shorter limit holds
            self.timer.cancel()
            self.timer = self.loop.call_at(due, self._check)
        self.waiting = asyncio.current_task()
        try:
            event = await get()
        except asyncio.CancelledError:
            if self.expired:
                raise _Idle from None
            raise
        finally:
            self.waiting = None
        self.last = self.loop.time()
        return event

    def stop(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None


async def serve_socket(ws: WebSocket, lobby: Lobby) -> None:
    """The websocket endpoint: one connection's whole life (its host and origin were checked by the shield)."""
    limits, hub = lobby.limits, lobby.hub
    await ws.accept()
    if hub.connections >= limits.max_connections:
        await ws.close(code=1013, reason="the server is busy")
        return
    hub.connections += 1
    conn = Connection(ws, limits, client_key(ws.client.host if ws.client else None))
    conn.push(lobby.welcome())
    conn.push(lobby.recorder.scores)
    idle = _IdleTimer(conn, limits)
    get = ws.receive
    try:
        while conn.open:
            try:
                event = await idle.receive(get)
            except _Idle:
                conn.close(1001, "idle: no message for a long time")
                break
            if event["type"] == "websocket.disconnect":
                ws.client_state = WebSocketState.DISCONNECTED  # as Starlette's receive does
                break
            own = conn.allow(limits)
            if not own or not lobby.guard.allow_message(conn.address):
                conn.refused += 1
                if conn.refused == 1:  # one warning per flood, not one per message
                    refusal = (web_too_many_messages(limits.rate, address=False) if not own
                               else web_too_many_messages(limits.address_rate, address=True))
                    conn.push(error_message("rate_limited", refusal, None))
                if conn.refused >= limits.flood_close:
                    conn.close(1008, "too many messages")
                continue
            text = event.get("text")
            if text is None:
                picture = event.get("bytes")
                if picture is None:
                    conn.push(error_message("bad_message", WEB_NOT_TEXT, None))
                    continue
                await lobby.picture(conn, picture)  # a paper game's camera frame
                continue
            await lobby.handle(conn, text)
    except WebSocketDisconnect:
        pass
    finally:
        idle.stop()
        hub.connections -= 1
        await conn.finish()
        await lobby.leave(conn)
