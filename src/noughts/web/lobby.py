"""The lobby: what the server does with each message, room by room.

Every change is "get the room, change it, put it back, tell the hub": starting and joining
rooms, moves, rematches. The room's match makes the rules; the computer's move is worked out
off the event loop (``match.computer_job()`` on a worker thread, then ``match.apply``), and a
finished game is recorded by the match through the room's :class:`~noughts.web.recording.RoomRecording`.
Whatever goes wrong with a message, the person gets a sentence and the server goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING, Any

from noughts.web.protocol import Limits, Rejection, encode, error_message, parse
from noughts.web.rooms import Room, RoomStore, new_code

if TYPE_CHECKING:
    from noughts.web.connection import Connection
    from noughts.web.hub import Hub
    from noughts.web.recording import Recorder

__all__ = ["Lobby"]

log = logging.getLogger("noughts.web")


class Lobby:
    """The rooms, the recorder and the hub, and a handler for each type of message."""

    def __init__(self, limits: Limits, rooms: RoomStore, recorder: Recorder, hub: Hub) -> None:
        self.limits = limits
        self.rooms = rooms
        self.recorder = recorder
        self.hub = hub
        self._sweeper: asyncio.Task[None] | None = None
        self._welcome: str | None = None

    # lifecycle ------------------------------------------------------------------------------
    async def start(self) -> None:
        await self.recorder.start()
        await asyncio.get_running_loop().run_in_executor(None, _warm_up)
        self._sweeper = asyncio.create_task(self._sweep())

    async def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
        await self.recorder.stop()

    @property
    def minutes(self) -> int:
        """How long a room lives without a move, in minutes, as people are told."""
        return round(self.limits.room_ttl / 60)

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(self.limits.sweep_every)
            try:
                self.hub.closed(await self.rooms.expire(time.time()), self.minutes)
            except Exception:
                log.exception("expiring rooms failed; trying again later")

    def welcome(self) -> str:
        """The ``welcome`` message (the same text for everyone: encoded once)."""
        if self._welcome is None:
            from noughts import __version__, players
            from noughts.board import Board
            from noughts.match import DEFAULT_FIRST, DEFAULT_OPPONENT, FIRST_RULES

            able = set(players.able(Board()))
            self._welcome = encode({
                "type": "welcome", "version": __version__, "limits": self.limits.public(),
                "players": [{"name": n, "label": players.label(n), "description": players.describe(n)}
                            for n in players.names() if n in able],
                "default_opponent": DEFAULT_OPPONENT,
                "first": [{"name": rule, "description": about} for rule, about in FIRST_RULES.items()],
                "default_first": DEFAULT_FIRST,
            })
        return self._welcome

    # one message ----------------------------------------------------------------------------
    async def handle(self, conn: Connection, text: str) -> None:
        """Act on one message; whatever goes wrong, the person gets a sentence and the server goes on."""
        kind = None
        try:
            message = parse(text, self.limits)
            kind = message["type"]
            await getattr(self, f"_on_{kind}")(conn, message)
        except Rejection as rejection:
            conn.push(error_message(rejection.code, str(rejection), kind))
        except Exception:
            log.exception("a %s message failed", kind)
            conn.push(error_message("internal", "Something went wrong on the server with that message; "
                                                "the game carries on.", kind))

    async def leave(self, conn: Connection) -> None:
        """The connection is gone (or has left its room): its seat stays held by its token."""
        await self.hub.detach(conn)

    async def _on_play_computer(self, conn: Connection, message: dict[str, Any]) -> None:
        self._may_create(conn)
        await self._create(conn, Room.for_computer(message["opponent"], message["first"], message["name"]))

    async def _on_create_room(self, conn: Connection, message: dict[str, Any]) -> None:
        self._may_create(conn)
        await self._create(conn, Room.for_friend(message["first"], message["name"]))

    def _may_create(self, conn: Connection) -> None:
        if conn.created >= self.limits.rooms_per_connection:
            raise Rejection("too_many_rooms", f"One connection may start at most {self.limits.rooms_per_connection} "
                                              "games. Reload the page to go on.")

    async def _create(self, conn: Connection, room: Room) -> None:
        while await self.rooms.get(room.code) is not None:
            room.code = new_code()
        self._recording(room)
        room.touched = time.time()
        try:
            await self.rooms.put(room)
        except Rejection:
            self.hub.closed(await self.rooms.expire(room.touched), self.minutes)  # make room if any have expired
            await self.rooms.put(room)
        conn.created += 1
        await self.hub.attach(conn, room.code, 0)
        conn.push({"type": "joined", "room": room.code, "seat": 0, "token": room.tokens[0],
                   "link": f"/r/{room.code}"})
        await self._changed(room)

    async def _on_join(self, conn: Connection, message: dict[str, Any]) -> None:
        code = message["room"]
        room = await self._load(code)
        if room is None:
            raise Rejection("no_room", f"There is no game with the code {code}: it may have expired "
                                       f"after {self.minutes} minutes without a move.")
        token: str | None = message["token"]
        seat: int | None = None
        if token is not None:
            seat = room.seat_with_token(token)
            if seat is None:
                raise Rejection("bad_token", f"That seat token does not belong to game {code}, so it cannot "
                                             "take a seat. Join without it to watch or to take a free seat.")
        elif conn.room == code and conn.seat is not None:
            seat = conn.seat  # already seated here: joining again changes nothing
        else:
            taken = room.take_free_seat(message["name"])
            if taken is not None:
                seat, token = taken
        if seat is None:
            watchers = self.hub.watchers(code, besides=conn)
            if watchers >= self.limits.max_watchers:
                raise Rejection("crowded", f"Game {code} already has {watchers} people watching; try again later.")
        room.touched = time.time()
        await self.rooms.put(room)
        await self.hub.attach(conn, code, seat)
        conn.push({"type": "joined", "room": code, "seat": seat, "token": token, "link": f"/r/{code}"})
        self.hub.broadcast(room)

    async def _on_move(self, conn: Connection, message: dict[str, Any]) -> None:
        room, seat = await self._seated(conn, "move")
        mine = room.match.mark_of(seat)
        if message.get("mark", mine) != mine:
            raise Rejection("not_your_seat", f"You play {mine}, so you cannot move for {message['mark']}.")
        if message.get("game", room.game_no) != room.game_no:
            raise Rejection("stale", "That move was meant for an earlier game; this is a new one.")
        room.play(seat, message["cell"], message.get("ply"))
        room.touched = time.time()
        await self._changed(room)

    async def _on_rematch(self, conn: Connection, message: dict[str, Any]) -> None:
        room, _ = await self._seated(conn, "start a rematch")
        room.rematch()
        room.touched = time.time()
        await self._changed(room)

    async def _on_leave(self, conn: Connection, message: dict[str, Any]) -> None:
        await self.leave(conn)
        conn.push({"type": "left"})

    async def _on_scores(self, conn: Connection, message: dict[str, Any]) -> None:
        conn.push(self.recorder.scores)

    async def _on_ping(self, conn: Connection, message: dict[str, Any]) -> None:
        conn.push({"type": "pong"})

    # rooms ----------------------------------------------------------------------------------
    async def _load(self, code: str) -> Room | None:
        room = await self.rooms.get(code)
        if room is not None:
            self._recording(room)
        return room

    def _recording(self, room: Room) -> None:
        """The room's match records through the recorder's thread, and the room hears of it."""
        room.match.store = self.recorder.for_room(room.code, self._saved)

    async def _current(self, conn: Connection) -> Room:
        if conn.room is None:
            raise Rejection("not_in_room", "You are not in a game: start one, or join one with its code.")
        room = await self._load(conn.room)
        if room is None:
            code = conn.room
            await self.leave(conn)
            raise Rejection("no_room", f"Game {code} is over and gone (it expired).")
        return room

    async def _seated(self, conn: Connection, action: str) -> tuple[Room, int]:
        room = await self._current(conn)
        if conn.seat is None:
            raise Rejection("spectator", f"You are watching this game, so you cannot {action}. "
                                         "Choose New game to play your own.")
        return room, conn.seat

    async def _changed(self, room: Room) -> None:
        """Let the computer answer, then store the room and show everyone in it.

        The computer's move is worked out on a worker thread, so the event loop serves the other
        rooms meanwhile; the match drops the answer if the game moved on. One state carries the
        person's move and the reply: one message instead of two is a third less work per move.
        """
        match = room.match
        try:
            while (job := match.computer_job()) is not None:
                cell = await asyncio.get_running_loop().run_in_executor(None, job.run)
                if not match.apply(job, cell):
                    break
                room.version += 1
        finally:  # even if the computer failed, the person's move is kept and shown
            await self.rooms.put(room)
            self.hub.broadcast(room)

    def _saved(self, code: str, recorded: dict[str, Any], scores: dict[str, Any] | None) -> None:
        """A finished game of room ``code`` has been kept: its players hear how, everyone the new scores."""
        self.hub.tell(code, recorded, seated=True)
        self.hub.tell(code, scores or self.recorder.scores)


def _warm_up() -> None:
    """Make every computer player's first move now, not while someone waits (the solver, imports)."""
    import random

    from noughts import players
    from noughts.board import Board
    from noughts.errors import NoughtsError

    # which players can play the board: worked out once, then kept; only those are offered
    for name in players.able(Board()):
        board = Board()
        try:
            player = players.get(name, random.Random(0))
            while not board.is_over:
                board = board.play(player.choose(board))
        except NoughtsError:  # a failing plug-in player: its error shows when someone picks it, not at start
            continue
