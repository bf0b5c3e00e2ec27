"""The engine protocol: JSON lines in, JSON lines out, one reply per request, in order.

Other programs drive noughts through ``noughts engine``: they write one JSON object per
line and read one JSON object per line back. :func:`handle` answers a single request
(already decoded) and never raises; :func:`run` is the loop around it.

>>> handle({"cmd": "move", "position": "XX./OO./...", "seed": 1})
{'index': 2, 'cell': 'c1'}
>>> handle({"cmd": "status", "position": "XXX/OO./...", "id": 7})
{'id': 7, 'turn': None, 'winner': 'X', 'line': [0, 1, 2], 'over': True, 'legal': []}
>>> print(handle({"cmd": "fly"})["error"])
unknown cmd 'fly': the commands are "hello", "move", "analyse", "status" and "players"
>>> handle({"cmd": "hello", "protocol": 1})["compatible"]
True

The full description, with an example of every request and reply, is docs/engine-protocol.md.
"""

from __future__ import annotations

import json
import math
import time
from _thread import get_ident

from noughts.board import Board, keep_newest
from noughts.budget import Budget
from noughts.errors import IllegalMoveError, NoughtsError
from noughts.text import ENGINE_NUMBER_TOO_LONG

TYPE_CHECKING = False  # `import typing` costs milliseconds at every engine start; mypy still reads it
if TYPE_CHECKING:
    import random
    from collections.abc import Callable
    from types import ModuleType
    from typing import IO, Any

    from noughts.players.base import Player, SeededOnFirstDraw
    from noughts.solver import ProgressCallback

    Reply = dict[str, Any]

__all__ = [
    "PROTOCOL", "ANALYSE_MAX_NODES", "ANALYSE_MAX_SECONDS", "MAX_LINE_BYTES", "POSITIONS_KEPT", "REQUEST_MAX_SECONDS",
    "ProtocolError", "encode", "handle", "handle_line", "run",
]

# A request is a few hundred bytes at most (a 26×26 position is ~700); the cap keeps a
# runaway or hostile client from making the engine hold an unbounded line in memory.
MAX_LINE_BYTES = 64 * 1024
DEFAULT_PLAYER = "perfect"
# "analyse" gives up (an error reply, not a hang) after this many positions or seconds: the
# perfect player's budget, so what one can solve the other can too. Every board up to 4×4
# needs at most ~150,000 positions (about a second). The node limit gives the same answer on
# any machine; the clock is a backstop for big boards, where each position costs more.
ANALYSE_MAX_NODES = 2_000_000
ANALYSE_MAX_SECONDS = 30.0
# run() stops any one request after this long, whatever it is doing (a player's own budget
# counts positions, and on a 26×26 board those come slowly).
REQUEST_MAX_SECONDS = 60.0

PROTOCOL = 1
"""The protocol's version: it goes up only when a change could break a client (see the compatibility
promise in docs/engine-protocol.md); additions keep it and show in hello's "commands"."""
DEPRECATED: dict[str, str] = {}
"""What still works but will go in the next protocol version: name -> what to use instead."""

_COMMON = frozenset({"cmd", "id", "position", "rows", "cols", "k"})
_BUDGET = frozenset({"nodes", "seconds"})  # a search's budget, instead of the default one
_FIELDS = {
    "move": _COMMON | _BUDGET | {"player", "seed"},
    "analyse": _COMMON | _BUDGET | {"value_only"},
    "status": _COMMON,
    "players": _COMMON,
    "hello": frozenset({"cmd", "id", "protocol"}),
}
_MOVE_FIELDS = _FIELDS["move"]
_ALIASES = {"analyze": "analyse"}
_COMMAND_LIST = '"hello", "move", "analyse", "status" and "players"'
_unseeded: random.Random | None = None  # the generator of moves asked for without a seed
POSITIONS_KEPT = 4096
"""Positions whose text the engine remembers read (boards are values): reading one takes longer
than a perfect move on 3×3, and a client's games go through the same positions again and again."""
_parsed: dict[tuple[str, int | None], Board] = {}
PLAYERS_KEPT = 16
"""Threads whose default player the engine keeps (one each: a player is not shared between threads)."""
_kept_players: dict[int, tuple[Player, SeededOnFirstDraw]] = {}
_move_tools: tuple[ModuleType, type[SeededOnFirstDraw]] | None = None  # see _import_players


