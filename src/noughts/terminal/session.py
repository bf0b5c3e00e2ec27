"""One run of `noughts play`: the menu, then games on a :class:`~noughts.match.Match` until the person stops.

Pressing Enter through the menu starts a game at once: the opponent every front end offers
first for the board (:func:`noughts.players.default_for`: medium on 3×3, which wins sometimes
and loses sometimes), and first moves that alternate, you first. X always moves first, so
choosing who moves first also chooses the marks: the first mover is X.

The match decides who starts, whose turn it is, what undo takes back, the tally and what
is recorded; every sentence comes from :mod:`noughts.text`; this module only asks, reads
lines and prints.
"""

from __future__ import annotations

import os
import sys
import textwrap
import threading

from noughts import match as matches
from noughts import players, text
from noughts.board import Board
from noughts.errors import NoughtsError
from noughts.match import DEFAULT_FIRST, PERSON, Match, PlayOptions, first_rule, opponent_name
from noughts.terminal.console import (
    _BOLD,
    _HELP,
    _HINT,
    _NO,
    _QUIT,
    _RESET,
    _TOO_LONG,
    _UNDO,
    _YES,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    _Input,
    use_colour,
)
from noughts.text import board_diagram, check_name, default_name

TYPE_CHECKING = False  # typing costs milliseconds at import; mypy still reads the block
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import IO, TypeVar

    from noughts.store import Store

    T = TypeVar("T")

WIDTH = 79  # the menus fit an 80-column terminal
LINE_WIDTH = 80  # a longer line of words (a long name, a long sentence) is wrapped to WIDTH


def _instructions(board: Board) -> str:
    return text.terminal_instructions(board, board_diagram(board), text.diagram_numbers_cells(board))


def _fit(line: str, width: int = WIDTH) -> str:
    return line if len(line) <= width else line[:width - 1] + "…"


def _menu_lines(number: int, label: str, about: str, label_width: int) -> list[str]:
    """One numbered choice: its label, and what it means wrapped under itself to fit the width."""
    start = f"  {number:>2}  {label:<{label_width}}  "
    if not about:
        return [start.rstrip()]
    wrapped = textwrap.wrap(about, WIDTH - len(start)) or [""]
    return [_fit(start + wrapped[0]), *(_fit(" " * len(start) + more) for more in wrapped[1:])]


class _Stop(Exception):
    """The person left: end of input or 'quit'."""


