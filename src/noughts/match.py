"""A match: two seats, the games between them, and the rules every front end shares.

The terminal, the window, the web rooms and the LED panel all drive a :class:`Match`: it
decides who starts each game, checks whose turn it is, undoes and hints by one rule, asks the
computer for its move (the caller runs that on whatever thread or task it likes), keeps the
tally and the best-of score, records each finished game once, and turns into a dict and back.
Seat 0 is a person; seat 1 is another person or a computer player.

>>> match = Match("arduino", names=["Ann"], first="alternate", best_of=3, seed=1)
>>> game = match.new_game()
>>> match.mark_of(0), match.seat_to_move
('X', 0)
>>> _ = match.play("b2")
>>> job = match.computer_job()           # the front end runs job.run() off its event loop
>>> match.apply(job, job.run())
True
>>> while not match.match_over:
...     if match.game_over:
...         _ = match.new_game()
...     elif match.computer_to_move:
...         _ = match.apply_now()
...     else:
...         _ = match.play(match.game.board.legal_moves[0])
>>> match.score, match.tally_text()
([0, 2, 0], 'Ann: 0 · Arduino rules: 2 · draws: 0')
>>> match.match_sentence()
'Arduino rules wins the match 2–0 (best of 3).'
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from noughts import players, text
from noughts.board import Board, Geometry, Result
from noughts.errors import GameOver, NotYourTurn, NoughtsError, UnsupportedBoardError
from noughts.game import Game, GameEvent

if TYPE_CHECKING:
    from collections.abc import Mapping

    from noughts.store import Participant, Recorded

__all__ = [
    "DEFAULT_FIRST", "DEFAULT_OPPONENT", "FIRST_RULES", "PERSON", "ComputerMove", "GameKeeper", "Match", "MatchEvent",
    "PlayOptionError", "PlayOptions", "Seat", "first_rule", "opponent_name", "play_options",
]

PERSON = "person"  # the opponent that is another person
DEFAULT_OPPONENT = players.DEFAULT  # on 3×3; players.default_for(board) says it for every board
DEFAULT_FIRST = "alternate"
MAX_BEST_OF = 99
THINKING_AFTER = 0.3
"""Seconds the computer may take before a front end shows text.THINKING: a quicker reply needs no word."""

# Who plays X (and so moves first) in each game. Seat 0 is "me", seat 1 "computer" (or the
# second person): one vocabulary for every command, page and panel, worded in noughts.text.
FIRST_RULES: dict[str, str] = {rule: about for rule, _, about in text.first_choices()}
_FIRST_WORDS = {
    "me": "me", "you": "me", "i": "me", "x": "me", "person": "me", "human": "me", "first": "me",
    "computer": "computer", "them": "computer", "other": "computer", "opponent": "computer", "o": "computer",
    "second": "computer", "alternate": "alternate", "alt": "alternate", "swap": "alternate", "turns": "alternate",
    "loser": "loser", "loser-starts": "loser", "random": "random", "coin": "random",
}
_PERSON_WORDS = frozenset({PERSON, "human", "friend", "people", "two", "2"})


def first_rule(word: str) -> str:
    """The rule for who starts, from any of its names; a NoughtsError lists them.

    >>> first_rule("X"), first_rule("Loser")
    ('me', 'loser')
    """
    rule = _FIRST_WORDS.get(word.strip().lower()) if isinstance(word, str) else None
    if rule is None:
        raise NoughtsError(f"who starts can be {', '.join(FIRST_RULES)}, not {text.shown(str(word))}")
    return rule


def opponent_name(word: str) -> str:
    """A computer player's registry name, or PERSON; a NoughtsError lists the choices."""
    name = word.strip().lower() if isinstance(word, str) else ""
    if name in _PERSON_WORDS:
        return PERSON
    try:
        return players.canonical(name)
    except NoughtsError:
        raise NoughtsError(f"there is no opponent called {text.shown(str(word))}; choose one of: "
                           f"{', '.join(players.names())}, or {PERSON} (another person)") from None


# the choices of a match, checked for every front end ---------------------------------------------