class ProtocolError(NoughtsError):
    """A request that is not valid JSON, not an object, or has a missing or ill-typed field."""


def handle(request: object, progress: ProgressCallback | None = None) -> Reply:
    """Answer one decoded request; problems become ``{"error": message}``, never exceptions.

    ``"id"`` (a string, number or null) is copied into the reply, errors included, so a
    client can match replies to requests. ``progress`` is passed to the solver by
    ``analyse`` (``progress(nodes, seconds)`` every half second of a long search).
    """
    has_id, request_id = False, None
    try:
        if not isinstance(request, dict):
            raise ProtocolError(
                f'a request is a JSON object like {{"cmd": "status"}}, not {_json_type(request)}')
        if "id" in request:
            request_id = request["id"]
            if type(request_id) is not int:  # a whole number is the usual id and always fine
                request_id = _check_id(request_id)
            has_id = True
        reply = _dispatch(request, progress)
    except NoughtsError as error:
        message = str(error)  # some messages quote the request: keep a huge one readable
        reply = {"error": message if len(message) <= 1000 else message[:1000] + "…"}
    except Exception as error:  # a bug elsewhere must not kill a long-running engine
        reply = {"error": f"internal error (please report it): {type(error).__name__}: {error}"[:500]}
    return {"id": request_id, **reply} if has_id else reply


def handle_line(line: bytes | str) -> Reply | None:
    """Decode one line and answer it; ``None`` for a blank line, which gets no reply."""
    if isinstance(line, bytes):
        if len(line) > MAX_LINE_BYTES + 2:  # + room for the line ending
            return _too_long()
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as error:
            return {"error": f"the request is not valid UTF-8 (bad byte at offset {error.start})"}
    else:
        if len(line) > MAX_LINE_BYTES + 2:
            return _too_long()
        text = line
    text = text.strip().removeprefix("\ufeff")  # a BOM from Windows tools is not an error
    if not text:
        return None
    try:
        if text.startswith("\ufeff"):  # a second BOM: what json.loads says about one
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        request = _decode(text)
    except RecursionError:
        return {"error": "the request is nested too deeply to be a request"}
    except json.JSONDecodeError as error:
        return {"error": f"the request is not valid JSON: {error}"}
    except NotAJsonNumber as error:
        return {"error": f"the request is not valid JSON: {error}"}
    except ValueError:  # the only other: an integer with more digits than Python will convert
        return {"error": ENGINE_NUMBER_TOO_LONG}
    return handle(request)


def encode(reply: Reply) -> str:
    """One reply as a single line of compact JSON (ASCII only, so any terminal encoding works)."""
    if _encode_parts is not None:
        return "".join(_encode_parts(reply, 0))
    return _ENCODER.encode(reply)


def run(stdin: IO[bytes], stdout: IO[str], *, max_seconds: float | None = REQUEST_MAX_SECONDS) -> int:
    """Answer requests from ``stdin`` until end of input; returns the exit status (0).

    ``stdin`` must be binary so that over-long lines are skipped without being held whole
    and invalid UTF-8 is reported instead of crashing the loop. A request still running
    after ``max_seconds`` is answered with an error (on Unix, in the main thread, where a
    timer signal can interrupt it; elsewhere only the solver's own budgets apply).

    Replies are flushed whenever no complete request is left to read, so a client that waits
    for each answer gets it at once, and one that sends many lines gets them in few writes.
    """
    alarm = _Alarm.start(max_seconds) if max_seconds else None
    try:
        read_some = getattr(stdin, "read1", None)  # what is there, waiting only when nothing is
        if read_some is None:
            return _run_by_lines(stdin, stdout, alarm)
        return _run_by_chunks(read_some, stdout, _Session(alarm))
    finally:
        if alarm is not None:
            alarm.close()


def _run_by_lines(stdin: IO[bytes], stdout: IO[str], alarm: _Alarm | None) -> int:
    """run() on a stream that can only be read line by line: each reply is flushed as it is written."""
    while True:
        line = stdin.readline(MAX_LINE_BYTES + 1)
        if not line:
            return 0
        reply: Reply | None
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            _skip_rest_of_line(stdin)
            reply = _too_long()
        else:
            reply = _answer_in_time(line, alarm)
        if reply is not None:
            stdout.write(encode(reply) + "\n")
            stdout.flush()  # the client is waiting for this line before it sends the next


