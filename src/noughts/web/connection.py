"""One websocket per browser tab: accepting it, reading its messages within limits, writing to it.

:func:`serve_socket` is the websocket endpoint: it checks the origin and the connection limit,
greets the client, reads one message at a time (a token bucket refuses floods), hands each to
the lobby, and on the way out takes the connection out of its room. :class:`Connection` holds
what the server knows about one socket and sends through a queue of its own, so a client that
stops reading never holds up the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from starlette.websockets import WebSocket, WebSocketDisconnect

from noughts.web.protocol import Limits, encode, error_message

if TYPE_CHECKING:
    from noughts.web.lobby import Lobby

__all__ = ["OUTBOX", "Connection", "serve_socket"]

log = logging.getLogger("noughts.web")

OUTBOX = 256  # messages queued for one socket; a client this far behind is not reading


class Connection:
    """One open websocket: which room and seat it is in, its message allowance, its outbox."""

    def __init__(self, ws: WebSocket, limits: Limits) -> None:
        self.ws = ws
        self.room: str | None = None
        self.seat: int | None = None
        self.shown: tuple[int, str] | None = None  # with rooms in Redis: the version and text of the last state sent
        self.created = 0  # rooms made over the connection's life
        self.allowance = limits.burst
        self.stamp = time.monotonic()
        self.refused = 0  # messages refused for rate since the client was last calm
        self.open = True
        # Sends go through a queue and a task of their own, so a client that stops reading
        # never holds up the others (a send can wait for the socket's buffer to drain).
        self.outbox: asyncio.Queue[str | tuple[int, str]] = asyncio.Queue(OUTBOX)
        self.writer = asyncio.create_task(self._write())

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
        try:
            self.outbox.put_nowait(message if isinstance(message, str) else encode(message))
        except asyncio.QueueFull:
            log.info("closing a websocket that stopped reading")
            self.open = False
            self.writer.cancel()

    def close(self, code: int, reason: str) -> None:
        """Close after whatever is already queued has been sent."""
        if self.open:
            with contextlib.suppress(asyncio.QueueFull):
                self.outbox.put_nowait((code, reason))
            self.open = False

    async def _write(self) -> None:
        try:
            while True:
                item = await self.outbox.get()
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
            if self.outbox.empty():
                self.writer.cancel()
            with contextlib.suppress(asyncio.CancelledError, asyncio.TimeoutError, Exception):
                await asyncio.wait_for(self.writer, 1.0)


async def serve_socket(ws: WebSocket, lobby: Lobby) -> None:
    """The websocket endpoint: one connection's whole life."""
    limits, hub = lobby.limits, lobby.hub
    if not same_origin(ws):  # another site's page must not play (or fill rooms) as our visitor
        await ws.close(code=1008)
        return
    await ws.accept()
    if hub.connections >= limits.max_connections:
        await ws.close(code=1013, reason="the server is busy")
        return
    hub.connections += 1
    conn = Connection(ws, limits)
    conn.push(lobby.welcome())
    conn.push(lobby.recorder.scores)
    try:
        while conn.open:
            event = await ws.receive()
            if event["type"] == "websocket.disconnect":
                break
            if not conn.allow(limits):
                conn.refused += 1
                if conn.refused == 1:  # one warning per flood, not one per message
                    conn.push(error_message("rate_limited", f"Too many messages: at most {limits.rate:g} "
                                                            "a second. Some were ignored.", None))
                if conn.refused >= limits.flood_close:
                    conn.close(1008, "too many messages")
                continue
            text = event.get("text")
            if text is None:
                conn.push(error_message("bad_message", "Messages are JSON text, not binary.", None))
                continue
            await lobby.handle(conn, text)
    except WebSocketDisconnect:
        pass
    finally:
        hub.connections -= 1
        await conn.finish()
        await lobby.leave(conn)


def same_origin(ws: WebSocket) -> bool:
    """Browsers send Origin; programs (tests, benchmarks, robots) usually do not, and may connect."""
    origin = ws.headers.get("origin")
    if origin is None:
        return True
    return urlsplit(origin).netloc.lower() == ws.headers.get("host", "").lower()
