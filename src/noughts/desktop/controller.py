"""The desktop game's flow: what happens on a click, a key, a button or the computer's answer.

No pygame here. The window turns its events into the high-level inputs below (``activate`` a
cell or button, ``key``, ``type_text``, ``point_at``, ``job_done``) and draws whatever
:meth:`Controller.view` returns, so the whole game can be driven and checked without a window.

The game itself is a :class:`~noughts.match.Match`: who starts, whose turn it is, the
computer's move, undo, hints, the tally, the result sentences and recording a finished game
are all the match's. The controller keeps only what is the window's own: which screen shows,
the pointer and the keyboard cursor, the cell name being typed, the buttons, the start
screen's choices (they apply to the next new game, never to the one in play) and the tokens
of the jobs it gave its :class:`Worker`. Slow work (the computer's move, a hint, which
opponents can play the board) runs off the event loop and comes back through ``job_done``
with its token; an answer whose token is no longer awaited (the move was undone, a new game
began) is dropped. Every sentence shown comes from :mod:`noughts.text`.

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
'b2 is taken by O: choose an empty square. Your turn (X).'
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from noughts import players, text
from noughts.board import Board
from noughts.errors import GameOver, NotYourTurn, NoughtsError
from noughts.match import (
    DEFAULT_FIRST,
    FIRST_RULES,
    PERSON,
    THINKING_AFTER,
    ComputerMove,
    Match,
    MatchEvent,
    first_rule,
    opponent_name,
)

if TYPE_CHECKING:
    from noughts.game import Game
    from noughts.store import Store

__all__ = ["Button", "Choice", "Controller", "ViewState", "Worker"]

WORDS = text.WINDOW_WORDS
HINT_SECONDS = 3.0  # a hint that takes longer than this is not worth the wait
MAX_MENU_SIDE = 15  # the start screen's biggest board (the command line goes further)
MAX_TYPED = 4  # a cell name is at most "z26"; one more character shows the mistake
SHORTCUTS = {"u": "undo", "h": "hint", "n": "again"}  # letters that are not columns of the board


def _shape(board: Board) -> tuple[int, int, int]:
    return board.rows, board.cols, board.k


def _natural_k(rows: int, cols: int) -> int:
    """Tic-tac-toe's 3 up to 3×3, four in a row up to 5×5, then gomoku's five."""
    longest = max(rows, cols)
    return min(longest, 3 if longest <= 3 else 4 if longest <= 5 else 5)


def _sentence(error: NoughtsError) -> str:
    """An error's message as a line on screen: one line, a capital first (not on a cell's name such
    as b2), a full stop last."""
    said = " ".join(str(error).split())
    if said.split(" ", 1)[0].isalpha():
        said = said[:1].upper() + said[1:]
    return said if said.endswith((".", "!", "?", "…")) else f"{said}."


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
    thinking: bool = False  # the computer has worked on its move long enough to say so
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
    names: tuple[str, str] | None = None  # the two people's names as typed (only when two people play)
    name_focus: int | None = None  # the name being typed into


class Controller:
    """One window's session: the start screen's choices, the match in play and the store."""

    def __init__(self, *, worker: Worker, rows: int = 3, cols: int = 3, k: int | None = None,
                 opponent: str | None = None, first: str | None = None, best_of: int | None = None,
                 seed: int | str | None = None, names: Sequence[str] = (), store: Store | None = None,
                 think_delay: float = 0.0, environ: Mapping[str, str] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.worker = worker
        self.clock = clock  # when the thinking line may show (tests give a fake one)
        self.start_board = Board(rows, cols, k)
        # the start screen's choices: they shape the next new game, never the one in play. Without
        # an opponent given, players.default_for(board) chooses once the check of the board is in.
        self.opponent = opponent_name(opponent) if opponent is not None else players.DEFAULT
        self._opponent_chosen = opponent is not None  # else the board's default replaces it
        self.side = first_rule(first) if first is not None else DEFAULT_FIRST
        self.best_of = best_of
        self.seed = seed
        self.given_names = list(names)
        # the two people's names, as typed on the start screen
        self.names = [self.given_names[0] if self.given_names else text.default_name(environ, "Player 1"),
                      self.given_names[1] if len(self.given_names) > 1 else "Player 2"]
        self.name_focus: int | None = None
        self.environ = environ
        self.colour = text.colour_wanted(environ)
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
        self.typed = ""  # a cell name being typed, played with Enter
        self.pointer: tuple[str, int] | tuple[str, str] | None = None
        self.problem: str | None = None  # why Play was refused, on the start screen
        self.unable: dict[str, str] | None = None  # opponents that cannot play the board, and why
        self._next_token = 0
        self._move_job: tuple[int, ComputerMove, float] | None = None  # token, job, when it was asked
        self._hint_job: int | None = None
        self._able_job: int | None = None
        self._play_when_checked = False
        notices = store.notices if store is not None else []
        # the store's notices (a damaged file moved aside, scores off) show on both screens
        self.notice = " ".join(" ".join(n.split()) for n in notices)
        self.message: str | None = self.notice or None  # said in the status line until the game moves on
        self._message_names_turn = False  # the message says whose turn it is: no turn line after it
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
        """The computer is working out its move (said on screen only after THINKING_AFTER)."""
        return self._move_job is not None

    def thinking_shown(self) -> bool:
        """The computer has worked for THINKING_AFTER seconds: long enough to say so."""
        return self._move_job is not None and self.clock() - self._move_job[2] >= THINKING_AFTER

    def seconds_until_change(self) -> float | None:
        """How soon the view changes with no input (the thinking line appears); None: not by itself."""
        if self._move_job is None:
            return None
        left = THINKING_AFTER - (self.clock() - self._move_job[2])
        return left if left > 0 else None

    @property
    def person_mark(self) -> str:
        """The (first) person's mark in the game in play."""
        return self.match.mark_of(0) if self.match is not None else "X"

    @property
    def tally(self) -> list[int]:
        return list(self.match.tally) if self.match is not None else [0, 0, 0]

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

    def _say(self, message: str | None, *, names_turn: bool = False) -> None:
        self.message = message
        self._message_names_turn = names_turn

    # which opponents can play the board ----------------------------------------------------------
    def _check_opponents(self) -> None:
        """Ask the worker which opponents cannot play the board (up to about a second each), and
        the board's default opponent (players.default_for)."""
        if self.unable is not None or self._able_job is not None:
            return
        board = self.start_board

        def work() -> tuple[dict[str, str], str]:
            reasons = {name: players.unable(name, board) for name in players.names()}
            unable = {name: reason for name, reason in reasons.items() if reason is not None}
            return unable, players.default_for(board)  # the verdicts are kept: asking again is quick

        self._able_job = token = self._token()
        self.worker.submit(token, work)

    def _checked(self, unable: dict[str, str], default: str) -> None:
        self.unable = unable
        if not self._opponent_chosen and self.opponent in unable:
            # chosen for another board (or never chosen): the board's default instead
            self.opponent = default
            self.problem = None

    # starting games -----------------------------------------------------------------------
    def _names_for_match(self) -> list[str]:
        """The names the next match is made with; raises NoughtsError for a bad name."""
        if self.opponent != PERSON:
            return self.given_names
        return [text.check_name(self.names[0], WORDS["first_name"]),
                text.check_name(self.names[1], WORDS["second_name"])]

    def _make_match(self, names: list[str]) -> Match:
        """A match with the start screen's choices; raises NoughtsError for an opponent that cannot play."""
        board = self.start_board
        return Match(self.opponent, names=names, first=self.side, rows=board.rows, cols=board.cols,
                     k=board.k, best_of=self.best_of, seed=self.seed, store=self.store, environ=self.environ)

    def _same_match(self, match: Match, names: list[str]) -> bool:
        """The start screen's choices are those of ``match``: the match (and its tally) carries on."""
        if match.opponent != self.opponent or _shape(match.start) != _shape(self.start_board):
            return False
        return not match.two_people or [match.name_of(0), match.name_of(1)] == names

    def new_game(self) -> None:
        """Start a game with the start screen's choices. The match (and its tally) carries on while the
        opponent (and the two people's names) stay the same; an unfinished game is dropped, uncounted.
        A refusal is said on the start screen."""
        self.problem = None
        self.name_focus = None
        match = self.match
        if match is not None:
            self._say(None)  # the last game's news; the store's notice stays for the first game
        try:
            names = self._names_for_match()
            fresh = None if match is not None and self._same_match(match, names) else self._make_match(names)
        except NoughtsError as error:
            self.problem = _sentence(error)
            self.screen = "start"
            return
        if fresh is not None:
            if match is not None:
                self._abandon_unfinished(match)
                match.remove_listener(self._on_match_event)
            match = self.match = fresh
            match.add_listener(self._on_match_event)
            if match.two_people:
                self.names = [match.name_of(0), match.name_of(1)]
        else:
            assert match is not None
            match.first = self.side  # who starts the next game: the rule chosen now
        self._cancel_jobs()
        self.banner, self.tone = None, "none"
        self.typed = ""
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
        self._move_job = (token, job, self.clock())
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
            self._say(None)
            self._ask_computer()
        elif event.kind == "undo":
            game = match.game
            self.last = game.moves[-1] if game is not None and game.moves else None
            self._say(event.text)
        elif event.kind == "end":
            self._finish(event)
        elif event.kind == "abandon":
            self._move_job = None
            self._say(event.text)

    def _finish(self, event: MatchEvent) -> None:
        match = self.match
        assert match is not None
        self.banner = match.result_banner()
        seat = match.winner_seat()
        self.tone = ("draw" if seat is None else "win" if match.two_people or seat == 0 else "loss")
        said = [event.text]
        if match.best_of is not None and match.match_over:
            said.append(match.match_sentence())
        said.append(match.recorded_text())
        self._say(" ".join(part for part in said if part))
        self.scores_text = self._read_scores()

    # the store -------------------------------------------------------------------------------
    def _read_scores(self) -> str:
        if self.store is None:
            return WORDS["scores_not_kept"]
        if not self.store.enabled:
            return WORDS["scores_off"]
        try:
            scores = self.store.scores()
        except NoughtsError as error:
            return " ".join(str(error).split())
        board = self.start_board
        on_board = scores.on((board.rows, board.cols, board.k))  # high scores are kept per board
        high = " · ".join(f"{name} {value}" for name, value in on_board.high.items())
        return WORDS["high_scores"].format(high=high, run=on_board.run)

    def tally_text(self) -> str:
        """The session's tally against the opponent in play: 'Ann: 2 · Medium: 1 · draws: 0'."""
        return self.match.tally_text() if self.match is not None else ""

    # inputs ----------------------------------------------------------------------------------
    def activate(self, target: tuple[str, int] | tuple[str, str]) -> None:
        """A click (press and release) on a cell, a button, a start-screen choice or a name field."""
        kind, what = target
        if kind != "name":
            self.name_focus = None
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
        elif kind == "name" and what in ("0", "1") and self.opponent == PERSON:
            self.name_focus = int(what)

    def point_at(self, target: tuple[str, int] | tuple[str, str] | None) -> None:
        """The mouse moved over ``target`` (``None``: over nothing)."""
        self.pointer = target
        if self.screen == "game" and (target is None or target[0] == "cell"):
            self.cursor = target[1] if target is not None and isinstance(target[1], int) else None
            self.keyboard = False

    def play_cell(self, cell: int | str) -> None:
        """Play a cell (its index, or its name as typed); the match says what is wrong with it."""
        match = self.match
        if self.screen != "game" or match is None or match.game is None:
            return
        try:
            match.play(cell)
        except GameOver:
            self._say(WORDS["game_over"])  # the window's own buttons say how to go on
        except NotYourTurn as error:
            self._say(_sentence(error), names_turn=True)
        except NoughtsError as error:  # CellTaken, a name that is no cell, …: the board's own words
            self._say(_sentence(error))

    def press(self, name: str) -> None:
        """A button: menu, undo, hint, again (game screen); play, resume (start screen)."""
        if name == "menu":
            self.screen = "start"
            self.problem = None
            self.typed = ""
            self._check_opponents()
        elif name == "resume":
            if self.match is not None and not self.over:
                # back to the game as it was: the choices made meanwhile are dropped with the menu
                self.opponent, self.side = self.match.opponent, self.match.first
                self._opponent_chosen = True
                if self.match.two_people:
                    self.names = [self.match.name_of(0), self.match.name_of(1)]
                if _shape(self.start_board) != _shape(self.match.start):
                    self.start_board = self.match.start
                    self.unable, self._able_job = None, None
                self.problem = None
                self.name_focus = None
                self.screen = "game"
        elif name == "play":
            self.name_focus = None
            if self.unable is None and self._able_job is not None:
                self._play_when_checked = True  # the check is under way: start as soon as it is done
                self.problem = WORDS["checking"]
            else:
                self.new_game()
        elif name == "again":
            if self.over:
                self.new_game()
            else:
                self._say(WORDS["finish_first"])
        elif name == "undo":
            self.undo()
        elif name == "hint":
            self.ask_hint()

    def choose_opponent(self, name: str) -> None:
        if name == PERSON or name in players.names():
            self.opponent = name
            self._opponent_chosen = True
            self.problem = None
            if name != PERSON:
                self.name_focus = None

    def step_board(self, step: str) -> None:
        """``rows+``, ``cols-``, ``k+`` …: the next game's board, one step bigger or smaller.

        Rows and columns go from 3 to 15; k from 3 to the longer side. A k that was the natural
        one for the old size (3 up to 3×3, 4 up to 5×5, then 5) follows the new size. Which
        opponents can play the new board is asked again (off the event loop); an opponent that
        cannot play it gives way to the board's default.
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
        self._opponent_chosen = False  # chosen for the old board: checked against the new one
        self.unable, self._able_job, self._play_when_checked = None, None, False
        self.scores_text = self._read_scores()
        self._check_opponents()

    def choose_side(self, key: str) -> None:
        if key in FIRST_RULES:
            self.side = key
            self.problem = None

    def key(self, name: str) -> None:
        """A key by name: a letter or digit, left/right/up/down, enter, space, escape, backspace, tab.

        On the game screen a digit plays its cell at once on boards of up to 9 cells; elsewhere,
        and after a column's letter, the keys type a cell's name (``c4``) for Enter to play. The
        letters u (undo), h (hint) and n (new game) are shortcuts where they name no column.
        """
        if name == "space" and self.name_focus is None:
            name = "enter"  # Space presses like Enter, except in a name, where it is a space (typed text)
        if self.screen == "start":
            self._start_key(name)
            return
        if self.match is None:
            return
        board = self.match.board
        if len(name) == 1 and name.isascii() and name.isalnum():
            self._type_key(name.lower(), board)
        elif name == "backspace":
            self.typed = self.typed[:-1]
        elif name in ("left", "right", "up", "down"):
            self._move_cursor(name, board)
        elif name == "enter":
            if self.typed:
                typed, self.typed = self.typed, ""
                self.play_cell(typed)
            elif self.cursor is None:
                self._say(WORDS["move_to_a_cell"])
            else:
                self.play_cell(self.cursor)
        elif name == "escape":
            if self.typed:
                self.typed = ""
            else:
                self.press("menu")

    def _type_key(self, char: str, board: Board) -> None:
        column = char.isalpha() and ord(char) - ord("a") < board.cols
        if self.typed or column or (char.isdigit() and board.size > 9) or (char.isalpha() and char not in SHORTCUTS):
            if len(self.typed) < MAX_TYPED:
                self.typed += char
                self._say(None)
        elif char.isdigit():
            self.play_cell(char)  # 1–9 on a board of up to 9 cells: at once
        else:
            self.press(SHORTCUTS[char])

    def type_text(self, typed: str) -> None:
        """Text typed (the window's text input): goes into the name being edited on the start screen."""
        if self.screen != "start" or self.name_focus is None:
            return
        name = self.names[self.name_focus]
        for char in typed:
            if char.isprintable() and len(name) < text.MAX_NAME:
                name += char
        self.names[self.name_focus] = name
        self.problem = None

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
        if self.name_focus is not None:  # typing a name: the letters come through type_text
            if name == "backspace":
                self.names[self.name_focus] = self.names[self.name_focus][:-1]
            elif name == "tab":
                self.name_focus = 1 - self.name_focus
            elif name == "enter":
                self.press("play")
            elif name == "escape":
                self.name_focus = None
            return
        if name == "enter":
            self.press("play")
        elif name == "escape":
            self.press("resume")
        elif name == "tab":
            if self.opponent == PERSON:
                self.name_focus = 0
        elif name in ("up", "down", "left", "right"):
            # up/down step through the opponents, left/right through who starts
            step = -1 if name in ("up", "left") else 1
            if name in ("up", "down"):
                options = [*players.names(), PERSON]
                self.choose_opponent(options[(options.index(self.opponent) + step) % len(options)])
            else:
                rules = list(FIRST_RULES)
                self.choose_side(rules[(rules.index(self.side) + step) % len(rules)])

    def undo(self) -> None:
        match = self.match
        if match is None or match.game is None:
            return
        try:
            match.undo()  # the match's one rule; it says what was taken back (our listener shows it)
        except GameOver:
            self._say(WORDS["game_over"])
            return
        except NoughtsError as error:
            self._say(_sentence(error))
            return
        self._move_job = None  # an answer to a move taken back is no longer wanted
        self._ask_computer()

    def ask_hint(self) -> None:
        match = self.match
        if match is None or match.game is None:
            return
        refusal = match.hint_refusal()  # the match's one rule
        if refusal is not None:
            self._say(refusal)
        elif self._hint_job is not None:
            self._say(WORDS["working_out_hint"])
        else:
            from noughts.match import hint

            board = match.board
            self._hint_job = token = self._token()
            self._say(WORDS["working_out_hint"])
            self.worker.submit(token, lambda: hint(board, HINT_SECONDS))

    def job_done(self, token: int, result: object, error: str | None = None) -> None:
        """An answer from the worker; answers no longer awaited are dropped."""
        if token == self._able_job:
            self._able_job = None
            if error is None and isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], dict):
                unable, default = result
                self._checked({str(name): str(reason) for name, reason in unable.items()}, str(default))
            else:
                self.unable = {}
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
            match.abandon(text.cannot_go_on(self._opponent_name(), why))
            self.banner, self.tone = WORDS["game_abandoned"], "none"
        elif token == self._hint_job:
            self._hint_job = None
            if error is not None:
                self._say(WORDS["no_hint"].format(why=" ".join(error.split())))
            elif isinstance(result, tuple) and len(result) == 2:
                cell, sentence = result
                self.hint = cell if isinstance(cell, int) else None
                self._say(str(sentence))

    # what to draw --------------------------------------------------------------------------------
    def _turn_line(self, *, short: bool) -> str:
        """Whose move it is: how to make it (``short``: just who, after other news); the computer's
        turn is said once it has thought for a moment."""
        match = self.match
        assert match is not None
        seat = match.seat_to_move
        if seat is None:
            return ""
        name, mark = match.name_of(seat), match.mark_of(seat)
        if not match.seats[seat].is_person:
            if self.thinking_shown():
                return text.thinking(name)
            return text.window_turn(name, mark, you=False, cells=match.board.size, short=True) if short else ""
        you = seat == 0 and not match.two_people
        return text.window_turn(name, mark, you=you, cells=match.board.size, short=short)

    def _status(self) -> str:
        """The status line: the latest news, then whose turn it is; while the computer works (after a
        moment) it always ends by saying so."""
        if self.typed:
            thinking = self._turn_line(short=False) if self.thinking_shown() else ""
            return f"{text.window_typing(self.typed)} {thinking}".strip()
        if self.message and self._message_names_turn:
            turn = self._turn_line(short=False) if self.thinking_shown() else ""
        else:
            turn = self._turn_line(short=bool(self.message))
        return " ".join(part for part in (self.message, turn) if part)

    def _header(self) -> str:
        match = self.match
        assert match is not None
        you = match.name_of(0) if match.two_people else "You"
        return WORDS["header"].format(you=you, mark=match.mark_of(0), other=match.name_of(1),
                                      other_mark=match.mark_of(1))

    def _again_label(self) -> str:
        match = self.match
        assert match is not None
        if match.best_of is None:
            return WORDS["again"]
        return WORDS["new_match"] if match.match_over else WORDS["next_game"]

    def _tally_line(self) -> str:
        match = self.match
        assert match is not None
        if match.best_of is None:
            return match.tally_text()
        return WORDS["match_score"].format(best_of=match.best_of, game=max(1, match.game_in_match),
                                           score=match.tally_text(score=True))

    def view(self) -> ViewState:
        match = self.match
        if self.screen == "start" or match is None or match.game is None:
            return self._start_view()
        board = match.board
        over = self.over
        cursor = self.cursor if self.cursor is not None and self.cursor < board.size else None
        persons_turn = match.seat_to_move is not None and not match.computer_to_move
        hover = cursor if cursor is not None and persons_turn and board[cursor] is None else None
        buttons = (
            Button("menu", WORDS["menu"], True),
            Button("undo", WORDS["undo"], match.can_undo()),
            Button("hint", WORDS["hint"], match.hint_refusal() is None),
            Button("again", self._again_label(), over, primary=over),
        )
        return ViewState(
            screen="game", board=board, status=self._status(), pointer=self.pointer, colour=self.colour,
            header=self._header(), banner=self.banner, tone=self.tone, last=self.last,
            line=board.winning_line, hover=hover, cursor=cursor if self.keyboard else None, hint=self.hint,
            thinking=self.thinking_shown(), buttons=buttons, tally=self._tally_line(), scores=self.scores_text)

    def _start_view(self) -> ViewState:
        unable = self.unable or {}
        names = [*players.names(), PERSON]
        opponents = tuple(Choice(n, text.opponent_label(n), n == self.opponent, n not in unable) for n in names)
        two = self.opponent == PERSON
        if two:  # the two people's names as typed so far, or the seats' usual names while blank
            first = " ".join(self.names[0].split()) or "Player 1"
            second = " ".join(self.names[1].split()) or "Player 2"
            choices = text.first_choices(first, second)
            about = WORDS["two_people"]
        else:
            choices = text.first_choices()
            about = players.describe(self.opponent)
            if self.opponent in unable:
                about = WORDS["cannot_play_board"].format(about=about, why=unable[self.opponent])
        sides = tuple(Choice(rule, label, rule == self.side) for rule, label, _ in choices)
        start = self.start_board
        board_note = WORDS["board_note"].format(rows=start.rows, cols=start.cols, k=start.k)
        best_of = WORDS["best_of_note"].format(n=self.best_of) if self.best_of is not None else ""
        # the computer may still be working on the game that Resume goes back to
        working = text.thinking(self._opponent_name()) if self.thinking_shown() else ""
        notes = " ".join(part for part in (working, self.notice, board_note, best_of) if part)
        return ViewState(
            screen="start", board=start, status=self.problem or self.notice, pointer=self.pointer,
            colour=self.colour, opponents=opponents, sides=sides, side_heading=WORDS["who_starts"],
            description=about, problem=self.problem or "", can_resume=self.match is not None and not self.over,
            notes=notes, scores=self.scores_text, tally=self.tally_text(), thinking=self.thinking_shown(),
            names=(self.names[0], self.names[1]) if two else None, name_focus=self.name_focus if two else None)