def _run_by_chunks(read_some: Callable[[int], bytes], stdout: IO[str], session: _Session) -> int:
    """run() reading whatever has come (up to 64 KiB at a time) and splitting it into lines.

    Replies wait in ``out`` until every complete line read so far is answered, or a request
    that may take a while comes next; then they go out in one write and a flush.
    """
    out: list[str] = []
    start: list[bytes] = []  # the start of a line whose end has not come yet
    held = 0  # its length
    skipping = False  # inside a line over the limit, which is answered (once) when it ends
    answer_fast = session.answer_fast

    def answer(line: bytes) -> None:
        if len(line) > MAX_LINE_BYTES:
            out.append(_TOO_LONG)
            return
        text = answer_fast(line)
        if text is None:  # not one of the common requests: it may take a while, so say what is ready first
            if out:
                stdout.write("\n".join(out) + "\n")
                stdout.flush()
                out.clear()
            reply = session.answer(line)
            if reply is not None:
                out.append(encode(reply))
        elif text:
            out.append(text)

    while True:
        chunk = read_some(_CHUNK_BYTES)
        if not chunk:  # end of input: a last line without its newline is still a request
            if skipping:
                out.append(_TOO_LONG)
            elif start:
                answer(b"".join(start))
            if out:
                stdout.write("\n".join(out) + "\n")
                stdout.flush()
            return 0
        if skipping or start:  # the first newline ends a line begun in an earlier chunk
            end = chunk.find(b"\n")
            if end < 0:
                if not skipping:
                    start.append(chunk)
                    held += len(chunk)
                    if held > MAX_LINE_BYTES:  # never held whole: dropped, answered at its end
                        start.clear()
                        skipping = True
                continue
            if skipping:
                out.append(_TOO_LONG)
                skipping = False
            else:
                start.append(chunk[:end])
                answer(b"".join(start))
                start.clear()
            chunk = chunk[end + 1:]
        lines = chunk.split(b"\n")
        rest = lines.pop()
        for line in lines:
            answer(line)
        if rest:
            if len(rest) > MAX_LINE_BYTES:
                skipping = True
            else:
                start.append(rest)
                held = len(rest)
        if out:  # every complete line is answered: the client may be waiting for these
            stdout.write("\n".join(out) + "\n")
            stdout.flush()
            out.clear()


def _answer_in_time(line: bytes, alarm: _Alarm | None) -> Reply | None:
    """handle_line(line), stopped by ``alarm`` if it takes too long."""
    if alarm is None:
        return handle_line(line)
    try:
        alarm.arm()
        try:
            return handle_line(line)
        finally:
            alarm.disarm()
    except _TimeUp as error:  # only if it struck outside handle(), which answers it itself
        return {"error": str(error)}


class _TimeUp(NoughtsError):
    """Raised by the timer signal inside a request that ran too long."""


class _Alarm:
    """A SIGALRM timer that interrupts a request after ``seconds``.

    Setting a timer costs two system calls, more than answering many a request, so the timer
    is set once and left running between requests; when it goes off early (it was set for an
    earlier request) it is set again for what is left of the current one's time, and when it
    goes off between requests it is stopped.
    """

    def __init__(self, seconds: float, previous: object) -> None:
        self.seconds = seconds
        self.previous = previous
        self.started: float | None = None  # when the current request began (None between requests)
        self.ticking = False

    @classmethod
    def start(cls, seconds: float) -> _Alarm | None:
        import signal

        if not hasattr(signal, "setitimer"):
            return None  # Windows
        alarm = cls(seconds, None)
        try:
            alarm.previous = signal.signal(signal.SIGALRM, alarm._fire)
        except ValueError:  # not the main thread: signals cannot reach us
            return None
        return alarm

    def _fire(self, signum: int, frame: object) -> None:
        import signal

        started = self.started
        if started is None:  # between requests
            signal.setitimer(signal.ITIMER_REAL, 0)
            self.ticking = False
            return
        left = started + self.seconds - time.monotonic()
        if left > 0:  # set for an earlier request: wait out this one's time
            signal.setitimer(signal.ITIMER_REAL, left, 1.0)
            return
        raise _TimeUp(f"the engine gave up on this request after {self.seconds:g} seconds")

    def arm(self) -> None:
        self.started = time.monotonic()
        if not self.ticking:
            import signal

            # Fires again every second, in case something caught the first one and went on working.
            signal.setitimer(signal.ITIMER_REAL, self.seconds, 1.0)
            self.ticking = True

    def disarm(self) -> None:
        self.started = None

    def close(self) -> None:
        import signal

        self.started = None
        signal.setitimer(signal.ITIMER_REAL, 0)
        self.ticking = False
        previous = self.previous if self.previous is not None else signal.SIG_DFL  # None: set from C
        signal.signal(signal.SIGALRM, previous)  # type: ignore[arg-type]