class PlayOptionError(NoughtsError):
    """A choice of how to play that cannot be used, worded without any front end's words.

    ``setting`` names the choice (``"opponent"``, ``"first"``, ``"mark"``, ``"best_of"``, ``"seed"``,
    ``"size"``, ``"k"``, ``"names"``); ``shown`` is the value as a sentence quotes it, ``reason`` what
    the value's own reader said, ``against`` the other setting (and its value) it contradicts, and
    ``needed`` what it would have to be instead (the mark's rule of who starts; the most names). A
    front end that names its settings differently (the command's ``--best-of``) words the message
    from these.
    """

    def __init__(self, message: str, *, setting: str, shown: str | None = None, reason: str | None = None,
                 against: tuple[str, str] | None = None, needed: str | None = None) -> None:
        super().__init__(message)
        self.setting = setting
        self.shown = shown
        self.reason = reason
        self.against = against
        self.needed = needed


class PlayOptions:
    """Every choice of how to play, checked; ``None`` for a choice the menu should ask."""

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


def _whole(typed: str, setting: str, sentence: str, low: int | None = None, high: int | None = None) -> int:
    """``typed`` as a whole number within the bounds; else a PlayOptionError, ``sentence`` filled with it."""
    cleaned = typed.strip()
    digits = cleaned[1:] if cleaned[:1] in "+-" else cleaned
    if not (digits.isascii() and digits.isdigit() and len(digits) <= 18):
        raise PlayOptionError(sentence.format(text.shown(typed)), setting=setting, shown=text.shown(typed))
    value = int(cleaned)
    if (low is not None and value < low) or (high is not None and value > high):
        raise PlayOptionError(sentence.format(value), setting=setting, shown=str(value))
    return value


def play_options(*, opponent: str | None = None, first: str | None = None, mark: str | None = None,
                 best_of: str | None = None, seed: str | None = None, size: str | None = None,
                 k: str | None = None, db: str | None = None, names: Sequence[str] | None = None,
                 no_scores: bool = False) -> PlayOptions:
    """Check the choices of how to play (as typed) and turn them into :class:`PlayOptions`.

    X always moves first, so the mark X means ``first="me"`` and O means ``first="computer"``;
    contradicting ``first`` is an error. Every refusal is a :class:`PlayOptionError`.

    >>> options = play_options(opponent="Hard", mark="o", size="4x5", k="4")
    >>> options.opponent, options.first, options.rows, options.cols, options.k
    ('hard', 'computer', 4, 5, 4)
    >>> options = play_options(size="7x7k5")
    >>> options.rows, options.cols, options.k
    (7, 7, 5)
    >>> play_options(first="me", mark="O")
    Traceback (most recent call last):
      ...
    noughts.match.PlayOptionError: X always moves first, so playing O means 'Opponent first', not 'You first'
    >>> play_options(best_of="0")
    Traceback (most recent call last):
      ...
    noughts.match.PlayOptionError: a match is best of 1 to 99 games, like 3, not 0
    """
    options = PlayOptions()
    if opponent is not None:
        try:
            options.opponent = opponent_name(opponent)
        except NoughtsError as error:
            raise PlayOptionError(str(error), setting="opponent", shown=text.shown(opponent)) from None
    if first is not None:
        try:
            options.first = first_rule(first)
        except NoughtsError as error:
            raise PlayOptionError(str(error), setting="first", shown=text.shown(first)) from None
    if mark is not None:
        side = mark.strip().upper()
        if side not in ("X", "O"):
            raise PlayOptionError(f"a mark is X or O, not {text.shown(mark)}", setting="mark", shown=text.shown(mark))
        implied = "me" if side == "X" else "computer"
        if options.first is not None and options.first != implied:
            raise PlayOptionError(f"X always moves first, so playing {side} means {text.first_label(implied)!r}, "
                                  f"not {text.first_label(options.first)!r}",
                                  setting="first", shown=options.first, against=("mark", side), needed=implied)
        options.first = implied
    if best_of is not None:
        options.best_of = _whole(best_of, "best_of", f"a match is best of 1 to {MAX_BEST_OF} games, like 3, not {{}}",
                                 1, MAX_BEST_OF)
    if seed is not None:
        options.seed = _whole(seed, "seed", "a seed is a whole number, not {}")
    if size is not None:
        try:
            shape = Geometry.parse(size)
        except UnsupportedBoardError as error:
            raise PlayOptionError(str(error), setting="size", shown=text.shown(size), reason=str(error)) from None
        options.rows, options.cols = shape.rows, shape.cols
        if "k" in size.lower():
            options.k = shape.k
    if k is not None:
        k_given = _whole(k, "k", "the marks in a row that win are a whole number from 1, like 3, not {}", 1)
        if options.k is not None and options.k != k_given:
            raise PlayOptionError(f"the board {str(size).strip()} has {options.k} in a row, not {k_given}",
                                  setting="k", shown=str(k_given), against=("size", str(options.k)))
        options.k = k_given
    try:
        Board(options.rows, options.cols, options.k)  # a bad shape is refused now, with the reason
    except NoughtsError as error:
        raise PlayOptionError(str(error), setting="k" if k is not None else "size") from None
    options.db = db
    given = list(names or ())
    if len(given) > 2:
        raise PlayOptionError("a match has two names at most: yours, then the other person's",
                              setting="names", shown=str(len(given)), needed="2")
    try:
        options.names = [text.check_name(n, "a name") for n in given]
    except NoughtsError as error:
        raise PlayOptionError(str(error), setting="names") from None
    if len(options.names) == 2 and options.names[0].lower() == options.names[1].lower():
        raise PlayOptionError("the two people need different names", setting="names")
    options.scores = not no_scores
    return options


