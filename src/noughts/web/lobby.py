"""The lobby: what the server does with each message, room by room.

Every change is "get the room, change it, put it back, tell the hub": starting and joining
rooms, moves, rematches. The room's match makes the rules; the computer's move is worked out
off the event loop (``match.computer_job()`` on a worker thread, then ``match.apply``; hints and a
new board's players in processes of their own with ``noughts web``: see :mod:`noughts.web.costly`), and a
finished game is recorded by the match through the room's :class:`~noughts.web.recording.RoomRecording`
once the change that finished it is stored. With rooms shared between processes (Redis) a
change that loses the race to another process is applied again to the newer room, so two
processes never both accept a move. Whatever goes wrong with a message, the person gets a
sentence and the server goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from noughts import text
from noughts.errors import NoughtsError
from noughts.match import PERSON, Match
from noughts.sheet.camera import picture_size
from noughts.store import Recorded
from noughts.web.costly import CostlyWork, board_players, hint_for
from noughts.web.guard import Guard, Turnstile
from noughts.web.pace import Pace
from noughts.web.paper import FrameLink, paper_message, read_frame
from noughts.web.protocol import MAX_SIDE, Limits, Rejection, encode, error_message, parse
from noughts.web.rooms import Conflict, Kind, Room, RoomStore, new_code, new_token
from noughts.web.share import Share

if TYPE_CHECKING:
    from noughts.board import Board
    from noughts.game import Game
    from noughts.match import GameKeeper
    from noughts.paper_game import PaperView
    from noughts.store import Participant
    from noughts.web.connection import Connection
    from noughts.web.hub import Hub
    from noughts.web.recording import Recorder, RoomRecording

__all__ = ["Lobby"]

log = logging.getLogger("noughts.web")

T = TypeVar("T")
TRIES = 10  # a change that lost the race to another process this often is refused as "busy"
REMEMBERED_IDS = 32  # request ids kept per connection, with their answers, so a repeat is answered the same
# every board the page may ask about (a few MB): a shape's verdict is worked out once, whoever asks
SHAPES_KEPT = sum(max(rows, cols) for rows in range(1, MAX_SIDE + 1) for cols in range(1, MAX_SIDE + 1))
HINT_SECONDS = 2.0  # a hint the solver cannot find in this time is not worth the wait
HINT_NODES = 60_000  # nor one needing more positions (4×4 from empty takes about 43,000): the same on any machine
HINT_NODES_CELLS = 16  # a position costs more on a bigger board: beyond 4×4, HINT_NODES shrinks in proportion
HINTS_KEPT = 256  # hints kept by board shape and position: asking again, anyone, costs nothing
Shape = tuple[int, int, int]
Hint = tuple[int | None, str]


class BoardPlayers(NamedTuple):
    """Which computer players can play a board, and the one offered first."""

    unable: dict[str, str | None]  # every player, with why it cannot play the board (None: it can)
    default: str  # noughts.players.default_for(board)
    unable_text: str  # the players that cannot, in a sentence for the page (text.web_not_for_board)


class _Later:
    """Returned by a handler whose answer comes later (a hint being worked out): nothing is said now."""


LATER = _Later()


class _Answers:
    """One connection's recent requests (by the client's ``id``) and what each was answered."""

    def __init__(self) -> None:
        self.done: OrderedDict[str, list[str]] = OrderedDict()
        self.request: str | None = None  # the id of the request being handled
        self.current: list[str] = []  # its answers so far


class Repeated(Exception):
    """A seat's request with an id the room remembers: it changed the room already (before a reconnect)."""