# the common requests, answered from what earlier ones worked out ------------------------------

_CHUNK_BYTES = 64 * 1024
_FAST_POSITIONS_KEPT = 12_000
"""3×3 positions whose text the engine's loop remembers read: every position, in both notations."""
_boards_33: dict[str | None, Board | None] = {}  # position text (None: no position) -> board; None: not 3×3
_UNSEEN: Any = object()
_MOVE_REPLIES_33 = tuple(f'"index":{cell},"cell":"{Board().cell_name(cell)}"}}' for cell in range(9))
_replies_33: dict[str, dict[int, str]] = {"status": {}, "analyse": {}}  # cmd -> board key -> reply after "{"


class _Session:
    """What run() keeps between requests: its players, and the way to the general handler.

    :meth:`answer_fast` answers the common requests on 3×3 (``move`` by the default player without
    a budget, ``status``, ``analyse``) with their encoded reply, as :func:`handle` and :func:`encode`
    would; anything else, errors included, it leaves to :meth:`answer`.
    """

    def __init__(self, alarm: _Alarm | None) -> None:
        self.alarm = alarm
        self.seeded: tuple[Player, SeededOnFirstDraw] | None = None  # the default player, restarted per seed
        self.unseeded: Player | None = None  # the default player drawing from the shared generator

    def answer(self, line: bytes) -> Reply | None:
        return _answer_in_time(line, self.alarm)

    def answer_fast(self, line: bytes) -> str | None:
        """The encoded reply to a common request on 3×3; ``""`` for a blank line; ``None`` otherwise."""
        try:
            text = line.decode("utf-8").strip()
            if text[:1] != "{":
                return "" if not text else None
            request, end = _scan(text, 0)
        except Exception:  # bad UTF-8 or JSON, too deep: the general path says what is wrong
            return None
        if end != len(text) or type(request) is not dict:
            return None
        cmd = request.get("cmd")
        if cmd == "move":
            if not _MOVE_FIELDS.issuperset(request):
                return None
        elif cmd == "status" or cmd == "analyse" or cmd == "analyze":
            if not _FIELDS["status" if cmd == "status" else "analyse"].issuperset(request) \
                    or request.get("nodes") is not None or request.get("seconds") is not None \
                    or request.get("value_only") is not None:
                return None
        else:
            return None
        if "id" in request:
            request_id = request["id"]
            if type(request_id) is int:
                head = f'{{"id":{request_id},'
            elif type(request_id) is str:
                head = f'{{"id":{_quote(request_id)},'
            elif request_id is None:
                head = '{"id":null,'
            else:
                return None
        else:
            head = "{"
        position = request.get("position")
        if not (position is None or type(position) is str) or request.get("rows") is not None \
                or request.get("cols") is not None or request.get("k") is not None:
            return None
        board = _boards_33.get(position, _UNSEEN)
        if board is _UNSEEN:
            board = _board_33(position)
        if board is None:
            return None
        if cmd != "move":
            replies = _replies_33["status" if cmd == "status" else "analyse"]
            key = board._x | board._o << 9
            body = replies.get(key)
            if body is None:
                try:
                    body = encode(_HANDLERS["status" if cmd == "status" else "analyse"](request))[1:]
                except Exception:  # not expected on 3×3; the general path answers it
                    return None
                replies[key] = body
            return head + body
        name, seed = request.get("player"), request.get("seed")
        if (name is not None and name != DEFAULT_PLAYER) or board._over or request.get("nodes") is not None \
                or request.get("seconds") is not None:
            return None
        if seed is None:
            player = self.unseeded or self._unseeded_player()
        elif type(seed) is int:
            seeded = self.seeded or self._seeded_player()
            seeded[1].start_again(seed)
            player = seeded[0]
        else:
            return None
        try:
            cell = player.choose(board)
        except Exception:  # not expected on 3×3; the general path answers it
            return None
        if type(cell) is not int or not 0 <= cell < 9 or board._x >> cell & 1 or board._o >> cell & 1:
            return None  # a player's bug: the general path reports it
        return head + _MOVE_REPLIES_33[cell]

    def _seeded_player(self) -> tuple[Player, SeededOnFirstDraw]:
        players, seeded = _move_tools or _import_players()
        rng = seeded(0)
        self.seeded = players.get(DEFAULT_PLAYER, rng=rng), rng
        return self.seeded

    def _unseeded_player(self) -> Player:
        global _unseeded
        players, _ = _move_tools or _import_players()
        if _unseeded is None:
            import random

            _unseeded = random.Random()
        self.unseeded = players.get(DEFAULT_PLAYER, rng=_unseeded)
        return self.unseeded


