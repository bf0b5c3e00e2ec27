"""One run of `noughts play`: the menu, then games until the person stops.

Pressing Enter through the menu starts a game at once: ``medium`` (it wins sometimes and
loses sometimes, where ``hard`` can only be drawn and ``easy`` hardly resists), and first
moves that alternate, you first. X always moves first, so choosing who moves first also
chooses the marks: the first mover is X.
"""

from __future__ import annotations

import os
import sys

from noughts.board import Board
from noughts.errors import NoughtsError
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
    render,
    use_colour,
)
from noughts.text import MAX_NAME, check_name, default_name, describe_line, plural, shown

TYPE_CHECKING = False  # typing costs milliseconds at import; mypy still reads the block
if TYPE_CHECKING:
    import random
    from collections.abc import Mapping, Sequence
    from typing import IO

    from noughts.game import Game
    from noughts.players.base import Player
    from noughts.store import Store

DEFAULT_OPPONENT = "medium"  # wins some, loses some: a newcomer's first game should be winnable
DEFAULT_FIRST = "alternate"  # you start the first game, then the computer, and so on
PERSON = "person"  # the opponent that is another person at the same keyboard
FIRST_CHOICES = ("me", "computer", "alternate", "random")

_PERSON_WORDS = frozenset({PERSON, "human", "friend", "people", "2"})
_FIRST_WORDS = {"me": "me", "you": "me", "i": "me", "computer": "computer", "them": "computer",
                "other": "computer", "alternate": "alternate", "alt": "alternate", "random": "random"}
def _instructions(board: Board) -> str:
    last_col = chr(ord("a") + board.cols - 1)
    return "\n".join([
        f"Take turns to put your mark in a free cell; {board.k} in a row (across, down or",
        "diagonally) wins. X always moves first.",
        f"Type a cell as a number 1-{board.size} or as column and row, a1-{last_col}{board.rows}:",
        "",
        render(board),
        "",
        "The last move is shown [in brackets], a winning line *between stars*.",
        "At your move you can also type: undo (take back your last move), hint (the best",
        "move and where it leads), help (this text), quit (or Ctrl-D; a game left unfinished",
        "is not counted).",
    ])


# options -------------------------------------------------------------------------------------

class PlayOptions:
    """Everything `noughts play` can be told; ``None`` for a choice the menu should ask."""

    __slots__ = ("opponent", "first", "best_of", "seed", "rows", "cols", "k", "db", "names", "scores")

    def __init__(self, opponent: str | None = None, first: str | None = None, best_of: int | None = None,
                 seed: int | None = None, rows: int = 3, cols: int = 3, k: int | None = None,
                 db: str | None = None, names: Sequence[str] = (), scores: bool = True) -> None:
        self.opponent = opponent
        self.first = first
        self.best_of = best_of
        self.seed = seed
        self.rows, self.cols, self.k = rows, cols, k
        self.db = db
        self.names = list(names)
        self.scores = scores


def _whole(text: str, flag: str, what: str, low: int | None = None, high: int | None = None) -> int:
    cleaned = text.strip()
    digits = cleaned[1:] if cleaned[:1] in "+-" else cleaned
    if not (digits.isascii() and digits.isdigit() and len(digits) <= 18):
        raise NoughtsError(f"{flag} takes {what}, not {shown(text)}")
    value = int(cleaned)
    if (low is not None and value < low) or (high is not None and value > high):
        raise NoughtsError(f"{flag} takes {what}, not {value}")
    return value


def _opponent(text: str) -> str:
    """A player's registry name, or PERSON; raises a NoughtsError that lists the choices."""
    from noughts import players

    name = text.strip().lower()
    if name in _PERSON_WORDS:
        return PERSON
    if name in players.names():
        return name
    raise NoughtsError(f"there is no opponent called {shown(text)}; choose one of: "
                       f"{', '.join(players.names())}, or {PERSON} (another person at this keyboard)")

