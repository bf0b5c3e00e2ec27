"""The ASGI app: the page over HTTP, and one websocket per browser tab for the games.

The server holds all authority: it keeps the rooms, checks every move, makes the computer's
moves and writes finished games to the SQLite store. Pages only draw what they are sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import sys
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from noughts.web.protocol import Limits, Rejection, encode, parse
from noughts.web.rooms import MemoryRoomStore, Room, RoomStore, new_code

if TYPE_CHECKING:
    from noughts.game import Game
    from noughts.store import Participant, Store

__all__ = ["Hub", "Recorder", "create_app"]

log = logging.getLogger("noughts.web")

STATIC = {"index.html": "text/html; charset=utf-8", "style.css": "text/css; charset=utf-8",
          "app.js": "text/javascript; charset=utf-8"}
OUTBOX = 256  # messages queued for one socket; a client this far behind is not reading
SECURITY_HEADERS = {
    "content-security-policy": "default-src 'self'; img-src 'self' data:; connect-src 'self'; "
                               "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",  # room links carry the code
    "cache-control": "no-cache",
}


class Recorder:
    """Scores and history, written by one thread of its own.

    A store's SQLite connection belongs to the thread that opened it, and a write waits for
    fsync, so every store call runs on this single worker, never on the event loop.
    """

    def __init__(self, db: str | None = None, enabled: bool = True,
                 notify: Callable[[str], None] | None = None) -> None:
        self.db, self.enabled = db, enabled
        self.notify = notify or (lambda line: print(f"noughts web: {line}", file=sys.stderr))
        self.scores: dict[str, Any] = _scores_payload(None)
        self._store: Store | None = None
        self._executor: ThreadPoolExecutor | None = None

    async def start(self) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="noughts-db")
        self.scores = await self._run(self._open)

    def _open(self) -> dict[str, Any]:
        from noughts.store import Store, open_store

        if self.enabled:
            self._store = open_store(self.db)
        else:
            self._store = Store.disabled("Scores and history are off for this server.")
        for line in self._store.notices:
            self.notify(line)
        return _scores_payload(self._store)

    async def _run(self, work: Callable[[], Any]) -> Any:
        assert self._executor is not None, "the recorder has not been started"
        return await asyncio.get_running_loop().run_in_executor(self._executor, work)

    async def record(self, game: Game, x: Participant, o: Participant) -> dict[str, Any]:
        """Keep a finished game; returns the ``recorded`` message (scores refreshed as a side effect)."""
        def write() -> tuple[dict[str, Any], dict[str, Any] | None]:
            from noughts.errors import NoughtsError

            assert self._store is not None
            if not self._store.enabled:
                return {"type": "recorded", "game_id": None, "message": self._store.reason}, None
            try:
                done = self._store.record(game, x, o)
            except NoughtsError as error:  # disk full, locked too long: the game goes on regardless
                return {"type": "recorded", "game_id": None, "message": " ".join(str(error).split())}, None
            return ({"type": "recorded", "game_id": done.game_id, "points": done.points, "run": done.run,
                     "difficulty": done.difficulty, "high_score": done.high_score,
                     "new_high_score": done.new_high_score}, _scores_payload(self._store))

        message, scores = await self._run(write)
        if scores is not None:
            self.scores = scores
        result: dict[str, Any] = message
        return result

    async def stop(self) -> None:
        if self._executor is None:
            return
        if self._store is not None:
            await self._run(self._store.close)
        self._executor.shutdown(wait=True)
        self._executor = None


def _scores_payload(store: Store | None) -> dict[str, Any]:
    if store is None or not store.enabled:
        return {"type": "scores", "enabled": False, "run": 0, "high": {"easy": 0, "medium": 0, "hard": 0},
                "opponents": {}, "people": []}
    scores = store.scores()
    people = sorted(scores.people.items(), key=lambda item: (-item[1].wins, item[0]))[:10]
    return {
        "type": "scores", "enabled": True, "run": scores.run, "high": scores.high,
        "opponents": {name: {"wins": t.wins, "losses": t.losses, "draws": t.draws}
                      for name, t in scores.opponents.items()},
        "people": [{"name": name, "wins": t.wins, "losses": t.losses, "draws": t.draws} for name, t in people],
    }


class Connection:
    """One open websocket: which room and seat it is in, its message allowance, its outbox."""

    def __init__(self, ws: WebSocket, limits: Limits) -> None:
        self.ws = ws
        self.room: str | None = None
        self.seat: int | None = None
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


class Hub:
    """The rooms and everyone connected to them."""

    def __init__(self, limits: Limits, rooms: RoomStore, recorder: Recorder) -> None:
        self.limits = limits
        self.rooms = rooms
        self.recorder = recorder
        self.watching: dict[str, set[Connection]] = {}  # room code → connections in it
        self.connections = 0
        self._tasks: set[asyncio.Task[None]] = set()  # games being saved
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
        if self._tasks:  # a game that ended just before the stop is still saved
            await asyncio.wait(list(self._tasks), timeout=15)
        await self.recorder.stop()

    def _spawn(self, work: Any) -> None:
        task: asyncio.Task[None] = asyncio.create_task(work)
        self._tasks.add(task)  # a task nobody references can be garbage-collected mid-flight
        task.add_done_callback(self._tasks.discard)

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(self.limits.sweep_every)
            try:
                self._closed(await self.rooms.expire(time.time()))
            except Exception:
                log.exception("expiring rooms failed; trying again later")

    def _closed(self, codes: list[str]) -> None:
        minutes = round(self.limits.room_ttl / 60)
        for code in codes:
            for conn in self.watching.pop(code, ()):
                conn.room = conn.seat = None
                conn.push({"type": "closed", "room": code,
                           "message": f"Game {code} was closed after {minutes} minutes without a move."})

    # one websocket --------------------------------------------------------------------------
    async def endpoint(self, ws: WebSocket) -> None:
        if not _same_origin(ws):  # another site's page must not play (or fill rooms) as our visitor
            await ws.close(code=1008)
            return
        await ws.accept()
        if self.connections >= self.limits.max_connections:
            await ws.close(code=1013, reason="the server is busy")
            return
        self.connections += 1
        conn = Connection(ws, self.limits)
        conn.push(self._welcome_text())
        conn.push(self.recorder.scores)
        try:
            while conn.open:
                event = await ws.receive()
                if event["type"] == "websocket.disconnect":
                    break
                if not conn.allow(self.limits):
                    conn.refused += 1
                    if conn.refused == 1:  # one warning per flood, not one per message
                        conn.push(_error("rate_limited", f"Too many messages: at most {self.limits.rate:g} "
                                                         "a second. Some were ignored.", None))
                    if conn.refused >= self.limits.flood_close:
                        conn.close(1008, "too many messages")
                    continue
                text = event.get("text")
                if text is None:
                    conn.push(_error("bad_message", "Messages are JSON text, not binary.", None))
                    continue
                await self.handle(conn, text)
        except WebSocketDisconnect:
            pass
        finally:
            self.connections -= 1
            await conn.finish()
            await self._detach(conn)

    def _welcome_text(self) -> str:
        if self._welcome is None:
            from noughts import __version__, players

            self._welcome = encode({
                "type": "welcome", "version": __version__, "limits": self.limits.public(),
                "players": [{"name": n, "description": players.describe(n)} for n in players.names()],
            })
        return self._welcome

    async def handle(self, conn: Connection, text: str) -> None:
        """Act on one message; whatever goes wrong, the person gets a sentence and the server goes on."""
        kind = None
        try:
            message = parse(text, self.limits)
            kind = message["type"]
            await getattr(self, f"_on_{kind}")(conn, message)
        except Rejection as rejection:
            conn.push(_error(rejection.code, str(rejection), kind))
        except Exception:
            log.exception("a %s message failed", kind)
            conn.push(_error("internal", "Something went wrong on the server with that message; "
                                         "the game carries on.", kind))

    # messages -------------------------------------------------------------------------------
    async def _on_play_computer(self, conn: Connection, message: dict[str, Any]) -> None:
        room = Room.for_computer(message["opponent"], message["first"], message["name"])
        await self._create(conn, room)

    async def _on_create_room(self, conn: Connection, message: dict[str, Any]) -> None:
        await self._create(conn, Room.for_friend(message["first"], message["name"]))

    async def _create(self, conn: Connection, room: Room) -> None:
        if conn.created >= self.limits.rooms_per_connection:
            raise Rejection("too_many_rooms", f"One connection may start at most {self.limits.rooms_per_connection} "
                                              "games. Reload the page to go on.")
        while await self.rooms.get(room.code) is not None:
            room.code = new_code()
        room.touched = time.time()
        try:
            await self.rooms.put(room)
        except Rejection:
            self._closed(await self.rooms.expire(room.touched))  # make room if any have expired
            await self.rooms.put(room)
        conn.created += 1
        token = room.seats[0].token if room.seats[0] else None
        await self._attach(conn, room.code, 0)
        conn.push({"type": "joined", "room": room.code, "seat": 0, "token": token, "link": f"/r/{room.code}"})
        await self._changed(room)

    async def _on_join(self, conn: Connection, message: dict[str, Any]) -> None:
        code = message["room"]
        room = await self.rooms.get(code)
        if room is None:
            minutes = round(self.limits.room_ttl / 60)
            raise Rejection("no_room", f"There is no game with the code {code}: it may have expired "
                                       f"after {minutes} minutes without a move.")
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
                room.version += 1
        if seat is None:
            watchers = sum(c.seat is None for c in self.watching.get(code, ()) if c is not conn)
            if watchers >= self.limits.max_watchers:
                raise Rejection("crowded", f"Game {code} already has {watchers} people watching; try again later.")
        room.touched = time.time()
        await self.rooms.put(room)
        await self._attach(conn, code, seat)
        conn.push({"type": "joined", "room": code, "seat": seat, "token": token, "link": f"/r/{code}"})
        self._broadcast(room)

    async def _on_move(self, conn: Connection, message: dict[str, Any]) -> None:
        room, seat = await self._seated(conn, "move")
        mine = room.mark_of(seat)
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
        await self._detach(conn)
        conn.push({"type": "left"})

    async def _on_scores(self, conn: Connection, message: dict[str, Any]) -> None:
        conn.push(self.recorder.scores)

    async def _on_ping(self, conn: Connection, message: dict[str, Any]) -> None:
        conn.push({"type": "pong"})

    # rooms and the people in them -----------------------------------------------------------
    async def _current(self, conn: Connection) -> Room:
        if conn.room is None:
            raise Rejection("not_in_room", "You are not in a game: start one, or join one with its code.")
        room = await self.rooms.get(conn.room)
        if room is None:
            code = conn.room
            await self._detach(conn)
            raise Rejection("no_room", f"Game {code} is over and gone (it expired).")
        return room

    async def _seated(self, conn: Connection, action: str) -> tuple[Room, int]:
        room = await self._current(conn)
        if conn.seat is None:
            raise Rejection("spectator", f"You are watching this game, so you cannot {action}. "
                                         "Choose New game to play your own.")
        return room, conn.seat

    async def _attach(self, conn: Connection, code: str, seat: int | None) -> None:
        if conn.room != code:
            await self._detach(conn)
        conn.room, conn.seat = code, seat
        self.watching.setdefault(code, set()).add(conn)

    async def _detach(self, conn: Connection) -> None:
        code = conn.room
        if code is None:
            return
        conn.room = conn.seat = None
        others = self.watching.get(code)
        if others is not None:
            others.discard(conn)
            if not others:
                del self.watching[code]
            else:  # the others see who is still here
                room = await self.rooms.get(code)
                if room is not None:
                    self._broadcast(room)

    def _broadcast(self, room: Room) -> None:
        conns = self.watching.get(room.code, ())
        connected = (any(c.seat == 0 for c in conns), any(c.seat == 1 for c in conns))
        watchers = sum(c.seat is None for c in conns)
        text = encode(room.state(connected, watchers))  # the same text for everyone: encoded once
        for conn in conns:
            conn.push(text)

    async def _changed(self, room: Room) -> None:
        """Let the computer answer at once, then store and show the change, and record a finished game.

        Against the computer one state carries the person's move and the reply: the reply takes
        microseconds, and one message instead of two is a third less work per move for the server.
        """
        try:
            if room.result is None and room.computer_to_move:
                room.computer_move()
        finally:  # even if the computer failed, the person's move is kept and shown
            await self.rooms.put(room)
            self._broadcast(room)
        if room.result is not None:
            self._record(room)

    def _record(self, room: Room) -> None:
        from noughts.game import Game
        from noughts.store import Participant

        who = []
        for seat in (room.starter, 1 - room.starter):  # X, then O
            holder = room.seats[seat]
            assert holder is not None, "a finished game had both seats filled"
            who.append(Participant.computer(holder.name) if holder.kind == "computer"
                       else Participant.human(holder.name))
        game = Game(x_name=who[0].name, o_name=who[1].name)
        for cell in room.moves:
            game.play(cell)
        self._spawn(self._save(room.code, game, who[0], who[1]))

    async def _save(self, code: str, game: Game, x: Participant, o: Participant) -> None:
        message = await self.recorder.record(game, x, o)
        conns = self.watching.get(code, ())
        for conn in conns:
            if conn.seat is not None:
                conn.push(message)
        scores = encode(self.recorder.scores)
        for conn in conns:
            conn.push(scores)


def _error(code: str, message: str, re: str | None) -> dict[str, Any]:
    return {"type": "error", "code": code, "message": message, "re": re}


def _same_origin(ws: WebSocket) -> bool:
    """Browsers send Origin; programs (tests, benchmarks, robots) usually do not, and may connect."""
    origin = ws.headers.get("origin")
    if origin is None:
        return True
    return urlsplit(origin).netloc.lower() == ws.headers.get("host", "").lower()


def _warm_up() -> None:
    """Make every computer player's first move now, not while someone waits (the solver, imports)."""
    import random

    from noughts import players
    from noughts.board import Board

    for name in players.names():
        player = players.get(name, random.Random(0))
        board = Board()
        while not board.is_over:
            board = board.play(player.choose(board))