def _board_33(position: str | None) -> Board | None:
    """The board of a position's text if it is 3×3 with 3 in a row (remembered), else ``None``."""
    if position is not None and len(position) > 16:  # not 3×3 text ("X.O/.X./..O"), and not kept
        return None
    try:
        board: Board | None = Board() if position is None else Board.parse(position)
    except Exception:  # the general path says what is wrong
        board = None
    if board is not None and not (board.rows == 3 and board.cols == 3 and board.k == 3):
        board = None
    _boards_33[position] = board
    keep_newest(_boards_33, _FAST_POSITIONS_KEPT)
    return board


# requests ---------------------------------------------------------------------------------

def _dispatch(request: dict[Any, Any], progress: ProgressCallback | None = None) -> Reply:
    if "cmd" not in request:
        raise ProtocolError(f'a request needs a "cmd": one of {_COMMAND_LIST}')
    cmd = request["cmd"]
    if not isinstance(cmd, str):
        raise ProtocolError(f'"cmd" must be a string like "move", not {_json_type(cmd)}')
    cmd = _ALIASES.get(cmd, cmd)
    if cmd not in _FIELDS:
        raise ProtocolError(f"unknown cmd {_show(cmd)}: the commands are {_COMMAND_LIST}")
    if not _FIELDS[cmd].issuperset(request):  # one look when all is well
        _unknown_field(request, cmd)
    if cmd == "analyse":
        return _analyse(request, progress)
    return _HANDLERS[cmd](request)


def _unknown_field(request: dict[Any, Any], cmd: str) -> None:
    """Raise the error for the first field a ``cmd`` request may not have."""
    for field in request:
        if field not in _FIELDS[cmd]:
            if not isinstance(field, str):  # only possible when called from Python, not from JSON
                raise ProtocolError(f"field names must be strings, not {_json_type(field)}")
            known = ", ".join(f'"{f}"' for f in sorted(_FIELDS[cmd]))
            raise ProtocolError(f'unknown field {_show(field)} in a "{cmd}" request: the fields are {known}')


def _move(request: dict[str, Any]) -> Reply:
    board = _board(request)
    name, seed = request.get("player"), request.get("seed")
    if not ((name is None or type(name) is str) and (seed is None or type(seed) is int)):
        name = _optional(request, "player", str, "a player name like \"perfect\"")
        seed = _optional(request, "seed", int, "a whole number")
    if board.is_over:
        raise IllegalMoveError(f"the game is over ({_outcome(board)}), so there is no move to choose")
    budget = None if request.get("nodes") is None and request.get("seconds") is None else _budget(request)
    players, seeded = _move_tools or _import_players()
    # The same seed gives the same move whatever came before: a generator per request, seeded
    # only if the player draws (seeding takes longer than most moves on 3×3). Unseeded requests
    # share one generator seeded once by the system.
    if seed is not None and budget is None and (name is None or name == DEFAULT_PLAYER):
        player = _default_player(seed)
    else:
        global _unseeded
        rng: random.Random
        if seed is not None:
            rng = seeded(seed)
        else:
            if _unseeded is None:
                import random

                _unseeded = random.Random()
            rng = _unseeded
        player = players.get(name if name is not None else DEFAULT_PLAYER, rng=rng, budget=budget)
    cell = player.choose(board)
    if type(cell) is not int or cell not in board.legal_moves:
        raise RuntimeError(f"player {player.name!r} chose {cell!r}, which is not a legal move")
    return {"index": cell, "cell": board.cell_name(cell)}