class Lobby:
    """The rooms, the recorder and the hub, and a handler for each type of message."""

    def __init__(self, limits: Limits, rooms: RoomStore, recorder: Recorder, hub: Hub,
                 guard: Guard | None = None) -> None:
        self.limits = limits
        self.guard = guard or Guard(limits)  # what each client address may take (noughts.web.guard)
        self.rooms = rooms
        self.recorder = recorder
        self.hub = hub
        self._sweeper: asyncio.Task[None] | None = None
        self._welcome: str | None = None
        self.share = Share()  # how friends reach this server (the app sets it)
        self.hint_seconds = HINT_SECONDS
        self._shapes: OrderedDict[Shape, asyncio.Future[BoardPlayers]] = OrderedDict()
        self.hint_nodes = HINT_NODES
        self._hints: OrderedDict[tuple[str, int], Hint] = OrderedDict()  # (board notation, position key) → hint
        self._hinting: set[Connection] = set()  # connections whose hint is being worked out
        self._hint_tasks: set[asyncio.Task[None]] = set()
        self.pace = Pace()  # which computer players answer so fast that their moves are made on the event loop
        self.costly = CostlyWork()  # where hints and board checks are worked out (noughts web: processes of their own)
        # Messages from sockets in no seat, a few a turn of the event loop: a crowd of spectators joining and
        # leaving together waits its turn, and the players' moves (never held here) go on meanwhile. The same
        # turnstile as new connections' requests: a turn never serves a slice of each.
        self.unseated: Turnstile = self.guard.turnstile

    # lifecycle ------------------------------------------------------------------------------
    async def start(self) -> None:
        await self.recorder.start()
        await self.hub.start()
        await asyncio.get_running_loop().run_in_executor(None, _warm_up)
        await self.costly.start()
        self._sweeper = asyncio.create_task(self._sweep())

    async def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
        await self.recorder.stop()  # games still being saved tell their rooms through the hub
        await self.hub.stop()
        self.costly.close()

    @property
    def minutes(self) -> int:
        """How long a room lives without a move, in minutes, as people are told."""
        return round(self.limits.room_ttl / 60)

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(self.limits.sweep_every)
            try:
                expired = await self.rooms.expire(time.time())
                self.guard.gone(expired)
                self.hub.closed(expired, self.minutes)
                await self._expire_unjoined()
                self.guard.prune()
            except Exception:
                log.exception("expiring rooms failed; trying again later")

    async def _expire_unjoined(self) -> None:
        """Rooms nobody joined or played in, and nobody is in, go after ``unjoined_ttl``: a room filler's rooms."""
        deserted = [code for code in self.guard.unjoined() if not any(self.hub.presence(code))]
        for code in deserted:
            await self.rooms.delete(code)
        self.guard.gone(deserted)

    def welcome(self) -> str:
        """The ``welcome`` message (the same text for everyone: encoded once)."""
        if self._welcome is None:
            from noughts import __version__, players
            from noughts.board import Board
            from noughts.match import DEFAULT_FIRST, THINKING_AFTER
            from noughts.web.protocol import MAX_SIDE

            able = set(players.able(Board()))
            self._welcome = encode({
                "type": "welcome", "version": __version__, "limits": self.limits.public(),
                "players": [{"name": n, "label": players.label(n), "description": players.describe(n)}
                            for n in players.names() if n in able],
                "default_opponent": players.default_for(Board()),
                "first": [{"name": rule, "label": label, "description": about}
                          for rule, label, about in text.first_choices()],
                "default_first": DEFAULT_FIRST, "max_side": MAX_SIDE, "words": text.WEB_WORDS,
                "thinking_after": THINKING_AFTER,
            })
        return self._welcome

    # one message ----------------------------------------------------------------------------
    async def handle(self, conn: Connection, received: str) -> None:
        """Act on one message; whatever goes wrong, the person gets a sentence and the server goes on."""
        if conn.seat is None:
            await self.unseated.turn()
        kind = None
        answers = conn.answers
        request: str | None = None
        try:
            message = parse(received, self.limits)
            kind = message["type"]
            request = message.get("id")
            if request is not None:
                if answers is None:
                    answers = conn.answers = _Answers()
                earlier = answers.done.get(request)
                if earlier is not None:  # a double click, a second press: the same answer, nothing done twice
                    for reply in earlier:
                        conn.push(reply)
                    return
                answers.request, answers.current = request, []
            if await getattr(self, f"_on_{kind}")(conn, message) is LATER:
                if answers is not None and answers.request == request:
                    answers.request, answers.current = None, []  # answered (and remembered) when it comes
                return
            if request is not None and answers is not None and not answers.current:
                self.answer(conn, {"type": "done", "re": kind})
        except Repeated:  # sent again after a reconnect: done once, and said so, not refused
            self.answer(conn, {"type": "done", "re": kind, "repeated": True})  # (joining showed the board)
        except Rejection as rejection:
            refused = error_message(rejection.code, str(rejection), kind or rejection.kind)
            if request is None and rejection.request is not None:  # unreadable, but its id is known
                refused["id"] = rejection.request
            self.answer(conn, refused)
        except Exception:
            log.exception("a %s message failed", kind)
            self.answer(conn, error_message("internal", text.WEB_INTERNAL_ERROR, kind))
        finally:
            if request is not None and answers is not None and answers.request == request:
                answers.done[request] = answers.current
                answers.request, answers.current = None, []
                while len(answers.done) > REMEMBERED_IDS:
                    answers.done.popitem(last=False)

    def answer(self, conn: Connection, message: dict[str, Any]) -> None:
        """Send the answer to the message being handled (with its ``id``, remembered for a repeat)."""
        answers = conn.answers
        if answers is not None and answers.request is not None:
            said = encode({**message, "id": answers.request})
            answers.current.append(said)
            conn.push(said)
        else:
            conn.push(message)

    async def leave(self, conn: Connection) -> None:
        """The connection is gone (or has left its room): its seat stays held by its token."""
        await self.hub.detach(conn)

    async def _on_play_computer(self, conn: Connection, message: dict[str, Any]) -> None:
        self.guard.may_think(conn.address)  # the computer may move first, and the board may need a look
        place = await self._may_create(conn)
        try:
            shape = (message["rows"], message["cols"], message["k"])
            board_players = await self.able(shape, conn.address)  # the solver's verdict on the board, worked out once
            opponent = message["opponent"] or board_players.default  # the match says any refusal
            room = await self._new_room("computer", opponent, message["first"], message["name"], shape)
        except BaseException:
            self.guard.unreserve(conn.address, place)
            raise
        await self._create(conn, room, place)

    async def _on_paper_start(self, conn: Connection, message: dict[str, Any]) -> None:
        """A game against the computer on a sheet of paper the page's camera shows (noughts.web.paper)."""
        self.guard.may_think(conn.address)
        place = await self._may_create(conn)
        try:
            shape = (message["rows"], message["cols"], message["k"])
            board_players = await self.able(shape, conn.address)
            opponent = message["opponent"] or board_players.default
            room = await self._new_room("paper", opponent, message["first"], message["name"], shape)
        except BaseException:
            self.guard.unreserve(conn.address, place)
            raise
        await self._create(conn, room, place)
        paper = room.paper
        assert paper is not None
        self.answer(conn, paper_message(None, room.match.board, 0, phase=paper.phase(), say=paper.instruction(),
                                        owed=paper.owed))

    async def picture(self, conn: Connection, data: bytes) -> None:
        """A camera frame (a binary message) for the sender's paper game: checked here, read off the event
        loop, then played; the answer (``paper``) goes to the sender only. Never kept, never logged."""
        link = conn.frames
        if link is None:
            link = conn.frames = FrameLink(self.limits)
        link.frames += 1
        number = link.frames
        limits = self.limits
        try:
            code = conn.room
            room = await self.rooms.get(code) if code is not None and conn.seat is not None else None
            if room is None or room.paper is None:
                raise Rejection("not_paper", text.PAPER_NOT_IN_PAPER_GAME)
            if len(data) > limits.max_picture_bytes:
                raise Rejection("too_big", text.paper_frame_too_big(len(data), limits.max_picture_bytes))
            size, taken = picture_size(data)
            if not taken:
                raise Rejection("not_a_picture", text.PAPER_NOT_A_PICTURE)
            if size is not None and size[0] * size[1] > limits.max_picture_pixels:
                raise Rejection("too_many_pixels",
                                text.paper_frame_too_many_pixels(size[0], size[1], limits.max_picture_pixels))
            if not link.allow(limits):
                if not link.dropping:  # one notice a flood
                    link.dropping = True
                    paper = room.paper
                    conn.push({**paper_message(None, room.match.board, number, phase=paper.phase(),
                                               say=text.paper_slow_down(limits.picture_rate), owed=paper.owed),
                               "dropped": True})
                return
            link.dropping = False
        except Rejection as refusal:
            if refusal.code in ("not_paper", "too_big", "not_a_picture", "too_many_pixels") \
                    or link.first_time(refusal.code):
                conn.push(error_message(refusal.code, str(refusal), "picture"))
            return
        link.waiting = (number, data)  # a frame still waiting is older: only the newest is worth reading
        if not link.reading:
            link.reading = True
            task = asyncio.get_running_loop().create_task(self._read_pictures(conn, link, room.code))
            self._hint_tasks.add(task)
            task.add_done_callback(self._hint_tasks.discard)

    async def _read_pictures(self, conn: Connection, link: FrameLink, code: str) -> None:
        try:
            while link.waiting is not None and conn.open:
                (number, data), link.waiting = link.waiting, None
                try:
                    await self._read_picture(conn, link, code, number, data)
                except Rejection as refusal:
                    if link.first_time(refusal.code):  # too_much_work, busy: said once, until a frame is read
                        conn.push(error_message(refusal.code, str(refusal), "picture"))
                except Exception:
                    log.exception("reading a frame of a paper game failed")  # (never the frame itself)
                    conn.push(error_message("internal", text.WEB_INTERNAL_ERROR, "picture"))
        finally:
            link.reading = False
            link.waiting = None

    async def _read_picture(self, conn: Connection, link: FrameLink, code: str, number: int, data: bytes) -> None:
        room = await self.rooms.get(code)
        if room is None or room.paper is None:
            raise Rejection("not_paper", text.PAPER_NOT_IN_PAPER_GAME)
        address = conn.address
        self.guard.may_think(address)
        board = room.match.board
        try:
            reading, took = await self.costly.run(read_frame, data, board.rows, board.cols,
                                                  self.limits.max_picture_pixels)
        except ImportError:
            raise Rejection("no_camera", text.PAPER_CANNOT_READ) from None
        self.guard.spend_cpu(address, took)
        if isinstance(reading, str):
            sentence = text.PAPER_NOT_A_PICTURE if reading == "not_a_picture" else text.paper_frame_too_many_pixels(
                0, 0, self.limits.max_picture_pixels)
            conn.push(error_message(reading, sentence, "picture"))
            return
        link.said = None  # read: the next refusal is told again
        seen: list[tuple[int, int]] = []

        def look(room: Room) -> PaperView:
            paper = room.paper
            if paper is None:
                raise Rejection("not_paper", text.PAPER_NOT_IN_PAPER_GAME)
            seen.append((room.game_no, len(room.moves)))
            room.version += 1  # what recent frames showed is part of the room
            return paper.see(reading)

        def after_computer(room: Room, view: PaperView) -> PaperView:
            paper = room.paper
            if paper is not None and view.phase == "think" and paper.phase() == "draw":
                return paper.see(reading)  # the computer has moved: the person is told where to draw it
            return view

        room, view = await self._update(code, look, self._gone(conn), show=False, leaving=conn, thinks=True,
                                        then=after_computer)
        if (room.game_no, len(room.moves)) != seen[-1]:
            self.hub.broadcast(room)
        conn.push(paper_message(view, room.match.board, number, phase=view.phase, say=view.say, owed=view.owed))

    async def _on_create_room(self, conn: Connection, message: dict[str, Any]) -> None:
        place = await self._may_create(conn)
        try:
            shape = (message["rows"], message["cols"], message["k"])
            room = await self._new_room("friend", PERSON, message["first"], message["name"], shape)
        except BaseException:
            self.guard.unreserve(conn.address, place)
            raise
        await self._create(conn, room, place)

    async def _new_room(self, kind: Kind, opponent: str, first: str, name: str | None, shape: Shape) -> Room:
        """A room on any board; the match is made on a worker thread (it may ask the solver about the board)."""
        default = "You" if kind == "computer" else "Player 1"

        def make() -> Match:
            return Match(opponent, names=[name or default], first=first, rows=shape[0], cols=shape[1], k=shape[2])

        try:
            match = await asyncio.get_running_loop().run_in_executor(None, make)
        except NoughtsError as error:
            raise Rejection("bad_field", text.web_sentence(str(error))) from None
        match.new_game()
        return Room(new_code(), kind, match, [new_token(), None])

    async def able(self, shape: Shape, payer: str | None = None) -> BoardPlayers:
        """Every computer player and why it cannot play ``shape`` (None: it can), worked out once per shape.

        Asking the solver-backed players takes up to about a second (see :attr:`costly`), charged to
        the address ``payer`` (refused if it has had its share: ``Guard.may_think``); people asking
        about the same board meanwhile wait for the same answer.
        """
        known = self._shapes.get(shape)
        if known is None:
            if payer is not None:
                self.guard.may_think(payer)

            async def worked_out() -> BoardPlayers:
                verdict, took = await self.costly.run(board_players, shape)
                if payer is not None:
                    self.guard.spend_cpu(payer, took)
                return BoardPlayers(*verdict)

            known = self._shapes[shape] = asyncio.ensure_future(worked_out())
            while len(self._shapes) > SHAPES_KEPT:
                self._shapes.popitem(last=False)
        else:
            self._shapes.move_to_end(shape)
        try:
            return await asyncio.shield(known)
        except Exception:
            self._shapes.pop(shape, None)  # asked again next time
            raise

    async def _on_players(self, conn: Connection, message: dict[str, Any]) -> None:
        shape = (message["rows"], message["cols"], message["k"])
        verdicts, default, unable_text = await self.able(shape, conn.address)
        self.answer(conn, {"type": "players", "rows": shape[0], "cols": shape[1], "k": shape[2],
                           "able": [n for n, why in verdicts.items() if why is None],
                           "unable": {n: why for n, why in verdicts.items() if why is not None},
                           "unable_text": unable_text, "default": default})

    async def _may_create(self, conn: Connection) -> str | None:
        """A place for one more room of ``conn``'s address (see ``Guard.reserve_room``), or a refusal."""
        if conn.created >= self.limits.rooms_per_connection:
            raise Rejection("too_many_rooms", text.web_rooms_per_connection(self.limits.rooms_per_connection))
        return await self.guard.reserve_room(conn.address, self.rooms)

    async def _create(self, conn: Connection, room: Room, place: str | None) -> None:
        """Store the new room in the ``place`` held for it (given back if it cannot be stored)."""
        try:
            records = self._recording(room)
            failure = await self._computer(room, conn.address)
            await records.reserve(self.recorder)  # a game the computer ended at once needs a place too
        except BaseException:
            self.guard.unreserve(conn.address, place)
            raise
        try:
            for _ in range(TRIES):
                room.touched = time.time()
                try:
                    try:
                        await self.rooms.put(room)
                    except Rejection as full:
                        if full.code != "full":
                            raise
                        self.hub.closed(await self.rooms.expire(room.touched), self.minutes)  # if any expired
                        await self.rooms.put(room)
                except Conflict:  # the code is taken: draw another
                    room.code = new_code()
                    continue
                break
            else:
                raise Rejection("busy", text.WEB_NO_FREE_CODE)
        except BaseException:
            records.give_back(self.recorder)
            self.guard.unreserve(conn.address, place)
            raise
        records.flush(self.recorder.for_room(room.code, self._saved))
        conn.created += 1
        await self.guard.created(conn.address, room.code, place)
        await self.hub.attach(conn, room.code, 0)
        self.answer(conn, {"type": "joined", "room": room.code, "seat": 0, "token": room.tokens[0],
                           "link": f"/r/{room.code}", **self._share(conn, room.code)})
        self.hub.broadcast(room)
        if failure is not None:
            raise failure

    async def _on_join(self, conn: Connection, message: dict[str, Any]) -> None:
        code = message["room"]
        token: str | None = message["token"]

        def take_seat(room: Room) -> tuple[int | None, str | None]:
            if token is not None:
                seat = room.seat_with_token(token)
                if seat is None:
                    raise Rejection("bad_token", text.web_wrong_token(code))
                return seat, token
            if conn.room == code and conn.seat is not None:
                return conn.seat, None  # already seated here: joining again changes nothing
            if message.get("watch"):
                return None, None
            return room.take_free_seat(message["name"]) or (None, None)

        missing = text.web_no_such_game(code, self.minutes)
        await self.guard.may_join(conn.address)  # a guesser is locked out; a rejoin loop is slowed
        try:
            room, (seat, held) = await self._update(code, take_seat, missing, computer=False, show=False)
        except Rejection as refusal:
            if refusal.code in ("no_room", "bad_token"):
                await self.guard.failed_join(conn.address)
            raise
        if conn.room != code:
            self.guard.used(code)
        if seat is None:
            watchers = await self.hub.watchers(code, besides=conn)
            if watchers >= self.limits.max_watchers:
                raise Rejection("crowded", text.web_crowded(code, watchers))
        await self.hub.attach(conn, code, seat)
        joined = {"type": "joined", "room": code, "seat": seat, "token": held, "link": f"/r/{code}",
                  **self._share(conn, code)}
        if seat is None:  # watching: because the seats are taken, or until the visitor gives a name for the free one
            free = room.seat_free
            joined["seat_free"] = free
            joined["message"] = text.invited(shown_code(code)) if free else text.ROOM_FULL_WATCHING
        self.answer(conn, joined)
        if seat is None:  # the room is as it was: the newcomer sees it now, the others the count soon
            self.hub.show_to(conn, room)
            self.hub.show_presence_soon(code)
        else:
            self.hub.broadcast(room)

    def _share(self, conn: Connection, code: str) -> dict[str, str]:
        """The room's full link for a friend (``url``) and whether it works from other devices (``reach``)."""
        headers = conn.ws.headers
        scheme = "https" if conn.ws.url.scheme == "wss" else "http"
        url, reach = self.share.link(code, headers.get("host", ""), scheme)
        return {"url": url, "reach": reach}

    async def _on_move(self, conn: Connection, message: dict[str, Any]) -> None:
        code, seat = self._seated(conn, "move")

        def move(room: Room) -> None:
            _not_on_paper(room)
            mine = room.match.mark_of(seat)
            if message.get("mark", mine) != mine:
                raise Rejection("not_your_seat", text.web_not_your_mark(mine, message["mark"]))
            if message.get("game", room.game_no) != room.game_no:
                raise Rejection("stale", text.WEB_MOVE_FOR_EARLIER_GAME)
            room.play(seat, board_cell(room.match.start, message["cell"]), message.get("ply"))

        await self._update(code, move, self._gone(conn), leaving=conn, thinks=True)
        self.guard.used(code)

    async def _on_undo(self, conn: Connection, message: dict[str, Any]) -> None:
        """Take back the person's last move (and the computer's reply to it), by the match's rule."""
        code, seat = self._seated(conn, "undo")
        said: list[str] = []

        def undo(room: Room) -> tuple[int, ...]:
            _not_on_paper(room)
            if message.get("game", room.game_no) != room.game_no:
                raise Rejection("stale", text.WEB_FOR_EARLIER_GAME)
            listener = room.match.add_listener(lambda event: said.append(event.text) if event.kind == "undo" else None)
            try:
                taken = room.match.undo(seat)  # the match's one rule: this person's own last move
            except NoughtsError as error:
                raise Rejection("no_undo", str(error)) from None
            finally:
                room.match.remove_listener(listener)
            room.version += 1
            return taken

        said.clear()
        _, taken = await self._update(code, undo, self._gone(conn), leaving=conn)
        self.answer(conn, {"type": "undone", "cells": list(taken), "message": said[-1] if said else ""})

    async def _on_hint(self, conn: Connection, message: dict[str, Any]) -> _Later | None:
        """The solver's best move for the person, by the match's rule (at their own move).

        Worked out away from the event loop (see :attr:`costly`) within ``hint_seconds`` and
        ``hint_nodes``, once per board shape and position (the answer is kept for everyone), and one
        at a time per connection: the answer comes when it is ready, while the connection's moves go on.
        """
        code, seat = self._seated(conn, "hint")
        room = await self.rooms.get(code)
        if room is None:
            await self.leave(conn)
            raise Rejection("no_room", self._gone(conn))
        match = room.match
        refusal = match.hint_refusal(seat)
        if refusal is not None:
            raise Rejection("game_over" if match.game is None or match.game_over else "not_your_turn", refusal)
        board = match.board
        key = (board.geometry.notation, board.key)
        about = {"type": "hint", "game": room.game_no, "ply": len(room.moves)}
        known = self._hints.get(key)
        if known is not None:
            self._hints.move_to_end(key)
            self.answer(conn, {**about, "cell": known[0], "message": known[1]})
            return None
        if conn in self._hinting:
            raise Rejection("no_hint", text.HINT_BEING_WORKED_OUT)
        self.guard.may_think(conn.address)
        self.costly.refuse_if_busy()
        answers = conn.answers
        request = answers.request if answers is not None else None
        address = conn.address
        nodes = self.hint_nodes * HINT_NODES_CELLS // max(HINT_NODES_CELLS, board.size)

        async def work_out() -> None:
            try:
                (cell, sentence), took = await self.costly.run(hint_for, board, self.hint_seconds, nodes)
                self.guard.spend_cpu(address, took)
                self._hints[key] = (cell, sentence)
                while len(self._hints) > HINTS_KEPT:
                    self._hints.popitem(last=False)
                reply = {**about, "cell": cell, "message": sentence}
            except Rejection as refusal:  # too much waiting to be worked out already
                reply = error_message(refusal.code, str(refusal), "hint")
            except Exception:
                log.exception("a hint failed")
                reply = error_message("internal", text.WEB_INTERNAL_ERROR, "hint")
            finally:
                self._hinting.discard(conn)
            if request is None or answers is None:
                conn.push(reply)
                return
            said = encode({**reply, "id": request})
            answers.done[request] = [said]  # the same id again is answered the same way
            while len(answers.done) > REMEMBERED_IDS:
                answers.done.popitem(last=False)
            conn.push(said)

        self._hinting.add(conn)
        task = asyncio.get_running_loop().create_task(work_out())
        self._hint_tasks.add(task)  # a task nobody references can be collected mid-flight
        task.add_done_callback(self._hint_tasks.discard)
        return LATER

    async def _on_rematch(self, conn: Connection, message: dict[str, Any]) -> None:
        code, _ = self._seated(conn, "rematch")
        def rematch(room: Room) -> None:
            _not_on_paper(room)  # the next game starts when the camera sees an empty sheet
            room.rematch()

        await self._update(code, rematch, self._gone(conn), leaving=conn, thinks=True)

    async def _on_leave(self, conn: Connection, message: dict[str, Any]) -> None:
        await self.leave(conn)
        self.answer(conn, {"type": "left"})

    async def _on_scores(self, conn: Connection, message: dict[str, Any]) -> None:
        self.answer(conn, self.recorder.scores)

    async def _on_ping(self, conn: Connection, message: dict[str, Any]) -> None:
        self.answer(conn, {"type": "pong"})

    # rooms ----------------------------------------------------------------------------------
    def _recording(self, room: Room) -> _HeldRecords:
        """The room's match records into a holder, sent to the recorder once the room is stored.

        With a shared store a change can lose the race to another process and be applied again
        to the newer room; only the version that is stored may record its finished game.
        """
        held = _HeldRecords()
        room.match.store = held
        return held

    def _seated(self, conn: Connection, kind: str) -> tuple[str, int]:
        """The room and seat of ``conn``, which sent a message of type ``kind`` only a player may send."""
        if conn.room is None:
            raise Rejection("not_in_room", text.WEB_NOT_IN_A_GAME)
        if conn.seat is None:
            raise Rejection("spectator", text.web_watching_cannot(kind))
        return conn.room, conn.seat

    def _gone(self, conn: Connection) -> str:
        return text.web_game_gone(str(conn.room))

    async def _update(self, code: str, change: Callable[[Room], T], missing: str, *, computer: bool = True,
                      show: bool = True, leaving: Connection | None = None, thinks: bool = False,
                      then: Callable[[Room, T], T] | None = None) -> tuple[Room, T]:
        """Get the room, ``change`` it, let the computer answer, put it back, show everyone.

        If another process changed the room meanwhile, all of it is done again on the newer
        room (where ``change`` may now refuse): a room is never written over a version its
        writer did not read. ``missing`` says the room is gone; ``leaving`` is then out of it.
        ``thinks``: the change makes the computer move, refused if ``leaving``'s address has had its
        share of the server's CPU (``Guard.may_think``). ``then`` looks at the room again after the computer's
        answer (a paper game tells where to draw it).
        """
        seat, request = self._request_of(leaving)
        for _ in range(TRIES):
            room = await self.rooms.get(code)
            if room is None:
                if leaving is not None:
                    await self.leave(leaving)
                raise Rejection("no_room", missing)
            if seat is not None and request is not None and room.did(seat, request):
                raise Repeated(request)  # (a kept copy may be behind, never ahead: this holds for it too)
            if thinks and room.kind != "friend" and leaving is not None:
                self.guard.may_think(leaving.address)  # the computer answers: the address pays for its thinking
            records = self._recording(room)
            try:
                outcome = change(room)
            except Rejection:
                if room.cached:  # refused on a copy that may be behind another process's change: read it
                    continue
                raise
            if seat is not None and request is not None:
                room.remember(seat, request)  # stored with the change, or not at all
            room.touched = time.time()
            # (a room for two people has no computer seat: nothing to ask)
            failure = await self._computer(room, leaving.address if leaving is not None else None) \
                if computer and room.kind != "friend" else None
            if then is not None:
                outcome = then(room, outcome)
            try:
                # A game this change ends takes its place in the recorder's queue before anyone sees
                # it end; when the queue is full, only this message waits (see noughts.web.recording).
                if records.games:
                    await records.reserve(self.recorder)
                await self.rooms.put(room)
            except Conflict:
                records.give_back(self.recorder)
                continue
            except BaseException:
                records.give_back(self.recorder)
                raise
            records.flush(self.recorder.for_room(code, self._saved))
            if show:
                self.hub.broadcast(room)
            if failure is not None:
                raise failure
            return room, outcome
        raise Rejection("busy", text.WEB_CHANGED_TOO_OFTEN)

    def _request_of(self, conn: Connection | None) -> tuple[int | None, str | None]:
        """The seat of ``conn`` and the id of the request it is making (None, None: no id, or not seated)."""
        if conn is None or conn.seat is None:
            return None, None
        answers = conn.answers
        return (conn.seat, answers.request) if answers is not None else (None, None)

    async def _computer(self, room: Room, payer: str | None) -> Exception | None:
        """Let the computer answer; a failure is returned, so the person's move is still kept and shown.

        The CPU time its moves take is charged to the address ``payer`` (see ``Guard.spend_cpu``).

        The computer's move is worked out on a worker thread, so the event loop serves the other
        rooms meanwhile; the match drops the answer if the game moved on. One state carries the
        person's move and the reply: one message instead of two is a third less work per move.
        """
        match = room.match
        took = 0.0
        try:
            while (job := match.computer_job()) is not None:
                if self.pace.quick(job):  # a few µs on this board: a thread's hand-off would cost more
                    cell, cost = self.pace.run_timed(job)
                else:
                    cell, cost = await asyncio.get_running_loop().run_in_executor(None, self.pace.run_timed, job)
                took += cost
                if not match.apply(job, cell):
                    break
                if room.paper is not None:
                    room.paper.computer_moved(cell)  # played: now to be drawn on the sheet
                room.version += 1
        except Exception as error:
            return error
        finally:
            if payer is not None and took:
                self.guard.spend_cpu(payer, took)
        return None

    def _saved(self, code: str, recorded: dict[str, Any], scores: dict[str, Any] | None) -> None:
        """A finished game of room ``code`` has been kept: its players hear how, everyone the new scores."""
        self.hub.tell_saved(code, recorded, scores or self.recorder.scores)


