"""A small gomoku manager: plays Gomocup (Piskvork) brains against each other, with time limits.

Written from the published protocol (https://plastovicka.github.io/protocl2en.htm) and the way
Piskvork drives brains: ``START`` (or ``RECTSTART``), the ``INFO`` limits, then ``BEGIN`` for
the first mover, ``TURN x,y`` with the opponent's last move, or ``BOARD … DONE`` when a brain
joins a game already under way (an opening). ``INFO time_left`` goes before every move when
the match has a time limit. A brain that does not answer within its turn's limit (plus a
tolerance) is killed and loses, as in Piskvork; so does one that exits, answers something that
is not a free cell, or answers ``ERROR``. The judge is noughts' own board: k in a row wins
(five or more), a full board is a draw.

>>> import sys
>>> brain = [sys.executable, "-m", "noughts", "gomocup"]
>>> result = play_game([*brain, "--player", "minimax"], [*brain, "--player", "easy", "--seed", "1"],
...                    size=(3, 3), timeout_turn=2000)
>>> result.winner, result.reason
(0, 'three in a row')

Brains are any commands: ``noughts gomocup`` itself, or another program's ``pbrain-*`` built for
this system. ``python -m noughts.gomocup_manager "CMD1" "CMD2" --games 4`` plays a match and
prints the results.
"""

from __future__ import annotations

import contextlib
import queue
import subprocess
import threading
import time
from dataclasses import dataclass, field

from noughts.board import Board
from noughts.errors import NoughtsError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["BrainProcess", "BrainTimeout", "GameResult", "ManagerError", "main", "play_game", "play_match"]

START_SECONDS = 15.0
"""How long a brain may take to start and answer START (not counted in its time)."""
END_SECONDS = 1.0
"""How long a brain may take to exit after END before it is killed (Piskvork's is about a second)."""
UNLIMITED_MS = 2_147_483_647  # INFO time_left when the match has no time limit
_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven"}


class ManagerError(NoughtsError):
    """A brain that cannot be started, or a game that cannot be set up."""


class BrainTimeout(NoughtsError):
    """A brain gave no answer in time."""


class BrainExited(NoughtsError):
    """A brain's output ended: it exited or crashed. ``brain`` is its number in the game (0 or 1)."""

    brain = 0


@dataclass
class GameResult:
    """How one game ended. Brains are 0 (the first command, who moves first) and 1."""

    winner: int | None
    """The brain that won, or ``None`` for a draw."""
    reason: str
    """``five in a row`` (k in words), ``draw``, ``timeout``, ``illegal move``, ``error``, ``exited``."""
    moves: list[tuple[int, int]] = field(default_factory=list)
    """Every move as (x, y), the opening's first."""
    times: list[tuple[int, float]] = field(default_factory=list)
    """(brain, seconds) for every move a brain made, as the manager measured it: command sent to answer read."""
    messages: list[tuple[int, str]] = field(default_factory=list)
    """(brain, text) for every MESSAGE, DEBUG, ERROR or UNKNOWN line the brains sent."""
    detail: str = ""
    """A sentence about the end: which brain did what."""


