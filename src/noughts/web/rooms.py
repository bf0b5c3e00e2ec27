"""Rooms: one game table each, with two seats, a tally, and the rules for who may do what.

A room is plain data (``to_dict``/``from_dict`` round-trip through JSON), so it can live in
another process; :class:`RoomStore` is all the server asks of whatever holds the rooms, and
:class:`MemoryRoomStore` is the default. Nothing here knows about sockets.

Seat 0 belongs to whoever made the room; seat 1 to the computer or to the friend who opened
the link. X always moves first, so "who starts" is which seat plays X; a rematch swaps it.

>>> room = Room.for_computer("easy", first=0, name="Ann")
>>> room.mark_of(0), room.mark_of(1), room.turn_seat
('X', 'O', 0)
>>> _ = room.play(0, 4)
>>> room.play(0, 0)
Traceback (most recent call last):
  ...
noughts.web.protocol.Rejection: It is not your turn: the computer (easy) is to move.
"""

from __future__ import annotations

import random
import secrets
import time
from typing import Any, Literal, Protocol

from noughts.board import Board
from noughts.web.protocol import CODE_ALPHABET, Rejection, cell_words

__all__ = ["MemoryRoomStore", "Room", "RoomStore", "Seat", "new_code", "new_token"]

CODE_LENGTH = 6  # 31**6 ≈ 900 million codes: collisions are rare and retried
Kind = Literal["computer", "friend"]


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def new_token() -> str:
    """A seat's secret: 192 random bits, URL-safe, never shown to anyone but its holder."""
    return secrets.token_urlsafe(24)


class Seat:
    """Who sits in a seat. Computers have no token: nobody can take their seat."""

    __slots__ = ("name", "kind", "token")

    def __init__(self, name: str, kind: Literal["human", "computer"], token: str | None = None) -> None:
        self.name, self.kind, self.token = name, kind, token

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "token": self.token}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Seat:
        return cls(data["name"], data["kind"], data.get("token"))