def create_app(db: str | None = None, *, scores: bool = True, limits: Limits | None = None,
               rooms: RoomStore | None = None, notify: Callable[[str], None] | None = None) -> Starlette:
    """The web game as an ASGI app.

    ``db`` is the score file (``None``: the default, as for ``noughts play``); ``scores=False``
    records nothing. ``rooms`` replaces the in-process room store (see :class:`RoomStore`).
    """
    limits = limits or Limits()
    hub = Hub(limits, rooms or MemoryRoomStore(limits.max_rooms, limits.room_ttl), Recorder(db, scores, notify))
    files = {name: resources.files("noughts.web").joinpath("static", name).read_bytes() for name in STATIC}
    tags = {name: '"' + hashlib.sha256(body).hexdigest()[:16] + '"' for name, body in files.items()}

    def send_file(request: Request, name: str) -> Response:
        headers = {**SECURITY_HEADERS, "etag": tags[name]}
        if request.headers.get("if-none-match") == tags[name]:
            return Response(status_code=304, headers=headers)
        return Response(files[name], media_type=STATIC[name], headers=headers)

    async def page(request: Request) -> Response:
        return send_file(request, "index.html")

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC or name == "index.html":
            return PlainTextResponse("Not Found", status_code=404)
        return send_file(request, name)

    async def health(request: Request) -> Response:
        return JSONResponse({"ok": True, "connections": hub.connections})

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await hub.start()
        try:
            yield
        finally:
            await hub.stop()

    app = Starlette(routes=[
        Route("/", page), Route("/r/{code}", page), Route("/static/{name}", static),
        Route("/healthz", health), WebSocketRoute("/ws", hub.endpoint),
    ], lifespan=lifespan)
    app.state.hub = hub
    return app