def play_options(*, opponent: str | None = None, first: str | None = None, mark: str | None = None,
                 best_of: str | None = None, seed: str | None = None, size: str | None = None,
                 k: str | None = None, db: str | None = None, names: Sequence[str] | None = None,
                 no_scores: bool = False) -> PlayOptions:
    """Check the flags of `noughts play` (as typed) and turn them into :class:`PlayOptions`.

    X always moves first, so ``--mark X`` is ``--first me`` and ``--mark O`` is
    ``--first computer``; contradicting ``--first`` is an error.

    >>> options = play_options(opponent="Hard", mark="o", size="4x5", k="4")
    >>> options.opponent, options.first, options.rows, options.cols, options.k
    ('hard', 'computer', 4, 5, 4)
    >>> play_options(first="me", mark="O")
    Traceback (most recent call last):
      ...
    noughts.errors.NoughtsError: X always moves first, so --mark O means --first computer, not --first me
    """
    options = PlayOptions()
    if opponent is not None:
        options.opponent = _opponent(opponent)
    if first is not None:
        chosen = _FIRST_WORDS.get(first.strip().lower())
        if chosen is None:
            raise NoughtsError(f"--first takes me, computer, alternate or random, not {shown(first)}")
        options.first = chosen
    if mark is not None:
        side = mark.strip().upper()
        if side not in ("X", "O"):
            raise NoughtsError(f"--mark takes X or O, not {shown(mark)}")
        implied = "me" if side == "X" else "computer"
        if options.first is not None and options.first != implied:
            raise NoughtsError(f"X always moves first, so --mark {side} means --first {implied}, "
                               f"not --first {options.first}")
        options.first = implied
    if best_of is not None:
        options.best_of = _whole(best_of, "--best-of", "a number of games from 1 to 99, like 3", 1, 99)
    if seed is not None:
        options.seed = _whole(seed, "--seed", "a whole number")
    if size is not None:
        text = size.strip().lower().replace("×", "x")
        rows_text, cross, cols_text = text.partition("x")
        what = "a board size like 4 (4×4) or 4x5 (4 rows, 5 columns)"
        options.rows = _whole(rows_text, "--size", what, 1)
        options.cols = _whole(cols_text, "--size", what, 1) if cross else options.rows
    if k is not None:
        options.k = _whole(k, "--k", "the number of marks in a row that wins, like 3", 1)
    Board(options.rows, options.cols, options.k)  # a bad shape is refused now, with the reason
    options.db = db
    given = list(names or ())
    if len(given) > 2:
        raise NoughtsError("--name can be given twice at most: your name, then the other person's")
    options.names = [check_name(n, "a name") for n in given]
    if len(options.names) == 2 and options.names[0].lower() == options.names[1].lower():
        raise NoughtsError("the two people need different names")
    options.scores = not no_scores
    return options


# the session ---------------------------------------------------------------------------------

class _Stop(Exception):
    """The person left: end of input or 'quit'."""