def _default_player(seed: int) -> Player:
    """The default player with a generator that starts again from ``seed``, made once a thread.

    The perfect player keeps nothing from one move to the next but its generator (its budget
    is a template each move copies), and the generator starts again as ``random.Random(seed)``
    would, so it answers exactly as a new player with a new generator would.
    """
    thread = get_ident()
    kept = _kept_players.get(thread)
    if kept is None:
        players, seeded = _move_tools or _import_players()
        rng = seeded(seed)
        kept = _kept_players[thread] = players.get(DEFAULT_PLAYER, rng=rng), rng
        keep_newest(_kept_players, PLAYERS_KEPT)
    else:
        kept[1].start_again(seed)
    return kept[0]


def _import_players() -> tuple[ModuleType, type[SeededOnFirstDraw]]:
    """The players, imported at the first move request (other commands do not need them)."""
    global _move_tools
    import noughts.players
    from noughts.players.base import SeededOnFirstDraw

    _move_tools = noughts.players, SeededOnFirstDraw
    return _move_tools


def _analyse(request: dict[str, Any], progress: ProgressCallback | None = None) -> Reply:
    budget = _budget(request) or Budget(ANALYSE_MAX_NODES, ANALYSE_MAX_SECONDS)  # the clock starts now
    board = _board(request)
    from noughts import solver  # heavy and not needed by the other commands

    if _optional(request, "value_only", bool, "true or false"):
        # the position only: the value proved first, its length if found in what is left of the budget
        found = solver.outcome(board, progress=progress, budget=budget)
        return {"value": found.value, "plies": found.plies,
                "fewest_plies": found.fewest_plies, "most_plies": found.most_plies}
    # The solver raises BudgetExceeded (a NoughtsError) when the budget runs out.
    analysis = solver.analyse(board, progress=progress, budget=budget)
    return {
        "value": analysis.value,
        "plies": analysis.plies,
        "moves": [{"index": m.index, "cell": board.cell_name(m.index), "value": m.value, "plies": m.plies}
                  for m in analysis.moves],
    }


def _status(request: dict[str, Any]) -> Reply:
    board = _board(request)
    line = board.winning_line
    return {
        "turn": board.turn,
        "winner": board.winner,
        "line": list(line) if line is not None else None,
        "over": board.is_over,
        "legal": list(board.legal_moves),
    }


def _players(request: dict[str, Any]) -> Reply:
    _board(request)  # rows/cols/k are allowed on every request, so they are still checked
    from noughts import players

    names = list(players.names())
    return {"players": names, "descriptions": {name: players.describe(name) for name in names}}


def _hello(request: dict[str, Any]) -> Reply:
    """Who this is, which protocol it speaks and what it can do; whether the client's version fits."""
    from noughts import __version__

    wanted = _optional(request, "protocol", int, "a whole number, the protocol version the client was written for")
    reply: Reply = {"protocol": PROTOCOL, "compatible": wanted is None or wanted == PROTOCOL}
    if wanted is not None and wanted != PROTOCOL:
        if wanted > PROTOCOL:
            reply["message"] = (f"this engine speaks protocol {PROTOCOL}, older than the client's {wanted}: "
                                "upgrade noughts (pip install --upgrade noughts), or use the client's protocol "
                                f"{PROTOCOL} mode")
        elif wanted < 1:
            reply["message"] = (f"there is no protocol {wanted}: versions count from 1, "
                                f"and this engine speaks {PROTOCOL}")
        else:
            reply["message"] = (f"this engine speaks protocol {PROTOCOL}, newer than the client's {wanted}: "
                                f"protocol {wanted} is no longer spoken; update the client, or install the noughts "
                                f"release the client was written for")
    reply.update({"engine": "noughts", "version": __version__,
                  "commands": ["hello", "move", "analyse", "status", "players"], "deprecated": dict(DEPRECATED)})
    return reply


_HANDLERS: dict[str, Callable[[dict[str, Any]], Reply]] = {
    "move": _move, "analyse": _analyse, "status": _status, "players": _players, "hello": _hello,
}


# fields -----------------------------------------------------------------------------------

