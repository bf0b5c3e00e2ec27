"""The store across processes: killed at any moment, and two writing at once, lose nothing."""

from __future__ import annotations

import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from noughts.store import open_store

pytestmark = pytest.mark.slow

# Plays random games against a mix of opponents and prints "id x_kind o_kind record" after each commit.
WRITER = """
import random, sys
from noughts import Game
from noughts.store import Participant, open_store

path, seed, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if len(sys.argv) > 4:  # a starting line, so that two writers really do overlap
    import os, pathlib, time
    pathlib.Path(sys.argv[4], f"ready-{seed}").touch()
    while not os.path.exists(os.path.join(sys.argv[4], "go")):
        time.sleep(0.001)
store = open_store(path)
for notice in store.notices:
    print("NOTICE", notice, flush=True)
if not store.enabled:
    sys.exit(3)
rng = random.Random(seed)
sides = [Participant.human("Ann"), Participant.human("Bob"), Participant.computer("easy"),
         Participant.computer("hard"), Participant.computer("perfect")]
played = 0
while count == 0 or played < count:
    game = Game()
    while game.result is None:
        game.play(rng.choice(game.board.legal_moves))
    x, o = rng.choice(sides), rng.choice(sides)
    done = store.record(game, x, o)
    print(done.game_id, x.kind, o.kind, game.to_text(), flush=True)
    played += 1
"""


def writer(script: Path, db: Path, seed: int, count: int, *barrier: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(script), str(db), str(seed), str(count), *barrier],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def committed(output: str) -> dict[int, str]:
    """The games a writer said were committed: id -> record (a line cut short by the kill is ignored)."""
    games = {}
    for line in output.splitlines(keepends=True):
        assert not line.startswith("NOTICE"), line  # a kill must never make the file look damaged
        if line.endswith("\n"):
            game_id, _x_kind, _o_kind, record = line.rstrip("\n").split(" ", 3)
            games[int(game_id)] = record
    return games


def check_file(db: Path, expected: dict[int, str]) -> None:
    connection = sqlite3.connect(db)
    try:
        assert connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        kept = dict(connection.execute("SELECT id, record FROM games"))
    finally:
        connection.close()
    missing = {game_id: record for game_id, record in expected.items() if kept.get(game_id) != record}
    assert not missing, f"{len(missing)} committed games lost or changed, e.g. {list(missing.items())[:3]}"
    assert list(db.parent.glob("*.corrupt-*")) == []


def check_tallies(db: Path) -> None:
    """Each human-vs-computer game is in exactly one opponent tally: no score update was lost."""
    with open_store(db) as store:
        assert store.notices == []
        scores = store.scores()
        games = store.games(limit=1_000_000)
    mixed = sum(1 for g in games if g.x.kind != g.o.kind)
    two_person = sum(2 for g in games if g.x.kind == g.o.kind == "human")
    assert sum(t.games for t in scores.opponents.values()) == mixed
    assert sum(t.games for t in scores.people.values()) == two_person


def test_killing_the_writer_at_any_moment_loses_no_committed_game(tmp_path: Path) -> None:
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    db = tmp_path / "noughts.db"
    rng = random.Random()
    expected: dict[int, str] = {}
    kills_mid_run = 0
    for round_number in range(100):
        child = writer(script, db, round_number, 0)
        first = ""
        if round_number % 2:  # mid-run, however slow the machine: once the first game is committed
            assert child.stdout is not None
            first = child.stdout.readline()
            time.sleep(rng.uniform(0.0, 0.05))
        else:  # at any moment from start-up on: some land while opening (even creating) the file
            time.sleep(rng.uniform(0.0, 0.3))
        child.send_signal(signal.SIGKILL)
        output, errors = child.communicate(timeout=30)
        output = first + output
        assert child.returncode == -signal.SIGKILL, (child.returncode, errors)
        assert "Traceback" not in errors, errors
        games = committed(output)
        kills_mid_run += bool(games)
        assert not expected.keys() & games.keys(), "a game number was handed out twice"
        expected.update(games)
    assert kills_mid_run >= 20, "too few kills landed while games were being written to test anything"
    check_file(db, expected)
    check_tallies(db)


def test_two_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    db = tmp_path / "noughts.db"  # both start on a file that does not exist yet
    children = [writer(script, db, seed, 200, str(tmp_path)) for seed in (1, 2)]
    deadline = time.monotonic() + 60
    while not all((tmp_path / f"ready-{seed}").exists() for seed in (1, 2)):
        assert time.monotonic() < deadline and all(c.poll() is None for c in children)
        time.sleep(0.005)
    (tmp_path / "go").touch()  # both open the not-yet-existing file and write at the same moment
    expected: dict[int, str] = {}
    for child in children:
        output, errors = child.communicate(timeout=120)
        assert child.returncode == 0 and errors == "", (output[-500:], errors)
        games = committed(output)
        assert len(games) == 200
        assert not expected.keys() & games.keys()
        expected.update(games)
    assert len(expected) == 400
    check_file(db, expected)
    check_tallies(db)
    with open_store(db) as store:
        assert store.count_games() == 400
