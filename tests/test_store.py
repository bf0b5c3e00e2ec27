"""The score and history store: the robot's scoring, history, migrations, damaged files, no-write places."""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from noughts import Board
from noughts.game import Game
from noughts.players import names
from noughts.store import (
    DIFFICULTY_POINTS,
    SCHEMA_VERSION,
    BoardScores,
    Finished,
    GameNotFoundError,
    Participant,
    Recorded,
    Store,
    StoreError,
    Tally,
    default_path,
    open_store,
    schema,
)
from noughts.store import sqlite as store_module

X_WINS = "a1 b1 a2 b2 a3"
O_WINS = "a1 b1 c3 b2 a3 b3"
DRAW = "b2 a1 c3 a3 a2 c2 b1 b3 c1"
ANN, BOB = Participant.human("Ann"), Participant.human("Bob")


def game(text: str) -> Game:
    return Game.from_text(text)


def win_for(mark: str) -> Game:
    return game(X_WINS if mark == "X" else O_WINS)


@pytest.fixture(params=["sqlite", "postgresql"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a fresh, empty store lives: a SQLite file, or a schema of its own on a real PostgreSQL server."""
    if request.param == "sqlite":
        return str(tmp_path / "noughts.db")
    return str(request.getfixturevalue("postgres").fresh_url())


@pytest.fixture
def store(where: str) -> Iterator[Store]:
    with open_store(where) as opened:
        assert opened.enabled and opened.notices == [], opened.notices
        yield opened


def human_vs(store: Store, computer: str, outcome: str, *, human_plays: str = "X") -> Recorded:
    """Record a game between Ann and ``computer`` that Ann wins, loses or draws."""
    other = "O" if human_plays == "X" else "X"
    played = game(DRAW) if outcome == "draw" else win_for(human_plays if outcome == "win" else other)
    ann, machine = ANN, Participant.computer(computer)
    return store.record(played, *((ann, machine) if human_plays == "X" else (machine, ann)))


def assert_sentence(text: str) -> None:
    assert text[0].isupper() and text.endswith("."), text


# the robot's scoring --------------------------------------------------------------------
def test_a_run_adds_up_wins_and_a_loss_or_draw_resets_it(store: Store) -> None:
    runs = [human_vs(store, "hard", outcome).run for outcome in ["win", "win", "win", "loss", "win", "draw"]]
    assert runs == [3, 6, 9, 0, 3, 0]
    scores = store.scores()
    assert scores.run == 0
    assert scores.high == {"easy": 0, "medium": 0, "hard": 9}


@pytest.mark.parametrize("difficulty", ["easy", "medium", "hard"])
def test_a_win_is_worth_1_2_or_3_points(store: Store, difficulty: str) -> None:
    points = DIFFICULTY_POINTS[difficulty]
    done = human_vs(store, difficulty, "win")
    assert (done.points, done.run, done.difficulty, done.high_score) == (points, points, difficulty, points)
    assert store.scores().high == {d: DIFFICULTY_POINTS[d] if d == difficulty else 0 for d in DIFFICULTY_POINTS}


def test_the_high_score_is_the_best_run_and_only_rises(store: Store) -> None:
    flags = [human_vs(store, "medium", outcome).new_high_score
             for outcome in ["win", "win", "loss", "win", "win", "win", "draw", "win"]]
    assert flags == [True, True, False, False, False, True, False, False]
    assert store.scores().high["medium"] == 6  # 2+2+2 beat the earlier 2+2


def test_one_run_is_shared_by_the_difficulties_as_on_the_robot(store: Store) -> None:
    assert human_vs(store, "easy", "win").run == 1
    done = human_vs(store, "hard", "win")
    assert (done.points, done.run, done.high_score) == (3, 4, 4)
    assert store.scores().high == {"easy": 1, "medium": 0, "hard": 4}
    assert human_vs(store, "easy", "loss").run == 0


def test_the_human_may_play_o(store: Store) -> None:
    assert human_vs(store, "easy", "win", human_plays="O").points == 1
    assert human_vs(store, "easy", "loss", human_plays="O").run == 0
    assert store.scores().opponents["easy"] == Tally(1, 1, 0)


def test_each_board_keeps_its_own_run_and_high_scores(store: Store) -> None:
    hard = Participant.computer("hard")
    one_cell = Game.replay(["a1"], Board(1, 1, 1))  # X wins with the first move
    one_in_a_row = Game.replay(["b2"], Board(3, 3, 1))
    four = Game.from_text("size=4x4 k=4: a1 a2 b1 b2 c1 c2 d1")
    done = store.record(one_cell, ANN, hard)
    assert (done.board, done.points, done.run, done.high_score) == ((1, 1, 1), 3, 3, 3)
    assert store.record(one_cell, ANN, hard).run == 6
    assert store.record(one_in_a_row, ANN, hard).run == 3
    assert store.record(four, ANN, hard).run == 3
    on_3x3 = human_vs(store, "easy", "win")
    assert (on_3x3.board, on_3x3.run, on_3x3.high_score) == ((3, 3, 3), 1, 1)  # not 1 + 6 + 3 + 3
    assert store.record(four, hard, ANN).run == 0  # a loss on 4×4 ends the 4×4 run only
    scores = store.scores()
    assert (scores.run, scores.high) == (1, {"easy": 1, "medium": 0, "hard": 0})  # 3×3, as front ends show it
    assert list(scores.boards) == [(3, 3, 3), (1, 1, 1), (3, 3, 1), (4, 4, 4)]  # 3×3 first
    assert scores.boards[(1, 1, 1)] == BoardScores(6, {"hard": 6})
    assert scores.boards[(4, 4, 4)] == BoardScores(0, {"hard": 3})
    assert scores.on((3, 3, 3)) == BoardScores(1, {"easy": 1}) and scores.on((5, 5, 4)) == BoardScores(0, {})
    assert scores.opponents["hard"] == Tally(4, 1, 0)  # the tallies count every board


def test_a_fresh_store_has_only_the_3x3_board(store: Store) -> None:
    store.record(win_for("X"), ANN, BOB)
    store.record(Game.replay(["a1"], Board(1, 1, 1)), ANN, Participant.computer("perfect"))
    assert store.scores().boards == {(3, 3, 3): BoardScores(0, {})}


def test_other_computer_players_count_in_tallies_but_not_in_the_run(store: Store) -> None:
    human_vs(store, "medium", "win")
    for outcome in ["win", "loss", "draw", "loss"]:
        done = human_vs(store, "perfect", outcome)
        assert (done.points, done.run, done.difficulty, done.high_score) == (0, 2, None, None)
    scores = store.scores()
    assert scores.opponents["perfect"] == Tally(wins=1, losses=2, draws=1)
    assert scores.run == 2 and scores.high["medium"] == 2


def test_wins_losses_and_draws_against_every_opponent(store: Store) -> None:
    plan = {"easy": ["win", "win", "draw"], "minimax": ["draw", "loss"], "Arduino": ["loss"]}
    for computer, outcomes in plan.items():
        for outcome in outcomes:
            human_vs(store, computer, outcome)
    opponents = store.scores().opponents
    assert list(opponents)[:len(names())] == names()  # every registry name, in menu order
    assert opponents["easy"] == Tally(2, 0, 1)
    assert opponents["minimax"] == Tally(0, 1, 1)
    assert opponents["arduino"] == Tally(0, 1, 0)  # names are the registry's, whatever the case
    assert opponents["hard"] == Tally(0, 0, 0) and opponents["hard"].games == 0
    human_vs(store, "a-robot-from-elsewhere", "win")
    assert list(store.scores().opponents)[-1] == "a-robot-from-elsewhere"


def test_two_person_games_are_tallied_by_name(store: Store) -> None:
    store.record(win_for("X"), ANN, BOB)
    store.record(win_for("X"), BOB, ANN)
    store.record(game(DRAW), ANN, BOB)
    store.record(win_for("O"), Participant.human(" Cy "), ANN)
    scores = store.scores()
    assert scores.people == {"Ann": Tally(2, 1, 1), "Bob": Tally(1, 1, 1), "Cy": Tally(0, 1, 0)}
    assert scores.run == 0 and all(t.games == 0 for t in scores.opponents.values())


def test_two_computers_are_history_only(store: Store) -> None:
    store.record(win_for("X"), Participant.computer("hard"), Participant.computer("easy"))
    scores = store.scores()
    assert store.count_games() == 1
    assert scores.people == {} and all(t.games == 0 for t in scores.opponents.values())


def test_an_unfinished_game_is_refused(store: Store) -> None:
    with pytest.raises(StoreError, match="finished"):
        store.record(game("b2 a1"), ANN, BOB)
    assert store.count_games() == 0


def test_bad_participants_are_refused() -> None:
    for name, kind in [("", "human"), ("  ", "human"), ("x" * 101, "human"), ("a\x00b", "human"),
                       ("a\ud800b", "human"), ("Ann", "robot")]:
        with pytest.raises(StoreError) as caught:
            Participant(name, kind)  # type: ignore[arg-type]
        assert_sentence(str(caught.value))
    assert Participant.computer(" Hard ") == Participant("hard", "computer")


def test_names_with_control_characters_are_kept_exactly(store: Store) -> None:
    evil, bidi = Participant.human("\x1b[31mEvil\n"), Participant.human("Ann\u202eBob")
    assert evil.name == "\x1b[31mEvil"  # surrounding whitespace goes, as for every name
    store.record(win_for("X"), evil, bidi)
    store.record(win_for("O"), Participant.human("Robert'); DROP TABLE games;--"), evil)
    kept = store.game(1)
    assert (kept.x, kept.o) == (evil, bidi)
    assert store.scores().people == {"\x1b[31mEvil": Tally(2, 0, 0), "Ann\u202eBob": Tally(0, 1, 0),
                                      "Robert'); DROP TABLE games;--": Tally(0, 1, 0)}
    assert store.count_games() == 2


# history --------------------------------------------------------------------------------
def test_history_round_trip_rebuilds_the_same_game(store: Store) -> None:
    played = [
        (game(X_WINS), ANN, Participant.computer("hard")),
        (game(DRAW), Participant.computer("parsons"), BOB),
        (Game.replay(["a1", "a2", "b1", "b2", "c1"], Board(4, 4, 3)), ANN, BOB),
        (Game.replay(["b2", "c1", "a3", "a2", "c3", "c2", "b3"], Board.parse("X../.../...")), BOB, ANN),
    ]
    before = datetime.now(UTC)
    ids = [store.record(g, x, o).game_id for g, x, o in played]
    assert ids == [1, 2, 3, 4]
    for game_id, (original, x, o) in zip(ids, played, strict=True):
        assert game_id is not None
        kept = store.game(game_id)
        assert (kept.id, kept.x, kept.o, kept.result) == (game_id, x, o, original.result)
        assert (kept.rows, kept.cols, kept.k) == (original.start.rows, original.start.cols, original.start.k)
        assert kept.record == original.to_text()
        assert before - timedelta(seconds=1) <= kept.played_at <= datetime.now(UTC)
        assert kept.played_at.tzinfo is not None and kept.played_at.utcoffset() == timedelta(0)
        rebuilt = kept.to_game()
        assert rebuilt.start == original.start and rebuilt.moves == original.moves
        assert rebuilt.board == original.board and rebuilt.result == original.result
        assert (rebuilt.x_name, rebuilt.o_name) == (x.name, o.name)
        assert kept.winner == (x if original.result == "X" else o if original.result == "O" else None)
    assert [g.first for g in store.games()] == ["O", "X", "X", "X"]  # the last one started with X already down


def test_listing_is_newest_first_with_limit_and_offset(store: Store) -> None:
    for _ in range(7):
        store.record(game(DRAW), ANN, BOB)
    assert store.count_games() == 7
    assert [g.id for g in store.games()] == [7, 6, 5, 4, 3, 2, 1]
    assert [g.id for g in store.games(limit=3)] == [7, 6, 5]
    assert [g.id for g in store.games(limit=3, offset=5)] == [2, 1]
    assert store.games(limit=0) == [] and store.games(offset=7) == []
    for bad in [{"limit": -1}, {"offset": -2}, {"limit": 1.5}, {"limit": True}]:
        with pytest.raises(StoreError):
            store.games(**bad)  # type: ignore[arg-type]


def test_an_explicit_time_is_kept_in_utc(store: Store) -> None:
    local = datetime(2024, 3, 1, 12, 30, tzinfo=UTC).astimezone()
    game_id = store.record(game(DRAW), ANN, BOB, played_at=local).game_id
    assert game_id is not None
    assert store.game(game_id).played_at == datetime(2024, 3, 1, 12, 30, tzinfo=UTC)


def test_an_unknown_game_number(store: Store) -> None:
    with pytest.raises(GameNotFoundError, match="no game number 42") as caught:
        store.game(42)
    assert_sentence(str(caught.value))


def test_everything_survives_closing_and_opening_again(where: str) -> None:
    path = where
    with open_store(path) as first:
        human_vs(first, "hard", "win")
        first.record(win_for("X"), ANN, BOB)
    with open_store(path) as second:
        assert second.notices == []
        scores = second.scores()
        assert (scores.run, scores.high["hard"], scores.people["Ann"]) == (3, 3, Tally(1, 0, 0))
        assert [g.id for g in second.games()] == [2, 1]


@pytest.mark.parametrize(("scores", "history"), [(True, False), (False, True), (True, True)])
def test_reset(store: Store, scores: bool, history: bool) -> None:
    human_vs(store, "hard", "win")
    store.record(win_for("X"), ANN, BOB)
    store.reset(scores=scores, history=history)
    after = store.scores()
    assert (after.run == 0 and after.people == {}) is scores
    assert (after.high["hard"] == 0 and after.opponents["hard"] == Tally()) is scores
    assert (store.count_games() == 0) is history
    # numbers are never reused, so "replay 2" cannot silently mean another game
    assert store.record(game(DRAW), ANN, BOB).game_id == 3


# recording once -------------------------------------------------------------------------
def test_a_game_key_records_a_game_once(where: str) -> None:
    path, hard = where, Participant.computer("hard")
    with open_store(path) as first:
        done = first.record(win_for("X"), ANN, hard, game_key="room-7/game-1")
        assert done == Recorded(1, 3, 3, "hard", 3, True, (3, 3, 3))
        assert first.record(win_for("X"), ANN, hard, game_key="room-7/game-1") == done  # a retry
        assert first.count_games() == 1
        assert (first.scores().run, first.scores().opponents["hard"]) == (3, Tally(1, 0, 0))
        assert human_vs(first, "hard", "win").run == 6  # no key: always a new game
    with open_store(path) as second, open_store(path) as third:
        # after a restart and later games, a retry still gets what the first call returned
        assert second.record(win_for("X"), ANN, hard, game_key="room-7/game-1") == done
        assert third.record(win_for("X"), ANN, hard, game_key="room-7/game-1") == done
        assert second.record(win_for("X"), ANN, hard, game_key="room-7/game-2").run == 9
        assert third.count_games() == 3 and third.scores().run == 9
        with pytest.raises(StoreError, match="different game") as caught:
            second.record(game(DRAW), ANN, hard, game_key="room-7/game-1")
        assert_sentence(str(caught.value))
        for bad in ["", "k" * 201, 7]:
            with pytest.raises(StoreError):
                second.record(game(DRAW), ANN, hard, game_key=bad)  # type: ignore[arg-type]
        assert third.count_games() == 3 and third.scores().run == 9


# locks held by another process -----------------------------------------------------------
def hold_write_lock(path: Path, seconds: float) -> threading.Thread:
    ready = threading.Event()

    def hold() -> None:
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        ready.set()
        time.sleep(seconds)
        other.execute("COMMIT")
        other.close()

    thread = threading.Thread(target=hold)
    thread.start()
    ready.wait()
    return thread


def test_a_busy_database_is_retried_past_the_busy_timeout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "_BUSY_TIMEOUT_S", 0.02)
    path = tmp_path / "noughts.db"
    with open_store(path) as opened:
        holder = hold_write_lock(path, 0.5)
        done = human_vs(opened, "easy", "win")
        holder.join()
        assert done.game_id == 1 and opened.count_games() == 1


def test_a_database_locked_too_long_fails_cleanly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "_BUSY_TIMEOUT_S", 0.02)
    monkeypatch.setattr(store_module, "_RETRY_FOR_S", 0.2)
    path = tmp_path / "noughts.db"
    with open_store(path) as opened:
        human_vs(opened, "easy", "win")
        holder = hold_write_lock(path, 1.0)
        with pytest.raises(StoreError, match="could not be saved") as caught:
            human_vs(opened, "easy", "win")
        holder.join()
        assert_sentence(str(caught.value))
        assert opened.count_games() == 1 and opened.scores().run == 1  # all or nothing
        assert human_vs(opened, "easy", "win").run == 2  # and the store still works


# schema versions ------------------------------------------------------------------------
VERSION_1 = [  # the schema as version 1 of noughts wrote it, independent of the module's copy
    "PRAGMA application_id = 1852798311",
    """CREATE TABLE games (id INTEGER PRIMARY KEY AUTOINCREMENT, played_at TEXT NOT NULL,
        x_name TEXT NOT NULL, x_kind TEXT NOT NULL, o_name TEXT NOT NULL, o_kind TEXT NOT NULL,
        first TEXT NOT NULL, rows INTEGER NOT NULL, cols INTEGER NOT NULL, k INTEGER NOT NULL,
        record TEXT NOT NULL, result TEXT NOT NULL)""",
    "CREATE TABLE scores (name TEXT PRIMARY KEY, value INTEGER NOT NULL)",
    """CREATE TABLE opponents (name TEXT PRIMARY KEY, wins INTEGER NOT NULL DEFAULT 0,
        losses INTEGER NOT NULL DEFAULT 0, draws INTEGER NOT NULL DEFAULT 0)""",
    "INSERT INTO games VALUES (1, '2024-01-01T10:00:00.000000Z', 'Ann', 'human', 'Bob', 'human', 'X', 3, 3, 3,"
    " 'a1 b1 a2 b2 a3', 'X')",
    "INSERT INTO games VALUES (2, '2024-01-01T11:00:00.000000Z', 'hard', 'computer', 'Ann', 'human', 'X', 3, 3,"
    " 3, 'b2 a1 c3 a3 a2 c2 b1 b3 c1', 'draw')",
    "INSERT INTO games VALUES (3, '2024-01-01T12:00:00.000000Z', 'Bob', 'human', 'Ann', 'human', 'X', 3, 3, 3,"
    " 'b2 a1 c3 a3 a2 c2 b1 b3 c1', 'draw')",
    "INSERT INTO scores VALUES ('run', 0), ('hard', 6)",
    "INSERT INTO opponents VALUES ('hard', 2, 0, 1)",
    "PRAGMA user_version = 1",
]


def make_version_1(path: Path) -> None:
    connection = sqlite3.connect(path, isolation_level=None)
    for statement in VERSION_1:
        connection.execute(statement)
    connection.close()


def pragma(path: Path, name: str) -> int:
    connection = sqlite3.connect(path)
    try:
        value: int = connection.execute(f"PRAGMA {name}").fetchone()[0]
        return value
    finally:
        connection.close()


def test_a_new_file_gets_the_current_schema(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "noughts.db"  # missing folders are created
    with open_store(path) as opened:
        assert opened.enabled and opened.path == path
    assert pragma(path, "user_version") == SCHEMA_VERSION == 4
    assert pragma(path, "application_id") == store_module._APPLICATION_ID
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_an_old_version_is_upgraded_keeping_everything(tmp_path: Path) -> None:
    path = tmp_path / "noughts.db"
    make_version_1(path)
    with open_store(path) as opened:
        assert opened.enabled and opened.notices == []
        assert [g.id for g in opened.games()] == [3, 2, 1]
        assert opened.game(2).to_game().result == "draw"
        scores = opened.scores()
        assert scores.opponents["hard"] == Tally(2, 0, 1)
        # version 2's two-person tallies are filled in from the games already kept
        assert scores.people == {"Ann": Tally(1, 0, 1), "Bob": Tally(0, 1, 1)}
        # version 3's high scores come from the games kept: the only one against hard is a draw
        assert scores.boards == {(3, 3, 3): BoardScores(0, {})}
        opened.record(win_for("X"), ANN, BOB)
        assert opened.scores().people["Ann"] == Tally(2, 0, 1)
    assert pragma(path, "user_version") == SCHEMA_VERSION


VERSION_2_PEOPLE = """CREATE TABLE people (name TEXT PRIMARY KEY, wins INTEGER NOT NULL DEFAULT 0,
    losses INTEGER NOT NULL DEFAULT 0, draws INTEGER NOT NULL DEFAULT 0)"""


def make_version_2(path: Path, games: list[tuple[str, str, str, str, str]], scores: dict[str, int],
                   opponents: dict[str, tuple[int, int, int]]) -> None:
    """A file as version 2 wrote it: ``games`` are (x, x_kind, o, o_kind, record), one shared run and high scores."""
    connection = sqlite3.connect(path, isolation_level=None)
    for statement in VERSION_1[:4]:
        connection.execute(statement)
    connection.execute(VERSION_2_PEOPLE)
    for number, (x, x_kind, o, o_kind, record) in enumerate(games, 1):
        played = Game.from_text(record)
        start = played.start
        connection.execute("INSERT INTO games VALUES (?, ?, ?, ?, ?, ?, 'X', ?, ?, ?, ?, ?)",
                           (number, f"2024-01-0{number}T10:00:00.000000Z", x, x_kind, o, o_kind,
                            start.rows, start.cols, start.k, record, played.result))
    connection.executemany("INSERT INTO scores VALUES (?, ?)", scores.items())
    connection.executemany("INSERT INTO opponents VALUES (?, ?, ?, ?)", [(n, *t) for n, t in opponents.items()])
    connection.execute("PRAGMA user_version = 2")
    connection.close()


def test_version_3_scores_every_board_again_from_the_games(tmp_path: Path) -> None:
    path = tmp_path / "noughts.db"
    make_version_2(path, [
        ("Ann", "human", "hard", "computer", X_WINS),                  # 3×3: +3
        ("Ann", "human", "hard", "computer", "size=1x1 k=1: a1"),      # 1×1: +3 (version 2 made the run 6)
        ("Ann", "human", "Bob", "human", X_WINS),
        ("easy", "computer", "Ann", "human", O_WINS),                  # 3×3: +1, the run is 4
        ("hard", "computer", "easy", "computer", DRAW),
        ("Ann", "human", "medium", "computer", "size=4x4 k=4: a1 a2 b1 b2 c1 c2 d1"),  # 4×4: +2
    ], scores={"run": 9, "easy": 7, "hard": 6, "medium": 9}, opponents={"hard": (2, 0, 0), "easy": (1, 0, 0),
                                                                        "medium": (1, 0, 0)})
    with open_store(path) as opened:
        assert opened.notices == [] and opened.count_games() == 6
        scores = opened.scores()
        assert scores.boards == {(3, 3, 3): BoardScores(4, {"easy": 4, "hard": 3}),
                                 (1, 1, 1): BoardScores(3, {"hard": 3}), (4, 4, 4): BoardScores(2, {"medium": 2})}
        assert scores.opponents["hard"] == Tally(2, 0, 0)  # the tallies are kept as they were
        assert human_vs(opened, "hard", "win").run == 7
    connection = sqlite3.connect(path)
    kept = connection.execute("SELECT points, run, difficulty, high_score, new_high_score FROM games "
                              "ORDER BY id").fetchall()
    connection.close()
    assert kept == [(3, 3, "hard", 3, 1), (3, 3, "hard", 3, 1), (0, 3, None, None, 0), (1, 4, "easy", 4, 1),
                    (0, 4, None, None, 0), (2, 2, "medium", 2, 1), (3, 7, "hard", 7, 1)]


@pytest.mark.parametrize(("after_reset", "expected"), [
    (0, {}),                                                            # reset after the last game
    (1, {(3, 3, 3): BoardScores(1, {"easy": 1})}),                      # only the win against easy counts
    (3, {(3, 3, 3): BoardScores(7, {"easy": 7, "hard": 6})}),           # never reset
])
def test_version_3_leaves_out_games_from_before_a_scores_reset(tmp_path: Path, after_reset: int,
                                                              expected: dict[tuple[int, int, int], BoardScores]
                                                              ) -> None:
    path = tmp_path / "noughts.db"
    # 'scores --reset' kept the games; the tallies it reset count one for each mixed game since
    tallies = {1: {"easy": (1, 0, 0)}, 3: {"hard": (2, 0, 0), "easy": (1, 0, 0)}}.get(after_reset, {})
    make_version_2(path, [("Ann", "human", "hard", "computer", X_WINS), ("Ann", "human", "hard", "computer", X_WINS),
                          ("Ann", "human", "Bob", "human", X_WINS), ("Ann", "human", "easy", "computer", X_WINS),
                          ("Ann", "human", "Bob", "human", DRAW)],
                   scores={"run": 1, "easy": 1} if after_reset == 1 else {}, opponents=tallies)
    with open_store(path) as opened:
        assert {b: s for b, s in opened.scores().boards.items() if s != BoardScores(0, {})} == expected


def test_a_failing_migration_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "noughts.db"
    make_version_1(path)
    broken = ("CREATE TABLE half_done (x)", "INSERT INTO no_such_table VALUES (1)")
    monkeypatch.setattr(schema, "MIGRATIONS", [*schema.MIGRATIONS, broken])
    opened = open_store(path)
    assert not opened.enabled and opened.reason is not None
    assert_sentence(opened.reason)
    assert list(tmp_path.glob("*.corrupt-*")) == []  # a bug in a migration is not a damaged file
    # steps 2 to 5 ran in the same transaction: all were rolled back
    assert pragma(path, "user_version") == 1
    tables = {row[0] for row in sqlite3.connect(path).execute("SELECT name FROM sqlite_master")}
    assert "half_done" not in tables and "people" not in tables and "board_scores" not in tables
    monkeypatch.undo()
    with open_store(path) as fixed:
        assert fixed.enabled and fixed.count_games() == 3


# files that are not ours or are damaged --------------------------------------------------
def real_store_file(path: Path, games: int) -> None:
    """A real store holding ``games`` games: the first saved by the store, copies added in bulk (fsyncs are slow)."""
    with open_store(path) as opened:
        opened.record(game(X_WINS), ANN, Participant.computer("medium"))
    connection = sqlite3.connect(path)
    with connection:
        connection.executemany(
            "INSERT INTO games (played_at, x_name, x_kind, o_name, o_kind, first, rows, cols, k, record, result)"
            " SELECT played_at, x_name, x_kind, o_name, o_kind, first, rows, cols, k, record, result"
            " FROM games WHERE id = 1", [()] * (games - 1))
    connection.close()


def damage(kind: str, path: Path) -> None:
    if kind == "random bytes":
        path.write_bytes(os.urandom(10_000))
    elif kind == "text":
        path.write_text("easy 3\nmedium 0\nhard 9\ncurrent 0\n")
    elif kind == "truncated":
        real_store_file(path, 400)
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    elif kind == "scribbled":
        real_store_file(path, 400)
        pages = bytearray(path.read_bytes())
        pages[4096 * 2: 4096 * 4] = os.urandom(4096 * 2)  # pages 3-4 are tree pages by now
        path.write_bytes(bytes(pages))
    elif kind == "header only":
        path.write_bytes(b"SQLite format 3\x00" + os.urandom(200))
    elif kind == "foreign tables":
        other = sqlite3.connect(path)
        other.execute("CREATE TABLE contacts (name TEXT, phone TEXT)")
        other.execute("INSERT INTO contacts VALUES ('Ann', '555')")
        other.commit()
        other.close()
    elif kind == "foreign application":
        other = sqlite3.connect(path)
        other.execute("PRAGMA application_id = 42")
        other.commit()
        other.close()
    elif kind == "newer noughts":
        real_store_file(path, 3)
        other = sqlite3.connect(path)
        other.execute("PRAGMA user_version = 99")
        other.commit()
        other.close()
    else:
        raise AssertionError(kind)


DAMAGED = ["truncated", "scribbled"]  # noughts databases, damaged
NOT_OURS = ["random bytes", "text", "header only", "foreign tables", "foreign application"]


def files_in(folder: Path) -> dict[str, bytes]:
    """The files and their bytes; a WAL index and an empty WAL, which any SQLite reader may leave, aside."""
    return {p.name: p.read_bytes() for p in folder.iterdir()
            if not p.name.endswith("-shm") and not (p.name.endswith("-wal") and not p.stat().st_size)}


@pytest.mark.parametrize("kind", DAMAGED)
def test_a_damaged_database_is_moved_aside_to_record_and_a_fresh_one_started(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "noughts.db"
    damage(kind, path)
    original = path.read_bytes()
    with open_store(path) as opened:
        assert opened.enabled
        [notice] = opened.notices
        [aside] = tmp_path.glob("noughts.db.corrupt-*")
        assert aside.read_bytes() == original  # never overwritten, not even by a checkpoint
        assert str(aside) in notice and str(path) in notice and "damaged" in notice
        assert_sentence(notice)
        assert aside.name[len("noughts.db.corrupt-"):].endswith("Z")  # a UTC time
        assert opened.count_games() == 0
        assert human_vs(opened, "easy", "win").game_id == 1
    with open_store(path) as again:  # the fresh file is ours: nothing more is moved
        assert again.notices == [] and again.count_games() == 1
    assert len(list(tmp_path.glob("noughts.db.corrupt-*"))) == 1


@pytest.mark.parametrize("kind", DAMAGED)
def test_a_damaged_database_is_left_as_it_is_when_only_read(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "noughts.db"
    damage(kind, path)
    before = files_in(tmp_path)
    opened = open_store(path, read_only=True)
    assert not opened.enabled and opened.reason is not None
    assert str(path) in opened.reason and "damaged" in opened.reason and "moved aside the next time" in opened.reason
    assert_sentence(opened.reason)
    assert files_in(tmp_path) == before


@pytest.mark.parametrize("read_only", [False, True])
@pytest.mark.parametrize("kind", NOT_OURS)
def test_a_file_that_is_not_ours_is_refused_and_left_untouched(tmp_path: Path, kind: str, read_only: bool) -> None:
    path = tmp_path / "noughts.db"
    damage(kind, path)
    before = files_in(tmp_path)
    opened = open_store(path, read_only=read_only)
    assert not opened.enabled and opened.reason is not None and opened.notices == [opened.reason]
    assert_sentence(opened.reason)
    assert f"the file {path} is not a noughts database" in opened.reason and "left untouched" in opened.reason
    assert files_in(tmp_path) == before  # not moved, not written, no journal left behind
    assert human_vs(opened, "easy", "win") == Recorded(None)  # the game plays on without scores


@pytest.mark.parametrize("read_only", [False, True])
def test_a_database_from_a_newer_noughts_is_refused_and_left_untouched(tmp_path: Path, read_only: bool) -> None:
    path = tmp_path / "noughts.db"
    damage("newer noughts", path)
    before = files_in(tmp_path)
    opened = open_store(path, read_only=read_only)
    assert not opened.enabled and opened.reason is not None
    assert f"the database {path} was made by a newer noughts (schema 99; this noughts knows up to " \
        f"{SCHEMA_VERSION})" in opened.reason
    assert_sentence(opened.reason)
    assert files_in(tmp_path) == before


def test_reasons_name_what_was_wrong(tmp_path: Path) -> None:
    expected = {"random bytes": "not a SQLite database", "truncated": "damaged",
                "foreign tables": "another program", "newer noughts": "made by a newer noughts (schema 99"}
    for kind, words in expected.items():
        path = tmp_path / kind.replace(" ", "-") / "noughts.db"
        path.parent.mkdir()
        damage(kind, path)
        with open_store(path) as opened:
            assert words in opened.notices[0], opened.notices


def test_a_second_bad_file_gets_its_own_name(tmp_path: Path) -> None:
    path = tmp_path / "noughts.db"
    for _ in range(2):
        damage("truncated", path)
        open_store(path).close()
    assert len(list(tmp_path.glob("noughts.db.corrupt-*"))) == 2


def test_a_bad_files_wal_moves_with_it(tmp_path: Path) -> None:
    path = tmp_path / "noughts.db"
    damage("truncated", path)
    wal = tmp_path / "noughts.db-wal"
    wal.write_bytes(b"frames that belong to the damaged file")
    with open_store(path) as opened:
        [aside] = [p for p in tmp_path.glob("noughts.db.corrupt-*") if not p.name.endswith("-wal")]
        assert Path(f"{aside}-wal").read_bytes() == b"frames that belong to the damaged file"
        assert opened.enabled and human_vs(opened, "easy", "win").game_id == 1


def test_an_empty_file_is_simply_used(tmp_path: Path) -> None:
    path = tmp_path / "noughts.db"
    path.touch()
    with open_store(path) as opened:
        assert opened.enabled and opened.notices == []
    assert list(tmp_path.glob("*.corrupt-*")) == []


# places that cannot be written ----------------------------------------------------------
def chmod_is_enforced(folder: Path) -> bool:
    """False when we are root (or otherwise privileged) and a 0o500 folder is still writable."""
    probe = folder / "probe"
    try:
        probe.touch()
    except PermissionError:
        return True
    probe.unlink()
    return False


@pytest.fixture
def unwritable(tmp_path: Path) -> Iterator[Path]:
    """A database path that cannot be created: a read-only folder, or under a file when chmod does not bind."""
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o500)
    if chmod_is_enforced(folder):
        yield folder / "noughts" / "noughts.db"
    else:  # root ignores permissions; a file where a folder should be stops root too
        (tmp_path / "afile").write_text("in the way")
        yield tmp_path / "afile" / "noughts.db"
    folder.chmod(0o700)


def assert_disabled(opened: Store) -> None:
    assert not opened.enabled
    assert opened.reason is not None and opened.notices == [opened.reason]
    assert_sentence(opened.reason)
    assert "off" in opened.reason and "still plays" in opened.reason
    # the game goes on: recording is a no-op and the score table is empty
    done = human_vs(opened, "hard", "win")
    assert done == Recorded(None) and done.game_id is None
    assert opened.games() == [] and opened.count_games() == 0
    scores = opened.scores()
    assert scores.run == 0 and set(scores.high.values()) == {0} and scores.people == {}
    with pytest.raises(StoreError):
        opened.game(1)
    with pytest.raises(StoreError):
        opened.reset()
    with pytest.raises(StoreError, match="finished"):  # still a mistake worth reporting
        opened.record(game("b2"), ANN, BOB)


def test_a_place_that_cannot_be_created_turns_scores_off(unwritable: Path) -> None:
    opened = open_store(unwritable)
    assert_disabled(opened)
    assert str(unwritable.parent) in (opened.reason or "")
    assert not unwritable.exists()


def test_a_file_in_the_way_turns_scores_off(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("in the way")
    opened = open_store(tmp_path / "afile" / "x.db")
    assert_disabled(opened)
    assert "a file is in the way" in (opened.reason or "")
    assert (tmp_path / "afile").read_text() == "in the way"


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc")
def test_a_place_even_root_cannot_write_turns_scores_off() -> None:
    assert_disabled(open_store("/proc/noughts-cannot-be-here/noughts.db"))


def test_a_folder_as_the_database_turns_scores_off(tmp_path: Path) -> None:
    opened = open_store(tmp_path)
    assert_disabled(opened)
    assert "is a folder" in (opened.reason or "")


def as_ordinary_user(work: Callable[[], str]) -> str:
    """Run ``work`` where permissions bind: as root (CI), in a forked child that becomes 'nobody'."""
    if os.geteuid() != 0:
        return work()
    # A forked child keeps the modules already loaded (nobody cannot read root's Python files).
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.setgid(65534)
            os.setuid(65534)
            answer = work()
        except BaseException as error:
            answer = f"failed: {error!r}"
        finally:
            os.write(write_end, answer.encode())
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        answer = pipe.read()
    os.waitpid(pid, 0)
    return answer


def open_as_ordinary_user(path: Path, *, read_only: bool = False) -> tuple[bool, str]:
    def work() -> str:
        opened = open_store(path, read_only=read_only)
        return f"{opened.enabled}\n{opened.reason}"

    enabled, reason = [*as_ordinary_user(work).splitlines(), "", ""][:2]
    return enabled == "True", reason


@contextlib.contextmanager
def read_only_folder(games: int) -> Iterator[Path]:
    """A store file holding ``games`` games, the file and its folder made read-only (a CD, a shared mount)."""
    # Under /tmp, not tmp_path: 'nobody' must be able to reach the folder to find it read-only.
    folder = Path(tempfile.mkdtemp(dir="/tmp", prefix="noughts-readonly-"))
    try:
        path = folder / "noughts.db"
        real_store_file(path, games)
        path.chmod(0o444)
        folder.chmod(0o555)
        yield path
    finally:
        folder.chmod(0o700)
        shutil.rmtree(folder)


def test_an_existing_database_in_a_read_only_folder() -> None:
    # Under /tmp, not tmp_path: 'nobody' must be able to reach the folder to find it read-only.
    folder = Path(tempfile.mkdtemp(dir="/tmp", prefix="noughts-readonly-"))
    try:
        path = folder / "noughts.db"
        real_store_file(path, 2)
        before = path.read_bytes()
        path.chmod(0o644)
        folder.chmod(0o555)
        enabled, reason = open_as_ordinary_user(path)
        assert not enabled
        assert_sentence(reason)
        assert "off" in reason and "still plays" in reason
        assert path.read_bytes() == before and list(folder.glob("*.corrupt-*")) == []
    finally:
        folder.chmod(0o700)
        shutil.rmtree(folder)


def test_a_read_only_database_in_a_read_only_folder_can_be_read() -> None:
    with read_only_folder(3) as path:
        before = {p.name: p.read_bytes() for p in path.parent.iterdir()}

        def work() -> str:
            probe = path.parent / "probe"
            try:  # the test proves nothing where the folder can be written after all
                probe.touch()
            except PermissionError:
                pass
            else:
                return "the folder can be written"
            with open_store(path, read_only=True) as opened:
                if not opened.enabled:
                    return f"disabled: {opened.reason}"
                return f"{opened.count_games()} {opened.scores().opponents['medium']} {opened.game(3).x.name}"

        assert as_ordinary_user(work) == "3 Tally(wins=1, losses=0, draws=0) Ann"  # copies skip the tallies
        assert {p.name: p.read_bytes() for p in path.parent.iterdir()} == before  # not even a -shm


def test_reading_creates_and_changes_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "not" / "yet" / "noughts.db"
    with open_store(missing, read_only=True) as empty:
        assert empty.enabled and empty.read_only and empty.notices == []
        assert empty.count_games() == 0 and empty.games() == [] and empty.scores().people == {}
        with pytest.raises(GameNotFoundError):
            empty.game(1)
        with pytest.raises(StoreError, match="only to read") as caught:
            empty.record(game(DRAW), ANN, BOB)
        assert_sentence(str(caught.value))
        with pytest.raises(StoreError, match="only to read"):
            empty.reset()
    assert not (tmp_path / "not").exists()
    old = tmp_path / "old.db"
    make_version_1(old)
    before = old.read_bytes()
    with open_store(old, read_only=True) as upgraded_copy:  # read through a copy upgraded in memory
        assert [g.id for g in upgraded_copy.games()] == [3, 2, 1]
        assert upgraded_copy.scores().people == {"Ann": Tally(1, 0, 1), "Bob": Tally(0, 1, 1)}
    assert old.read_bytes() == before and pragma(old, "user_version") == 1
    current = tmp_path / "current.db"
    real_store_file(current, 2)
    with open_store(current) as writer, open_store(current, read_only=True) as reader:
        human_vs(writer, "easy", "win")  # a game saved while someone reads: the reader sees it
        assert reader.count_games() == 3 and reader.scores().run == 3  # 2 against medium, then 1


def test_a_disabled_store_on_request() -> None:
    off = Store.disabled("Scores are off because you asked for --no-scores.")
    assert not off.enabled and off.notices == [off.reason]
    assert off.record(game(DRAW), ANN, BOB) == Recorded(None)


# where the file is ----------------------------------------------------------------------
def test_default_path() -> None:
    home = {"HOME": "/home/ann"}
    assert default_path(home) == Path("/home/ann/.local/share/noughts/noughts.db")
    assert default_path({**home, "XDG_DATA_HOME": "/x"}) == Path("/x/noughts/noughts.db")
    assert default_path({**home, "XDG_DATA_HOME": "rel"}) == Path("/home/ann/.local/share/noughts/noughts.db")
    assert default_path({**home, "NOUGHTS_DB": "~/s.db"}) == Path("~/s.db").expanduser()
    assert default_path({**home, "NOUGHTS_DB": ""}) == Path("/home/ann/.local/share/noughts/noughts.db")
    with pytest.raises(StoreError, match="home"):
        default_path({})


def test_open_store_uses_the_environment(tmp_path: Path) -> None:
    with open_store(environ={"NOUGHTS_DB": str(tmp_path / "env.db")}) as opened:
        assert opened.path == tmp_path / "env.db"
    with open_store(environ={"XDG_DATA_HOME": str(tmp_path / "xdg")}) as opened:
        assert opened.path == tmp_path / "xdg" / "noughts" / "noughts.db" and opened.enabled
    assert_disabled(open_store(environ={}))  # no home at all: off, not a crash


# staying cheap ---------------------------------------------------------------------------
def test_importing_the_store_loads_nothing_heavy() -> None:
    code = ("import sys, noughts.store; "
            "print(' '.join(m for m in ('sqlite3', 'dataclasses', 'typing', 'datetime', 'json', 'inspect', 'pathlib') "
            "if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.split() == []


def opening_work(path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """The SQLite instructions each statement runs while the store at ``path`` opens: work, not time."""
    work = {"": 0}
    current = ""
    connect = sqlite3.connect

    def counted(*args: object, **kwargs: object) -> sqlite3.Connection:
        def trace(sql: str) -> None:
            nonlocal current
            current = sql
            work.setdefault(sql, 0)

        def step() -> int:
            work[current] += 1
            return 0  # go on

        connection = connect(*args, **kwargs)  # type: ignore[arg-type]
        connection.set_trace_callback(trace)
        connection.set_progress_handler(step, 1)
        return connection

    with monkeypatch.context() as patch:
        patch.setattr(sqlite3, "connect", counted)
        open_store(path).close()
    return work


def test_opening_a_store_with_history_is_quick(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Counted in SQLite's instructions, not timed: the same on any machine, however busy.
    real_store_file(tmp_path / "one.db", 1)
    real_store_file(tmp_path / "many.db", 1000)
    one, many = opening_work(tmp_path / "one.db", monkeypatch), opening_work(tmp_path / "many.db", monkeypatch)
    (check,) = [sql for sql in many if "quick_check" in sql]
    # Only the integrity check walks the stored games, a few dozen instructions each; nothing else grows.
    assert {sql: n for sql, n in many.items() if sql != check} == {sql: n for sql, n in one.items() if sql != check}
    assert many[check] - one[check] < 100 * 999, (one, many)


def test_recorded_summary_tells_the_person_how_the_scores_moved() -> None:
    assert Recorded(None).summary() == ""
    assert Recorded(4).summary() == "Saved as game 4."
    assert Recorded(5, points=2, run=3, difficulty="medium", high_score=3, new_high_score=True).summary() == (
        "Saved as game 5. +2 points: your run is 3; medium high score 3 (a new high score!).")
    assert Recorded(6, points=1, run=1, difficulty="easy", high_score=4).summary() == (
        "Saved as game 6. +1 point: your run is 1; easy high score 4.")
    assert Recorded(7, difficulty="hard", high_score=9).summary() == (
        "Saved as game 7. Your run is back to 0; hard high score 9.")
    assert Recorded(8, 3, 3, "hard", 3, True, (3, 3, 3)).summary() == (
        "Saved as game 8. +3 points: your run is 3; hard high score 3 (a new high score!).")
    assert Recorded(9, 3, 3, "hard", 3, False, (1, 1, 1)).summary() == (
        "Saved as game 9 (1×1, 1 in a row). +3 points: your run is 3; hard high score 3.")


# many games in one transaction -----------------------------------------------------------
def random_games(seed: int, count: int) -> list[Finished]:
    """Finished games on three boards between people and every kind of computer player, some with keys."""
    import random

    rng = random.Random(seed)
    computers = [Participant.computer(name) for name in ("easy", "medium", "hard", "perfect")]
    sides = [ANN, BOB, Participant.human("Cy"), *computers]
    boards = [Board(), Board(1, 1, 1), Board(4, 4, 3)]
    games = []
    for number in range(count):
        played = Game(rng.choice(boards))
        while played.result is None:
            played.play(rng.choice(played.board.legal_moves))
        key = f"k{rng.randrange(count // 3)}" if rng.random() < 0.5 else None  # some keys come back: retries
        x, o = rng.choice(sides), rng.choice(sides)
        if key is not None:  # a retry is the same game again
            earlier = next((g for g in games if g.game_key == key), None)
            if earlier is not None:
                played, x, o = earlier.game, earlier.x, earlier.o
        games.append(Finished(played, x, o, game_key=key, played_at=datetime(2024, 1, 1, tzinfo=UTC)
                              + timedelta(seconds=number)))
    return games


def test_a_batch_scores_exactly_as_the_games_one_at_a_time(store: Store, tmp_path: Path) -> None:
    games = random_games(7, 240)
    with open_store(tmp_path / "one-by-one.db") as single:
        expected = [single.record(g.game, g.x, g.o, game_key=g.game_key, played_at=g.played_at) for g in games]
        expected_scores, expected_games = single.scores(), single.games(limit=1000)
    answers: list[Recorded | StoreError] = []
    for start in range(0, len(games), 37):  # batches of 37, the last one shorter
        answers += store.record_many(games[start:start + 37])
    assert answers == expected
    assert store.scores() == expected_scores
    assert store.games(limit=1000) == expected_games
    assert len({a.game_id for a in expected if isinstance(a, Recorded)}) == store.count_games() < 240


def test_a_batch_answers_a_bad_key_alone_and_keeps_the_rest(store: Store) -> None:
    hard = Participant.computer("hard")
    first = store.record(win_for("X"), ANN, hard, game_key="room/1")
    answers = store.record_many([Finished(win_for("X"), ANN, hard, game_key="room/2"),
                                 Finished(game(DRAW), ANN, hard, game_key="room/1"),  # not the game kept as room/1
                                 Finished(win_for("X"), ANN, hard, game_key="room/2"),  # a retry within the batch
                                 Finished(game(DRAW), BOB, ANN, game_key="room/2")])  # and a clash within it
    second, clash, retry, clash_in_batch = answers
    assert isinstance(second, Recorded) and (second.game_id, second.run) == (2, 6) and retry == second
    for error in (clash, clash_in_batch):
        assert isinstance(error, StoreError) and "different game" in str(error)
    assert store.count_games() == 2 and store.scores().opponents["hard"] == Tally(2, 0, 0)
    assert store.record(win_for("X"), ANN, hard, game_key="room/1") == first
    assert store.record_many([]) == []


def test_the_leading_people_are_read_without_the_rest(store: Store) -> None:
    for number in range(12):
        for _ in range(number % 4):
            store.record(win_for("X"), Participant.human(f"P{number:02}"), BOB)
    top = store.scores(top_people=5).people
    assert list(top) == ["P03", "P07", "P11", "P02", "P06"]  # most wins first, then by name
    assert top["P03"] == Tally(3, 0, 0) and len(store.scores().people) == 10  # the 9 who won, and Bob


def test_a_schema_committed_by_another_process_between_two_reads_is_not_taken_for_a_foreign_file(
        tmp_path: Path) -> None:
    """Two noughts start on one new file: the second reads the header, then the first commits the schema.
    Read in separate transactions, the tables showed without the application id: "another program"."""
    target = tmp_path / "noughts.db"
    blank = sqlite3.connect(target, isolation_level=None)
    blank.execute("PRAGMA journal_mode = WAL")  # as the first process leaves it just before its schema
    reader = sqlite3.connect(target, isolation_level=None)

    class SchemaCommittedAfterFirstRead:
        def execute(self, sql: str) -> sqlite3.Cursor:
            cursor = reader.execute(sql)
            if sql.startswith("PRAGMA application_id"):
                store_module._prepare(blank)  # the other process: schema, application id and version, committed
            return cursor

        @property
        def in_transaction(self) -> bool:
            return reader.in_transaction

    try:
        assert store_module._inspect(SchemaCommittedAfterFirstRead()) == 0  # type: ignore[arg-type]
        assert store_module._inspect(reader) == store_module._latest()  # the next look sees the committed schema
    finally:
        reader.close()
        blank.close()


def test_high_scores_are_shown_for_the_difficulties_that_can_play_and_any_that_scored() -> None:
    from noughts.store.scoring import BoardScores, high_scores_shown

    asked: list[str] = []

    def can_play(difficulty: str) -> bool:
        asked.append(difficulty)
        return difficulty != "medium"

    assert high_scores_shown(BoardScores(0, {}), can_play) == {"easy": 0, "hard": 0}
    asked.clear()
    assert high_scores_shown(BoardScores(4, {"medium": 4, "hard": 3}), can_play) == {"easy": 0, "medium": 4, "hard": 3}
    assert asked == ["easy"]  # a difficulty that scored on the board is shown without asking
