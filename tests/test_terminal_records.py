"""`noughts scores`, `history` and `replay` on what the store keeps: boards, odd names, long lists,
files that are not noughts' own, damaged or newer files, and read-only places."""

from __future__ import annotations

import io
import os
import random
import re
import shutil
import sqlite3
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from noughts import Board, text
from noughts.errors import NoughtsError
from noughts.game import Game
from noughts.store import DIFFICULTY_POINTS, Participant, Store, open_store
from noughts.terminal import records
from test_store import as_ordinary_user
from test_terminal import run as run_in_this_process

X_WINS = "a1 b1 a2 b2 a3"
ANN = Participant.human("Ann")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "scores.db"


def env_for(db: Path) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "NOUGHTS_DB", "PYTHONUNBUFFERED")}
    environ["NOUGHTS_DB"] = str(db)
    return environ


def run(db: Path, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    """`noughts ARGS` on this database, in this process as test_terminal.run runs it: nothing here needs a
    process of its own (no prompt answered as it comes, no Ctrl-C, no terminal), and a process costs
    Python's start-up and every import again."""
    return run_in_this_process(env_for(db), *args, stdin=stdin)


def store_with(db: Path, work: Callable[[Store], object]) -> None:
    with open_store(db) as store:
        assert store.enabled, store.reason
        work(store)


def damaged_store(db: Path) -> None:
    """A noughts database cut in half: its header still says it is ours."""
    store_with(db, lambda s: s.record(Game.from_text(X_WINS), ANN, Participant.computer("easy")))
    connection = sqlite3.connect(db)
    with connection:
        connection.executemany("INSERT INTO games (played_at, x_name, x_kind, o_name, o_kind, first, rows, cols, k,"
                               " record, result) SELECT played_at, x_name, x_kind, o_name, o_kind, first, rows,"
                               " cols, k, record, result FROM games WHERE id = 1", [()] * 400)
    connection.close()
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2])


def files_in(folder: Path) -> dict[str, bytes]:
    """The files and their bytes; a WAL index and an empty WAL, which any SQLite reader may leave, aside."""
    return {p.name: p.read_bytes() for p in folder.iterdir()
            if not p.name.endswith("-shm") and not (p.name.endswith("-wal") and not p.stat().st_size)}


# per board ------------------------------------------------------------------------------
def test_scores_are_shown_per_board_3x3_first(db: Path) -> None:
    hard, easy = Participant.computer("hard"), Participant.computer("easy")

    def play(store: Store) -> None:
        store.record(Game.from_text("size=4x4 k=4: a1 a2 b1 b2 c1 c2 d1"), ANN, hard)
        store.record(Game.replay(["a1"], Board(1, 1, 1)), ANN, hard)
        store.record(Game.replay(["a1"], Board(1, 1, 1)), ANN, hard)
        store.record(Game.from_text(X_WINS), ANN, easy)

    store_with(db, play)
    result = run(db, "scores")
    assert result.returncode == 0 and result.stderr == "", result
    blocks = result.stdout.split("\n\n")
    assert " ".join(blocks[0].splitlines()) == text.SCORING_RULE  # as the page says it
    assert all(f"{points} on {level}" in text.SCORING_RULE for level, points in DIFFICULTY_POINTS.items())
    assert blocks[1].splitlines() == [
        "High scores on 3x3k3 (3×3, 3 in a row):", "  Easy        1", "  Medium      0", "  Hard        0",
        "Current run: 1"]
    assert blocks[2].splitlines() == [
        "High scores on 1x1k1 (1×1, 1 in a row):", "  Easy        0", "  Medium      0", "  Hard        6",
        "Current run: 6"]
    assert blocks[3].splitlines()[0] == "High scores on 4x4k4 (4×4, 4 in a row):"
    assert "  Hard        3" in blocks[3].splitlines() and "Current run: 3" in blocks[3].splitlines()
    assert re.search(r"^  Hard +3 +0 +0$", result.stdout, re.M)  # the tally counts every board


def test_high_scores_are_listed_only_for_the_difficulties_that_can_play_the_board(db: Path) -> None:
    hard = Participant.computer("hard")
    seven = "size=7x7 k=5: " + " ".join(["a1", "a2", "b1", "b2", "c1", "c2", "d1", "d2", "e1"])
    store_with(db, lambda store: store.record(Game.from_text(seven), ANN, hard))
    result = run(db, "scores")
    assert result.returncode == 0 and result.stderr == "", result
    block = next(b for b in result.stdout.split("\n\n") if b.startswith("High scores on 7x7k5"))
    assert block.splitlines() == ["High scores on 7x7k5 (7×7, 5 in a row):", "  Easy        0", "  Hard        3",
                                  "Current run: 3"]  # medium cannot play 7×7: no "medium 0" to beat


