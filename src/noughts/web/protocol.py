"""The websocket protocol of the web game: reading what a browser sends, the limits, the errors.

Nothing here touches the network, so the rules are easy to test and to reuse in another
server. ``docs/web-protocol.md`` is the reference for every message.

>>> parse('{"type": "move", "cell": "b2"}', Limits())
{'type': 'move', 'cell': 4}
>>> parse('{"type": "move", "cell": 900}', Limits())
Traceback (most recent call last):
  ...
noughts.web.protocol.Rejection: There is no cell 900: no board here has that many cells.
>>> parse('{"type": "move", "cell": -1}', Limits())
Traceback (most recent call last):
  ...
noughts.web.protocol.Rejection: There is no cell -1: cells are counted from 0 (or named, like b2).
>>> parse('{"type": "players", "rows": 7, "cols": 7, "k": 4, "id": "p1"}', Limits())
{'type': 'players', 'id': 'p1', 'rows': 7, 'cols': 7, 'k': 4}
>>> parse('{"type": "undo", "game": 2, "id": "u1"}', Limits())
{'type': 'undo', 'id': 'u1', 'game': 2}
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any

from noughts import text
from noughts.board import Geometry
from noughts.errors import NoughtsError
from noughts.match import DEFAULT_FIRST, FIRST_RULES, first_rule

__all__ = [
    "CODE_ALPHABET", "CODE_LENGTH", "MESSAGE_TYPES", "Limits", "Rejection", "clean_name",
    "encode", "error_message", "parse",
]

# Codes are read aloud and typed on phones: Crockford's base 32 (no I, L, O or U; a typed O is read
# as 0, I and L as 1, case, spaces and dashes do not matter). 12 symbols carry 60 random bits.
CODE_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
CODE_LENGTH = 12
_CODE_SLIPS = str.maketrans({"O": "0", "I": "1", "L": "1", "-": None, " ": None, "\t": None})
_TOKEN_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
MESSAGE_TYPES = ("play_computer", "create_room", "join", "move", "rematch", "leave", "scores", "ping", "players",
                 "undo", "hint", "paper_start")
PAPER_SIDES = range(3, 6)  # rows and columns of a paper game: what the camera's reader is measured on
MAX_SIDE = 15  # rows and columns of a board played on the page: 15×15 still fits a phone
MAX_ID_CHARS = 64  # a request id (any message's optional "id"), chosen by the client
# Who moves first is the match's rule (noughts.match.FIRST_RULES: me, computer, alternate,
# loser, random, and the words first_rule() takes for them); "friend" names the opponent too.
_FIRST_SYNONYMS = {"friend": "computer"}
MAX_NAME_CHARS = 40
_BOARD = Geometry.get(3, 3, 3)
_BIG_CELL = re.compile(r"[a-o](1[0-5]|[1-9])")


@dataclass(frozen=True)
class Limits:
    """Every bound the server keeps, so one careless or hostile client cannot hurt the others."""

    max_rooms: int = 10_000
    room_ttl: float = 30 * 60.0  # seconds a room may sit without a move or a join
    sweep_every: float = 15.0  # how often expired rooms are removed
    max_message_bytes: int = 2048  # a legal message is under 200 bytes
    max_frame_bytes: int = 256 * 1024  # uvicorn closes the socket (1009) above this (a paper frame must fit)
    rate: float = 20.0  # messages a second, sustained, per connection
    burst: float = 40.0  # messages allowed at once before the rate applies
    flood_close: int = 200  # messages refused for rate in a row before the socket is closed
    max_connections: int = 10_000
    max_watchers: int = 100  # spectators per room
    rooms_per_connection: int = 50  # rooms one connection may create in its lifetime
    # Per client address (one process's view; see docs/web-protocol.md, "Holding under attack").
    rooms_per_address: int = 50  # rooms one address may hold open at once...
    address_share: float = 0.02  # ...and never more than this share of max_rooms
    unjoined_ttl: float = 5 * 60.0  # seconds a room nobody is in, joined or played in, is kept
    address_rate: float = 100.0  # messages a second, sustained, from all of one address's sockets together
    address_burst: int = 400  # messages from one address at once before its rate applies
    join_rate: float = 1.0  # joins a second, sustained, per address (a rejoin loop is slowed)
    join_burst: float = 30.0  # joins allowed at once before the rate applies
    refused_join_cost: float = 10.0  # messages of its address's allowance a join refused for rate also costs
    failed_joins: int = 10  # joins of unknown codes or with wrong tokens before the address is locked out
    lockout: float = 60.0  # seconds of the first lockout; each next one lasts twice as long (at most an hour)
    connections_per_address: int = 64  # open connections (HTTP or websocket) from one address
    # The server's CPU time one address's hints, computer moves and board checks may take (one process's view):
    # a hint on 7×7 costs a fraction of a second, a message under the rate limit no less.
    cpu_rate: float = 0.25  # seconds a second, sustained (an honest player against Hard on 15×15 takes ~0.15)
    cpu_burst: float = 10.0  # seconds at once before the rate applies
    handshake_timeout: float = 10.0  # seconds to send a request's headers, from connecting or the last response
    # Bursts are served a slice's worth per slice of time (and so per turn of the event loop); the rest wait their
    # turn (noughts.web.guard.Turnstile, one for both kinds: a slice is so many handshakes OR so many messages,
    # or a mix in proportion): a few hundred sockets acting at once never hold up the players' moves.
    handshakes_per_slice: int = 4  # new connections' first requests (a websocket's handshake costs ~1 ms)
    unseated_per_slice: int = 16  # messages from sockets in no seat: spectators, people starting a game
    slice_seconds: float = 0.01
    idle_timeout: float = 10 * 60.0  # seconds a websocket in no room may send nothing before it is closed
    stall_timeout: float = 30.0  # seconds a client may leave the server unable to write before it is cut off
    outbox: int = 256  # messages queued for a player; a client this far behind is not reading
    watcher_outbox: int = 32  # messages queued for a spectator
    log_every: float = 10.0  # seconds between log lines of one cause (the rest are counted)
    # Paper mode's camera frames (binary messages, noughts.web.paper): each also counts as a message above,
    # and its reading is charged to the address's CPU time as a hint is.
    max_picture_bytes: int = 200 * 1024  # a phone's frame, downscaled, as JPEG: 30–120 KB
    max_picture_pixels: int = 4_000_000  # from its header, before it is decoded (1920×1080 is 2 million)
    picture_rate: float = 2.0  # frames a second, sustained, per connection; beyond, frames are dropped
    picture_burst: float = 2.0

    @property
    def rooms_for_one_address(self) -> int:
        """Rooms one address may hold: the count, or its share of all rooms if that is smaller (at least 1)."""
        return max(1, min(self.rooms_per_address, int(self.max_rooms * self.address_share)))

    def public(self) -> dict[str, float | int]:
        """What a client may want to know (sent in ``welcome``)."""
        return {"max_message_bytes": self.max_message_bytes, "rate": self.rate, "burst": self.burst,
                "room_ttl": self.room_ttl, "max_picture_bytes": self.max_picture_bytes,
                "max_picture_pixels": self.max_picture_pixels, "picture_rate": self.picture_rate}


class Rejection(NoughtsError):
    """A message the server will not act on; ``code`` is for programs, the text for people.

    ``kind`` and ``request`` are the refused message's type and ``id``, when :func:`parse` could read them.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.kind: str | None = None
        self.request: str | None = None


