"""Rooms: a :class:`~noughts.match.Match` with a code, seat tokens and a place to watch from.

The match decides everything about the games (who starts, whose turn it is, the computer's
moves, the tally, the result sentences, recording a finished game). A room adds what only the
web needs: the code people type, the secret token of each seat a person holds, whether a
friend has taken the second seat, and the ``state`` message every page draws.

A room is plain data (``to_dict``/``from_dict`` round-trip through JSON, the match inside it
through ``Match.to_dict``), so it can live in another process; :class:`RoomStore` is all the
server asks of whatever holds the rooms, and :class:`MemoryRoomStore` is the default. Nothing
here knows about sockets.

Seat 0 belongs to whoever made the room; seat 1 to the computer or to the friend who opened
the link. X always moves first, so "who starts" is which seat plays X: the match's rule says
(``alternate`` unless the room was made with another).

>>> room = Room.for_computer("easy", first="me", name="Ann")
>>> room.match.mark_of(0), room.match.mark_of(1), room.match.seat_to_move
('X', 'O', 0)
>>> room.play(0, 4)
>>> room.play(0, 0)
Traceback (most recent call last):
  ...
noughts.web.protocol.Rejection: Wait: it is Easy's turn.
"""

from __future__ import annotations

import secrets
import time
from typing import TYPE_CHECKING, Any, Literal, Protocol

from noughts import text
from noughts.errors import CellTaken, GameOver, NotYourTurn, NoughtsError
from noughts.match import DEFAULT_FIRST, DEFAULT_OPPONENT, PERSON, Match
from noughts.paper_game import PaperGame
from noughts.web.protocol import CODE_ALPHABET, CODE_LENGTH, Rejection

if TYPE_CHECKING:
    from collections.abc import Mapping

    from noughts.store import Store

__all__ = ["Conflict", "MemoryRoomStore", "Room", "RoomStore", "new_code", "new_token"]

Kind = Literal["computer", "friend", "paper"]  # paper: against the computer, played on a sheet the camera reads
# A move the match refuses, by the type of its error: the code a page or a program acts on.
_MOVE_ERROR_CODES: dict[type[NoughtsError], str] = {
    CellTaken: "occupied", NotYourTurn: "not_your_turn", GameOver: "game_over",
}
REMEMBERED_PER_SEAT = 16  # request ids a room keeps for each seat: a retry after a reconnect is seen as one


def new_code() -> str:
    """A room's code: 12 symbols of Crockford's base 32 from ``secrets``, 60 random bits (guessing is hopeless)."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def new_token() -> str:
    """A seat's secret: 192 random bits, URL-safe, never shown to anyone but its holder."""
    return secrets.token_urlsafe(24)