def test_every_listing_fits_80_columns_with_long_names_and_many_boards(db: Path) -> None:
    long_name, wide = "Bartholomew-Maximilian Fortescue-Smythe the Third", "表" * 30
    board, cells, rng = Board(15, 15, 5), [], random.Random(3)
    while not board.is_over:  # a long game on a big board
        cells.append(rng.choice(board.legal_moves))
        board = board.play(cells[-1])
    long_game = Game.replay(cells, Board(15, 15, 5))

    def play(store: Store) -> None:
        for rows in range(1, 5):
            for cols in range(1, 5):
                store.record(Game.replay(["a1"], Board(rows, cols, 1)), Participant.human(long_name),
                             Participant.computer("easy"))
        store.record(long_game, Participant.human(long_name), Participant.human(wide))
        store.record(Game.from_text(X_WINS), Participant.computer("newell-simon"), Participant.computer("simple-rules"))
        store.record(Game.from_text(X_WINS), Participant.human(wide), Participant.computer("newell-simon"))

    store_with(db, play)
    for command in ("scores", "scores --all", "history", "history --limit 100"):
        result = run(db, *command.split())
        assert result.returncode == 0 and result.stderr == "", (command, result)
        widths = [sum(2 if "\u4e00" <= c <= "\u9fff" else 1 for c in line) for line in result.stdout.splitlines()]
        assert max(widths) <= 80, (command, result.stdout)
    history = run(db, "history").stdout.splitlines()
    listing = "\n".join(history)
    assert re.search(rf"^ *17  .*  Bartholomew-… +表+… +[XO] won +15x15k5: \w+ .*…( \({len(cells)} moves\))?$",
                     listing, re.M), listing
    assert re.search(r"^ *18  .*  Newell–Simon\* +Simple rules\* +X won +a1 b1 a2 b2 a3$", listing, re.M), listing
    assert re.search(r"^ *16  .*  Bartholomew-… +Easy\* +X won +4x4k1: a1$", listing, re.M), listing
    assert history[-1] == "(* a computer player)"


# names ----------------------------------------------------------------------------------
def test_names_are_shown_escaped_and_cut_to_their_column(db: Path) -> None:
    evil, long_name = "\x1b[31mEvil\n", "Bartholomew-Maximilian Fortescue-Smythe the Third"
    wide = "表" * 30

    def play(store: Store) -> None:
        store.record(Game.from_text(X_WINS), Participant.human(evil), Participant.human(long_name))
        store.record(Game.from_text(X_WINS), Participant.human("\u202eBob"), Participant.human(wide))
        store.record(Game.from_text(X_WINS), Participant.human(evil), Participant.computer("easy"))

    store_with(db, play)
    outputs = {command: run(db, *command.split()) for command in ("scores", "history", "replay 1 --all")}
    for command, result in outputs.items():
        assert result.returncode == 0 and result.stderr == "", (command, result)
        assert "\x1b" not in result.stdout and "\u202e" not in result.stdout, command  # nothing raw reaches the screen
        assert "\\x1b[31mEvil" in result.stdout, command
    scores, history = outputs["scores"].stdout, outputs["history"].stdout
    assert re.search(r"^  \\x1b\[31mEvil +1 +0 +0$", scores, re.M), scores
    assert re.search(r"^  Bartholomew-Maximilian… +0 +1 +0$", scores, re.M), scores  # 24 columns at most
    assert re.search(r"^  \\u202eBob +1 +0 +0$", scores, re.M), scores
    assert re.search(r"^  表{11}… +0 +1 +0$", scores, re.M), scores  # wide characters take two columns each
    assert re.search(r"^ *2  .*  \\u202eBob +表{7}… +X won +a1 b1 a2 b2 a3$", history, re.M), history
    assert re.search(r"^ *1  .*  \\x1b\[31mEvil +Bartholomew-Max… +X won", history, re.M), history
    assert outputs["replay 1 --all"].stdout.endswith("\\x1b[31mEvil (X) wins along the left column a1–a3.\n")