def _board(request: dict[str, Any]) -> Board:
    """The position a request is about: its "position", or the empty board of "rows"×"cols"."""
    position = request.get("position")
    if type(position) is str and request.get("rows") is None and request.get("cols") is None \
            and request.get("k") is None:  # the usual request: a position, often one seen before
        board = _parsed.get((position, None))
        if board is None:
            board = _parsed[position, None] = Board.parse(position)
            keep_newest(_parsed, POSITIONS_KEPT)
        return board
    rows = _optional(request, "rows", int, "a whole number")
    cols = _optional(request, "cols", int, "a whole number")
    k = _optional(request, "k", int, "a whole number")
    position = _optional(request, "position", str, 'text like "X.O/.X./..O"')
    if position is None:
        return Board(3 if rows is None else rows, 3 if cols is None else cols, k)
    board = _parsed.get((position, k))
    if board is None:
        board = Board.parse(position, k)
        _parsed[position, k] = board
        keep_newest(_parsed, POSITIONS_KEPT)
    for name, given, actual in (("rows", rows, board.rows), ("cols", cols, board.cols)):
        if given is not None and given != actual:
            raise ProtocolError(
                f'"{name}" is {given} but the position is {board.rows}×{board.cols}: '
                f'leave "{name}" out or make them agree')
    return board


def _budget(request: dict[str, Any]) -> Budget | None:
    """The request's own budget ("nodes", "seconds"; a missing one is no limit), or ``None``."""
    nodes = _optional(request, "nodes", int, "a whole number of positions")
    seconds = request.get("seconds")
    if seconds is not None and (type(seconds) not in (int, float) or not 0 < seconds < math.inf):
        raise ProtocolError(f'"seconds" must be a number of seconds above 0, not {_json_type(seconds)}')
    if nodes is not None and nodes < 0:
        raise ProtocolError(f'"nodes" must be 0 or more, not {nodes}')
    if nodes is None and seconds is None:
        return None
    return Budget(nodes, seconds)


def _optional(request: dict[str, Any], field: str, kind: type, wanted: str) -> Any:
    """The value of an optional field, ``None`` if absent or null; a wrong type is an error."""
    value = request.get(field)
    # bool is a subclass of int, but true is not a number of rows
    if value is not None and (type(value) is not kind):
        raise ProtocolError(f'"{field}" must be {wanted}, not {_json_type(value)}')
    return value


def _check_id(value: object) -> object:
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    raise ProtocolError(f'"id" must be a string, a number or null, not {_json_type(value)}')


class NotAJsonNumber(ValueError):
    """NaN or Infinity in a request: Python's JSON reads them, JSON does not have them."""


def _reject_constant(name: str) -> object:
    raise NotAJsonNumber(f"{name} is not a JSON number")


# What json.loads and json.dumps would make afresh for every line, made once.
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
_scan: Callable[[str, int], tuple[object, int]] = _DECODER.scan_once  # type: ignore[attr-defined]
# Replies are made here, never circular: looking for cycles would take a third of encoding one.
_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False, check_circular=False)
# The C encoder _ENCODER.encode makes afresh for every reply (with the same arguments), made once:
# encoding a move's reply takes a third of the time. None where json has no C speed-ups.
_c_make_encoder = getattr(json.encoder, "c_make_encoder", None)
_encode_parts = None if _c_make_encoder is None else _c_make_encoder(
    None, _ENCODER.default, json.encoder.encode_basestring_ascii, None, ":", ",", False, False, False)


_quote: Callable[[str], str] = json.encoder.encode_basestring_ascii  # a string as JSON, ASCII only


def _decode(text: str) -> object:
    """``_DECODER.decode(text)`` for text with no space around it, sooner: the decoder's own scanner,
    without the two whitespace searches around it (a third of the time of a request's decoding)."""
    try:
        value, end = _scan(text, 0)
    except StopIteration:
        end = -1
    if end != len(text):  # not one JSON value alone: the decoder's own words for what is wrong
        return _DECODER.decode(text)
    return value


def _skip_rest_of_line(stdin: IO[bytes]) -> None:
    while True:  # in bounded pieces, so a gigabyte line never sits in memory
        chunk = stdin.readline(MAX_LINE_BYTES)
        if not chunk or chunk.endswith(b"\n"):
            return


def _too_long() -> Reply:
    return {"error": f"the request is longer than {MAX_LINE_BYTES} bytes and was skipped"}


_TOO_LONG = encode(_too_long())


def _outcome(board: Board) -> str:
    return f"{board.winner} has won" if board.winner else "the board is full"


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        # str() of a huge int can itself fail (Python's digit limit), so test the size first
        small = abs(value) < 1e15 if isinstance(value, int) else math.isfinite(value)
        return f"the number {value}" if small else "a huge number"
    if isinstance(value, str):
        return f"the string {_show(value)}"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _show(text: str) -> str:
    """A short, printable quotation of text the client sent."""
    return repr(text) if len(text) <= 40 else repr(text[:40]) + "…"