class _Session:
    """One run of `noughts play`: the menu, then games until the person stops."""

    def __init__(self, options: PlayOptions, source: IO[bytes], out: IO[str],
                 environ: Mapping[str, str]) -> None:
        self.options = options
        self.out = out
        self.input = _Input(source, out)
        self.environ = environ
        self.colour = use_colour(out, environ)
        try:
            self.terminal = out.isatty()  # a note can be rubbed out again only on a terminal
        except (AttributeError, ValueError):
            self.terminal = False
        encoding = (getattr(out, "encoding", None) or "ascii").lower().replace("-", "").replace("_", "")
        self.dash = "–" if encoding in ("utf8", "utf8sig") else "-"  # en dash only where it can print
        self.names = list(options.names)
        self.store: Store | None = None
        self.match: Match | None = None

    # output helpers
    def say(self, lines: str = "") -> None:
        """Print ``lines``; one longer than the terminal is wide is wrapped (boards and menus never are)."""
        fitted = [textwrap.fill(line, WIDTH, break_long_words=False, break_on_hyphens=False)  # paths stay whole
                  if len(line) > LINE_WIDTH and "\x1b" not in line else line for line in lines.split("\n")]
        self.out.write("\n".join(fitted) + "\n")
        self.out.flush()

    def bold(self, sentence: str) -> str:
        if not self.colour:
            return sentence
        return "\n".join(f"{_BOLD}{line}{_RESET}" for line in textwrap.wrap(sentence, WIDTH))

    def ask(self, prompt: str) -> str:
        answer = self.input.ask(prompt)
        if answer is None:
            raise _Stop
        return answer

    def dashed(self, sentence: str) -> str:
        return sentence if self.dash == "–" else sentence.replace("–", self.dash)

    @property
    def two_people(self) -> bool:
        return self.options.opponent == PERSON

    @property
    def in_game(self) -> bool:
        return self.match is not None and self.match.game is not None and not self.match.game_over

    # the whole run
    def run(self) -> int:
        try:
            try:
                return self._run()
            except _Stop:
                self.say("\n" + self.goodbye(text.TERMINAL_YOU_STOPPED))
                return 0
            except KeyboardInterrupt:
                self.say("\n" + self.goodbye(text.TERMINAL_INTERRUPTED))
                return EXIT_INTERRUPTED
        finally:
            if self.store is not None:
                self.store.close()

    def goodbye(self, why: str) -> str:
        unfinished = self.in_game
        if unfinished and self.match is not None:
            self.match.abandon(why)
        return text.terminal_goodbye(unfinished, why)

    def _run(self) -> int:
        options = self.options
        if options.opponent is None or options.first is None:
            self.say(self.bold(text.TERMINAL_TITLE))
            self.say(text.TERMINAL_ENTER_TAKES_DEFAULT)
            self.menu()
        try:
            self.new_match()
        except NoughtsError as error:  # the menu offers only what can play; kept as a last guard
            self.say(f"noughts play: {' '.join(str(error).split())}")
            return EXIT_USAGE
        self.say()
        self.say(_instructions(self.start_board()))
        while True:
            self.play_match()
            if self.play_again() == "menu":
                self.menu(again=True)
                self.new_match()

    def start_board(self) -> Board:
        return Board(self.options.rows, self.options.cols, self.options.k)

    def new_match(self) -> None:
        """A match with the chosen opponent (its tally starts at 0); the store opens the first time."""
        options = self.options
        if self.store is None and options.scores:
            from noughts.store import open_store

            self.store = open_store(options.db, environ=self.environ)
            for notice in self.store.notices:
                self.say(" ".join(notice.split()))
        self.match = Match(options.opponent or players.default_for(self.start_board()), names=self.names,
                           first=options.first or DEFAULT_FIRST, rows=options.rows, cols=options.cols,
                           k=options.k, best_of=options.best_of, seed=options.seed, store=self.store,
                           environ=self.environ)
        self.match.add_listener(lambda event: self.say(event.text) if event.kind == "undo" else None)
        self.names = [seat.name for seat in self.match.seats if seat.is_person]

    # the menu
    def menu(self, again: bool = False) -> None:
        options = self.options
        board = self.start_board()
        if options.opponent is None or again:
            options.opponent = self.choose_opponent(board, options.opponent)
        if self.two_people and (len(self.names) < 2 or again):
            self.say()
            first_default = self.names[0] if self.names else default_name(self.environ, "Player 1")
            self.names[:1] = [self.ask_name(text.TERMINAL_FIRST_NAME, first_default)]
            default_other = self.names[1] if len(self.names) > 1 else "Player 2"
            if default_other.lower() == self.names[0].lower():
                default_other = "Player 2" if self.names[0].lower() != "player 2" else "Player 1"
            self.names[1:] = [self.ask_name(text.TERMINAL_SECOND_NAME, default_other, avoid=self.names[0])]
        elif not self.two_people:
            self.names = self.names[:1]
        if options.first is None or again:
            options.first = self.choose_first(options.first or DEFAULT_FIRST)

    def choose_opponent(self, board: Board, chosen_before: str | None) -> str:
        names = [*players.names(), PERSON]
        able = self.wait(lambda: {name: players.unable(name, board) is None for name in players.names()},
                         text.TERMINAL_CHECKING_PLAYERS)
        able[PERSON] = True
        default = chosen_before if chosen_before is not None and able.get(chosen_before) else \
            players.default_for(board)
        labels = [text.opponent_label(name) for name in names]
        self.say()
        self.say(text.terminal_who_to_play(board))
        width = max(len(label) for label in labels)
        for number, (name, label) in enumerate(zip(names, labels, strict=True), 1):
            if name == PERSON:
                about = text.TERMINAL_PERSON_ABOUT
            elif not able[name]:
                about = text.TERMINAL_NOT_ON_BOARD
            else:  # the description without the label it starts with
                about = players.describe(name).removeprefix(label).removeprefix(":").strip()
            for line in _menu_lines(number, label, about, width):
                self.say(line)
        by_label = {label.casefold(): name for name, label in zip(names, labels, strict=True)}
        default_label = text.opponent_label(default)
        while True:
            answer = self.ask(text.terminal_question("Opponent", default_label))
            if answer is _TOO_LONG:
                self.say(text.TERMINAL_LINE_TOO_LONG)
                continue
            if answer.lower() in _QUIT:
                raise _Stop
            try:
                if not answer:
                    chosen = default
                elif answer.isascii() and answer.isdigit() and 1 <= int(answer) <= len(names):
                    chosen = names[int(answer) - 1]
                else:
                    chosen = by_label.get(" ".join(answer.split()).casefold()) or opponent_name(answer)
            except NoughtsError:
                self.say(text.terminal_not_on_list(answer, len(names), default_label))
                continue
            reason = players.unable(chosen, board) if chosen != PERSON else None
            if reason is None:
                return chosen
            self.say(text.terminal_cannot_play(players.label(chosen), reason))

    def choose_first(self, default: str) -> str:
        choices = text.first_choices(*self.names[:2]) if self.two_people else text.first_choices()
        labels = {rule: label for rule, label, _ in choices}
        self.say()
        self.say(text.TERMINAL_WHO_FIRST)
        width = max(len(label) for label in labels.values())
        for number, (_, label, about) in enumerate(choices, 1):
            for line in _menu_lines(number, label, about, width):
                self.say(line)
        by_label = {label.casefold(): rule for rule, label in labels.items()}
        while True:
            answer = self.ask(text.terminal_question("First", labels[default]))
            if answer is _TOO_LONG:
                self.say(text.TERMINAL_LINE_TOO_LONG)
                continue
            word = " ".join(answer.split()).casefold()
            if word in _QUIT:
                raise _Stop
            if not word:
                return default
            if word.isascii() and word.isdigit() and 1 <= int(word) <= len(choices):
                return choices[int(word) - 1][0]
            if word in by_label:
                return by_label[word]
            if self.two_people and word in (self.names[0].casefold(), self.names[1].casefold()):
                return "me" if word == self.names[0].casefold() else "computer"
            try:
                return first_rule(word)
            except NoughtsError:
                self.say(text.terminal_not_on_list(answer, len(choices), labels[default]))

    def ask_name(self, question: str, default: str, avoid: str | None = None) -> str:
        while True:
            answer = self.ask(text.terminal_question(question, default))
            if answer is _TOO_LONG:
                self.say(text.TERMINAL_NAME_TOO_LONG)
                continue
            try:
                name = check_name(answer, "a name") if answer else default
            except NoughtsError as error:
                self.say(text.terminal_another_name(str(error)))
                continue
            if avoid is not None and name.lower() == avoid.lower():
                self.say(text.TERMINAL_DIFFERENT_NAMES)
                continue
            return name

    # matches and games
    def play_match(self) -> None:
        """One game, or a best-of-N match with a pause after each game to read its result."""
        match = self.match
        assert match is not None
        while True:
            self.game()
            if match.best_of is None:
                return
            self.say(text.terminal_match_tally(match.best_of, match.tally_text(score=True)))
            if match.match_over:
                self.say(self.bold(self.dashed(match.match_sentence())))
                return
            answer = self.ask(f"\n{text.terminal_next_game(match.game_in_match + 1)} ")
            if answer is not _TOO_LONG and answer.lower() in _QUIT | _NO:
                raise _Stop

    def game(self) -> None:
        """Play one game to its end (raises _Stop when the person leaves)."""
        match = self.match
        assert match is not None
        match.new_game()
        heading = text.terminal_game_heading(match.games, match.best_of, match.game_in_match)
        intro = match.intro() if self.two_people else text.terminal_intro(match.name_of(1), match.x_seat == 0)
        self.say()
        self.say(self.bold(f"{heading}: {intro}"))
        self.say()
        self.say(board_diagram(match.start, colour=self.colour))
        while not match.game_over:
            board = match.board
            if match.computer_to_move:
                job = match.computer_job()
                assert job is not None
                name = match.name_of(1)
                try:
                    cell = self.wait(job.run, text.thinking(name))
                except NoughtsError as error:
                    why = text.cannot_go_on(name, " ".join(str(error).split()))
                    match.abandon(why)
                    self.say(text.not_counted(why))
                    return
                match.apply(job, cell)
                self.say(text.terminal_computer_move(board.cell_name(cell)))
                self.show()
                continue
            mark = board.turn
            seat = match.seat_to_move
            assert mark is not None and seat is not None
            answer = self.ask(text.terminal_move_prompt(mark, match.name_of(seat) if self.two_people else None))
            if answer is _TOO_LONG:
                self.say(f"{text.TERMINAL_LINE_TOO_LONG} {text.terminal_type_a_cell(board)}")
                continue
            word = answer.lower()
            if not word:
                self.say(text.terminal_type_a_cell(board))
            elif word in _QUIT:
                raise _Stop
            elif word in _HELP:
                self.say(_instructions(match.start))
                self.say()
                self.show()
            elif word in _HINT:
                try:
                    self.say(self.wait(lambda: match.hint()[1], text.TERMINAL_WORKING_OUT_HINT))
                except NoughtsError as error:
                    self.say(str(error))
            elif word in _UNDO:
                try:
                    match.undo()  # the match says what it took back (see new_match)
                except NoughtsError as error:
                    self.say(str(error))
                    continue
                self.show()
            else:
                try:
                    after = match.play(answer)
                except NoughtsError as error:  # worded for the person: "b2 is taken by X: ..."
                    self.say(str(error))
                    continue
                if self.two_people or after.is_over:
                    self.show()
                # otherwise the computer answers at once and one redraw shows both moves
        if match.game is not None and match.game.result is not None:
            self.finish()

    def wait(self, work: Callable[[], T], note: str) -> T:
        """Run ``work`` on a thread; if it takes over match.THINKING_AFTER seconds, say ``note`` meanwhile.

        On a terminal the note is rubbed out when the work is done; elsewhere it stays, a line of its own.
        """
        result: list[T] = []
        failure: list[BaseException] = []

        def target() -> None:
            try:
                result.append(work())
            except BaseException as error:  # handed back to this thread below
                failure.append(error)

        worker = threading.Thread(target=target, daemon=True, name="noughts-computer")
        worker.start()
        worker.join(matches.THINKING_AFTER)
        if worker.is_alive():
            self.out.write(note if self.terminal else note + "\n")
            self.out.flush()
            while worker.is_alive():
                worker.join(0.1)  # short waits, so Ctrl-C is felt at once
            if self.terminal:
                self.out.write("\r" + " " * len(note) + "\r")
                self.out.flush()
        if failure:
            raise failure[0]
        return result[0]

    def show(self) -> None:
        match = self.match
        assert match is not None and match.game is not None
        board = match.board
        moves = match.game.moves
        self.say(board_diagram(board, last=moves[-1] if moves else None, line=board.winning_line, colour=self.colour))

    def finish(self) -> None:
        """Announce the result, what was recorded and the tally."""
        match = self.match
        assert match is not None
        self.say(self.bold(match.result_sentence(dash=self.dash)))
        kept = match.recorded_text()
        if kept:
            self.say(kept)
        self.say(text.terminal_session_tally(match.tally_text()))

    def play_again(self) -> str:
        match = self.match
        while True:
            answer = self.ask("\n" + text.terminal_play_again(match is not None and bool(match.best_of)))
            word = answer.lower() if answer is not _TOO_LONG else "?"
            if word in _QUIT or word in _NO:
                raise _Stop
            if not word or word in _YES:
                return "again"
            if word in ("m", "menu"):
                return "menu"
            self.say(text.TERMINAL_AGAIN_HELP)


def check_opponent(options: PlayOptions, environ: Mapping[str, str] | None = None) -> None:
    """Refuse at once, before any question, an opponent given that cannot play the board given (NoughtsError)."""
    if options.opponent is not None:
        Match(options.opponent, names=options.names, first=options.first or DEFAULT_FIRST, rows=options.rows,
              cols=options.cols, k=options.k, best_of=options.best_of, environ=environ)


def play(options: PlayOptions, stdin: IO[bytes] | None = None, stdout: IO[str] | None = None,
         environ: Mapping[str, str] | None = None) -> int:
    """Run `noughts play`: returns 0 when the person stops (or input ends), 130 on Ctrl-C.

    An opponent given that cannot play the board given raises NoughtsError before anything is asked.
    """
    environ = os.environ if environ is None else environ
    check_opponent(options, environ)
    session = _Session(options, stdin if stdin is not None else sys.stdin.buffer,
                       stdout if stdout is not None else sys.stdout, environ)
    return session.run()