# the top ten ----------------------------------------------------------------------------
def test_scores_lists_the_ten_with_the_most_games_and_all_of_them_with_all(db: Path) -> None:
    def play(store: Store) -> None:
        for i in range(1, 7):  # P6 and Q6 play six games, ... P1 and Q1 one: twelve people
            for _ in range(i):
                store.record(Game.from_text(X_WINS), Participant.human(f"P{i}"), Participant.human(f"Q{i}"))
        store.record(Game.from_text(X_WINS), ANN, Participant.computer("easy"))

    store_with(db, play)
    top = run(db, "scores")
    assert top.returncode == 0, top
    people = top.stdout.split("Two-person games:\n")[1].splitlines()
    assert [line.split()[0] for line in people[1:11]] == ["P6", "Q6", "P5", "Q5", "P4", "Q4", "P3", "Q3", "P2", "Q2"]
    assert people[11:] == ["  … and 2 more ('noughts scores --all' lists every one)"]
    assert "more (" not in top.stdout.split("Two-person games:")[0]  # one computer player: nothing left out
    every = run(db, "scores", "--all")
    assert every.returncode == 0, every
    people = every.stdout.split("Two-person games:\n")[1].splitlines()
    assert [line.split()[0] for line in people[1:]] == [
        "P6", "Q6", "P5", "Q5", "P4", "Q4", "P3", "Q3", "P2", "Q2", "P1", "Q1"]
    refused = run(db, "scores", "--all", "--reset")
    assert refused.returncode == 2 and refused.stderr.startswith("noughts: --all ")


def test_the_lists_say_how_to_see_more_only_as_the_command_words_it(db: Path) -> None:
    def play(store: Store) -> None:
        for i in range(12):
            store.record(Game.from_text(X_WINS), Participant.human(f"P{i}"), Participant.human(f"Q{i}"))

    store_with(db, play)
    listed, tallied = io.StringIO(), io.StringIO()
    assert records.history(str(db), 1, out=listed) == 0 and records.scores(str(db), out=tallied) == 0
    assert listed.getvalue().splitlines()[-1] == "(the newest 1 of 12 games)"  # the command adds its flag
    assert tallied.getvalue().splitlines()[-1] == "  … and 14 more"
    assert run(db, "history", "--limit", "1").stdout.splitlines()[-1] == \
        "(the newest 1 of 12 games; --limit N shows more)"
    with pytest.raises(NoughtsError, match=r"^a list of games holds at least 1, not 0$"):
        records.history(str(db), 0, out=listed)
    refused = run(db, "history", "--limit", "0")
    assert (refused.returncode, refused.stderr) == (2, "noughts: --limit takes a number of games of at least 1, "
                                                       "not 0\n")


# files that are not ours, damaged or newer ----------------------------------------------
READ_COMMANDS = [("scores",), ("history",), ("replay", "1")]
PLAY = ("play", "--opponent", "person", "--first", "me")
MOVES = b"a1\na2\nb1\nb2\nc1\n"


def notice(played: str) -> str:
    """The notice a game starts with, its lines joined (it is wrapped to 80 columns)."""
    return " ".join(played.split("\n\n")[0].split())


def assert_one_line_error(result: subprocess.CompletedProcess[str], *words: str) -> None:
    assert result.returncode == 2 and result.stdout == "", result
    assert result.stderr.startswith("noughts: ") and result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr and all(w in result.stderr for w in words), result.stderr


@pytest.mark.parametrize("contents", [b"this is not a database\n" * 100, b"SQLITE"])
def test_a_file_that_is_not_ours_is_refused_and_left_untouched(db: Path, contents: bytes) -> None:
    db.write_bytes(contents)
    for command in READ_COMMANDS:
        assert_one_line_error(run(db, *command), f"the file {db} is not a noughts database", "left untouched")
    played = run(db, *PLAY, stdin=MOVES)
    assert played.returncode == 0, played
    assert notice(played.stdout).startswith(f"Scores and history are off because the file {db} is not a "
                                            "noughts database")
    assert "The game still plays" in notice(played.stdout) and "Saved as" not in played.stdout
    assert files_in(db.parent) == {"scores.db": contents}


def test_another_programs_sqlite_file_is_refused_and_left_untouched(db: Path) -> None:
    other = sqlite3.connect(db)
    other.execute("CREATE TABLE contacts (name TEXT, phone TEXT)")
    other.commit()
    other.close()
    before = files_in(db.parent)
    assert_one_line_error(run(db, "history"), str(db), "not a noughts database (it belongs to another program)")
    assert "it belongs to another program" in notice(run(db, *PLAY, stdin=MOVES).stdout)
    assert files_in(db.parent) == before