class Room:
    """A table for one game after another between the same two seats."""

    def __init__(self, code: str, kind: Kind, match: Match, tokens: list[str | None], *,
                 touched: float | None = None, version: int = 0) -> None:
        self.code = code
        self.kind: Kind = kind
        self.match = match
        # a paper room's game as the camera sees it (what is owed on the sheet, what recent frames showed)
        self.paper: PaperGame | None = PaperGame(match) if kind == "paper" else None
        self.tokens = tokens  # by seat; None: the computer's seat, or a friend's seat nobody has taken yet
        self.touched = touched if touched is not None else time.time()
        self.version = version  # bumped on every change: a shared store can compare-and-set on it
        # The version the store held when this copy was read (None: never stored). A shared
        # store writes only over that version, so two processes never both change one room.
        self.stored_version: int | None = None
        self.cached = False  # handed out from a copy the store kept, not read just now: it may be behind
        self.written_state: tuple[int, dict[str, Any]] | None = None  # a shared store's last state written, by version
        # Each seat's most recent request ids that changed the room: kept with the room (in Redis too),
        # so a request sent again after a reconnect, to any process, is known as done, not done twice.
        self.requests: list[list[str]] = [[], []]

    # making rooms ---------------------------------------------------------------------------
    @classmethod
    def for_computer(cls, opponent: str = DEFAULT_OPPONENT, first: str = DEFAULT_FIRST, name: str | None = None,
                     *, store: Store | None = None, seed: int | str | None = None) -> Room:
        """A game against a computer player; ``first`` is the match's rule for who starts."""
        match = _match(opponent, name or "You", first, store, seed)
        match.new_game()
        return cls(new_code(), "computer", match, [new_token(), None])

    @classmethod
    def for_friend(cls, first: str = DEFAULT_FIRST, name: str | None = None, *, store: Store | None = None,
                   seed: int | str | None = None) -> Room:
        """A room waiting for a friend: seat 1 is free until someone opens the link."""
        match = _match(PERSON, name or "Player 1", first, store, seed)
        match.new_game()
        return cls(new_code(), "friend", match, [new_token(), None])

    @property
    def seat_free(self) -> bool:
        """A friend room whose second seat nobody has taken yet."""
        return self.kind == "friend" and self.tokens[1] is None

    def take_free_seat(self, name: str | None) -> tuple[int, str] | None:
        """Give the empty seat (if any) to a newcomer: its number and its new token."""
        if not self.seat_free:
            return None
        try:
            self.match.join(1, name or "Player 2")  # the match keeps the two names apart
        except NoughtsError as error:
            raise Rejection("bad_field", text.web_sentence(str(error))) from None
        token = new_token()
        self.tokens[1] = token
        self.version += 1
        return 1, token

    def seat_with_token(self, token: str) -> int | None:
        for number, held in enumerate(self.tokens):
            if held is not None and secrets.compare_digest(held, token):
                return number
        return None

    def did(self, seat: int, request: str) -> bool:
        """Whether ``seat``'s request with this id has changed the room already."""
        return request in self.requests[seat]

    def remember(self, seat: int, request: str) -> None:
        """``seat``'s request with this id has changed the room (the oldest ids are forgotten)."""
        done = self.requests[seat]
        done.append(request)
        del done[:-REMEMBERED_PER_SEAT]

    # the game -------------------------------------------------------------------------------
    @property
    def game_no(self) -> int:
        """The game in play, numbered from 1 in this room."""
        return self.match.games

    @property
    def moves(self) -> tuple[int, ...]:
        game = self.match.game
        return game.moves if game is not None else ()

    def play(self, seat: int, cell: int, ply: int | None = None) -> None:
        """Play ``cell`` for ``seat``; the match refuses (with a sentence) anything the rules forbid.

        ``ply``, if given, is how many moves the mover saw on the board: a move sent before
        the last change arrived is refused rather than played somewhere the mover did not mean.
        """
        match = self.match
        if ply is not None and ply != len(self.moves) and seat == match.seat_to_move:
            raise Rejection("stale", text.WEB_BOARD_CHANGED)
        try:
            match.play(cell, seat)
        except NoughtsError as error:  # the match's sentence, under the code its type of error has
            code = next((code for kind, code in _MOVE_ERROR_CODES.items() if isinstance(error, kind)), "bad_cell")
            raise Rejection(code, str(error)) from None
        self.version += 1

    def rematch(self) -> None:
        """The next game in the same room; the match's rule says who starts it."""
        if not self.match.game_over:
            raise Rejection("game_not_over", text.WEB_GAME_NOT_OVER)
        self.match.new_game()
        self.version += 1

    # what clients see -----------------------------------------------------------------------
    def state(self, connected: tuple[bool, bool] = (False, False), watchers: int = 0) -> dict[str, Any]:
        """The ``state`` message: everything a page needs to draw the room (never the tokens)."""
        match = self.match
        board = match.board
        seats: list[dict[str, Any] | None] = []
        for number, seat in enumerate(match.seats):
            if number == 1 and self.seat_free:
                seats.append(None)
                continue
            computer = seat.player is not None
            seats.append({"name": seat.player or seat.name, "label": seat.name,
                          "kind": "computer" if computer else "human", "mark": match.mark_of(number),
                          "connected": computer or connected[number]})
        result = match.result  # the one shape of a game's end (noughts.board.Result)
        return {
            "type": "state", "room": self.code, "kind": self.kind, "game": self.game_no, "first": match.first,
            "rows": board.rows, "cols": board.cols, "k": board.k,
            "cells": list(board.cells), "turn": None if result else board.turn,
            "result": result.word if result else None, "line": list(result.line) if result and result.line else None,
            "moves": list(self.moves), "seats": seats,
            "tally": {"wins": match.tally[:2], "draws": match.tally[2]}, "tally_text": match.tally_text(),
            "result_text": self._result_sentences() if result else None, "watchers": watchers,
        }

    def _result_sentences(self) -> list[str]:
        """The result as said to seat 0, to seat 1 and to someone watching."""
        match = self.match
        winner = match.winner_seat()
        watching = text.result_sentence(match.board, match.name_of(winner) if winner is not None else "")
        second = match.result_sentence(you=1) if self.kind == "friend" else watching
        return [match.result_sentence(you=0), second, watching]

    def to_dict(self) -> dict[str, Any]:
        """Everything, tokens included: for a room store, never for a client."""
        data = {"code": self.code, "kind": self.kind, "tokens": list(self.tokens), "match": self.match.to_dict(),
                "touched": self.touched, "version": self.version, "requests": self.requests}
        if self.paper is not None:
            data["paper"] = self.paper.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], store: Store | None = None) -> Room:
        """A room from :meth:`to_dict`; ``store`` is where its match records finished games."""
        try:
            tokens = [None if t is None else str(t) for t in data["tokens"]][:2]
            kind: Kind = data["kind"] if data["kind"] in ("friend", "paper") else "computer"
            room = cls(str(data["code"]), "friend" if kind == "friend" else "computer",
                       Match.from_dict(data["match"], store), tokens, touched=float(data["touched"]),
                       version=int(data["version"]))
            if kind == "paper":
                room.kind, room.paper = kind, PaperGame.from_dict(room.match, data["paper"])
            requests = data.get("requests") or [[], []]  # rooms stored before ids were kept have none
            room.requests = [[str(r) for r in seat][-REMEMBERED_PER_SEAT:] for seat in requests[:2]]
            room.requests += [[] for _ in range(2 - len(room.requests))]
            return room
        except (KeyError, IndexError, TypeError, ValueError) as error:
            raise NoughtsError(f"this saved room is damaged ({type(error).__name__}: {error})") from None


