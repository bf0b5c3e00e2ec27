"""The scoring rules and the values a store hands out; pure, standard library only, no SQL.

The scoring is the EV3 robot's (seed 003, ``writeToHighscore``): a win against the ``easy``,
``medium`` or ``hard`` computer player is worth 1, 2 or 3 points; the current run adds them
up and a loss or draw against one of those three sets it back to 0; each difficulty keeps the
best run reached by a win at that difficulty. Like the robot's four-number score file there is
one current run, shared by the three difficulties, but each board keeps its own numbers: a
board is its rows, columns and marks in a row, so a win on a 1×1 board or with one in a row
says nothing about 3×3. Besides the robot's numbers a store keeps a person's wins, losses and
draws against every computer player and the tallies of two-person games by name (over every
board).

Every backend (SQLite now, PostgreSQL later) reads a board's numbers, asks :func:`score_game`
what one finished game changes, and writes that in the game's own transaction:

>>> ann, hard = Participant.human("Ann"), Participant.computer("hard")
>>> change = score_game(ann, hard, "X", BoardScores.empty())
>>> change.counts, change.points, change.after
((('opponents', 'hard', 'wins'),), 3, BoardScores(run=3, high={'easy': 0, 'medium': 0, 'hard': 3}))
>>> score_game(ann, hard, "draw", change.after).after.run
0
>>> change.recorded(7, (4, 4, 4)).summary()
'Saved as game 7 (4×4, 4 in a row). +3 points: your run is 3; hard high score 3 (a new high score!).'
"""

from __future__ import annotations

from noughts.errors import StoreError

TYPE_CHECKING = False  # typing and datetime cost milliseconds; mypy still reads the block
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from datetime import datetime
    from typing import Literal

    from noughts.game import Game

    Shape = tuple[int, int, int]  # a board's rows, columns and marks in a row
    TallyCount = tuple[Literal["opponents", "people"], str, Literal["wins", "losses", "draws"]]

__all__ = [
    "DIFFICULTY_POINTS", "MAX_NAME_CHARS", "STANDARD_BOARD", "BoardScores", "Change", "Participant", "Recorded",
    "Scores", "StoredGame", "Tally", "board_label", "high_scores_shown", "ranked", "replay_scores", "score_game",
]

DIFFICULTY_POINTS = {"easy": 1, "medium": 2, "hard": 3}
MAX_NAME_CHARS = 100
STANDARD_BOARD: Shape = (3, 3, 3)


def board_label(board: Shape) -> str:
    """How a person reads a board: ``'4×4, 4 in a row'``.

    >>> board_label((3, 3, 3)), board_label((1, 1, 1)), board_label((4, 5, 3))
    ('3×3, 3 in a row', '1×1, 1 in a row', '4×5, 3 in a row')
    """
    rows, cols, k = board
    return f"{rows}×{cols}, {k} in a row"


def board_order(board: Shape) -> tuple[bool, Shape]:
    """Sort key: the standard 3×3 board first, then by rows, columns and k."""
    return board != STANDARD_BOARD, board


