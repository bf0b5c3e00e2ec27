"""The desktop game's flow: what happens on a click, a key, a button or the computer's answer.

No pygame here. The window turns its events into the high-level inputs below (``activate`` a
cell or button, ``key``, ``point_at``, ``job_done``) and draws whatever :meth:`Controller.view`
returns, so the whole game can be driven and checked without a window.

The :class:`~noughts.game.Game` tells the controller about every move, undo and the end through
its listener; nothing polls the board. Slow work (the computer's move, a hint) goes to a
:class:`Worker`, which runs it off the event loop and hands the answer back via ``job_done``
with the token it was given; an answer whose token is no longer awaited (the move was undone,
a new game began) is dropped.

>>> class AtOnce:  # a worker that answers at once, enough to drive the flow in a doctest
...     def __init__(self): self.done = []
...     def submit(self, token, job, delay=0.0): self.done.append((token, job()))
>>> worker = AtOnce()
>>> game = Controller(opponent="parsons", first="me", worker=worker, names=["Ann"])
>>> game.activate(("cell", 0)); game.job_done(*worker.done.pop())
>>> str(game.game.board), game.view().status
('X../.O./...', 'Your turn (X): click a cell, or press 1–9, or move with the arrows and press Enter.')
>>> game.activate(("cell", 4))
>>> game.view().status
'b2 is taken by O: choose an empty cell.'
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from noughts import players
from noughts.board import Board
from noughts.errors import BudgetExceeded, NoughtsError
from noughts.game import Game, GameEvent
from noughts.match import DEFAULT_OPPONENT, PERSON
from noughts.text import default_name, describe_line, plural

if TYPE_CHECKING:
    from noughts.players.base import Player
    from noughts.solver import Analysis
    from noughts.store import Store

__all__ = ["Button", "Choice", "Controller", "SIDES", "ViewState", "Worker"]

HINT_SECONDS = 3.0  # a hint that takes longer than this is not worth the wait

# The sides a person can take: X moves first, so choosing the mark chooses who starts.
SIDES: dict[str, str] = {
    "X": "Crosses (X): go first",
    "O": "Noughts (O): go second",
    "alternate": "Take turns",
    "random": "Toss a coin",
}
_FIRST_TO_SIDE = {"me": "X", "computer": "O", "alternate": "alternate", "random": "random"}

_LABELS = {
    "easy": "Easy", "medium": "Medium", "hard": "Hard", "random": "Random", "arduino": "Arduino",
    "parsons": "Parsons", "mdttt": "MD_TTT", "newell-simon": "Newell–Simon", "seed001-rules": "Seed 001 rules",
    "minimax": "Minimax", "perfect": "Perfect", PERSON: "Two people",
}


def label(name: str) -> str:
    """The name of an opponent on screen: ``Newell–Simon`` for ``newell-simon``."""
    return _LABELS.get(name, name.capitalize())


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


@dataclass(frozen=True)
class ViewState:
    """Everything the window shows, and nothing else: :func:`noughts.desktop.draw.draw` reads only this."""

    screen: Literal["start", "game"]
    board: Board
    status: str
    pointer: tuple[str, int] | tuple[str, str] | None = None  # what the mouse is over
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
    can_resume: bool = False
    notes: str = ""


class Controller:
    """One window's session: the start screen's choices, the game in play, the tally and the store."""

    def __init__(self, *, worker: Worker, rows: int = 3, cols: int = 3, k: int | None = None,
                 opponent: str | None = None, first: str | None = None, seed: int | None = None,
                 names: Sequence[str] = (), store: Store | None = None, think_delay: float = 0.0,
                 environ: Mapping[str, str] | None = None) -> None:
        self.worker = worker
        self.start_board = Board(rows, cols, k)
        self.opponent = opponent or DEFAULT_OPPONENT
        self.side = _FIRST_TO_SIDE.get(first or "me", "X")
        self.seed = seed
        self.given_names = list(names)
        self.environ = environ
        self.store = store
        self.think_delay = think_delay
        self.screen: Literal["start", "game"] = "start"
        self.game: Game | None = None
        self.person_mark = "X"  # vs the computer, the person's mark; with two people, the first person's
        self.names: list[str] = []
        self.played_opponent: str | None = None  # whom the tally counts games against
        self.computer: Player | None = None
        self.computer_name: str | None = None
        self.coin: random.Random | None = None
        self.games_started = 0
        self.tally = [0, 0, 0]  # from the (first) person's side: wins, losses, draws
        self.banner: str | None = None
        self.tone: Literal["win", "loss", "draw", "none"] = "none"
        self.abandoned = False
        self.last: int | None = None
        self.hint: int | None = None
        self.cursor: int | None = None
        self.keyboard = False  # the cursor was last moved with the keys, so it is drawn
        self.pointer: tuple[str, int] | tuple[str, str] | None = None
        self.message: str | None = None  # said in the status line until the game moves on
        self._next_token = 0
        self._move_job: int | None = None
        self._hint_job: int | None = None
        self._recorded = False  # the finished game is in the store: never record it twice
        notices = store.notices if store is not None else []
        # the store's notices (a damaged file moved aside, scores off) show on both screens
        self.notice = " ".join(" ".join(n.split()) for n in notices)
        self.message = self.notice or None
        self.scores_text = self._read_scores()
        if opponent is not None and first is not None:
            self.new_game()  # everything was chosen on the command line: straight into the game

    # state ------------------------------------------------------------------------------------
    @property
    def two_people(self) -> bool:
        return self.opponent == PERSON

    @property
    def over(self) -> bool:
        return self.game is not None and (self.game.result is not None or self.abandoned)

    @property
    def thinking(self) -> bool:
        return self._move_job is not None

    def persons_turn(self) -> bool:
        """A person may play now: the game goes on and it is not the computer's move."""
        if self.game is None or self.over:
            return False
        return self.two_people or self.game.board.turn == self.person_mark

    def _token(self) -> int:
        self._next_token += 1
        return self._next_token

    def _cancel_jobs(self) -> None:
        """Forget the awaited answers: when they come, they are dropped."""
        self._move_job = self._hint_job = None

    # starting games -----------------------------------------------------------------------
    def _person_first(self) -> bool:
        if self.side == "X":
            return True
        if self.side == "O":
            return False
        if self.side == "alternate":
            return self.games_started % 2 == 0
        if self.coin is None:
            # a stream of its own, so tossing it cannot change the computer's choices
            self.coin = random.Random(None if self.seed is None else f"first {self.seed}")
        return self.coin.random() < 0.5

    def _name_people(self) -> None:
        self.names = list(self.given_names)
        if not self.names:
            self.names.append(default_name(self.environ, "Player 1" if self.two_people else "You"))
        if self.two_people and len(self.names) < 2:
            self.names.append("Player 2" if self.names[0].lower() != "player 2" else "Player 1")

    def new_game(self) -> None:
        """Start a game with the chosen opponent and side; an unfinished one is dropped, uncounted."""
        if self.game is not None and not self.over and self.game.moves:
            self.message = "The unfinished game was not counted."
        else:
            self.message = None if self.game is not None else self.message
        self._cancel_jobs()
        if self.played_opponent != self.opponent:
            self.tally = [0, 0, 0]  # a tally is against one opponent
            self.played_opponent = self.opponent
        if self.computer_name != self.opponent:
            self.computer = None  # made at its first move, with the seed
        self._name_people()
        person_first = self._person_first()
        self.games_started += 1
        self.person_mark = "X" if person_first else "O"
        other = self.names[1] if self.two_people else self.opponent
        x_name, o_name = (self.names[0], other) if person_first else (other, self.names[0])
        self.game = Game(self.start_board, x_name=x_name, o_name=o_name)
        self.game.add_listener(self._on_game_event)
        self.screen = "game"
        self.banner, self.tone, self.abandoned = None, "none", False
        self.last = self.hint = None
        self._recorded = False
        if not self.two_people and not person_first:
            self._ask_computer()

    def _computer_player(self) -> Player:
        if self.computer is None or self.computer_name != self.opponent:
            self.computer = players.get(self.opponent, rng=random.Random(self.seed))
            self.computer_name = self.opponent
        return self.computer

    def _ask_computer(self) -> None:
        assert self.game is not None
        player, board = self._computer_player(), self.game.board
        self._move_job = token = self._token()
        self.worker.submit(token, lambda: player.choose(board), self.think_delay)

    # the game's news ------------------------------------------------------------------------
    def _on_game_event(self, event: GameEvent) -> None:
        assert self.game is not None
        self.hint = None
        self._hint_job = None
        if event.kind in ("move", "redo"):
            self.last = event.cell
            self.message = None
            board = event.board
            if not board.is_over and not self.two_people and board.turn != self.person_mark:
                self._ask_computer()
        elif event.kind == "undo":
            self.last = self.game.moves[-1] if self.game.moves else None
        elif event.kind == "end":
            self._finish(event)

    def _finish(self, event: GameEvent) -> None:
        board, winner = event.board, event.winner
        if winner is None:
            self.banner, self.tone = "Draw", "draw"
            sentence = "A draw: the board is full and nobody has a line."
            outcome = 2
        else:
            assert event.line is not None
            along = describe_line(board, event.line)
            mine = winner == self.person_mark
            outcome = 0 if mine else 1
            if self.two_people:
                self.banner, self.tone = f"{winner} wins", "win"
                sentence = f"{self._name_of(winner)} ({winner}) wins along {along}."
            else:
                self.banner, self.tone = ("You win", "win") if mine else ("You lose", "loss")
                sentence = (f"You win along {along}!" if mine
                            else f"{label(self.opponent)} ({winner}) wins along {along}.")
        self.tally[outcome] += 1
        saved = self._record()
        self.message = f"{sentence} {saved}".strip()
        self.scores_text = self._read_scores()

    def _name_of(self, mark: str) -> str:
        if self.two_people:
            return self.names[0] if mark == self.person_mark else self.names[1]
        return "You" if mark == self.person_mark else label(self.opponent)

    # the store -------------------------------------------------------------------------------
    def _record(self) -> str:
        """Keep the finished game (once); returns what to tell the person."""
        if self.store is None or not self.store.enabled or self._recorded or self.game is None:
            return ""
        from noughts.store import Participant

        me = Participant.human(self.names[0])
        other = (Participant.human(self.names[1]) if self.two_people
                 else Participant.computer(self.opponent))
        x, o = (me, other) if self.person_mark == "X" else (other, me)
        try:
            recorded = self.store.record(self.game, x, o)
        except NoughtsError as error:  # disk full, locked for long: say so and play on
            return " ".join(str(error).split())
        self._recorded = True
        return recorded.summary()

    def _read_scores(self) -> str:
        if self.store is None:
            return "Scores are not kept in this session."
        if not self.store.enabled:
            return "Scores are off (see the note above)."
        try:
            scores = self.store.scores()
        except NoughtsError as error:
            return " ".join(str(error).split())
        high = " · ".join(f"{name} {value}" for name, value in scores.high.items())
        return f"High scores: {high} · current run {scores.run}"

    def tally_text(self) -> str:
        wins, losses, draws = self.tally
        if self.game is None:
            return ""
        if self.two_people:
            return f"This session: {self.names[0]} {wins}, {self.names[1]} {losses}, {plural(draws, 'draw')}"
        return (f"This session against {label(self.opponent)}: {plural(wins, 'win')}, "
                f"{plural(losses, 'loss', 'losses')}, {plural(draws, 'draw')}")

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

    def point_at(self, target: tuple[str, int] | tuple[str, str] | None) -> None:
        """The mouse moved over ``target`` (``None``: over nothing)."""
        self.pointer = target
        if self.screen == "game" and (target is None or target[0] == "cell"):
            self.cursor = target[1] if target is not None and isinstance(target[1], int) else None
            self.keyboard = False

    def play_cell(self, cell: int) -> None:
        if self.screen != "game" or self.game is None:
            return
        board = self.game.board
        if self.over:
            self.message = ("This game is over: press Play again (or N) for another, "
                            "or Menu (Esc) to change the game.")
        elif not self.persons_turn():
            self.message = f"Wait: it is not your turn, {label(self.opponent)} is thinking."
        elif not 0 <= cell < board.size:
            self.message = f"There is no cell {cell + 1}: the cells are 1–{board.size}."
        elif board[cell] is not None:
            self.message = f"{board.cell_name(cell)} is taken by {board[cell]}: choose an empty cell."
        else:
            self.game.play(cell)

    def press(self, name: str) -> None:
        """A button: menu, undo, hint, again (game screen); play, resume (start screen)."""
        if name == "menu":
            self.screen = "start"
        elif name == "resume":
            if self.game is not None and not self.over:
                self.screen = "game"
        elif name == "play":
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

    def choose_side(self, key: str) -> None:
        if key in SIDES:
            self.side = key

    def key(self, name: str) -> None:
        """A key by name: 1–9, left/right/up/down, enter, escape, u (undo), h (hint), n (new game)."""
        if self.screen == "start":
            self._start_key(name)
            return
        if self.game is None:
            return
        board = self.game.board
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
            options = [*players.names(), PERSON] if name in ("up", "down") else list(SIDES)
            current = self.opponent if name in ("up", "down") else self.side
            step = -1 if name in ("up", "left") else 1
            chosen = options[(options.index(current) + step) % len(options)]
            if name in ("up", "down"):
                self.opponent = chosen
            else:
                self.side = chosen

    def undo(self) -> None:
        if self.game is None:
            return
        game = self.game
        if self.over:
            self.message = "This game is over and counted: press Play again (or N) for a new one."
            return
        if self.two_people:
            if not game.moves:
                self.message = "There is no move to take back yet."
                return
            mark = game.board.turn
            cell = game.undo(1)[0]
            self.message = f"Took back {'O' if mark == 'X' else 'X'}'s move {game.board.cell_name(cell)}."
            return
        if self.thinking:
            if not game.moves:
                self.message = "There is no move of yours to take back."
                return
            self._cancel_jobs()  # the answer to the move being taken back is no longer wanted
            cell = game.undo(1)[0]
            self.message = f"Took back your move {game.board.cell_name(cell)}."
        elif len(game.moves) >= 2:
            reply, mine = game.undo(2)
            self.message = (f"Took back your move {game.board.cell_name(mine)} and "
                            f"{label(self.opponent)}'s reply {game.board.cell_name(reply)}.")
        else:
            self.message = "There is no move of yours to take back."

    def ask_hint(self) -> None:
        if self.game is None:
            return
        if self.over:
            self.message = "This game is over: there is nothing to hint at."
        elif not self.persons_turn():
            self.message = f"Wait: {label(self.opponent)} is thinking; a hint comes at your move."
        elif self._hint_job is not None:
            self.message = "Working out a hint…"
        else:
            board = self.game.board

            def work() -> Analysis | None:
                from noughts import solver

                try:
                    return solver.analyse(board, deadline=time.monotonic() + HINT_SECONDS)
                except BudgetExceeded:
                    return None  # too big to work out while the person waits

            self._hint_job = token = self._token()
            self.message = "Working out a hint…"
            self.worker.submit(token, work)

    def job_done(self, token: int, result: object, error: str | None = None) -> None:
        """An answer from the worker; answers no longer awaited are dropped."""
        if self.game is None:
            return
        if token == self._move_job:
            self._move_job = None
            if error is None and isinstance(result, int):
                try:
                    self.game.play(result)
                    return
                except NoughtsError as problem:
                    error = str(problem)
            self.abandoned = True
            self.banner, self.tone = "Game abandoned", "none"
            self.message = (f"{label(self.opponent)} cannot go on: {' '.join(str(error).split())}. "
                            "The game is not counted.")
        elif token == self._hint_job:
            self._hint_job = None
            if error is not None:
                self.message = f"No hint: {' '.join(error.split())}"
            elif result is None:
                self.message = "No hint: this board is too big to work out in a few seconds."
            else:
                from noughts.solver import Analysis

                if isinstance(result, Analysis):
                    self._show_hint(result)

    def _show_hint(self, analysis: Analysis) -> None:
        assert self.game is not None
        board = self.game.board
        best = [m.index for m in analysis.moves if (m.value, m.plies) == (analysis.value, analysis.plies)]
        if not best:
            return
        self.hint = best[0]
        cell, plies = board.cell_name(best[0]), analysis.plies
        if analysis.value > 0:
            outcome = "wins at once" if plies == 1 else f"wins in {plies} (moves by both sides, this one included)"
        elif analysis.value == 0:
            outcome = "draws with best play on both sides"
        else:
            outcome = f"holds out longest, but every move loses against best play (in {plies})"
        self.message = f"Hint: {cell} {outcome}."

    # what to draw --------------------------------------------------------------------------------
    def _default_status(self) -> str:
        assert self.game is not None
        board = self.game.board
        keys = f"press 1–{min(9, board.size)}" if board.size > 1 else "press 1"
        if self.over:
            return ""
        if self.two_people:
            mark = board.turn or "X"
            return f"{self._name_of(mark)} ({mark}) to move: click a cell, or {keys}, or the arrows and Enter."
        if self.persons_turn():
            return f"Your turn ({self.person_mark}): click a cell, or {keys}, or move with the arrows and press Enter."
        return f"{label(self.opponent)} is thinking…"

    def _header(self) -> str:
        assert self.game is not None
        other = "O" if self.person_mark == "X" else "X"
        if self.two_people:
            return f"{self.names[0]} ({self.person_mark}) vs {self.names[1]} ({other})"
        return f"You ({self.person_mark}) vs {label(self.opponent)} ({other})"

    def view(self) -> ViewState:
        if self.screen == "start" or self.game is None:
            return self._start_view()
        game = self.game
        board = game.board
        over = self.over
        cursor = self.cursor if self.cursor is not None and self.cursor < board.size else None
        hover = cursor if cursor is not None and self.persons_turn() and board[cursor] is None else None
        can_undo = not over and (len(game.moves) >= (1 if self.two_people or self.thinking else 2))
        buttons = (
            Button("menu", "Menu", True),
            Button("undo", "Undo", can_undo),
            Button("hint", "Hint", self.persons_turn()),
            Button("again", "Play again", over, primary=over),
        )
        return ViewState(
            screen="game", board=board, status=self.message or self._default_status(), pointer=self.pointer,
            header=self._header(), banner=self.banner, tone=self.tone, last=self.last,
            line=board.winning_line, hover=hover, cursor=cursor if self.keyboard else None, hint=self.hint,
            thinking=self.thinking, buttons=buttons, tally=self.tally_text(), scores=self.scores_text)

    def _start_view(self) -> ViewState:
        names = [*players.names(), PERSON]
        opponents = tuple(Choice(n, label(n), n == self.opponent) for n in names)
        sides = tuple(Choice(key, text, key == self.side) for key, text in SIDES.items())
        about = ("Two people at this computer take turns, with the mouse or the keys."
                 if self.opponent == PERSON else players.describe(self.opponent))
        start = self.start_board
        board_note = f"Board {start.rows}×{start.cols}, {start.k} in a row wins. X always moves first."
        notes = " ".join(part for part in (self.notice, board_note) if part)
        heading = "The first person plays" if self.opponent == PERSON else "You play"
        return ViewState(
            screen="start", board=start, status=self.notice, pointer=self.pointer,
            opponents=opponents, sides=sides, side_heading=heading, description=about,
            can_resume=self.game is not None and not self.over, notes=notes, scores=self.scores_text,
            tally=self.tally_text())