class _Abandoned(Exception):
    """The game cannot go on (the computer player cannot play this board)."""


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
        self.computer: Player | None = None
        self.first_rng: random.Random | None = None
        self.games_started = 0  # games begun in this session: 'alternate' counts them
        self.in_game = False
        # the session's tally, from the first person's side: wins, losses, draws
        self.tally = [0, 0, 0]

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

    @property
    def two_people(self) -> bool:
        return self.options.opponent == PERSON

    def other_name(self) -> str:
        """The second person's name, or the computer player's."""
        if not self.two_people:
            return f"the computer ({self.options.opponent})"
        return self.names[1]

    # the whole run
    def run(self) -> int:
        try:
            try:
                return self._run()
            except _Stop:
                self.say("\nGoodbye." if not self.in_game else "\nGoodbye. (The unfinished game is not counted.)")
                return 0
            except _Abandoned:
                return EXIT_USAGE
            except KeyboardInterrupt:
                note = " The unfinished game is not counted." if self.in_game else ""
                self.say(f"\nInterrupted.{note}")
                return EXIT_INTERRUPTED
        finally:
            if self.store is not None:
                self.store.close()

    def _run(self) -> int:
        options = self.options
        asked = options.opponent is None or options.first is None
        if asked:
            self.say(self.bold("noughts: noughts and crosses (tic-tac-toe).")
                     + " Press Enter to take the choice in [brackets].")
            self.menu()
        self.name_people()
        self.start_up()
        self.say()
        self.say(_instructions(self.start_board()))
        while True:
            self.match()
            answer = self.play_again()
            if answer == "menu":
                opponent = self.options.opponent
                self.menu(again=True)
                if self.options.opponent != opponent:
                    self.tally = [0, 0, 0]  # a tally is against one opponent
                self.name_people()
                self.start_up(store=False)

    def name_people(self) -> None:
        """Names not given: the login name (else You, or Player 1 beside another person), Player 2."""
        if not self.names:
            self.names.append(default_name(self.environ, "Player 1" if self.two_people else "You"))
        if self.two_people and len(self.names) < 2:
            self.names.append("Player 2" if self.names[0].lower() != "player 2" else "Player 1")

    def start_board(self) -> Board:
        return Board(self.options.rows, self.options.cols, self.options.k)

    def start_up(self, store: bool = True) -> None:
        """Open the score store and print its notices (after the menu, so the first prompt comes fast)."""
        self.computer = None  # a new opponent may have been chosen: loaded at its first move
        if store and self.store is None and self.options.scores:
            from noughts.store import open_store

            self.store = open_store(self.options.db, environ=self.environ)
            for notice in self.store.notices:
                self.say(" ".join(notice.split()))

    def computer_player(self) -> Player:
        """The computer opponent, loaded when it first moves (the solver takes a moment to import)."""
        if self.computer is None:
            import random

            from noughts import players

            assert self.options.opponent is not None
            self.computer = players.get(self.options.opponent, rng=random.Random(self.options.seed))
        return self.computer

    # the menu
    def menu(self, again: bool = False) -> None:
        from noughts import players

        options = self.options
        if options.opponent is None or again:
            names = [*players.names(), PERSON]
            default = options.opponent or DEFAULT_OPPONENT
            self.say()
            self.say("Who would you like to play?")
            width = max(len(n) for n in names)
            for number, name in enumerate(names, 1):
                about = ("Another person at this keyboard: you take turns" if name == PERSON
                         else players.describe(name))
                self.say(f"  {number:>2}  {name:<{width}}  {about}")
            while True:
                answer = self.ask(f"Opponent [{default}]: ")
                if answer is _TOO_LONG:
                    self.say("That line is far too long. Type a number or a name from the list.")
                    continue
                if answer.lower() in _QUIT:
                    raise _Stop
                if not answer:
                    options.opponent = default
                    break
                if answer.isascii() and answer.isdigit() and 1 <= int(answer) <= len(names):
                    options.opponent = names[int(answer) - 1]
                    break
                try:
                    options.opponent = _opponent(answer)
                    break
                except NoughtsError:
                    self.say(f"{shown(answer)} is not on the list: type a number from 1 to {len(names)} "
                             f"or a name, or press Enter for {default}.")
        if self.two_people and (len(self.names) < 2 or again):
            self.say()
            first_default = self.names[0] if self.names else default_name(self.environ, "Player 1")
            self.names[:1] = [self.ask_name("First player's name", first_default)]
            default_other = self.names[1] if len(self.names) > 1 else "Player 2"
            if default_other.lower() == self.names[0].lower():
                default_other = "Player 2" if self.names[0].lower() != "player 2" else "Player 1"
            second = self.ask_name("Second player's name", default_other, avoid=self.names[0])
            self.names[1:] = [second]
        self.name_people()
        if options.first is None or again:
            default = options.first or DEFAULT_FIRST
            me, other = self.names[0], self.names[1] if self.two_people else "the computer"
            labels = {
                "me": (f"{me} is X" if self.two_people else "you are X", me if self.two_people else "me"),
                "computer": (f"{other} is X" if self.two_people else "you are O",
                             other if self.two_people else "computer"),
                "alternate": (f"swap every game, {me if self.two_people else 'you'} first", "alternate"),
                "random": ("a coin toss before each game", "random"),
            }
            self.say()
            self.say("Who moves first? X always moves first, O second.")
            width = max(len(label) for _, label in labels.values())
            for number, choice in enumerate(FIRST_CHOICES, 1):
                about, label = labels[choice]
                self.say(f"  {number:>2}  {label:<{width}}  {about}")
            while True:
                answer = self.ask(f"First [{labels[default][1]}]: ")
                if answer is _TOO_LONG:
                    self.say("That line is far too long. Type a number from 1 to 4.")
                    continue
                word = answer.lower()
                if word in _QUIT:
                    raise _Stop
                if not word:
                    options.first = default
                    break
                if word in ("1", "2", "3", "4"):
                    options.first = FIRST_CHOICES[int(word) - 1]
                    break
                by_label = {label.lower(): choice for choice, (_, label) in labels.items()}
                chosen = _FIRST_WORDS.get(word) or by_label.get(word)
                if chosen is not None:
                    options.first = chosen
                    break
                self.say(f"{shown(answer)} is not on the list: type a number from 1 to 4, "
                         f"or press Enter for {labels[default][1]}.")

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
    def match(self) -> None:
        """Play one game, or a best-of-N match."""
        best_of = self.options.best_of
        score = [0, 0, 0]  # this match: first person's wins, other side's wins, draws
        played = 0
        while True:
            played += 1
            score[self.game(played if best_of else None)] += 1
            if best_of is None:
                return None
            me, other = (self.names[0], self.names[1]) if self.two_people else ("you", "the computer")
            line = f"Match, best of {best_of}: {me} {score[0]}, {other} {score[1]}"
            if score[2]:
                line += f", {plural(score[2], 'draw')}"
            need = best_of // 2 + 1
            if score[0] >= need or score[1] >= need or played >= best_of:
                self.say(line + ".")
                a, b = score[0], score[1]
                if a == b:
                    self.say(self.bold(f"The match is drawn {a}{self.dash}{b}."))
                elif a > b:
                    winner = self.names[0] if self.two_people else "You"
                    self.say(self.bold(f"{winner} win{'s' if self.two_people else ''} the match {a}{self.dash}{b}!"))
                else:
                    winner = self.names[1] if self.two_people else f"The computer ({self.options.opponent})"
                    self.say(self.bold(f"{winner} wins the match {b}{self.dash}{a}."))
                return None
            self.say(line + f"; game {played + 1} next.")

    def play_again(self) -> str:
        what = "another match" if self.options.best_of else "again"
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

    def first_mover_is_me(self) -> bool:
        first = self.options.first
        if first == "me":
            return True
        if first == "computer":
            return False
        if first == "alternate":
            return self.games_started % 2 == 0
        if self.first_rng is None:
            import random

            # the coin has a stream of its own, so tossing it cannot shift the computer's choices
            seed = self.options.seed
            self.first_rng = random.Random(None if seed is None else f"first {seed}")
        return self.first_rng.random() < 0.5

    def game(self, number_in_match: int | None) -> int:
        """Play one game; returns 0 (first person won), 1 (other side won), 2 (draw), or raises _Stop."""
        me_first = self.first_mover_is_me()
        self.games_started += 1
        from noughts.game import Game

        start = self.start_board()
        game = Game(start)
        mine = "X" if me_first else "O"  # the first person's mark
        other_mark = "O" if me_first else "X"
        name_of = {mine: self.names[0], other_mark: self.other_name()}
        label = f"Game {self.games_started}"
        if number_in_match is not None:
            label = f"Game {number_in_match} of the match (best of {self.options.best_of})"
        if self.two_people:
            intro = f"{name_of['X']} is X and moves first; {name_of['O']} is O."
        elif me_first:
            intro = f"you are X and move first; {self.other_name()} is O."
        else:
            intro = f"{self.other_name()} is X and moves first; you are O."
        self.say()
        self.say(self.bold(f"{label}: {intro}"))
        self.say()
        self.say(render(start, colour=self.colour))
        self.in_game = True
        while not game.board.is_over:
            board = game.board
            mark = board.turn
            assert mark is not None
            if not self.two_people and mark == other_mark:
                try:
                    cell = game.play_computer(self.computer_player())
                except NoughtsError as error:  # e.g. a 3×3-only player on a bigger board
                    self.say(f"The computer cannot go on: {' '.join(str(error).split())}.")
                    self.say("The game is abandoned and not counted.")
                    self.in_game = False
                    raise _Abandoned from None
                self.say(f"Computer move: {board.cell_name(cell)}")
                self.show(game)
                continue
            prompt = f"Your move ({mark}): " if not self.two_people else f"{name_of[mark]}'s move ({mark}): "
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
                self.say(_instructions(start))
                self.say()
                self.show(game)
            elif word in _HINT:
                self.say(self.hint(board))
            elif word in _UNDO:
                self.undo(game, mark)
            else:
                try:
                    after = game.play(answer)
                except NoughtsError as error:  # the message names the cell: "z9 is off the board: ..."
                    self.say(f"{error}")
                    continue
                if self.two_people or after.is_over:
                    self.show(game)
                # otherwise the computer answers at once and one redraw shows both moves
        self.in_game = False
        return self.finish(game, mine, name_of)

    def show(self, game: Game) -> None:
        board = game.board
        self.say(render(board, last=game.moves[-1] if game.moves else None, line=board.winning_line,
                        colour=self.colour))

    def undo(self, game: Game, mark: str) -> None:
        # take back moves until it is again the same side's turn with one of its own moves gone
        count = 1 if self.two_people else 2
        if len(game.moves) < count:
            self.say("There is no move to take back yet." if self.two_people
                     else "There is no move of yours to take back.")
            return
        taken = [game.board.cell_name(c) for c in reversed(game.undo(count))]
        if self.two_people:
            self.say(f"Took back {'O' if mark == 'X' else 'X'}'s move {taken[0]}.")
        else:
            self.say(f"Took back your move {taken[0]} and the computer's reply {taken[1]}.")
        self.show(game)

    def hint(self, board: Board) -> str:
        import time

        from noughts import solver
        from noughts.errors import BudgetExceeded

        try:
            analysis = solver.analyse(board, deadline=time.monotonic() + 3)
        except BudgetExceeded:
            return "No hint: this board is too big to work out in a few seconds."
        best = [m.index for m in analysis.moves if (m.value, m.plies) == (analysis.value, analysis.plies)]
        cell = board.cell_name(best[0])
        plies = analysis.plies
        if analysis.value > 0:
            outcome = ("wins at once" if plies == 1
                       else f"wins in {plies} (moves by both sides, this one included)")
        elif analysis.value == 0:
            outcome = "draws with best play on both sides"
        else:
            outcome = f"every move loses against best play; this one holds out longest (loses in {plies})"
        also = [board.cell_name(c) for c in best[1:5]]
        more = f" Just as good: {', '.join(also)}." if also else ""
        return f"Hint: {cell} {outcome}.{more}" if analysis.value >= 0 else f"Hint: {cell}: {outcome}.{more}"

    def finish(self, game: Game, mine: str, name_of: dict[str, str]) -> int:
        """Announce the result, record the game, update the tally; 0, 1 or 2 from the first person's side."""
        board = game.board
        winner = board.winner
        if winner is not None:
            assert board.winning_line is not None
            along = f"{winner} wins along {describe_line(board, board.winning_line, self.dash)}"
            if self.two_people:
                who = f"{name_of[winner]} wins!"
            else:
                who = "you win!" if winner == mine else f"{self.other_name()} wins."
            self.say(self.bold(f"{along}: {who}"))
        else:
            self.say(self.bold("A draw: the board is full and nobody has a line."))
        outcome = 2 if winner is None else 0 if winner == mine else 1
        self.tally[outcome] += 1
        self.record(game, mine)
        wins, losses, draws = self.tally
        if self.two_people:
            self.say(f"This session: {self.names[0]} {wins}, {self.names[1]} {losses}, "
                     f"{plural(draws, 'draw')}.")
        else:
            self.say(f"This session: you have {plural(wins, 'win')}, {plural(losses, 'loss', 'losses')} "
                     f"and {plural(draws, 'draw')}.")
        return outcome

    def record(self, game: Game, mine: str) -> None:
        if self.store is None or not self.store.enabled:
            return
        from noughts.store import Participant

        me = Participant.human(self.names[0])
        other = (Participant.human(self.names[1]) if self.two_people
                 else Participant.computer(str(self.options.opponent)))
        x, o = (me, other) if mine == "X" else (other, me)
        try:
            recorded = self.store.record(game, x, o)
        except NoughtsError as error:  # disk full, locked for long: say so and play on
            self.say(" ".join(str(error).split()))
            return
        self.say(recorded.summary())


def play(options: PlayOptions, stdin: IO[bytes] | None = None, stdout: IO[str] | None = None,
         environ: Mapping[str, str] | None = None) -> int:
    """Run `noughts play`: returns 0 when the person stops (or input ends), 130 on Ctrl-C."""
    session = _Session(options, stdin if stdin is not None else sys.stdin.buffer,
                       stdout if stdout is not None else sys.stdout,
                       os.environ if environ is None else environ)
    return session.run()
