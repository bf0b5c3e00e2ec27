"""The hub: which connections are in which room, and sending each room's changes out to them.

Each server process has one hub and knows only its own sockets. A room's ``state`` is encoded
once and queued on every connection in the room; presence (which seats are connected, how
many watch) is worked out here from the connections. With rooms shared between processes,
:class:`noughts.web.shared.RedisHub` adds the other processes' sockets: each change is
published on the room's channel and every process passes it on to its own sockets.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from noughts.text import web_game_closed
from noughts.web.protocol import encode

if TYPE_CHECKING:
    from noughts.web.connection import Connection
    from noughts.web.rooms import Room, RoomStore

__all__ = ["Hub", "Presence", "with_presence"]

Presence = tuple[int, int, int]  # connections in seat 0, in seat 1, watching
PRESENCE_EVERY = 0.5  # seconds: people starting or stopping watching are shown to a room at most this often


class Hub:
    """The connections in each room of one process.

    A player coming or going is shown to the room at once; spectators coming and going change
    only the number watching, which the room is shown at most every ``presence_every`` seconds
    (one state for any number of changes): a spectator joining and leaving in a loop would
    otherwise cost a state to everyone in the room twice a visit.
    """

    presence_every = PRESENCE_EVERY

    def __init__(self, rooms: RoomStore) -> None:
        self.rooms = rooms
        self.watching: dict[str, set[Connection]] = {}  # room code → connections in it
        self.connections = 0  # open websockets
        self._presence_due: dict[str, asyncio.TimerHandle] = {}  # room → its coming show of who watches
        self._showing: set[asyncio.Task[None]] = set()
        self._scores: tuple[dict[str, Any], str] | None = None  # the last scores told, and their text

    async def start(self) -> None:
        """Begin serving (a shared hub connects and listens here)."""

    async def stop(self) -> None:
        """Stop serving."""

    def local_presence(self, code: str) -> Presence:
        counts = [0, 0, 0]  # seat 0, seat 1, watching (index 2: a seat of None)
        for conn in self.watching.get(code, ()):
            seat = conn.seat
            counts[2 if seat is None else seat] += 1
        return counts[0], counts[1], counts[2]

    def presence(self, code: str) -> Presence:
        """Who is in the room, over every process (here: this one)."""
        return self.local_presence(code)

    async def watchers(self, code: str, besides: Connection | None = None) -> int:
        """Connections in the room without a seat (not counting ``besides``)."""
        return sum(c.seat is None for c in self.watching.get(code, ()) if c is not besides)

    async def attach(self, conn: Connection, code: str, seat: int | None) -> None:
        """Put ``conn`` in room ``code`` (leaving any other room) in ``seat``, or watching."""
        if conn.room != code:
            await self.detach(conn)
            conn.shown = None
        conn.room, conn.seat = code, seat
        self.watching.setdefault(code, set()).add(conn)
        await self._present(code)

    async def detach(self, conn: Connection) -> None:
        """Take ``conn`` out of its room; the others see who is still there."""
        code = conn.room
        if code is None:
            return
        watched = conn.seat is None
        conn.room = conn.seat = None
        others = self.watching.get(code)
        if others is None:
            return
        others.discard(conn)
        if not others:
            del self.watching[code]
        await self._present(code)
        if others:
            if watched:
                self.show_presence_soon(code)
            else:
                await self._show_presence(code)

    def show_to(self, conn: Connection, room: Room) -> None:
        """Send the room's state to ``conn`` alone (a spectator who just came in)."""
        s0, s1, watchers = self.presence(room.code)
        conn.push(encode(room.state((s0 > 0, s1 > 0), watchers)))

    def show_presence_soon(self, code: str) -> None:
        """The number watching room ``code`` changed: show it within ``presence_every``, once for all changes."""
        if code not in self._presence_due:
            self._presence_due[code] = asyncio.get_running_loop().call_later(
                self.presence_every, self._show_presence_now, code)

    def _show_presence_now(self, code: str) -> None:
        del self._presence_due[code]
        if code in self.watching:
            task = asyncio.get_running_loop().create_task(self._show_presence(code))
            self._showing.add(task)  # a task nobody references can be collected mid-flight
            task.add_done_callback(self._showing.discard)

    async def _present(self, code: str) -> None:
        """This process's sockets in room ``code`` changed (a shared hub tells the others)."""

    async def _show_presence(self, code: str) -> None:
        room = await self.rooms.get(code)
        if room is not None:
            self.broadcast(room)

    def broadcast(self, room: Room) -> None:
        """Send the room's state to everyone in it (the same text for all: encoded once)."""
        s0, s1, watchers = self.presence(room.code)
        self.push_local(room.code, encode(room.state((s0 > 0, s1 > 0), watchers)))

    def push_local(self, code: str, text: str, *, seated: bool = False) -> None:
        for conn in self.watching.get(code, ()):
            if not seated or conn.seat is not None:
                conn.push(text)

    def tell(self, code: str, message: dict[str, Any], *, seated: bool = False) -> None:
        """Send one message to everyone in room ``code`` (``seated``: only to its players)."""
        self.push_local(code, encode(message), seated=seated)

    def tell_saved(self, code: str, recorded: dict[str, Any], scores: dict[str, Any]) -> None:
        """A game of room ``code`` was kept: ``recorded`` to its players, then ``scores`` to everyone in it.

        Each player's two messages are queued together, in order, and a batch's ``scores`` (one dict for all its
        rooms) is encoded once.
        """
        if self._scores is None or self._scores[0] is not scores:
            self._scores = (scores, encode(scores))
        told, everyone = encode(recorded), self._scores[1]
        for conn in self.watching.get(code, ()):
            if conn.seat is not None:
                conn.push_all((told, everyone))
            else:
                conn.push(everyone)

    def closed(self, codes: list[str], minutes: int) -> None:
        """The rooms are gone: everyone in them is told, and is in no room any more."""
        for code in codes:
            self.close_local(code, minutes)

    def close_local(self, code: str, minutes: int) -> None:
        for conn in self.watching.pop(code, ()):
            conn.room = conn.seat = None
            conn.push({"type": "closed", "room": code, "message": web_game_closed(code, minutes)})


def with_presence(state: dict[str, Any], presence: Presence) -> dict[str, Any]:
    """A ``state`` message with who is connected filled in (computer seats always are)."""
    seats = [None if seat is None else {**seat, "connected": seat["kind"] == "computer" or presence[number] > 0}
             for number, seat in enumerate(state["seats"])]
    return {**state, "seats": seats, "watchers": presence[2]}
