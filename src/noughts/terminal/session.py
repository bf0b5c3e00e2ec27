"""One run of `noughts play`: the menu, then games on a :class:`~noughts.match.Match` until the person stops.

Pressing Enter through the menu starts a game at once: ``medium`` (it wins sometimes and
loses sometimes, where ``hard`` can only be drawn and ``easy`` hardly resists), and first
moves that alternate, you first. X always moves first, so choosing who moves first also
chooses the marks: the first mover is X.

The match decides who starts, whose turn it is, what undo takes back, the tally and what
is recorded; this module only asks, reads lines and prints.
"""

from __future__ import annotations

import os
import sys
import threading

from noughts import players
from noughts.board import Board
from noughts.errors import NoughtsError
from noughts.match import DEFAULT_FIRST, DEFAULT_OPPONENT, FIRST_RULES, PERSON, Match, PlayOptions, opponent_name
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
from noughts.text import MAX_NAME, board_diagram, check_name, default_name, shown

TYPE_CHECKING = False  # typing costs milliseconds at import; mypy still reads the block
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import IO, TypeVar

    from noughts.store import Store

    T = TypeVar("T")

THINKING_AFTER = 1.0  # seconds of silence before the person is told the computer is thinking
WIDTH = 79  # the menus fit an 80-column terminal


def _instructions(board: Board) -> str:
    last_col = chr(ord("a") + board.cols - 1)
    return "\n".join([
        f"Take turns to put your mark in a free cell; {board.k} in a row (across, down or",
        "diagonally) wins. X always moves first.",
        f"Type a cell as a number 1-{board.size} or as column and row, a1-{last_col}{board.rows}:",
        "",
        board_diagram(board),
        "",
        "The last move is shown [in brackets], a winning line *between stars*.",
        "At your move you can also type: undo (take back the last move; against the",
        "computer, yours and its reply), hint (the best move and where it leads),",
        "help (this text), quit (or Ctrl-D; a game left unfinished is not counted).",
    ])