def encode(message: dict[str, Any]) -> str:
    """A message as compact JSON text (what goes on the wire)."""
    return "".join(_encode(message, 0)) if _encode is not None else _ENCODER.encode(message)


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
# json.dumps with options builds an encoder (and its C part) for every message: made once here instead.
# (No check for a message that contains itself: the server's messages are trees it builds.)
_encode = c_make_encoder(None, _ENCODER.default, encode_basestring, None, ":", ",", False, False, True) \
    if c_make_encoder is not None else None


def error_message(code: str, message: str, re: str | None) -> dict[str, Any]:
    """The ``error`` message: ``code`` for programs, ``message`` for people, ``re`` the type refused."""
    return {"type": "error", "code": code, "message": message, "re": re}


def clean_name(value: object, field: str = "name") -> str | None:
    """A display name: printable, single-spaced, at most 40 characters; ``None`` when not given."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise Rejection("bad_field", text.web_text_field(field))
    # Control and format characters (bidi overrides, zero-width joiners) could disguise a name.
    kept = "".join(c for c in value[:400] if unicodedata.category(c)[0] != "C")
    name = " ".join(kept.split())[:MAX_NAME_CHARS].strip()
    return name or None


def parse(received: str, limits: Limits) -> dict[str, Any]:
    """Check one message from a client and return it with every field in its normal form.

    Raises :class:`Rejection` with a sentence for the person when the message is not usable.
    """
    size = (len(received.encode("utf-8", "surrogatepass")) if len(received) * 4 > limits.max_message_bytes
            else len(received))
    if size > limits.max_message_bytes:
        raise Rejection("too_big", text.web_too_big(size, limits.max_message_bytes))
    try:
        data = json.loads(received)
    except (ValueError, RecursionError) as error:
        reason = error.msg if isinstance(error, json.JSONDecodeError) else text.WEB_NESTED_TOO_DEEPLY
        raise Rejection("bad_json", text.web_not_json(reason)) from None
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise Rejection("bad_message", text.WEB_NOT_AN_OBJECT)
    kind = data["type"]
    if kind not in MESSAGE_TYPES:
        raise Rejection("unknown_type", text.web_unknown_type(kind[:30], MESSAGE_TYPES))
    message: dict[str, Any] = {"type": kind}
    try:
        request = data.get("id")
        if request is not None:  # the same id twice is the same request: the server answers it once
            if not isinstance(request, str) or not 1 <= len(request) <= MAX_ID_CHARS or not request.isascii() \
                    or not request.isprintable():
                raise Rejection("bad_field", text.web_id_field(MAX_ID_CHARS))
            message["id"] = request
        reader, fields = _READERS[kind]
        if reader is not None:
            reader(data, message)
        for field in data:
            if field not in fields:
                raise Rejection("unknown_field", text.web_unknown_field(kind, field[:30]))
    except Rejection as refusal:  # the answer still says which message it refuses
        refusal.kind, refusal.request = kind, message.get("id")
        raise
    return message


# What each type of message carries: a reader that checks its fields (in this order) into the message,
# and every field it may have (any other is refused). One function a type: a move, the message sent
# most, is read with no test of what the others carry.
def _read_move(data: dict[str, Any], message: dict[str, Any]) -> None:
    message["cell"] = _cell(data.get("cell"))
    _read_numbers(data, message, ("game", "ply"))  # optional: guard against a move meant for an older board
    mark = data.get("mark")
    if mark is not None:
        if mark not in ("X", "O"):
            raise Rejection("bad_field", text.WEB_MARK_FIELD)
        message["mark"] = mark


def _read_undo(data: dict[str, Any], message: dict[str, Any]) -> None:
    _read_numbers(data, message, ("game",))  # optional: guard against a take-back meant for an older board


def _read_numbers(data: dict[str, Any], message: dict[str, Any], fields: tuple[str, ...]) -> None:
    for field in fields:
        value = data.get(field)
        if value is not None:
            if type(value) is not int:
                raise Rejection("bad_field", text.web_number_field(field))
            message[field] = value


def _read_players(data: dict[str, Any], message: dict[str, Any]) -> None:
    message.update(_shape(data))


def _read_play_computer(data: dict[str, Any], message: dict[str, Any]) -> None:
    message.update(_shape(data))
    opponent = data.get("opponent")  # left out: the board's own default (noughts.players.default_for)
    message["opponent"] = None if opponent is None else _opponent(opponent)
    message["first"] = _first(data.get("first", DEFAULT_FIRST))
    message["name"] = clean_name(data.get("name"))


def _read_paper_start(data: dict[str, Any], message: dict[str, Any]) -> None:
    _read_play_computer(data, message)
    if message["rows"] not in PAPER_SIDES or message["cols"] not in PAPER_SIDES:
        raise Rejection("bad_field", text.paper_sheet_sides(PAPER_SIDES[0], PAPER_SIDES[-1]))


def _read_create_room(data: dict[str, Any], message: dict[str, Any]) -> None:
    message.update(_shape(data))
    message["first"] = _first(data.get("first", DEFAULT_FIRST))
    message["name"] = clean_name(data.get("name"))


def _read_join(data: dict[str, Any], message: dict[str, Any]) -> None:
    message["name"] = clean_name(data.get("name"))
    message["room"] = _room_code(data.get("room"))
    token = data.get("token")
    if token is not None and (not isinstance(token, str) or len(token) > 100):
        raise Rejection("bad_field", text.WEB_TOKEN_FIELD)
    if token and not _TOKEN_CHARACTERS.issuperset(token):
        raise Rejection("bad_token", text.WEB_NOT_A_TOKEN)
    message["token"] = token or None
    watch = data.get("watch", False)
    if type(watch) is not bool:
        raise Rejection("bad_field", text.WEB_WATCH_FIELD)
    if watch:  # a visitor without a name yet: the answer says whether a seat is free
        message["watch"] = True


_Reader = Callable[[dict[str, Any], dict[str, Any]], None]
_SHAPE = frozenset({"rows", "cols", "k"})
_READERS: dict[str, tuple[_Reader | None, frozenset[str]]] = {
    kind: (reader, frozenset({"type", "id"}) | extra) for kind, reader, extra in (
        ("play_computer", _read_play_computer, _SHAPE | {"opponent", "first", "name"}),
        ("paper_start", _read_paper_start, _SHAPE | {"opponent", "first", "name"}),
        ("create_room", _read_create_room, _SHAPE | {"first", "name"}),
        ("players", _read_players, _SHAPE),
        ("join", _read_join, frozenset({"name", "room", "token", "watch"})),
        ("move", _read_move, frozenset({"cell", "game", "ply", "mark"})),
        ("undo", _read_undo, frozenset({"game"})),
        ("rematch", None, frozenset()), ("leave", None, frozenset()), ("scores", None, frozenset()),
        ("ping", None, frozenset()), ("hint", None, frozenset()),
    )}
assert set(_READERS) == set(MESSAGE_TYPES)


def _shape(data: dict[str, Any]) -> dict[str, int]:
    """The board's ``rows``, ``cols`` and ``k`` (3, 3 and 3 when left out), checked as the board checks them."""
    shape = {}
    for field, default in (("rows", 3), ("cols", 3)):
        value = data.get(field, default)
        if type(value) is not int or not 1 <= value <= MAX_SIDE:
            raise Rejection("bad_field", text.web_number_field(field, 1, MAX_SIDE))
        shape[field] = value
    longest = max(shape["rows"], shape["cols"])
    k = data.get("k")
    if k is None:  # tic-tac-toe, then four in a row up to 5×5, then five (gomoku)
        k = min(longest, 3 if longest <= 3 else 4 if longest <= 5 else 5)
    if type(k) is not int or not 1 <= k <= longest:
        raise Rejection("bad_field", text.web_k_field(longest, shape["rows"], shape["cols"]))
    shape["k"] = k
    return shape