class _HeldRecords:
    """A room match's store while a change is not yet stored: finished games wait here.

    After :meth:`flush` it passes games straight on: the in-process store hands every
    message the same room, so a computer's move still being worked out for an earlier
    message may end the game after a later message's change was stored.
    """

    def __init__(self) -> None:
        self.games: list[tuple[Game, Participant, Participant, str | None]] = []
        self.places: list[str | None] = []  # for each game: None, a place is held in the recorder; or why not
        self.keeper: GameKeeper | None = None

    @property
    def enabled(self) -> bool:
        return True

    def record(self, game: Game, x: Participant, o: Participant, *, game_key: str | None = None) -> Recorded:
        if self.keeper is not None:
            return self.keeper.record(game, x, o, game_key=game_key)
        self.games.append((game, x, o, game_key))
        return Recorded(None)

    async def reserve(self, recorder: Recorder) -> None:
        """Take a place in the recorder's queue for each finished game (awaiting one when it is full)."""
        while len(self.places) < len(self.games):
            self.places.append(await recorder.reserve())

    def give_back(self, recorder: Recorder) -> None:
        """The change was not stored: the places taken for its games go back."""
        recorder.give_back(sum(place is None for place in self.places))
        self.places.clear()

    def flush(self, keeper: RoomRecording) -> None:
        """The change is stored: its finished games go to ``keeper`` (the recorder), once."""
        self.keeper = keeper
        for number, (game, x, o, key) in enumerate(self.games):
            if number < len(self.places):
                keeper.keep(game, x, o, key, reserved=self.places[number] is None, refused=self.places[number])
            else:
                keeper.record(game, x, o, game_key=key)
        self.games.clear()
        self.places.clear()


def _not_on_paper(room: Room) -> None:
    """A paper game's moves are drawn on the sheet: the screen's moves, take-backs and rematches are refused."""
    if room.paper is not None:
        raise Rejection("paper_game", text.PAPER_MOVES_ON_PAPER)


def shown_code(code: str) -> str:
    """A room's code as people read it, in groups of four: ``K7M2-QXAB-9CDE``."""
    return "-".join(code[i:i + 4] for i in range(0, len(code), 4))


def board_cell(board: Board, cell: int | str) -> int:
    """A move's cell on the room's board: an index, or a name like ``b2``; a sentence if there is none."""
    try:
        if isinstance(cell, str):
            return board.parse_cell(cell)
        if 0 <= cell < board.size:
            return cell
    except NoughtsError:
        pass
    last = board.size - 1
    shown = cell if isinstance(cell, int) else repr(cell[:10])
    raise Rejection("bad_cell", text.web_no_cell_on_board(shown, last, board.cell_name(last)))


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