def _match(opponent: str, name: str, first: str, store: Store | None, seed: int | str | None) -> Match:
    """The room's match; what it refuses (a player that cannot play the board, say) it says why."""
    try:
        return Match(opponent, names=[name], first=first, store=store, seed=seed)
    except NoughtsError as error:
        raise Rejection("bad_field", text.web_sentence(str(error))) from None


class Conflict(Exception):
    """The room changed in the store since it was read (or, for a new room, its code is taken).

    Not an error anyone sees: the server reads the room again and applies the message to the
    new version (where it may now be refused: the other process's move took the cell).
    """


class RoomStore(Protocol):
    """Where rooms live between messages.

    The server reads a room with :meth:`get`, changes it and writes it back with :meth:`put`.
    A store shared by several server processes (:class:`noughts.web.shared.RedisRoomStore`)
    keeps ``Room.to_dict()`` and writes only over the version it read (``room.stored_version``),
    raising :class:`Conflict` otherwise; the in-process store hands out the room itself, so it
    never conflicts. ``put`` of a new room raises :class:`~noughts.web.protocol.Rejection`
    (code ``full``) when the store holds all it may, and ``no_room`` if the room expired
    between ``get`` and ``put``.
    """

    async def get(self, code: str) -> Room | None: ...

    async def put(self, room: Room) -> None: ...

    async def delete(self, code: str) -> None: ...

    async def expire(self, now: float) -> list[str]:
        """Remove the rooms idle for longer than the time to live; returns their codes."""
        ...


class MemoryRoomStore:
    """Rooms in a dict, kept in the order they were last written, so expiry looks only at the oldest."""

    def __init__(self, max_rooms: int = 10_000, ttl: float = 1800.0) -> None:
        self.max_rooms = max_rooms
        self.ttl = ttl
        self._rooms: dict[str, Room] = {}

    def __len__(self) -> int:
        return len(self._rooms)

    async def get(self, code: str) -> Room | None:
        return self._rooms.get(code)

    async def put(self, room: Room) -> None:
        rooms = self._rooms
        held = rooms.get(room.code)
        if held is not None and held is not room and room.stored_version is None:
            raise Conflict(f"the code {room.code} is taken")  # a new room drew a code in use
        if rooms.pop(room.code, None) is None and len(rooms) >= self.max_rooms:
            raise Rejection("full", text.web_server_full(self.max_rooms))
        rooms[room.code] = room  # re-inserted at the end: the newest write is last
        room.stored_version = room.version

    async def delete(self, code: str) -> None:
        self._rooms.pop(code, None)

    async def expire(self, now: float) -> list[str]:
        gone = []
        for code, room in self._rooms.items():
            if now - room.touched <= self.ttl:
                break  # everything after it was written later
            gone.append(code)
        for code in gone:
            del self._rooms[code]
        return gone