class Room:
    """A table for one game after another between the same two seats."""

    def __init__(self, code: str, kind: Kind, seats: list[Seat | None], *, starter: int = 0,
                 moves: list[int] | None = None, game_no: int = 1, tally: list[int] | None = None,
                 seed: str | None = None, touched: float | None = None, version: int = 0) -> None:
        self.code = code
        self.kind: Kind = kind
        self.seats = seats
        self.starter = starter  # the seat that plays X in the current game
        self.moves = moves if moves is not None else []
        self.game_no = game_no
        self.tally = tally if tally is not None else [0, 0, 0]  # seat 0 wins, seat 1 wins, draws
        self.seed = seed if seed is not None else secrets.token_hex(8)
        self.touched = touched if touched is not None else time.time()
        self.version = version  # bumped on every change: a shared store can compare-and-set on it
        self._board: Board | None = None

    # making rooms ---------------------------------------------------------------------------
    @classmethod
    def for_computer(cls, opponent: str, first: int = 0, name: str | None = None) -> Room:
        """A game against a computer player; ``first`` is 0 if the person moves first."""
        seats: list[Seat | None] = [Seat(name or "You", "human", new_token()), Seat(opponent, "computer")]
        return cls(new_code(), "computer", seats, starter=first)

    @classmethod
    def for_friend(cls, first: int = 0, name: str | None = None) -> Room:
        """A room waiting for a friend; ``first`` is 0 if its maker moves first."""
        return cls(new_code(), "friend", [Seat(name or "Player 1", "human", new_token()), None], starter=first)

    def take_free_seat(self, name: str | None) -> tuple[int, str] | None:
        """Give the empty seat (if any) to a newcomer: its number and its new token."""
        if self.kind != "friend" or self.seats[1] is not None:
            return None
        host = self.seats[0]
        chosen = name or "Player 2"
        if host is not None and chosen.casefold() == host.name.casefold():
            chosen = f"{chosen} (2)"[:40]  # the two-person tallies are kept by name
        token = new_token()
        self.seats[1] = Seat(chosen, "human", token)
        return 1, token

    def seat_with_token(self, token: str) -> int | None:
        for number, seat in enumerate(self.seats):
            if seat is not None and seat.token is not None and secrets.compare_digest(seat.token, token):
                return number
        return None

    # the game -------------------------------------------------------------------------------
    @property
    def board(self) -> Board:
        if self._board is None:
            board = Board()
            for cell in self.moves:
                board = board.play(cell)
            self._board = board
        return self._board

    def mark_of(self, seat: int) -> str:
        return "X" if seat == self.starter else "O"

    @property
    def turn_seat(self) -> int | None:
        """The seat to move, or ``None`` when the game is over."""
        turn = self.board.turn
        if turn is None:
            return None
        return self.starter if turn == "X" else 1 - self.starter

    @property
    def result(self) -> str | None:
        board = self.board
        return board.winner or ("draw" if board.is_draw else None)

    @property
    def computer_to_move(self) -> bool:
        seat = self.turn_seat
        return seat is not None and (self.seats[seat] or _EMPTY).kind == "computer"

    def _name(self, seat: int) -> str:
        holder = self.seats[seat]
        if holder is None:
            return "your friend"
        return f"the computer ({holder.name})" if holder.kind == "computer" else holder.name

    def play(self, seat: int, cell: int, ply: int | None = None) -> Board:
        """Play ``cell`` for ``seat``; refuses (with a sentence) anything the rules forbid.

        ``ply``, if given, is how many moves the mover saw on the board: a move sent before
        the last change arrived is refused rather than played somewhere the mover did not mean.
        """
        board = self.board
        result = self.result
        if result is not None:
            over = "it was a draw" if result == "draw" else f"{result} won"
            raise Rejection("game_over", f"This game is over ({over}). Choose Play again for a rematch.")
        to_move = self.turn_seat
        assert to_move is not None
        if to_move != seat:
            raise Rejection("not_your_turn",
                            f"It is not your turn: {self._name(to_move)} is to move.")
        if ply is not None and ply != len(self.moves):
            raise Rejection("stale", "The board changed before that move arrived: look again and choose.")
        holder = board[cell]
        if holder is not None:
            raise Rejection("occupied", f"{cell_words(cell).capitalize()} is taken ({holder}): choose an empty cell.")
        self._board = board.play(cell)
        self.moves.append(cell)
        self.version += 1
        result = self.result
        if result is not None:
            self.tally[2 if result == "draw" else self.starter if result == "X" else 1 - self.starter] += 1
        return self._board

    def computer_move(self) -> int:
        """Let the computer seat move; its randomness comes from the room's seed, so games replay."""
        seat = self.turn_seat
        holder = self.seats[seat] if seat is not None else None
        if seat is None or holder is None or holder.kind != "computer":
            raise Rejection("not_your_turn", "It is not the computer's turn.")
        from noughts import players

        rng = random.Random(f"{self.seed}/{self.game_no}/{len(self.moves)}")
        cell = players.get(holder.name, rng).choose(self.board)
        self.play(seat, cell)
        return cell

    def rematch(self) -> None:
        """A new game in the same room; the other seat starts."""
        if self.result is None:
            raise Rejection("game_not_over", "The game is still going on: finish it before a rematch.")
        self.starter = 1 - self.starter
        self.moves = []
        self._board = None
        self.game_no += 1
        self.version += 1

    # what clients see -----------------------------------------------------------------------
    def state(self, connected: tuple[bool, bool] = (False, False), watchers: int = 0) -> dict[str, Any]:
        """The ``state`` message: everything a page needs to draw the room (never the tokens)."""
        board = self.board
        seats: list[dict[str, Any] | None] = []
        for number, seat in enumerate(self.seats):
            if seat is None:
                seats.append(None)
            else:
                seats.append({"name": seat.name, "kind": seat.kind, "mark": self.mark_of(number),
                              "connected": seat.kind == "computer" or connected[number]})
        line = board.winning_line
        return {
            "type": "state", "room": self.code, "kind": self.kind, "game": self.game_no,
            "cells": list(board.cells), "turn": board.turn, "result": self.result,
            "line": list(line) if line else None, "moves": list(self.moves), "seats": seats,
            "tally": {"wins": self.tally[:2], "draws": self.tally[2]}, "watchers": watchers,
        }

    def to_dict(self) -> dict[str, Any]:
        """Everything, tokens included: for a room store, never for a client."""
        return {"code": self.code, "kind": self.kind, "seats": [s.to_dict() if s else None for s in self.seats],
                "starter": self.starter, "moves": list(self.moves), "game_no": self.game_no,
                "tally": list(self.tally), "seed": self.seed, "touched": self.touched, "version": self.version}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Room:
        seats = [Seat.from_dict(s) if s else None for s in data["seats"]]
        return cls(data["code"], data["kind"], seats, starter=data["starter"], moves=list(data["moves"]),
                   game_no=data["game_no"], tally=list(data["tally"]), seed=data["seed"],
                   touched=data["touched"], version=data["version"])


_EMPTY = Seat("", "human")


class RoomStore(Protocol):
    """Where rooms live between messages.

    The server reads a room with :meth:`get`, changes it and writes it back with :meth:`put`;
    a store shared by several server processes (Redis, say) keeps ``Room.to_dict()`` and makes
    ``put`` conditional on ``version`` (see docs/web-protocol.md). ``put`` of a new room raises
    :class:`~noughts.web.protocol.Rejection` (code ``full``) when the store holds all it may.
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
        if rooms.pop(room.code, None) is None and len(rooms) >= self.max_rooms:
            raise Rejection("full", f"The server is busy: it already holds {self.max_rooms} games. "
                                    "Try again in a few minutes.")
        rooms[room.code] = room  # re-inserted at the end: the newest write is last

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