@dataclass
class Seat:
    """Who sits in a seat: a person (``player`` is None) or a computer player by registry name."""

    name: str
    player: str | None = None

    @property
    def is_person(self) -> bool:
        return self.player is None


@dataclass(frozen=True)
class ComputerMove:
    """The computer's turn as a job: plain data, run on any thread, applied with :meth:`Match.apply`."""

    game_number: int
    ply: int
    board: Board
    player: str
    seed: str

    def run(self) -> int:
        # A generator of its own per move: the same match, game and position always give the
        # same move, whichever process or thread runs it, and undoing then replaying repeats it.
        rng = random.Random(f"{self.seed}/{self.game_number}/{self.ply}")
        return players.get(self.player, rng).choose(self.board)


@dataclass(frozen=True)
class MatchEvent:
    """What changed: ``start`` (a new game), ``move``, ``undo``, ``end`` (a game finished and was
    counted), ``abandon`` (the game was given up, not counted). ``text`` is the sentence to show."""

    kind: Literal["start", "move", "undo", "end", "abandon"]
    text: str = ""
    cell: int | None = None
    game: GameEvent | None = None


MatchListener = Callable[[MatchEvent], object]


class GameKeeper(Protocol):
    """Where finished games go: a :class:`~noughts.store.Store`, or anything that records like one."""

    @property
    def enabled(self) -> bool: ...

    def record(self, game: Game, x: Participant, o: Participant, *, game_key: str | None = None) -> Recorded: ...


@dataclass
class _Counts:
    tally: list[int] = field(default_factory=lambda: [0, 0, 0])  # seat 0 wins, seat 1 wins, draws
    score: list[int] = field(default_factory=lambda: [0, 0, 0])  # the same, this best-of match only


