"""The desktop game's flow: what happens on a click, a key, a button or the computer's answer.

No pygame here. The window turns its events into the high-level inputs below (``activate`` a
cell or button, ``key``, ``point_at``, ``job_done``) and draws whatever :meth:`Controller.view`
returns, so the whole game can be driven and checked without a window.

The game itself is a :class:`~noughts.match.Match`: who starts, whose turn it is, the
computer's move, undo, hints, the tally, the result sentences and recording a finished game
are all the match's. The controller keeps only what is the window's own: which screen shows,
the pointer and the keyboard cursor, the buttons, the start screen's choices (they apply to
the next new game, never to the one in play) and the tokens of the jobs it gave its
:class:`Worker`. Slow work (the computer's move, a hint, which opponents can play the board)
runs off the event loop and comes back through ``job_done`` with its token; an answer whose
token is no longer awaited (the move was undone, a new game began) is dropped.

>>> class AtOnce:  # a worker that answers at once, enough to drive the flow in a doctest
...     def __init__(self): self.done = []
...     def submit(self, token, job, delay=0.0): self.done.append((token, job()))
>>> worker = AtOnce()
>>> game = Controller(opponent="parsons", first="me", worker=worker, names=["Ann"])
>>> game.activate(("cell", 0)); game.job_done(*worker.done.pop())
>>> str(game.board), game.view().status
('X../.O./...', 'Your turn (X): click a cell, or press 1–9, or move with the arrows and press Enter.')
>>> game.activate(("cell", 4))
>>> game.view().status
'b2 is taken by O: choose an empty cell.'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from noughts import players
from noughts.board import Board
from noughts.errors import NoughtsError
from noughts.match import (
    DEFAULT_FIRST,
    DEFAULT_OPPONENT,
    PERSON,
    ComputerMove,
    Match,
    MatchEvent,
    first_rule,
    opponent_name,
)
from noughts.text import colour_wanted

if TYPE_CHECKING:
    from noughts.game import Game
    from noughts.store import Store

__all__ = ["Button", "Choice", "Controller", "SIDES", "ViewState", "Worker", "opponent_label"]

HINT_SECONDS = 3.0  # a hint that takes longer than this is not worth the wait
MAX_MENU_SIDE = 15  # the start screen's biggest board (the command line goes further)


def _shape(board: Board) -> tuple[int, int, int]:
    return board.rows, board.cols, board.k


def _natural_k(rows: int, cols: int) -> int:
    """Tic-tac-toe's 3 up to 3×3, four in a row up to 5×5, then gomoku's five."""
    longest = max(rows, cols)
    return min(longest, 3 if longest <= 3 else 4 if longest <= 5 else 5)

# Who plays X, and so moves first, in the match's words; the labels say it from the person's side.
SIDES: dict[str, str] = {
    "me": "Crosses (X): go first",
    "computer": "Noughts (O): go second",
    "alternate": "Take turns",
    "loser": "Loser starts",
    "random": "Toss a coin",
}


def opponent_label(name: str) -> str:
    """The name of an opponent on the start screen: ``Arduino rules`` for ``arduino``."""
    return "Two people" if name == PERSON else players.label(name)


class Worker(Protocol):
    """Runs ``job`` off the event loop, then calls back ``Controller.job_done(token, result, error)``,
    no sooner than ``delay`` seconds after it was submitted."""

    def submit(self, token: int, job: Callable[[], object], delay: float = 0.0) -> None: ...


@dataclass(frozen=True)
class Button:
    name: str
    label: str
    enabled: bool
    primary: bool = False  # the obvious next step, drawn to stand out


@dataclass(frozen=True)
class Choice:
    key: str
    label: str
    selected: bool
    enabled: bool = True  # False: it cannot be played now (an opponent that cannot play this board)


@dataclass(frozen=True)
class ViewState:
    """Everything the window shows, and nothing else: :func:`noughts.desktop.draw.draw` reads only this."""

    screen: Literal["start", "game"]
    board: Board
    status: str
    pointer: tuple[str, int] | tuple[str, str] | None = None  # what the mouse is over
    colour: bool = True  # False when the person asked for none (NO_COLOR): marks in plain ink
    # the game screen
    header: str = ""
    banner: str | None = None
    tone: Literal["win", "loss", "draw", "none"] = "none"
    last: int | None = None
    line: tuple[int, ...] | None = None
    hover: int | None = None  # the empty cell a click or Enter would play (highlighted)
    cursor: int | None = None  # the keyboard's cell (outlined)
    hint: int | None = None
    thinking: bool = False
    buttons: tuple[Button, ...] = ()
    tally: str = ""
    scores: str = ""
    # the start screen
    opponents: tuple[Choice, ...] = ()
    sides: tuple[Choice, ...] = ()
    side_heading: str = ""
    description: str = ""
    problem: str = ""  # why Play was refused, shown in place of the description
    can_resume: bool = False
    notes: str = ""


class Controller:
    """One window's session: the start screen's choices, the match in play and the store."""

    def __init__(self, *, worker: Worker, rows: int = 3, cols: int = 3, k: int | None = None,
                 opponent: str | None = None, first: str | None = None, seed: int | str | None = None,
                 names: Sequence[str] = (), store: Store | None = None, think_delay: float = 0.0,
                 environ: Mapping[str, str] | None = None) -> None:
        self.worker = worker
        self.start_board = Board(rows, cols, k)
        # the start screen's choices: they shape the next new game, never the one in play
        self.opponent = opponent_name(opponent) if opponent is not None else DEFAULT_OPPONENT
        self.side = first_rule(first) if first is not None else DEFAULT_FIRST
        self.seed = seed
        self.given_names = list(names)
        self.environ = environ
        self.colour = colour_wanted(environ)
        self.store = store
        self.think_delay = think_delay
        self.match: Match | None = None
        self.screen: Literal["start", "game"] = "start"
        self.banner: str | None = None
        self.tone: Literal["win", "loss", "draw", "none"] = "none"
        self.last: int | None = None
        self.hint: int | None = None
        self.cursor: int | None = None
        self.keyboard = False  # the cursor was last moved with the keys, so it is drawn
        self.pointer: tuple[str, int] | tuple[str, str] | None = None
        self.problem: str | None = None  # why Play was refused, on the start screen
        self.unable: dict[str, str] | None = None  # opponents that cannot play the board, and why
        self._next_token = 0
        self._move_job: tuple[int, ComputerMove] | None = None
        self._hint_job: int | None = None
        self._able_job: int | None = None
        self._play_when_checked = False
        notices = store.notices if store is not None else []
        # the store's notices (a damaged file moved aside, scores off) show on both screens
        self.notice = " ".join(" ".join(n.split()) for n in notices)
        self.message: str | None = self.notice or None  # said in the status line until the game moves on
        self.scores_text = self._read_scores()
        if opponent is not None and first is not None:
            self.new_game()  # everything was chosen on the command line: straight into the game
        if self.match is None:
            self._check_opponents()

    # state ------------------------------------------------------------------------------------
    @property
    def game(self) -> Game | None:
        return self.match.game if self.match is not None else None

    @property
    def board(self) -> Board:
        return self.match.board if self.match is not None else self.start_board

    @property
    def two_people(self) -> bool:
        """The match in play is between two people (the start screen's choice may differ)."""
        return self.match is not None and self.match.two_people

    @property
    def over(self) -> bool:
        """A game was played and is over (finished or abandoned)."""
        return self.match is not None and self.match.game is not None and self.match.game_over

    @property
    def thinking(self) -> bool:
        return self._move_job is not None

    @property
    def person_mark(self) -> str:
        """The (first) person's mark in the game in play."""
        return self.match.mark_of(0) if self.match is not None else "X"

    @property
    def tally(self) -> list[int]:
        return list(self.match.tally) if self.match is not None else [0, 0, 0]

    def persons_turn(self) -> bool:
        """A person may play now: the game goes on and it is not the computer's move."""
        if self.match is None:
            return False
        seat = self.match.seat_to_move
        return seat is not None and self.match.seats[seat].is_person

    def _opponent_name(self) -> str:
        assert self.match is not None
        return self.match.name_of(1)

    def _token(self) -> int:
        self._next_token += 1
        return self._next_token

    def _cancel_jobs(self) -> None:
        """Forget the awaited answers about the game: when they come, they are dropped."""
        self._move_job = None
        self._hint_job = None

    # which opponents can play the board ----------------------------------------------------------
    def _check_opponents(self) -> None:
        """Ask the worker which opponents cannot play the board (up to about a second each)."""
        if self.unable is not None or self._able_job is not None:
            return
        board = self.start_board

        def work() -> dict[str, str]:
            reasons = {name: players.unable(name, board) for name in players.names()}
            return {name: reason for name, reason in reasons.items() if reason is not None}

        self._able_job = token = self._token()
        self.worker.submit(token, work)

    # starting games -----------------------------------------------------------------------
    def _make_match(self) -> Match:
        """A match with the start screen's choices; raises NoughtsError for an opponent that cannot play."""
        board = self.start_board
        return Match(self.opponent, names=self.given_names, first=self.side, rows=board.rows, cols=board.cols,
                     k=board.k, seed=self.seed, store=self.store, environ=self.environ)

    def new_game(self) -> None:
        """Start a game with the start screen's choices. The match (and its tally) carries on while the
        opponent stays the same; an unfinished game is dropped, uncounted. A refusal is said on the
        start screen."""
        self.problem = None
        match = self.match
        if match is not None:
            self.message = None  # the last game's news; the store's notice stays for the first game
        if match is None or match.opponent != self.opponent or _shape(match.start) != _shape(self.start_board):
            try:
                fresh = self._make_match()
            except NoughtsError as error:
                self.problem = " ".join(str(error).split())
                self.screen = "start"
                return
            if match is not None:
                self._abandon_unfinished(match)
                match.remove_listener(self._on_match_event)
            match = self.match = fresh
            match.add_listener(self._on_match_event)
        else:
            match.first = self.side  # who starts the next game: the rule chosen now
        self._cancel_jobs()
        self.banner, self.tone = None, "none"
        self.screen = "game"
        match.new_game()  # abandons an unfinished game (our listener says so), then tells "start"

    def _abandon_unfinished(self, match: Match) -> None:
        if match.game is not None and not match.game_over:
            match.abandon_for_new_game()

    def _ask_computer(self) -> None:
        """Give the computer's move to the worker when it is the computer's turn."""
        assert self.match is not None
        job = self.match.computer_job()
        if job is None:
            return
        token = self._token()
        self._move_job = (token, job)
        self.worker.submit(token, job.run, self.think_delay)

    # the match's news --------------------------------------------------------------------------
    def _on_match_event(self, event: MatchEvent) -> None:
        match = self.match
        assert match is not None
        self.hint = None
        self._hint_job = None
        if event.kind == "start":
            self.last = None
            self._ask_computer()
        elif event.kind == "move":
            self.last = event.cell
            self.message = None
            self._ask_computer()
        elif event.kind == "undo":
            game = match.game
            self.last = game.moves[-1] if game is not None and game.moves else None
            self.message = event.text
        elif event.kind == "end":
            self._finish(event)
        elif event.kind == "abandon":
            self._move_job = None
            self.message = event.text

    def _finish(self, event: MatchEvent) -> None:
        match = self.match
        assert match is not None
        self.banner = match.result_banner()
        seat = match.winner_seat()
        self.tone = ("draw" if seat is None else "win" if match.two_people or seat == 0 else "loss")
        self.message = f"{event.text} {match.recorded_text()}".strip()
        self.scores_text = self._read_scores()

    # the store -------------------------------------------------------------------------------
    def _read_scores(self) -> str:
        if self.store is None:
            return "Scores are not kept in this session."
        if not self.store.enabled:
            return "Scores are off (see the note above)."
        try:
            scores = self.store.scores()
        except NoughtsError as error:
            return " ".join(str(error).split())
        board = self.start_board
        on_board = scores.on((board.rows, board.cols, board.k))  # high scores are kept per board
        high = " · ".join(f"{name} {value}" for name, value in on_board.high.items())
        return f"High scores: {high} · current run {on_board.run}"

    def tally_text(self) -> str:
        """The session's tally against the opponent in play: 'Ann: 2 · Medium: 1 · draws: 0'."""
        return self.match.tally_text() if self.match is not None else ""

    # inputs ----------------------------------------------------------------------------------
    def activate(self, target: tuple[str, int] | tuple[str, str]) -> None:
        """A click (press and release) on a cell, a button or a start-screen choice."""
        kind, what = target
        if kind == "cell" and isinstance(what, int):
            self.play_cell(what)
        elif kind == "button" and isinstance(what, str):
            self.press(what)
        elif kind == "opponent" and isinstance(what, str):
            self.choose_opponent(what)
        elif kind == "side" and isinstance(what, str):
            self.choose_side(what)
        elif kind == "board" and isinstance(what, str):
            self.step_board(what)

    def point_at(self, target: tuple[str, int] | tuple[str, str] | None) -> None:
        """The mouse moved over ``target`` (``None``: over nothing)."""
        self.pointer = target
        if self.screen == "game" and (target is None or target[0] == "cell"):
            self.cursor = target[1] if target is not None and isinstance(target[1], int) else None
            self.keyboard = False

    def play_cell(self, cell: int) -> None:
        match = self.match
        if self.screen != "game" or match is None or match.game is None:
            return
        board = match.board
        if self.over:
            self.message = ("This game is over: press Play again (or N) for another, "
                            "or Menu (Esc) to change the game.")
        elif not self.persons_turn():
            self.message = "Wait: it is not your turn."  # the status line adds who is thinking
        elif not 0 <= cell < board.size:
            self.message = f"There is no cell {cell + 1}: the cells are 1–{board.size}."
        else:
            try:
                match.play(cell)
            except NoughtsError as error:
                self.message = " ".join(str(error).split())

    def press(self, name: str) -> None:
        """A button: menu, undo, hint, again (game screen); play, resume (start screen)."""
        if name == "menu":
            self.screen = "start"
            self.problem = None
            self._check_opponents()
        elif name == "resume":
            if self.match is not None and not self.over:
                # back to the game as it was: the choices made meanwhile are dropped with the menu
                self.opponent, self.side = self.match.opponent, self.match.first
                if _shape(self.start_board) != _shape(self.match.start):
                    self.start_board = self.match.start
                    self.unable, self._able_job = None, None
                self.problem = None
                self.screen = "game"
        elif name == "play":
            if self.unable is None and self._able_job is not None:
                self._play_when_checked = True  # the check is under way: start as soon as it is done
                self.problem = "Checking which opponents can play this board…"
            else:
                self.new_game()
        elif name == "again":
            if self.over:
                self.new_game()
            else:
                self.message = "Finish this game first, or use Menu to start a different one."
        elif name == "undo":
            self.undo()
        elif name == "hint":
            self.ask_hint()

    def choose_opponent(self, name: str) -> None:
        if name == PERSON or name in players.names():
            self.opponent = name
            self.problem = None

    def step_board(self, step: str) -> None:
        """``rows+``, ``cols-``, ``k+`` …: the next game's board, one step bigger or smaller.

        Rows and columns go from 3 to 15; k from 3 to the longer side. A k that was the natural
        one for the old size (3 up to 3×3, 4 up to 5×5, then 5) follows the new size. Which
        opponents can play the new board is asked again (off the event loop).
        """
        what, sign = step[:-1], step[-1:]
        if what not in ("rows", "cols", "k") or sign not in "+-":
            return
        board = self.start_board
        rows, cols, k = board.rows, board.cols, board.k
        delta = 1 if sign == "+" else -1
        if what == "k":
            k = min(max(rows, cols), max(3, k + delta))
        else:
            natural = k == _natural_k(rows, cols)
            if what == "rows":
                rows = min(MAX_MENU_SIDE, max(3, rows + delta))
            else:
                cols = min(MAX_MENU_SIDE, max(3, cols + delta))
            k = _natural_k(rows, cols) if natural else min(k, max(rows, cols))
        if (rows, cols, k) == _shape(board):
            return
        self.start_board = Board(rows, cols, k)
        self.problem = None
        self.unable, self._able_job, self._play_when_checked = None, None, False
        self.scores_text = self._read_scores()
        self._check_opponents()

    def choose_side(self, key: str) -> None:
        if key in SIDES:
            self.side = key
            self.problem = None

    def key(self, name: str) -> None:
        """A key by name: 1–9, left/right/up/down, enter, escape, u (undo), h (hint), n (new game)."""
        if self.screen == "start":
            self._start_key(name)
            return
        if self.match is None:
            return
        board = self.match.board
        if name.isdigit() and len(name) == 1 and name != "0":
            self.play_cell(int(name) - 1)
        elif name in ("left", "right", "up", "down"):
            self._move_cursor(name, board)
        elif name == "enter":
            if self.cursor is None:
                self.message = "Move to a cell with the arrow keys first, or press its number."
            else:
                self.play_cell(self.cursor)
        elif name == "escape":
            self.press("menu")
        elif name == "u":
            self.press("undo")
        elif name == "h":
            self.press("hint")
        elif name == "n":
            self.press("again")

    def _move_cursor(self, direction: str, board: Board) -> None:
        if self.cursor is None:
            row, col = board.rows // 2, board.cols // 2
        else:
            row, col = divmod(self.cursor, board.cols)
            d_row, d_col = {"left": (0, -1), "right": (0, 1), "up": (-1, 0), "down": (1, 0)}[direction]
            row = min(board.rows - 1, max(0, row + d_row))
            col = min(board.cols - 1, max(0, col + d_col))
        self.cursor = row * board.cols + col
        self.keyboard = True

    def _start_key(self, name: str) -> None:
        if name == "enter":
            self.press("play")
        elif name == "escape":
            self.press("resume")
        elif name in ("up", "down", "left", "right"):
            # up/down step through the opponents, left/right through the sides
            step = -1 if name in ("up", "left") else 1
            if name in ("up", "down"):
                options = [*players.names(), PERSON]
                self.choose_opponent(options[(options.index(self.opponent) + step) % len(options)])
            else:
                sides = list(SIDES)
                self.choose_side(sides[(sides.index(self.side) + step) % len(sides)])

    def undo(self) -> None:
        match = self.match
        if match is None or match.game is None:
            return
        if self.over:
            self.message = "This game is over and counted: press Play again (or N) for a new one."
            return
        try:
            match.undo()  # the match says what was taken back (our listener shows it)
        except NoughtsError as error:
            self.message = " ".join(str(error).split())
            return
        self._move_job = None  # an answer to a move taken back is no longer wanted
        self._ask_computer()

    def ask_hint(self) -> None:
        match = self.match
        if match is None or match.game is None:
            return
        if self.over:
            self.message = "This game is over: there is nothing to hint at."
        elif not self.persons_turn():
            self.message = "Wait: a hint comes at your move."
        elif self._hint_job is not None:
            self.message = "Working out a hint…"
        else:
            from noughts.match import hint

            board = match.board
            self._hint_job = token = self._token()
            self.message = "Working out a hint…"
            self.worker.submit(token, lambda: hint(board, HINT_SECONDS))

    def job_done(self, token: int, result: object, error: str | None = None) -> None:
        """An answer from the worker; answers no longer awaited are dropped."""
        if token == self._able_job:
            self._able_job = None
            self.unable = {}
            if error is None and isinstance(result, dict):
                self.unable = {str(name): str(reason) for name, reason in result.items()}
            if self._play_when_checked:
                self._play_when_checked = False
                if self.screen == "start":
                    self.new_game()
            return
        match = self.match
        if match is None:
            return
        if self._move_job is not None and token == self._move_job[0]:
            job = self._move_job[1]
            self._move_job = None
            if error is None and isinstance(result, int):
                try:
                    match.apply(job, result)  # an answer to a position no longer on the board is dropped
                    return
                except NoughtsError as problem:
                    error = str(problem)
            why = " ".join(str(error).split()).rstrip(".")
            match.abandon(f"{self._opponent_name()} cannot go on ({why})")
            self.banner, self.tone = "Game abandoned", "none"
        elif token == self._hint_job:
            self._hint_job = None
            if error is not None:
                self.message = f"No hint: {' '.join(error.split())}"
            elif isinstance(result, tuple) and len(result) == 2:
                cell, sentence = result
                self.hint = cell if isinstance(cell, int) else None
                self.message = str(sentence)

    # what to draw --------------------------------------------------------------------------------
    def _default_status(self) -> str:
        match = self.match
        assert match is not None
        board = match.board
        keys = f"press 1–{min(9, board.size)}" if board.size > 1 else "press 1"
        seat = match.seat_to_move
        if seat is None:
            return ""
        mark = match.mark_of(seat)
        if match.two_people:
            return f"{match.name_of(seat)} ({mark}) to move: click a cell, or {keys}, or the arrows and Enter."
        if seat == 0:
            return f"Your turn ({mark}): click a cell, or {keys}, or move with the arrows and press Enter."
        return ""

    def _status(self) -> str:
        """The status line; while the computer works it always ends by saying so."""
        parts = [self.message or self._default_status()]
        if self.thinking:
            parts.append(f"{self._opponent_name()} is thinking…")
        return " ".join(part for part in parts if part)

    def _header(self) -> str:
        match = self.match
        assert match is not None
        you = match.name_of(0) if match.two_people else "You"
        return f"{you} ({match.mark_of(0)}) vs {match.name_of(1)} ({match.mark_of(1)})"

    def view(self) -> ViewState:
        match = self.match
        if self.screen == "start" or match is None or match.game is None:
            return self._start_view()
        board = match.board
        over = self.over
        cursor = self.cursor if self.cursor is not None and self.cursor < board.size else None
        hover = cursor if cursor is not None and self.persons_turn() and board[cursor] is None else None
        buttons = (
            Button("menu", "Menu", True),
            Button("undo", "Undo", match.can_undo()),
            Button("hint", "Hint", self.persons_turn()),
            Button("again", "Play again", over, primary=over),
        )
        return ViewState(
            screen="game", board=board, status=self._status(), pointer=self.pointer, colour=self.colour,
            header=self._header(), banner=self.banner, tone=self.tone, last=self.last,
            line=board.winning_line, hover=hover, cursor=cursor if self.keyboard else None, hint=self.hint,
            thinking=self.thinking, buttons=buttons, tally=self.tally_text(), scores=self.scores_text)

    def _start_view(self) -> ViewState:
        unable = self.unable or {}
        names = [*players.names(), PERSON]
        opponents = tuple(Choice(n, opponent_label(n), n == self.opponent, n not in unable) for n in names)
        sides = tuple(Choice(key, text, key == self.side) for key, text in SIDES.items())
        if self.opponent == PERSON:
            about = "Two people at this computer take turns, with the mouse or the keys."
        else:
            about = players.describe(self.opponent)
            if self.opponent in unable:
                about = f"{about}. It cannot play this board: {unable[self.opponent]}."
        start = self.start_board
        board_note = f"Board {start.rows}×{start.cols}, {start.k} in a row wins. X always moves first."
        # the computer may still be working on the game that Resume goes back to
        working = f"{self._opponent_name()} is thinking…" if self.thinking else ""
        notes = " ".join(part for part in (working, self.notice, board_note) if part)
        heading = "The first person plays" if self.opponent == PERSON else "You play"
        return ViewState(
            screen="start", board=start, status=self.problem or self.notice, pointer=self.pointer,
            colour=self.colour, opponents=opponents, sides=sides, side_heading=heading, description=about,
            problem=self.problem or "", can_resume=self.match is not None and not self.over, notes=notes,
            scores=self.scores_text, tally=self.tally_text(), thinking=self.thinking)
