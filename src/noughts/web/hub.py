"""The hub: which connections are in which room, and sending each room's changes out to them.

Each server process has one hub and knows only its own sockets. A room's ``state`` is encoded
once and queued on every connection in the room; presence (which seats are connected, how
many watch) is worked out here from the connections. With rooms shared between processes,
this is the part that would subscribe to a channel per room (see docs/web-protocol.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from noughts.web.protocol import encode

if TYPE_CHECKING:
    from noughts.web.connection import Connection
    from noughts.web.rooms import Room, RoomStore

__all__ = ["Hub"]


class Hub:
    """The connections in each room of one process."""

    def __init__(self, rooms: RoomStore) -> None:
        self.rooms = rooms
        self.watching: dict[str, set[Connection]] = {}  # room code → connections in it
        self.connections = 0  # open websockets

    def watchers(self, code: str, besides: Connection | None = None) -> int:
        """Connections in the room without a seat (not counting ``besides``)."""
        return sum(c.seat is None for c in self.watching.get(code, ()) if c is not besides)

    async def attach(self, conn: Connection, code: str, seat: int | None) -> None:
        """Put ``conn`` in room ``code`` (leaving any other room) in ``seat``, or watching."""
        if conn.room != code:
            await self.detach(conn)
        conn.room, conn.seat = code, seat
        self.watching.setdefault(code, set()).add(conn)

    async def detach(self, conn: Connection) -> None:
        """Take ``conn`` out of its room; the others see who is still there."""
        code = conn.room
        if code is None:
            return
        conn.room = conn.seat = None
        others = self.watching.get(code)
        if others is None:
            return
        others.discard(conn)
        if not others:
            del self.watching[code]
            return
        room = await self.rooms.get(code)
        if room is not None:
            self.broadcast(room)

    def broadcast(self, room: Room) -> None:
        """Send the room's state to everyone in it (the same text for all: encoded once)."""
        conns = self.watching.get(room.code, ())
        connected = (any(c.seat == 0 for c in conns), any(c.seat == 1 for c in conns))
        watchers = sum(c.seat is None for c in conns)
        text = encode(room.state(connected, watchers))
        for conn in conns:
            conn.push(text)

    def tell(self, code: str, message: dict[str, Any], *, seated: bool = False) -> None:
        """Send one message to everyone in room ``code`` (``seated``: only to its players)."""
        text = encode(message)
        for conn in self.watching.get(code, ()):
            if not seated or conn.seat is not None:
                conn.push(text)

    def closed(self, codes: list[str], minutes: int) -> None:
        """The rooms are gone: everyone in them is told, and is in no room any more."""
        for code in codes:
            for conn in self.watching.pop(code, ()):
                conn.room = conn.seat = None
                conn.push({"type": "closed", "room": code,
                           "message": f"Game {code} was closed after {minutes} minutes without a move."})