class Match:
    """Games between seat 0 (a person) and seat 1 (a person or a computer player)."""

    def __init__(self, opponent: str = DEFAULT_OPPONENT, *, names: Sequence[str] = (), first: str = DEFAULT_FIRST,
                 rows: int = 3, cols: int = 3, k: int | None = None, best_of: int | None = None,
                 seed: int | str | None = None, store: GameKeeper | None = None,
                 environ: Mapping[str, str] | None = None) -> None:
        opponent = opponent_name(opponent)
        self.start = Board(rows, cols, k)
        if opponent != PERSON:
            reason = players.unable(opponent, self.start)
            if reason is not None:
                able = ", ".join(players.able(self.start))
                raise NoughtsError(f"{players.label(opponent)} cannot play {_board_words(self.start)}: {reason}. "
                                   f"Opponents that can: {able or 'none'}, or {PERSON}")
        if best_of is not None and not 1 <= best_of <= MAX_BEST_OF:
            raise NoughtsError(f"a match is best of 1 to {MAX_BEST_OF} games, not {best_of}")
        self.first = first_rule(first)
        self.best_of = best_of
        self.seed = str(seed) if seed is not None else f"{random.SystemRandom().getrandbits(64):016x}"
        # names this match's games in the store: a seed may be reused, a session never is
        self.session = f"{random.SystemRandom().getrandbits(64):016x}"
        self.seats = _seats(opponent, [text.check_name(n, "a name") for n in names], environ)
        self.store = store
        self.games = 0  # games begun
        self.game: Game | None = None
        self.x_seat = 0
        self.abandoned = False
        self.counts = _Counts()
        self.last_winner: int | None = None  # the seat that won the last finished game; None: a draw
        self.recorded: Recorded | None = None
        self.record_problem: str | None = None
        self.kept = False  # the finished game went to the store (or was tried): never again
        self._listeners: list[MatchListener] = []

    # who is who -------------------------------------------------------------------------------
    @property
    def opponent(self) -> str:
        """The second seat's player (registry name), or PERSON."""
        return self.seats[1].player or PERSON

    @property
    def two_people(self) -> bool:
        return self.seats[1].is_person

    def mark_of(self, seat: int) -> str:
        return "X" if seat == self.x_seat else "O"

    def seat_of(self, mark: str) -> int:
        return self.x_seat if mark == "X" else 1 - self.x_seat

    def name_of(self, seat: int) -> str:
        return self.seats[seat].name

    def join(self, seat: int, name: str) -> str:
        """A person takes ``seat`` under ``name`` (checked); returns the name as kept.

        The two people's tallies are kept by name, so a name the other seat has gets " (2)".
        """
        if seat not in (0, 1) or not self.seats[seat].is_person:
            raise NoughtsError(f"seat {seat} is not a person's seat")
        chosen = text.check_name(name, "A name")
        if chosen.casefold() == self.name_of(1 - seat).casefold():
            chosen = text.check_name(f"{chosen[:text.MAX_NAME - 4].rstrip()} (2)", "A name")
        self.seats[seat].name = chosen
        if self.game is not None:  # the game in play began before this person sat down
            if self.mark_of(seat) == "X":
                self.game.x_name = chosen
            else:
                self.game.o_name = chosen
        return chosen

    @property
    def tally(self) -> list[int]:
        return self.counts.tally

    @property
    def score(self) -> list[int]:
        return self.counts.score

    # the game in play -------------------------------------------------------------------------
    @property
    def board(self) -> Board:
        return self.game.board if self.game is not None else self.start

    @property
    def game_over(self) -> bool:
        """No game is going on: none started yet, or the last one finished or was abandoned."""
        return self.game is None or self.game.result is not None or self.abandoned

    @property
    def result(self) -> Result | None:
        """How the game in play ended (``reason`` "abandoned" when given up), or None."""
        if self.game is not None and self.abandoned and self.game.board.result is None:
            return Result(None, None, "abandoned")
        return self.game.board.result if self.game is not None else None

    @property
    def seat_to_move(self) -> int | None:
        if self.game_over:
            return None
        turn = self.board.turn
        return None if turn is None else self.seat_of(turn)

    @property
    def computer_to_move(self) -> bool:
        seat = self.seat_to_move
        return seat is not None and not self.seats[seat].is_person

    @property
    def match_over(self) -> bool:
        """A best-of match is decided (or all its games played); without best-of, after every game."""
        if not self.game_over or self.games == 0:
            return False
        if self.best_of is None:
            return True
        need = self.best_of // 2 + 1
        wins, losses, draws = self.counts.score
        return wins >= need or losses >= need or wins + losses + draws >= self.best_of

    @property
    def game_in_match(self) -> int:
        """The number of the current game within its best-of match (1 for the first)."""
        return sum(self.counts.score) + (0 if self.game_over else 1)

    # listeners -------------------------------------------------------------------------------
    def add_listener(self, listener: MatchListener) -> MatchListener:
        self._listeners.append(listener)
        return listener

    def remove_listener(self, listener: MatchListener) -> None:
        self._listeners.remove(listener)

    def _tell(self, event: MatchEvent) -> None:
        for listener in list(self._listeners):
            listener(event)

    # starting --------------------------------------------------------------------------------
    def _x_seat_for_next_game(self) -> int:
        rule, played = self.first, self.games
        if rule == "me" or (played == 0 and rule in ("alternate", "loser")):
            return 0
        if rule == "computer":
            return 1
        if rule == "alternate" or (rule == "loser" and self.last_winner is None):
            return 1 - self.x_seat
        if rule == "loser":
            return 1 - (self.last_winner or 0)
        coin = random.Random(f"{self.seed}/first/{played + 1}")  # a stream apart from the players'
        return 0 if coin.random() < 0.5 else 1

    def new_game(self) -> Game:
        """Start the next game; an unfinished one is dropped uncounted, a decided match starts anew."""
        self.abandon_for_new_game()
        if self.best_of is not None and self.match_over:
            self.counts.score = [0, 0, 0]
        self.x_seat = self._x_seat_for_next_game()
        self.games += 1
        self.abandoned = False
        self.recorded, self.record_problem, self.kept = None, None, False
        x, o = self.seats[self.x_seat], self.seats[1 - self.x_seat]
        self.game = Game(self.start, x_name=x.name, o_name=o.name)
        self.game.add_listener(self._on_game_event)
        self._tell(MatchEvent("start", self.intro()))
        return self.game

    def intro(self) -> str:
        """Who plays what in the game in play: 'Ann is X and moves first; Medium is O.'"""
        x, o = self.name_of(self.x_seat), self.name_of(1 - self.x_seat)
        if x == "You":
            return f"You are X and move first; {o} is O."
        return f"{x} is X and moves first; you are O." if o == "You" else f"{x} is X and moves first; {o} is O."

    def abandon_for_new_game(self) -> None:
        """End an unfinished game, uncounted, because the next one begins."""
        if not self.game_over:
            self.abandoned = True
            self._tell(MatchEvent("abandon", text.NEW_GAME_ABANDONS))

    def abandon(self, why: str = "The game was given up") -> None:
        """End the game in play without counting it; ``why`` is said first ('You stopped')."""
        if self.game_over:
            return
        self.abandoned = True
        self._tell(MatchEvent("abandon", text.not_counted(why)))

    # moves -----------------------------------------------------------------------------------
    def _need_game(self) -> Game:
        if self.game is None:
            raise GameOver(text.NO_GAME)
        if self.game_over:
            raise GameOver(text.GAME_OVER)
        return self.game

    def play(self, cell: int | str, seat: int | None = None) -> Board:
        """A person's move (cell index or name), for ``seat`` if given (checked to be its turn)."""
        game = self._need_game()
        to_move = self.seat_to_move
        assert to_move is not None
        if not self.seats[to_move].is_person:
            raise NotYourTurn(text.wait_for(self.name_of(to_move)))
        if seat is not None and seat != to_move:
            raise NotYourTurn(text.not_your_turn(self.name_of(to_move)))
        return game.play(cell)

    def computer_job(self) -> ComputerMove | None:
        """The computer's move to work out now, or None when it is not the computer's turn."""
        if not self.computer_to_move:
            return None
        seat = self.seat_to_move
        assert seat is not None and self.game is not None
        player = self.seats[seat].player
        assert player is not None
        return ComputerMove(self.games, len(self.game.moves), self.board, player, f"{self.seed}/{seat}")

    def apply(self, job: ComputerMove, cell: int) -> bool:
        """Play the answer to ``job`` if the game is still where it was asked; else drop it (False)."""
        if (self.game is None or self.game_over or job.game_number != self.games
                or job.board != self.game.board or not self.computer_to_move):
            return False  # asked about another game or position (a move was undone and replaced)
        self.game.play(cell)
        return True

    def apply_now(self) -> int:
        """Work out and play the computer's move on this thread; returns the cell."""
        job = self.computer_job()
        if job is None:
            raise NoughtsError("It is not the computer's turn.")
        cell = job.run()
        self.apply(job, cell)
        return cell

    # The one rule for taking back and hints, in every front end. A person takes back their own
    # last move, with the computer's reply to it; ``seat`` None means everyone at one screen,
    # where either person's last move is theirs. A hint is for the person whose turn it is.
    def undo_refusal(self, seat: int | None = None) -> str | None:
        """Why ``seat`` cannot take back a move now (None: it can)."""
        if self.game is None or self.game_over:
            return text.NO_GAME if self.game is None else text.GAME_OVER
        if len(self.game.moves) < self._undo_count():
            return text.NOTHING_TO_UNDO_TWO if self.two_people and seat is None else text.NOTHING_TO_UNDO
        if seat is not None and self.two_people and self.seat_of(self.game.positions[-2].turn or "X") != seat:
            return text.NOT_YOURS_TO_UNDO
        return None

    def can_undo(self, seat: int | None = None) -> bool:
        return self.undo_refusal(seat) is None

    def hint_refusal(self, seat: int | None = None) -> str | None:
        """Why ``seat`` cannot have a hint now (None: it can)."""
        if self.game is None or self.game_over:
            return text.NO_GAME if self.game is None else text.GAME_OVER
        to_move = self.seat_to_move
        if to_move is None or not self.seats[to_move].is_person or (seat is not None and seat != to_move):
            return text.HINT_AT_YOUR_MOVE
        return None

    def _undo_count(self) -> int:
        # Against the computer the person's last move goes with the computer's reply, or alone
        # while the reply is being worked out.
        if self.two_people or self.computer_to_move:
            return 1
        return 2

    def undo(self, seat: int | None = None) -> tuple[int, ...]:
        """Take back moves by the rule above; returns the cells, last played first."""
        game = self._need_game()
        refusal = self.undo_refusal(seat)
        if refusal is not None:
            raise NoughtsError(refusal)
        count = self._undo_count()
        movers = [self._whose(self.seat_of(game.positions[-1 - i].turn or "X")) for i in range(1, count + 1)]
        taken = game.undo(count)
        names = [game.start.cell_name(c) for c in taken]
        if count == 1:
            sentence = f"Took back {movers[0]} move {names[0]}."
        else:
            sentence = f"Took back {movers[1]} move {names[1]} and {movers[0]} reply {names[0]}."
        self._tell(MatchEvent("undo", sentence))
        return taken

    def _whose(self, seat: int) -> str:
        return "your" if seat == 0 and not self.two_people else f"{self.name_of(seat)}'s"

    # the end of a game ---------------------------------------------------------------------------
    def _on_game_event(self, event: GameEvent) -> None:
        if event.kind in ("move", "redo"):
            self._tell(MatchEvent("move", cell=event.cell, game=event))
        elif event.kind == "end":
            self._finish(event)

    def _finish(self, event: GameEvent) -> None:
        winner = None if event.winner is None else self.seat_of(event.winner)
        slot = 2 if winner is None else winner
        self.counts.tally[slot] += 1
        self.counts.score[slot] += 1
        self.last_winner = winner
        self._record()
        self._tell(MatchEvent("end", self.result_sentence(), game=event))

    def _record(self) -> None:
        """Keep the finished game in the store, once."""
        if self.store is None or not self.store.enabled or self.game is None or self.kept:
            return
        self.kept = True
        from noughts.store import Participant

        def participant(seat: Seat) -> Participant:
            return Participant.human(seat.name) if seat.player is None else Participant.computer(seat.player)

        x, o = participant(self.seats[self.x_seat]), participant(self.seats[1 - self.x_seat])
        try:
            # the key makes a retry, or a match resumed from a dict, return the first record
            self.recorded = self.store.record(self.game, x, o, game_key=f"{self.session}/{self.games}")
        except NoughtsError as error:  # disk full, locked for long: say so and play on
            self.record_problem = " ".join(str(error).split())

    def winner_seat(self) -> int | None:
        """The seat that won the game in play (None: not won, or a draw)."""
        winner = self.board.winner
        return None if winner is None else self.seat_of(winner)

    def result_sentence(self, you: int | None = None, dash: str = "–") -> str:
        """The finished game in a sentence; ``you`` is the seat of the person it is said to."""
        if you is None and not self.two_people:
            you = 0
        seat = self.winner_seat()
        name = self.name_of(seat) if seat is not None else ""
        return text.result_sentence(self.board, name, you=None if you is None or seat is None else seat == you,
                                    dash=dash)

    def result_banner(self, you: int | None = None) -> str:
        if you is None and not self.two_people:
            you = 0
        seat = self.winner_seat()
        name = self.name_of(seat) if seat is not None else ""
        return text.result_banner(self.board.winner, name, you=None if you is None or seat is None else seat == you)

    def tally_text(self, score: bool = False) -> str:
        """'Ann: 2 · Medium: 1 · draws: 0' for the session (``score``: for this best-of match)."""
        return text.tally_line(self.name_of(0), self.name_of(1), self.counts.score if score else self.counts.tally)

    def match_sentence(self, dash: str = "–") -> str:
        assert self.best_of is not None
        return text.match_sentence(self.name_of(0), self.name_of(1), self.counts.score, self.best_of, dash=dash)

    def recorded_text(self) -> str:
        """What became of the finished game in the store, for the person ('' when scores are off)."""
        if self.record_problem:
            return self.record_problem
        return self.recorded.summary() if self.recorded is not None else ""

    # hints -----------------------------------------------------------------------------------
    def hint(self, seconds: float = 3.0, seat: int | None = None) -> tuple[int | None, str]:
        """The best move for the side to move and a sentence about it; run it off the event loop."""
        board = self._need_game().board
        refusal = self.hint_refusal(seat)
        if refusal is not None:
            raise NoughtsError(refusal)
        return hint(board, seconds)

    # keeping ---------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Everything needed to carry on elsewhere (JSON-ready); the store is not included."""
        game = self.game
        return {
            "seats": [{"name": s.name, "player": s.player} for s in self.seats],
            "board": {"rows": self.start.rows, "cols": self.start.cols, "k": self.start.k},
            "first": self.first, "best_of": self.best_of, "seed": self.seed, "games": self.games,
            "x_seat": self.x_seat, "moves": list(game.moves) if game is not None else None,
            "abandoned": self.abandoned, "tally": list(self.counts.tally), "score": list(self.counts.score),
            "last_winner": self.last_winner, "kept": self.kept, "session": self.session,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], store: GameKeeper | None = None) -> Match:
        """A match from :meth:`to_dict`; a damaged dict raises NoughtsError."""
        try:
            seats = data["seats"]
            board = data["board"]
            opponent = seats[1]["player"] or PERSON
            match = cls(opponent, names=[seats[0]["name"]] + ([seats[1]["name"]] if opponent == PERSON else []),
                        first=data["first"], rows=int(board["rows"]), cols=int(board["cols"]), k=int(board["k"]),
                        best_of=data["best_of"], seed=str(data["seed"]), store=store)
            match.seats[1].name = str(seats[1]["name"])
            match.games = int(data["games"])
            match.x_seat = int(data["x_seat"])
            match.abandoned = bool(data["abandoned"])
            match.counts = _Counts([int(n) for n in data["tally"]][:3], [int(n) for n in data["score"]][:3])
            match.last_winner = None if data["last_winner"] is None else int(data["last_winner"])
            moves = data["moves"]
            if moves is not None:
                x, o = match.seats[match.x_seat], match.seats[1 - match.x_seat]
                game = Game(match.start, x_name=x.name, o_name=o.name)
                for cell in moves:
                    game.play(int(cell))
                game.add_listener(match._on_game_event)
                match.game = game
            match.kept = bool(data["kept"])
            # a dict from before sessions: its games were keyed by the seed, so a retry still finds them
            match.session = str(data.get("session") or match.seed)
        except (KeyError, IndexError, TypeError, ValueError) as error:
            raise NoughtsError(f"this saved match is damaged ({type(error).__name__}: {error})") from None
        return match


