"""The Gomocup (Piskvork) brain protocol: ``noughts gomocup`` plays in gomoku managers.

A gomoku manager (Piskvork, GomocupJudge, or :mod:`noughts.gomocup_manager`) starts a brain
and talks to it through its standard input and output, one command per line, as published at
https://plastovicka.github.io/protocl2en.htm. :class:`Brain` answers one line at a time and
never raises; :func:`run` is the loop around it.

>>> brain = Brain("minimax")
>>> brain.feed("START 3"), brain.feed("BEGIN"), brain.feed("TURN 1,1")
(['OK'], ['0,0'], ['1,0'])
>>> brain.feed("TURN 1,1")
['ERROR 1,1 is already taken: the cells taken are 0,0 1,0 1,1']
>>> brain.feed("HELLO")
["UNKNOWN 'HELLO' is not a command of the Gomocup protocol"]

Coordinates are ``x,y`` from 0: ``x`` the column, ``y`` the row (``cell = y * width + x``).
``START n`` is an n×n board and ``RECTSTART w,h`` a board w columns wide and h rows high, up
to 26 either way. k in a row wins: five, or the board's smaller side when that is shorter
(``--k`` sets another k); five *or more* in a row wins, as in freestyle gomoku. The other rules
INFO can announce are not in noughts' rules: see :data:`RULES`. The full description is
docs/gomocup.md.
"""

from __future__ import annotations

import re
import time

from noughts import __version__
from noughts.board import MAX_SIDE, Board, Geometry
from noughts.budget import Budget
from noughts.errors import NoughtsError

TYPE_CHECKING = False  # typing costs milliseconds at import; mypy still reads the block
if TYPE_CHECKING:
    import random
    from collections.abc import Callable
    from typing import IO

__all__ = [
    "DEFAULT_PLAYER", "FAST_SECONDS", "MARGIN_SECONDS", "MAX_LINE_BYTES", "MOVES_AHEAD", "RULES", "SHARE", "Brain",
    "GomocupError", "run",
]

DEFAULT_PLAYER = "minimax"
"""The player that moves when ``--player`` is not given: it plays any board, within any time limit."""
MAX_LINE_BYTES = 4096
"""The longest line read whole; the protocol's lines are a few dozen bytes."""
FAST_SECONDS = 0.02
"""A move's time when INFO timeout_turn is 0 ("as fast as possible")."""
SHARE = 0.8
"""The part of a turn's time limit a move may spend searching; the rest covers replying."""
MARGIN_SECONDS = 0.03
"""Taken off every move's time as well: the manager's clock also counts the pipe and the process switch."""
MOVES_AHEAD = 20
"""With a match time limit, a move may spend the time left divided by the moves still to come, at most this many."""
UNLIMITED_MS = 2_147_483_647  # what managers send as time_left when the match has no time limit
RULES = {
    1: "exactly five in a row wins (noughts counts five or more)",
    2: "continuous game (noughts ends the game at the first five)",
    4: "renju (noughts does not know black's forbidden moves)",
    8: "caro (noughts counts a five even when both its ends are blocked)",
}
"""INFO rule's bits, none of which noughts' rules have: each is reported once a game, see :meth:`Brain.feed`."""

_COORDINATES = re.compile(r"\s*(\d{1,6})\s*,\s*(\d{1,6})\s*")
_STONE = re.compile(r"\s*(\d{1,6})\s*,\s*(\d{1,6})\s*,\s*(\d{1,6})\s*")
_KNOWN = frozenset({"START", "RECTSTART", "RESTART", "BEGIN", "TURN", "BOARD", "INFO", "END", "ABOUT", "TAKEBACK",
                    "PLAY", "SWAP2BOARD"})
_INFO_MS = ("timeout_turn", "timeout_match", "time_left")


class GomocupError(NoughtsError):
    """A command the brain knows but cannot carry out; its message follows ``ERROR`` on the reply line."""