class BrainProcess:
    """One brain as a subprocess: lines in, lines out, read with a time limit."""

    def __init__(self, command: Sequence[str], *, env: dict[str, str] | None = None) -> None:
        try:
            self.process = subprocess.Popen(
                list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                env=env, text=True, encoding="utf-8", errors="replace", bufsize=1)
        except OSError as error:
            raise ManagerError(f"cannot start brain {' '.join(command)!r}: {error}") from None
        self.command = list(command)
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.reader = threading.Thread(target=self._read, name="gomocup-brain-reader", daemon=True)
        self.reader.start()

    def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        try:
            for line in stdout:
                self.lines.put(line.rstrip("\r\n"))
        except (OSError, ValueError):
            pass
        self.lines.put(None)  # end of output

    def send(self, line: str) -> None:
        """Write one command (CR LF, as Piskvork does); a brain that has gone is noticed at the next read."""
        stdin = self.process.stdin
        assert stdin is not None
        try:
            stdin.write(line + "\r\n")
            stdin.flush()
        except (OSError, ValueError):
            pass

    def read(self, seconds: float | None) -> str:
        """The next line within ``seconds`` (``None``: wait for ever); raises BrainTimeout or BrainExited."""
        try:
            line = self.lines.get(timeout=None if seconds is None else max(0.0, seconds))
        except queue.Empty:
            raise BrainTimeout(f"no answer within {seconds:.2f} s") from None
        if line is None:
            self.lines.put(None)  # every later read sees the end too
            raise BrainExited("the brain's output ended (it exited)")
        return line

    def close(self) -> None:
        """Send END, give the brain a moment to exit, then kill it."""
        if self.process.poll() is None:
            self.send("END")
            try:
                self.process.wait(END_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def play_game(first: Sequence[str], second: Sequence[str], *, size: tuple[int, int] = (15, 15),
              k: int | None = None, timeout_turn: int = 5000, timeout_match: int = 0, tolerance: int = 1000,
              rule: int = 0, opening: Sequence[tuple[int, int]] = (), env: dict[str, str] | None = None,
              names: tuple[str, str] = ("brain 0", "brain 1")) -> GameResult:
    """Play one game between two brain commands; ``first`` moves first (after any ``opening``).

    ``size`` is (width, height); ``k`` the marks in a row that win (default five, or the smaller
    side when shorter: tell the brains the same, e.g. ``noughts gomocup --k``). Limits are in
    milliseconds as INFO sends them: ``timeout_turn`` for each move (0: as fast as possible),
    ``timeout_match`` for each brain's whole game (0: none). A brain is killed and loses when a
    move takes longer than its limit plus ``tolerance``. ``opening`` moves are played first,
    alternately from the first mover; both brains then get them with BOARD. ``names`` are the
    brains' names in :attr:`GameResult.detail`.
    """
    width, height = size
    try:
        board = Board(height, width, k)
    except NoughtsError as error:
        raise ManagerError(str(error)) from None
    result = GameResult(None, "")
    brains: list[BrainProcess] = []
    try:
        for command in (first, second):
            brains.append(BrainProcess(command, env=env))
        for index, brain in enumerate(brains):
            brain.send(f"START {width}" if width == height else f"RECTSTART {width},{height}")
            answer = _answer(brain, index, START_SECONDS, result)
            if answer is None or answer.upper() != "OK":
                return _lost(result, index, "error", f"{names[index]} did not answer OK to START: {answer!r}")
            for key, value in (("timeout_turn", timeout_turn), ("timeout_match", timeout_match),
                               ("max_memory", 0), ("game_type", 1), ("rule", rule)):
                brain.send(f"INFO {key} {value}")
        for x, y in opening:
            if not (0 <= x < width and 0 <= y < height) or board[y * width + x] is not None:
                raise ManagerError(f"the opening's move {x},{y} is off the board or taken")
            board = board.play(y * width + x)
            result.moves.append((x, y))
        seen = [False, False]  # whether each brain has been told the game so far
        used = [0.0, 0.0]  # seconds of match time used
        while not board.is_over:
            mover = board.ply % 2
            brain = brains[mover]
            limit = None if timeout_turn == 0 else timeout_turn / 1000
            if timeout_match:
                left = timeout_match / 1000 - used[mover]
                brain.send(f"INFO time_left {int(left * 1000)}")
                limit = left if limit is None else min(limit, left)
            if not seen[mover]:
                seen[mover] = True
                if not result.moves:
                    brain.send("BEGIN")
                elif len(result.moves) == 1:
                    brain.send("TURN {},{}".format(*result.moves[0]))
                else:
                    brain.send("BOARD")
                    for i, (x, y) in enumerate(result.moves):
                        brain.send(f"{x},{y},{1 if i % 2 == mover else 2}")
                    brain.send("DONE")
            else:
                brain.send("TURN {},{}".format(*result.moves[-1]))
            sent = time.monotonic()
            answer = _answer(brain, mover, (limit if limit is not None else 0.0) + tolerance / 1000, result)
            taken = time.monotonic() - sent
            used[mover] += taken
            if answer is None:
                brain.kill()
                return _lost(result, mover, "timeout", f"{names[mover]} gave no move within its time "
                                                       f"({(limit or 0) * 1000:.0f} ms + {tolerance} ms tolerance)")
            result.times.append((mover, taken))
            cell = _cell(answer, width, height)
            if cell is None or board[cell] is not None:
                reason = "error" if answer.split(" ")[0].upper() in ("ERROR", "UNKNOWN") else "illegal move"
                return _lost(result, mover, reason, f"{names[mover]} answered {answer!r:.80}, not a free cell")
            board = board.play(cell)
            result.moves.append((cell % width, cell // width))
        if board.winner is not None:
            winner = board.ply % 2 ^ 1  # whoever made the last move
            result.winner, result.reason = winner, f"{_WORDS.get(board.k, str(board.k))} in a row"
            result.detail = f"{names[winner]} made {board.k} in a row"
        else:
            result.reason, result.detail = "draw", "the board is full"
        return result
    except BrainExited as exited:
        return _lost(result, exited.brain, "exited",
                     f"{names[exited.brain]} exited after {len(result.moves)} moves")
    finally:
        for brain in brains:
            brain.close()


def _answer(brain: BrainProcess, index: int, seconds: float, result: GameResult) -> str | None:
    """The brain's answer: its first line that is not MESSAGE or DEBUG; ``None`` after ``seconds``.

    SUGGEST x,y is answered with PLAY x,y, as the Gomocup manager always does.
    """
    deadline = time.monotonic() + seconds
    while True:
        try:
            line = brain.read(deadline - time.monotonic())
        except BrainTimeout:
            return None
        except BrainExited as exited:
            exited.brain = index
            raise
        word = line.split(" ")[0].upper()
        if word in ("MESSAGE", "DEBUG"):
            result.messages.append((index, line))
            continue
        if word == "SUGGEST":
            brain.send("PLAY " + line[len("SUGGEST "):].strip())
            continue
        if word in ("ERROR", "UNKNOWN"):
            result.messages.append((index, line))
        if line.strip():
            return line.strip()


def _cell(answer: str, width: int, height: int) -> int | None:
    x_text, comma, y_text = answer.partition(",")
    if not comma or not (x_text.strip().isdigit() and y_text.strip().isdigit()):
        return None
    x, y = int(x_text), int(y_text)
    return y * width + x if x < width and y < height else None


def _lost(result: GameResult, loser: int, reason: str, detail: str) -> GameResult:
    result.winner, result.reason, result.detail = 1 - loser, reason, detail
    return result


def play_match(first: Sequence[str], second: Sequence[str], *, games: int = 2,
               **options: object) -> list[GameResult]:
    """``games`` games, the brains taking turns to move first; each result's ``winner`` is 0 for
    ``first`` and 1 for ``second`` whoever began (the game's own order is in ``moves``)."""
    results = []
    for number in range(games):
        swapped = number % 2 == 1
        names = ("the second brain", "the first brain") if swapped else ("the first brain", "the second brain")
        result = play_game(second if swapped else first, first if swapped else second, names=names,
                           **options)  # type: ignore[arg-type]
        if swapped and result.winner is not None:
            result.winner = 1 - result.winner
        results.append(result)
    return results


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m noughts.gomocup_manager "CMD1" "CMD2" [--games N] [--size WxH] …``: play and report."""
    import argparse
    import shlex

    parser = argparse.ArgumentParser(prog="python -m noughts.gomocup_manager",
                                     description="Play two Gomocup brains against each other and report the results.")
    parser.add_argument("first", help='the first brain\'s command, e.g. "noughts gomocup --player minimax"')
    parser.add_argument("second", help="the second brain's command")
    parser.add_argument("--games", type=int, default=2, help="games to play, first mover alternating (default 2)")
    parser.add_argument("--size", default="15x15", help="board WIDTHxHEIGHT, or one number (default 15x15)")
    parser.add_argument("--k", type=int, help="marks in a row to win (default five, or the smaller side)")
    parser.add_argument("--timeout-turn", type=int, default=5000, help="milliseconds per move (default 5000)")
    parser.add_argument("--timeout-match", type=int, default=0, help="milliseconds per game and brain (0: none)")
    parser.add_argument("--tolerance", type=int, default=1000, help="milliseconds over the limit before a "
                                                                    "brain is killed (default 1000)")
    args = parser.parse_args(argv)
    width_text, _, height_text = args.size.lower().partition("x")
    try:
        size = (int(width_text), int(height_text or width_text))
        results = play_match(shlex.split(args.first), shlex.split(args.second), games=args.games, size=size,
                             k=args.k, timeout_turn=args.timeout_turn, timeout_match=args.timeout_match,
                             tolerance=args.tolerance)
    except (NoughtsError, ValueError) as error:
        print(f"gomocup_manager: {error}")
        return 2
    except KeyboardInterrupt:
        return 130
    wins = [0, 0]
    for number, result in enumerate(results, 1):
        slowest = max((seconds for _, seconds in result.times), default=0.0)
        outcome = "draw" if result.winner is None else f"{('the first', 'the second')[result.winner]} brain wins"
        print(f"game {number}: {outcome} ({result.reason}; {result.detail}) after {len(result.moves)} moves, "
              f"slowest move {slowest * 1000:.0f} ms")
        if result.winner is not None:
            wins[result.winner] += 1
    draws = len(results) - sum(wins)
    print(f"{args.first}: {wins[0]} · {args.second}: {wins[1]} · draws: {draws}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