def hint(board: Board, seconds: float = 3.0, nodes: int | None = None) -> tuple[int | None, str]:
    """The best move in ``board`` and a sentence about it, or (None, why there is none).

    The solver stops at ``seconds`` or after ``nodes`` positions, whichever comes first.
    """
    import time

    from noughts import solver
    from noughts.errors import BudgetExceeded

    try:
        analysis = solver.analyse(board, deadline=time.monotonic() + seconds, max_nodes=nodes)
    except BudgetExceeded:
        return None, "No hint: this board is too big to work out in a few seconds."
    best = [m.index for m in analysis.moves if (m.value, m.plies) == (analysis.value, analysis.plies)]
    if not best:
        return None, "No hint: the game is over."
    cell, plies = board.cell_name(best[0]), analysis.plies
    also = [board.cell_name(c) for c in best[1:5]]
    more = f" Just as good: {', '.join(also)}." if also else ""
    if analysis.value > 0:
        outcome = "wins at once" if plies == 1 else f"wins in {plies} (moves by both sides, this one included)"
        return best[0], f"Hint: {cell} {outcome}.{more}"
    if analysis.value == 0:
        return best[0], f"Hint: {cell} draws with best play on both sides.{more}"
    return best[0], (f"Hint: {cell}: every move loses against best play; this one holds out longest "
                     f"(loses in {plies}).{more}")


def _seats(opponent: str, names: list[str], environ: Mapping[str, str] | None) -> tuple[Seat, Seat]:
    """Seat 0 a person (their name, else the login name, else 'You' or 'Player 1'); seat 1 the opponent."""
    two = opponent == PERSON
    first = names[0] if names else text.default_name(environ, "Player 1" if two else "You")
    if not two:
        return Seat(first), Seat(players.label(opponent), opponent)
    second = names[1] if len(names) > 1 else "Player 2"
    if second.casefold() == first.casefold():
        if len(names) > 1:
            raise NoughtsError("the two people need different names")
        second = "Player 1" if first.casefold() == "player 2" else "Player 2"
    return Seat(first), Seat(second)


def _board_words(board: Board) -> str:
    return f"a {board.rows}×{board.cols} board with {board.k} in a row"