def test_a_damaged_database_is_moved_aside_only_when_a_game_is_saved(db: Path) -> None:
    damaged_store(db)
    before = files_in(db.parent)
    for command in READ_COMMANDS:
        assert_one_line_error(run(db, *command), str(db), "is damaged", "moved aside the next time")
    assert files_in(db.parent) == before
    played = run(db, *PLAY, stdin=MOVES)
    assert played.returncode == 0, played
    said = notice(played.stdout)
    [aside] = db.parent.glob("scores.db.corrupt-*")
    assert "damaged" in said and str(aside) in said and "Saved as game 1." in played.stdout
    assert aside.read_bytes() == before["scores.db"]


def test_a_database_from_a_newer_noughts_is_left_untouched(db: Path) -> None:
    store_with(db, lambda s: s.record(Game.from_text(X_WINS), ANN, Participant.computer("easy")))
    newer = sqlite3.connect(db)
    newer.execute("PRAGMA user_version = 99")
    newer.commit()
    newer.close()
    before = files_in(db.parent)
    for command in READ_COMMANDS:
        assert_one_line_error(run(db, *command), f"the database {db} was made by a newer noughts")
    played = run(db, *PLAY, stdin=MOVES)
    assert f"the database {db} was made by a newer noughts" in notice(played.stdout)
    assert "Saved as" not in played.stdout
    assert files_in(db.parent) == before


def test_reading_a_missing_database_creates_nothing(tmp_path: Path) -> None:
    db = tmp_path / "no" / "such" / "scores.db"
    assert run(db, "history").stdout == f"No games recorded yet in {db}: play one with 'noughts play'.\n"
    assert "Current run: 0" in run(db, "scores").stdout
    assert list(tmp_path.iterdir()) == []


# read-only places -----------------------------------------------------------------------
def test_scores_and_history_work_on_a_read_only_file_in_a_read_only_folder() -> None:
    # Under /tmp, not tmp_path: 'nobody' must be able to reach the folder.
    folder = Path(tempfile.mkdtemp(dir="/tmp", prefix="noughts-readonly-"))
    try:
        db = folder / "scores.db"
        store_with(db, lambda s: s.record(Game.from_text(X_WINS), ANN, Participant.computer("medium")))

        def show() -> str:
            scores, history = io.StringIO(), io.StringIO()
            records.scores(str(db), out=scores)
            records.history(str(db), out=history)
            return scores.getvalue() + history.getvalue()

        def work() -> str:
            if os.access(folder, os.W_OK):  # the test proves nothing where the folder can be written after all
                return "the folder can be written"
            return show()

        show()  # loads every module the commands use while they can still be read
        db.chmod(0o444)
        folder.chmod(0o555)
        before = {p.name: p.read_bytes() for p in folder.iterdir()}
        output = as_ordinary_user(work)
        assert "  Medium      2\n  Hard        0\nCurrent run: 2\n" in output, output
        assert re.search(r"^ *1  .*  Ann +Medium\* +X won +a1 b1 a2 b2 a3$", output, re.M), output
        assert {p.name: p.read_bytes() for p in folder.iterdir()} == before  # not even a -shm
    finally:
        folder.chmod(0o700)
        shutil.rmtree(folder)


def test_replay_names_the_players_without_saying_you_was(db: Path) -> None:
    store_with(db, lambda s: s.record(Game.from_text(X_WINS), Participant.human("You"), Participant.computer("hard")))
    out = io.StringIO()
    assert records.replay(1, db=str(db), step=False, out=out, environ=env_for(db)) == 0
    first, last = out.getvalue().splitlines()[0], out.getvalue().splitlines()[-1]
    assert "was X" not in first and first.endswith("X You, O Hard (computer).")  # a player by its label
    assert last.startswith("You (X) win along ")  # not "You (X) wins"
    out = io.StringIO()
    store_with(db, lambda s: s.record(Game.from_text(X_WINS), Participant.computer("hard"), Participant.human("Ann")))
    assert records.replay(2, db=str(db), step=False, out=out, environ=env_for(db)) == 0
    assert out.getvalue().splitlines()[-1].startswith("Hard (X) wins along ")  # the label's own case