def _fit(line: str, width: int = WIDTH) -> str:
    return line if len(line) <= width else line[:width - 1] + "…"


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
        encoding = (getattr(out, "encoding", None) or "ascii").lower().replace("-", "").replace("_", "")
        self.dash = "–" if encoding in ("utf8", "utf8sig") else "-"  # en dash only where it can print
        self.names = list(options.names)
        self.store: Store | None = None
        self.match: Match | None = None

    # output helpers
    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def bold(self, text: str) -> str:
        return f"{_BOLD}{text}{_RESET}" if self.colour else text

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
        return self.match is not None and not self.match.game_over

    # the whole run
    def run(self) -> int:
        try:
            try:
                return self._run()
            except _Stop:
                self.say("\nGoodbye." if not self.in_game else "\nGoodbye. (The unfinished game is not counted.)")
                return 0
            except KeyboardInterrupt:
                note = " The unfinished game is not counted." if self.in_game else ""
                self.say(f"\nInterrupted.{note}")
                return EXIT_INTERRUPTED
        finally:
            if self.store is not None:
                self.store.close()

    def _run(self) -> int:
        options = self.options
        if options.opponent is None or options.first is None:
            self.say(self.bold("noughts: noughts and crosses (tic-tac-toe)."))
            self.say("Press Enter to take the choice in [brackets].")
            self.menu()
        try:
            self.new_match()
        except NoughtsError as error:  # an opponent given on the command line that cannot play this board
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
        self.match = Match(options.opponent or DEFAULT_OPPONENT, names=self.names,
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
            options.opponent = self.choose_opponent(board, options.opponent or DEFAULT_OPPONENT)
        if self.two_people and (len(self.names) < 2 or again):
            self.say()
            first_default = self.names[0] if self.names else default_name(self.environ, "Player 1")
            self.names[:1] = [self.ask_name("First player's name", first_default)]
            default_other = self.names[1] if len(self.names) > 1 else "Player 2"
            if default_other.lower() == self.names[0].lower():
                default_other = "Player 2" if self.names[0].lower() != "player 2" else "Player 1"
            self.names[1:] = [self.ask_name("Second player's name", default_other, avoid=self.names[0])]
        elif not self.two_people:
            self.names = self.names[:1]
        if options.first is None or again:
            options.first = self.choose_first(options.first or DEFAULT_FIRST)

    def choose_opponent(self, board: Board, default: str) -> str:
        names = [*players.names(), PERSON]
        able = self.wait(lambda: {name: players.unable(name, board) is None for name in players.names()},
                         "Checking which computer players can play this board…")
        if not able.get(default, True):
            default = DEFAULT_OPPONENT if able.get(DEFAULT_OPPONENT) else "random"
        self.say()
        self.say("Who would you like to play?" if board.size == 9 else
                 f"Who would you like to play on this {board.rows}×{board.cols} board ({board.k} in a row)?")
        width = max(len(n) for n in names)
        for number, name in enumerate(names, 1):
            about = ("Another person at this keyboard: you take turns" if name == PERSON
                     else players.describe(name) if able[name] else f"{players.label(name)}: not on this board")
            self.say(_fit(f"  {number:>2}  {name:<{width}}  {about}"))
        while True:
            answer = self.ask(f"Opponent [{default}]: ")
            if answer is _TOO_LONG:
                self.say("That line is far too long. Type a number or a name from the list.")
                continue
            if answer.lower() in _QUIT:
                raise _Stop
            try:
                if not answer:
                    chosen = default
                elif answer.isascii() and answer.isdigit() and 1 <= int(answer) <= len(names):
                    chosen = names[int(answer) - 1]
                else:
                    chosen = opponent_name(answer)
            except NoughtsError:
                self.say(f"{shown(answer)} is not on the list: type a number from 1 to {len(names)} "
                         f"or a name, or press Enter for {default}.")
                continue
            reason = players.unable(chosen, board) if chosen != PERSON else None
            if reason is None:
                return chosen
            self.say(f"{players.label(chosen)} cannot play this board: {reason}. Choose another.")

    def choose_first(self, default: str) -> str:
        me = self.names[0] if self.two_people else "you"
        other = self.names[1] if self.two_people else "the computer"
        about = {
            "me": f"{me} {'is' if self.two_people else 'are'} X (first) every game",
            "computer": f"{other} is X (first) every game",
            "alternate": f"take turns, {me} first",
            "loser": "the loser of each game starts the next",
            "random": "a coin toss before each game",
        }
        self.say()
        self.say("Who moves first? X always moves first, O second.")
        choices = list(FIRST_RULES)
        for number, choice in enumerate(choices, 1):
            self.say(f"  {number:>2}  {choice:<9}  {about[choice]}")
        while True:
            answer = self.ask(f"First [{default}]: ")
            if answer is _TOO_LONG:
                self.say(f"That line is far too long. Type a number from 1 to {len(choices)}.")
                continue
            word = answer.lower()
            if word in _QUIT:
                raise _Stop
            if not word:
                return default
            if word.isascii() and word.isdigit() and 1 <= int(word) <= len(choices):
                return choices[int(word) - 1]
            if self.two_people and word in (self.names[0].lower(), self.names[1].lower()):
                return "me" if word == self.names[0].lower() else "computer"
            from noughts.match import first_rule

            try:
                return first_rule(word)
            except NoughtsError:
                self.say(f"{shown(answer)} is not on the list: type a number from 1 to {len(choices)}, "
                         f"or press Enter for {default}.")

    def ask_name(self, question: str, default: str, avoid: str | None = None) -> str:
        while True:
            answer = self.ask(f"{question} [{default}]: ")
            if answer is _TOO_LONG:
                self.say(f"That line is far too long for a name (at most {MAX_NAME} characters).")
                continue
            try:
                name = check_name(answer, "a name") if answer else default
            except NoughtsError as error:
                self.say(f"Please type another name: {error}.")
                continue
            if avoid is not None and name.lower() == avoid.lower():
                self.say("The two people need different names.")
                continue
            return name

    # matches and games
    def play_match(self) -> None:
        """One game, or a best-of-N match."""
        match = self.match
        assert match is not None
        while True:
            self.game()
            if match.best_of is None:
                return
            line = f"Match, best of {match.best_of}: {match.tally_text(score=True)}"
            if match.match_over:
                self.say(line + ".")
                self.say(self.bold(self.dashed(match.match_sentence())))
                return
            self.say(line + f"; game {sum(match.score) + 1} next.")

    def game(self) -> None:
        """Play one game to its end (raises _Stop when the person leaves)."""
        match = self.match
        assert match is not None
        match.new_game()
        label = f"Game {match.games}"
        if match.best_of is not None:
            label = f"Game {match.game_in_match} of the match (best of {match.best_of})"
        intro = match.intro()
        if not self.two_people:
            intro = (f"you are X and move first; {match.name_of(1)} is O." if match.x_seat == 0
                     else f"{match.name_of(1)} is X and moves first; you are O.")
        self.say()
        self.say(self.bold(f"{label}: {intro}"))
        self.say()
        self.say(board_diagram(match.start, colour=self.colour))
        while not match.game_over:
            board = match.board
            if match.computer_to_move:
                job = match.computer_job()
                assert job is not None
                try:
                    cell = self.wait(job.run, f"{match.name_of(1)} is thinking…")
                except NoughtsError as error:
                    self.say(f"{match.name_of(1)} cannot go on: {' '.join(str(error).split())}.")
                    match.abandon("The game is abandoned")
                    self.say("The game is abandoned and not counted.")
                    return
                match.apply(job, cell)
                self.say(f"Computer move: {board.cell_name(cell)}")
                self.show()
                continue
            mark = board.turn
            seat = match.seat_to_move
            assert mark is not None and seat is not None
            prompt = f"{match.name_of(seat)}'s move ({mark}): " if self.two_people else f"Your move ({mark}): "
            answer = self.ask(prompt)
            if answer is _TOO_LONG:
                self.say("That line is far too long to be a move. Type a cell like 5 or b2, or help.")
                continue
            word = answer.lower()
            if not word:
                self.say(f"Type a cell like 5 or b2 (1-{board.size}), or help, hint, undo or quit.")
            elif word in _QUIT:
                raise _Stop
            elif word in _HELP:
                self.say(_instructions(match.start))
                self.say()
                self.show()
            elif word in _HINT:
                self.say(self.wait(lambda: match.hint()[1], "Working out a hint…"))
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
                except NoughtsError as error:  # the message names the cell: "z9 is off the board: ..."
                    self.say(f"{error}")
                    continue
                if self.two_people or after.is_over:
                    self.show()
                # otherwise the computer answers at once and one redraw shows both moves
        if match.game is not None and match.game.result is not None:
            self.finish()

    def wait(self, work: Callable[[], T], note: str) -> T:
        """Run ``work`` on a thread; after a second of silence say ``note``, so nobody waits unaware."""
        result: list[T] = []
        failure: list[BaseException] = []

        def target() -> None:
            try:
                result.append(work())
            except BaseException as error:  # handed back to this thread below
                failure.append(error)

        worker = threading.Thread(target=target, daemon=True, name="noughts-computer")
        worker.start()
        worker.join(THINKING_AFTER)
        if worker.is_alive():
            self.say(f"({note})")
            while worker.is_alive():
                worker.join(0.1)  # short waits, so Ctrl-C is felt at once
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
        self.say(f"This session: {match.tally_text()}.")

    def play_again(self) -> str:
        match = self.match
        what = "another match" if match is not None and match.best_of else "again"
        while True:
            answer = self.ask(f"\nPlay {what}? [Y/n, m for the menu] ")
            word = answer.lower() if answer is not _TOO_LONG else "?"
            if word in _QUIT or word in _NO:
                raise _Stop
            if not word or word in _YES:
                return "again"
            if word in ("m", "menu"):
                return "menu"
            self.say("Please answer y (or just press Enter) to play, n to stop, or m for the menu.")


def play(options: PlayOptions, stdin: IO[bytes] | None = None, stdout: IO[str] | None = None,
         environ: Mapping[str, str] | None = None) -> int:
    """Run `noughts play`: returns 0 when the person stops (or input ends), 130 on Ctrl-C."""
    session = _Session(options, stdin if stdin is not None else sys.stdin.buffer,
                       stdout if stdout is not None else sys.stdout,
                       os.environ if environ is None else environ)
    return session.run()