def _opponent(value: object) -> str:
    from noughts import players

    try:
        if isinstance(value, str) and len(value) <= 40:
            return players.canonical(value)
    except NoughtsError:
        pass
    raise Rejection("bad_field", text.web_opponent_field(players.names()))


def _first(value: object) -> str:
    if isinstance(value, str) and len(value) <= 20:
        try:
            return first_rule(_FIRST_SYNONYMS.get(value.strip().lower(), value))
        except NoughtsError:
            pass
    raise Rejection("bad_field", text.web_first_field(FIRST_RULES))


def _room_code(value: object) -> str:
    if not isinstance(value, str):
        raise Rejection("bad_field", text.WEB_ROOM_FIELD)
    code = value[:40].upper().translate(_CODE_SLIPS)
    if len(code) != CODE_LENGTH or any(c not in CODE_ALPHABET for c in code):
        raise Rejection("no_room", text.web_not_a_code(value.strip()[:20]))
    return code


def _cell(value: object) -> int | str:
    """A cell index, or a name (``b2``) the room reads on its own board; 3×3 names are read here."""
    if type(value) is int:
        if 0 <= value < MAX_SIDE * MAX_SIDE:
            return value  # the room checks it against its own board
        raise Rejection("bad_cell", text.web_no_cell(value) if value > 0 else text.web_negative_cell(value))
    if isinstance(value, str) and len(value) <= 10:
        try:
            return _BOARD.parse_cell(value)
        except NoughtsError:
            name = value.strip().lower()
            if _BIG_CELL.fullmatch(name):
                return name  # a cell of a bigger board (up to o15): the room reads it on its own board
    shown = repr(value)[:20] if value is not None else "nothing"
    raise Rejection("bad_cell", text.web_move_needs_cell(shown))