class Brain:
    """A gomoku brain that plays with a noughts player, one protocol line at a time.

    ``player`` is a name from :func:`noughts.players.names`; ``k`` the marks in a row that win
    (default: five, or the board's smaller side when that is shorter); ``seed`` seeds the
    player's random choices; ``nodes`` caps every move's search at that many positions, besides
    the time limits from INFO. ``clock`` is the clock those limits are measured on.
    """

    def __init__(self, player: str = DEFAULT_PLAYER, *, k: int | None = None, seed: int | None = None,
                 nodes: int | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        import random

        from noughts import players

        self.player = players.canonical(player)  # an unknown name fails here, before any game
        if k is not None and (type(k) is not int or k < 1):
            raise GomocupError(f"k (marks in a row to win) must be a whole number from 1, not {k!r:.20}")
        self.k = k
        self.nodes = nodes
        self.clock = clock
        self.rng: random.Random = random.Random(seed)
        self.width = self.height = 0  # no board until START
        self.own = self.opponent = 0  # bitmasks of the stones, cell = y * width + x
        self.timeout_turn: int | None = None  # milliseconds, as INFO gives them; None: not given
        self.timeout_match: int | None = None
        self.time_left: int | None = None
        self.rule = 0
        self.ended = False
        self._notes: list[str] = []  # MESSAGE lines to send before the next reply
        self._told: set[int] = set()  # the rule bits already reported this game
        self._block: _Block | None = None  # a BOARD or SWAP2BOARD being read

    # lines ----------------------------------------------------------------------------------
    def feed(self, line: str, received: float | None = None) -> list[str]:
        """The reply lines to one line from the manager (often one, none for INFO and END).

        ``received`` is when the line arrived on :attr:`clock` (default: now); a move's time
        counts from there. Problems are ``ERROR …`` lines, unknown commands ``UNKNOWN …``;
        nothing raises.
        """
        started = self.clock() if received is None else received
        text = line.strip().removeprefix("\ufeff")
        if not text or self.ended:
            return []
        try:
            replies = self._block_line(text, started) if self._block is not None else self._command(text, started)
        except GomocupError as error:
            replies = [_line("ERROR", str(error))]
        except NoughtsError as error:  # e.g. a position noughts' rules cannot have arisen in
            replies = [_line("ERROR", str(error))]
        except Exception as error:  # a bug must not kill the brain in the middle of a tournament
            replies = [_line("ERROR", f"internal error (please report it): {type(error).__name__}: {error}")]
        if replies and not replies[0].startswith("UNKNOWN") and self._notes:
            replies = [*self._notes, *replies]  # the protocol wants INFO's problems told at the next command
            self._notes = []
        return replies

    def _command(self, text: str, started: float) -> list[str]:
        word, _, rest = text.partition(" ")
        command = word.upper()
        rest = rest.strip()
        if command not in _KNOWN:
            return [_line("UNKNOWN", f"{_shown(word)} is not a command of the Gomocup protocol")]
        if command == "INFO":
            self._info(rest)
            return []
        if command == "END":
            self.ended = True
            return []
        if command == "ABOUT":
            return [_about()]
        if command == "START":
            size = _whole(rest, "START takes the board's size, like START 15")
            return self._start(size, size)
        if command == "RECTSTART":
            match = _COORDINATES.fullmatch(rest)
            if match is None:
                raise GomocupError(f"RECTSTART takes width,height, like RECTSTART 20,15, not {_shown(rest)}")
            return self._start(int(match[1]), int(match[2]))
        if command == "BOARD" or command == "SWAP2BOARD":
            self._need_board(command)
            self._block = _Block(command, started)
            return []
        self._need_board(command)
        if command == "RESTART":
            self._new_game()
            return ["OK"]
        if command == "BEGIN":
            if self.own | self.opponent:
                raise GomocupError(f"BEGIN opens a game on an empty board, but {self._count()} stones are on it: "
                                   "send RESTART first, or BOARD")
            return self._move(started)
        cell = self._cell(rest, command)
        if command == "TAKEBACK":
            bit = 1 << cell
            if not (self.own | self.opponent) & bit:
                raise GomocupError(f"there is no stone at {self._name(cell)} to take back")
            self.own &= ~bit
            self.opponent &= ~bit
            return ["OK"]
        self._free(cell)
        if command == "PLAY":  # the manager imposes our move (after SUGGEST, which we never send)
            self._board(mover="us")  # is it our move at all?
            self.own |= 1 << cell
            return [self._name(cell)]
        # TURN: the opponent's move, then ours
        self.opponent |= 1 << cell
        try:
            return self._move(started)
        except NoughtsError:
            self.opponent &= ~(1 << cell)  # the command failed as a whole
            raise

    def _block_line(self, text: str, started: float) -> list[str]:
        block = self._block
        assert block is not None
        if text.upper() == "DONE":
            self._block = None
            if block.command == "SWAP2BOARD":
                return [_line("UNKNOWN", "SWAP2BOARD: noughts does not play the swap2 opening; "
                                         "send the opening with BOARD")]
            return self._impose(block)
        if text.partition(" ")[0].upper() in _KNOWN:  # the manager went on without DONE
            self._block = None
            replies = [_line("ERROR", f"{block.command} ended without DONE; the board is unchanged")]
            return replies + self.feed(text, started)
        if block.command == "BOARD" and block.problem is None:
            block.problem = self._stone(block, text)
        return []

    def _stone(self, block: _Block, text: str) -> str | None:
        """Add one ``x,y,field`` line of BOARD to ``block``; the problem with it, if any."""
        block.lines += 1
        match = _STONE.fullmatch(text)
        if match is None:
            return f"BOARD line {block.lines}: {_shown(text)} is not x,y,field (or DONE)"
        x, y, field = (int(group) for group in match.groups())
        if not (x < self.width and y < self.height):
            return f"BOARD line {block.lines}: {x},{y} is off the {self.width}×{self.height} board"
        cell = y * self.width + x
        if (block.own | block.opponent) >> cell & 1:
            return f"BOARD line {block.lines}: {x},{y} is given twice"
        if field == 1:
            block.own |= 1 << cell
        elif field == 2:
            block.opponent |= 1 << cell
        elif field == 3:
            return (f"BOARD line {block.lines}: field 3 (a stone of a finished line, or a forbidden one) at {x},{y}: "
                    "noughts does not play continuous games or renju")
        else:
            return f"BOARD line {block.lines}: the field is 1 (own stone), 2 (opponent's) or 3, not {field}"
        return None

    def _impose(self, block: _Block) -> list[str]:
        if block.problem is not None:
            raise GomocupError(f"{block.problem}; the board is unchanged")
        self.own, self.opponent = block.own, block.opponent
        return self._move(block.started)

    # commands ---------------------------------------------------------------------------------
    def _start(self, width: int, height: int) -> list[str]:
        if not (1 <= width <= MAX_SIDE and 1 <= height <= MAX_SIDE):
            raise GomocupError(f"noughts plays boards of 1 to {MAX_SIDE} cells a side, not {width}×{height}")
        from noughts import players

        if self.k is not None and self.k > max(width, height):
            raise GomocupError(f"{self.k} in a row cannot fit on a {width}×{height} board")
        board = Board(height, width, self.k)
        reason = players.unable(self.player, board)
        if reason is not None:
            raise GomocupError(f"{players.label(self.player)} cannot play a {width}×{height} board with "
                               f"{board.k} in a row: {reason}")
        players.get(self.player, self.rng)  # load the player now: START's time is not the first move's
        self.width, self.height = width, height
        self._new_game()
        return ["OK"]

    def _new_game(self) -> None:
        self.own = self.opponent = 0
        self._told = set()

    def _info(self, rest: str) -> None:
        key, _, value = rest.partition(" ")
        key, value = key.lower(), value.strip()
        if key in _INFO_MS or key == "rule":
            try:
                number = int(value) if len(value) <= 20 else None
            except ValueError:
                number = None
            if number is None or (key != "time_left" and number < 0):
                self._notes.append(_line("MESSAGE", f"ignored INFO {key} {_shown(value)}: not a whole number"
                                     + (" of milliseconds" if key != "rule" else "")))
                return
            if key == "rule":
                self.rule = number
            else:
                setattr(self, key, number)
        # Everything else (max_memory, game_type, folder, evaluate, keys of the future) needs nothing:
        # noughts keeps no files and little memory.

    def _move(self, started: float) -> list[str]:
        from noughts import players

        board = self._board(mover="us")
        notes = self._rule_notes(board)
        budget = self._budget(started, board)
        try:
            player = players.get(self.player, self.rng, budget=budget)
            cell = player.choose(board)
        except NoughtsError as error:  # e.g. the solver ran out of time: still answer in time
            from noughts.players.minimax import MinimaxPlayer

            left = budget.seconds_left() if budget is not None else None
            fallback = Budget(self.nodes, left if left is not None else 1.0)
            cell = MinimaxPlayer(budget=fallback).choose(board)
            notes.append(_line("MESSAGE", f"{players.label(self.player)} gave no move ({error}); "
                                          f"minimax chose {self._name(cell)}"))
        if type(cell) is not int or cell not in board.legal_moves:
            raise GomocupError(f"the {self.player} player chose {cell!r:.20}, which is not a free cell")
        self.own |= 1 << cell
        return [*notes, self._name(cell)]

    def _rule_notes(self, board: Board) -> list[str]:
        notes = []
        if self.rule & 4 and board.turn == "X":
            raise GomocupError("noughts does not know renju's forbidden moves for the first player (INFO rule 4); "
                               "it can play renju as the second player")
        for bit, what in RULES.items():
            if self.rule & bit and bit not in self._told:
                self._told.add(bit)
                notes.append(_line("MESSAGE", f"INFO rule {bit}: {what}"))
        return notes

    def _budget(self, started: float, board: Board) -> Budget | None:
        """The move's budget from INFO's time limits (and ``nodes``); ``None``: the player's own."""
        limits = []
        if self.timeout_turn is not None:
            limits.append(FAST_SECONDS if self.timeout_turn == 0 else self.timeout_turn / 1000 * SHARE)
        time_left = self.time_left
        if time_left is None and self.timeout_match:  # some managers only send the match's limit
            time_left = self.timeout_match
        if time_left is not None and time_left < UNLIMITED_MS:
            moves = min(MOVES_AHEAD, (len(board.legal_moves) + 1) // 2)
            limits.append(max(0, time_left) / 1000 * SHARE / max(1, moves))
        if not limits:
            return Budget(self.nodes) if self.nodes is not None else None
        seconds = min(limits) - MARGIN_SECONDS - (self.clock() - started)
        return Budget(self.nodes, max(0.0, seconds), clock=self.clock)

    # the board --------------------------------------------------------------------------------
    def _need_board(self, command: str) -> None:
        if not self.width:
            raise GomocupError(f"{command} before START: send START [size] or RECTSTART [width],[height] first")

    def _board(self, *, mover: str) -> Board:
        """The position as noughts sees it (X moved first), with the brain to move."""
        geometry = Geometry.get(self.height, self.width, self.k)
        for who, stones in (("noughts", self.own), ("the opponent", self.opponent)):
            for mask in geometry.line_masks:
                if stones & mask == mask:
                    line = " ".join(self._name(cell) for cell in geometry.line_cells(mask))
                    raise GomocupError(f"the game is over: {who} has {geometry.k} in a row ({line})")
        n_own, n_opponent = self.own.bit_count(), self.opponent.bit_count()
        if n_own == n_opponent:
            x, o = self.own, self.opponent
        elif n_opponent == n_own + 1:
            x, o = self.opponent, self.own
        else:
            raise GomocupError(f"it is not noughts' move: it has {n_own} stones and the opponent {n_opponent}; "
                               "the players take turns, so the side to move has as many stones as the other or one "
                               "fewer")
        board = Board.from_bits(x, o, self.height, self.width, self.k)
        if board.is_draw:
            raise GomocupError("the game is over: the board is full")
        return board

    def _cell(self, rest: str, command: str) -> int:
        match = _COORDINATES.fullmatch(rest)
        if match is None:
            raise GomocupError(f"{command} takes x,y, like {command} 7,7, not {_shown(rest)}")
        x, y = int(match[1]), int(match[2])
        if not (x < self.width and y < self.height):
            raise GomocupError(f"{x},{y} is off the {self.width}×{self.height} board "
                               f"(x runs from 0 to {self.width - 1}, y from 0 to {self.height - 1})")
        return y * self.width + x

    def _free(self, cell: int) -> None:
        if (self.own | self.opponent) >> cell & 1:
            taken = self.own | self.opponent
            cells = " ".join(self._name(c) for c in range(self.width * self.height) if taken >> c & 1)
            raise GomocupError(f"{self._name(cell)} is already taken: the cells taken are {cells}"[:300])

    def _name(self, cell: int) -> str:
        y, x = divmod(cell, self.width)
        return f"{x},{y}"

    def _count(self) -> int:
        return (self.own | self.opponent).bit_count()


class _Block:
    """The lines of a BOARD (or SWAP2BOARD) command, read up to DONE."""

    def __init__(self, command: str, started: float) -> None:
        self.command = command
        self.started = started  # the move's time counts from the BOARD line
        self.own = self.opponent = 0
        self.lines = 0
        self.problem: str | None = None


def run(stdin: IO[bytes], stdout: IO[str], brain: Brain) -> int:
    """Answer the manager's lines from ``stdin`` until END or end of input; returns the exit status (0).

    ``stdin`` is binary so that a line too long or not UTF-8 is an error reply, not a crash.
    """
    while not brain.ended:
        line = stdin.readline(MAX_LINE_BYTES + 1)
        if not line:
            return 0
        received = brain.clock()
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            while True:  # skip the rest in bounded pieces
                chunk = stdin.readline(MAX_LINE_BYTES)
                if not chunk or chunk.endswith(b"\n"):
                    break
            replies = [f"ERROR a line longer than {MAX_LINE_BYTES} bytes was skipped"]
        else:
            replies = brain.feed(line.decode("utf-8", errors="replace"), received)
        if replies:
            stdout.write("".join(reply + "\n" for reply in replies))
            stdout.flush()  # the manager waits for this line
    return 0


_abouts: list[str] = []  # worked out once: reading the package's metadata takes milliseconds


def _about() -> str:
    if _abouts:
        return _abouts[0]
    fields = {"name": "noughts", "version": __version__, "author": "the noughts developers"}
    try:
        from importlib.metadata import PackageNotFoundError, metadata

        try:
            meta = metadata("noughts")
        except PackageNotFoundError:
            meta = None
        urls = [*(meta.get_all("Home-page") or []), *(entry.partition(",")[2].strip()
                                                    for entry in meta.get_all("Project-URL") or [])] if meta else []
        url = next((u for u in urls if u), None)
        if url:
            fields["www"] = url
    except Exception:  # metadata is a nicety: ABOUT must answer whatever the installation looks like
        pass
    _abouts.append(", ".join(f'{key}="{value}"' for key, value in fields.items()))
    return _abouts[0]


def _whole(text: str, usage: str) -> int:
    if not (text.isascii() and text.isdigit() and len(text) <= 6):
        raise GomocupError(f"{usage}, not {_shown(text)}")
    return int(text)


def _line(kind: str, message: str) -> str:
    """``kind message`` as one line: control characters (a newline would be a second command) become spaces."""
    cleaned = "".join(c if c.isprintable() else " " for c in message)
    return f"{kind} {cleaned}"


def _shown(text: str) -> str:
    return repr(text[:40] + ("…" if len(text) > 40 else ""))