# values ---------------------------------------------------------------------------------
class _Value:
    """An immutable record with equality and repr from its fields (dataclasses cost ~10 ms to import)."""

    __slots__: tuple[str, ...] = ()

    def __init__(self, *values: object) -> None:
        for name, value in zip(self.__slots__, values, strict=True):
            object.__setattr__(self, name, value)

    def _fields(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={value!r}" for name, value in zip(self.__slots__, self._fields(), strict=True))
        return f"{type(self).__name__}({fields})"


class Participant(_Value):
    """Who played one side: a person (by name) or a computer player (by registry name).

    Any name a person can type is kept exactly (control characters too: showing it safely
    is the display's job), except what no database can hold: NUL and lone surrogates.
    """

    __slots__ = ("name", "kind")
    name: str
    kind: Literal["human", "computer"]

    def __init__(self, name: str, kind: Literal["human", "computer"]) -> None:
        if kind not in ("human", "computer"):
            raise StoreError(f"A player is 'human' or 'computer', not {kind!r:.30}.")
        if not isinstance(name, str) or not name.strip():
            raise StoreError("A player's name cannot be empty.")
        name = name.strip()
        if len(name) > MAX_NAME_CHARS:
            raise StoreError(f"A player's name is at most {MAX_NAME_CHARS} characters long, not {len(name)}.")
        if "\x00" in name:
            raise StoreError("A player's name cannot hold a NUL character.")
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            raise StoreError("A player's name must be valid Unicode text (it holds a lone surrogate).") from None
        # the registry ignores case, so "Hard" and "hard" must count as one opponent
        super().__init__(name.lower() if kind == "computer" else name, kind)

    @classmethod
    def human(cls, name: str) -> Participant:
        return cls(name, "human")

    @classmethod
    def computer(cls, name: str) -> Participant:
        return cls(name, "computer")

    @classmethod
    def stored(cls, name: str, kind: Literal["human", "computer"]) -> Participant:
        """A participant read back from a store, exactly as kept (no checks: old files must stay readable)."""
        participant = cls.__new__(cls)
        _Value.__init__(participant, name, kind)
        return participant


class Tally(_Value):
    """Wins, losses and draws, from the point of view of the person the tally belongs to."""

    __slots__ = ("wins", "losses", "draws")
    wins: int
    losses: int
    draws: int

    def __init__(self, wins: int = 0, losses: int = 0, draws: int = 0) -> None:
        super().__init__(wins, losses, draws)

    @property
    def games(self) -> int:
        return self.wins + self.losses + self.draws


class BoardScores(_Value):
    """The robot's numbers on one board: the current run and the high score of each difficulty."""

    __slots__ = ("run", "high")
    run: int
    high: dict[str, int]

    def __init__(self, run: int, high: Mapping[str, int]) -> None:
        super().__init__(run, {d: high.get(d, 0) for d in DIFFICULTY_POINTS})

    @classmethod
    def empty(cls) -> BoardScores:
        return cls(0, {})


class Recorded(_Value):
    """What recording a game did: its number, which board, and how the robot's scores on that board moved."""

    __slots__ = ("game_id", "points", "run", "difficulty", "high_score", "new_high_score", "board")
    game_id: int | None
    points: int
    run: int
    difficulty: str | None
    high_score: int | None
    new_high_score: bool
    board: Shape | None

    def __init__(self, game_id: int | None, points: int = 0, run: int = 0, difficulty: str | None = None,
                 high_score: int | None = None, new_high_score: bool = False, board: Shape | None = None) -> None:
        super().__init__(game_id, points, run, difficulty, high_score, new_high_score, board)

    def summary(self) -> str:
        """A sentence for the person: the game's number and how the robot's scores moved."""
        from noughts import text

        if self.game_id is None:
            return ""
        board = None if self.board is None or self.board == STANDARD_BOARD else board_label(self.board)
        return text.saved_game(self.game_id, board, self.difficulty, self.points, self.run, self.high_score,
                               new_high_score=self.new_high_score)


class Scores(_Value):
    """The score table: the robot's numbers per board, per-opponent tallies and two-person tallies.

    ``boards`` holds every board with scores, the standard 3×3 first (always there); ``run``
    and ``high`` are the 3×3 board's, for front ends that show one line of scores.
    """

    __slots__ = ("run", "high", "opponents", "people", "boards")
    run: int
    high: dict[str, int]
    opponents: dict[str, Tally]
    people: dict[str, Tally]
    boards: dict[Shape, BoardScores]

    def __init__(self, run: int, high: dict[str, int], opponents: dict[str, Tally], people: dict[str, Tally],
                 boards: dict[Shape, BoardScores] | None = None) -> None:
        if boards is None:
            boards = {STANDARD_BOARD: BoardScores(run, high)}
        super().__init__(run, high, opponents, people, boards)

    @classmethod
    def of(cls, boards: Mapping[Shape, BoardScores], opponents: dict[str, Tally],
           people: dict[str, Tally]) -> Scores:
        """The table from each board's numbers (in any order; 3×3 is added if missing)."""
        ordered = {STANDARD_BOARD: BoardScores.empty()}
        ordered.update(sorted(boards.items(), key=lambda item: board_order(item[0])))
        standard = ordered[STANDARD_BOARD]
        return cls(standard.run, standard.high, opponents, people, ordered)

    def on(self, board: Shape) -> BoardScores:
        """One board's numbers (all zeros for a board not played yet)."""
        return self.boards.get(board, BoardScores.empty())


class StoredGame(_Value):
    """One finished game from the history; :meth:`to_game` rebuilds it for replay."""

    __slots__ = ("id", "played_at", "x", "o", "first", "rows", "cols", "k", "record", "result")
    id: int
    played_at: datetime
    x: Participant
    o: Participant
    first: str
    rows: int
    cols: int
    k: int
    record: str
    result: str

    def __init__(self, id: int, played_at: datetime, x: Participant, o: Participant, first: str,
                 rows: int, cols: int, k: int, record: str, result: str) -> None:
        super().__init__(id, played_at, x, o, first, rows, cols, k, record, result)

    @property
    def board(self) -> Shape:
        return self.rows, self.cols, self.k

    @property
    def winner(self) -> Participant | None:
        return self.x if self.result == "X" else self.o if self.result == "O" else None

    def to_game(self) -> Game:
        """The game with every move played again (raises ``GameRecordError`` if the record was tampered with)."""
        from noughts.game import Game

        game = Game.from_text(self.record)
        game.x_name, game.o_name = self.x.name, self.o.name
        return game


# the rules ------------------------------------------------------------------------------
class Change(_Value):
    """What one finished game changes: tallies to count and its board's numbers before and after."""

    __slots__ = ("counts", "difficulty", "points", "before", "after", "new_high_score")
    counts: tuple[TallyCount, ...]
    difficulty: str | None
    points: int
    before: BoardScores
    after: BoardScores
    new_high_score: bool

    def __init__(self, counts: tuple[TallyCount, ...], difficulty: str | None, points: int, before: BoardScores,
                 after: BoardScores, new_high_score: bool) -> None:
        super().__init__(counts, difficulty, points, before, after, new_high_score)

    def recorded(self, game_id: int | None, board: Shape) -> Recorded:
        high = None if self.difficulty is None else self.after.high[self.difficulty]
        return Recorded(game_id, self.points, self.after.run, self.difficulty, high, self.new_high_score, board)


def _column(result: str, mark: str) -> Literal["wins", "losses", "draws"]:
    return "draws" if result == "draw" else "wins" if result == mark else "losses"


def score_game(x: Participant, o: Participant, result: str, before: BoardScores) -> Change:
    """How a finished game (``result`` is ``'X'``, ``'O'`` or ``'draw'``) changes the scores of its board.

    Two people count in each other's tallies; a person against a computer counts in that
    computer's tally and, against easy, medium or hard, in the run and high score; two
    computers are history only.
    """
    if result not in ("X", "O", "draw"):
        raise StoreError(f"A finished game's result is 'X', 'O' or 'draw', not {result!r:.20}.")
    if x.kind == o.kind == "human":
        counts: tuple[TallyCount, ...] = (("people", x.name, _column(result, "X")),
                                          ("people", o.name, _column(result, "O")))
        return Change(counts, None, 0, before, before, False)
    if x.kind == o.kind:
        return Change((), None, 0, before, before, False)
    human_mark = "X" if x.kind == "human" else "O"
    computer = o if human_mark == "X" else x
    counts = (("opponents", computer.name, _column(result, human_mark)),)
    per_win = DIFFICULTY_POINTS.get(computer.name)
    if per_win is None:  # the robot's points are only for its three difficulties
        return Change(counts, None, 0, before, before, False)
    difficulty = computer.name
    points = per_win if result == human_mark else 0
    run = before.run + points if points else 0
    high = before.high[difficulty]
    after = BoardScores(run, {**before.high, difficulty: max(high, run)})
    return Change(counts, difficulty, points, before, after, run > high)


def replay_scores(games: Iterable[tuple[int, Shape, Participant, Participant, str]], *,
                  reset_before: int | None = None) -> tuple[dict[Shape, BoardScores], list[Recorded]]:
    """Score stored games ``(id, board, x, o, result)`` again, in order: every board's numbers and each game's record.

    ``reset_before`` is the number of the first game played after the scores were last
    reset: the boards start again from nothing there.

    >>> ann, easy = Participant.human("Ann"), Participant.computer("easy")
    >>> boards, done = replay_scores([(1, (3, 3, 3), ann, easy, "X"), (2, (1, 1, 1), ann, easy, "X"),
    ...                               (3, (3, 3, 3), easy, ann, "O")])
    >>> boards[(3, 3, 3)].run, boards[(1, 1, 1)].run, [d.run for d in done]
    (2, 1, [1, 1, 2])
    """
    boards: dict[Shape, BoardScores] = {}
    recorded = []
    for game_id, board, x, o, result in games:
        if reset_before is not None and game_id >= reset_before:
            boards, reset_before = {}, None
        change = score_game(x, o, result, boards.get(board, BoardScores.empty()))
        if change.difficulty is not None:
            boards[board] = change.after
        recorded.append(change.recorded(game_id, board))
    return boards, recorded


def high_scores_shown(scores: BoardScores, can_play: Callable[[str], bool]) -> dict[str, int]:
    """The high scores worth listing for one board: every difficulty that can play it, and any that scored on it.

    ``can_play(difficulty)`` is asked only about the difficulties without a score there.

    >>> high_scores_shown(BoardScores(2, {"hard": 3}), lambda difficulty: difficulty != "medium")
    {'easy': 0, 'hard': 3}
    """
    return {difficulty: high for difficulty, high in scores.high.items() if high or can_play(difficulty)}


def ranked(tallies: Mapping[str, Tally]) -> list[tuple[str, Tally]]:
    """The names that have played, most games first (then most wins, then by name).

    >>> [name for name, _ in ranked({"Bob": Tally(1), "Ann": Tally(0, 1), "Cy": Tally(), "Di": Tally(2, 3)})]
    ['Di', 'Bob', 'Ann']
    """
    played = [(name, tally) for name, tally in tallies.items() if tally.games]
    return sorted(played, key=lambda item: (-item[1].games, -item[1].wins, item[0]))
