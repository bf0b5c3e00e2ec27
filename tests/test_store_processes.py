"""The store across processes: killed at any moment, and two writing at once, lose nothing (SQLite and PostgreSQL)."""

from __future__ import annotations

import os
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


# Forks one writer per line read (its seed) and says "pid N", then, once it is gone, "status S". A fork
# starts writing in a millisecond where a new Python takes 100: a hundred kills cost little.
FORKER = """
import os, sys
import noughts.store, noughts.game  # loaded once, before any fork; no connection is open here
if sys.argv[2].startswith("postgresql://"):
    import psycopg, noughts.store.postgresql

writer, db, out = sys.argv[1], sys.argv[2], sys.argv[3]
for line in sys.stdin:
    seed = line.strip()
    pid = os.fork()
    if pid == 0:
        os.dup2(os.open(os.path.join(out, seed), os.O_WRONLY | os.O_CREAT | os.O_APPEND), 1)
        sys.argv = [writer, db, seed, "0"]
        try:
            exec(compile(open(writer).read(), writer, "exec"), {"__name__": "__main__"})
        except SystemExit as exit:
            os._exit(exit.code if isinstance(exit.code, int) else 1)
        except BaseException:
            import traceback
            traceback.print_exc()
            os._exit(1)
        os._exit(0)
    print("pid", pid, flush=True)
    print("status", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)
"""


@pytest.fixture(params=["sqlite", "postgresql"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh store: a file that does not exist yet, or an empty schema on a real PostgreSQL server."""
    if request.param == "sqlite":
        return str(tmp_path / "noughts.db")
    return str(request.getfixturevalue("postgres").fresh_url())


def writer(script: Path, db: str, seed: int, count: int, *barrier: str) -> subprocess.Popen[str]:
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


def check_file(db: str, expected: dict[int, str]) -> None:
    if db.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(db) as server:
            kept = dict(server.execute("SELECT id, record FROM games").fetchall())
    else:
        connection = sqlite3.connect(db)
        try:
            assert connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            kept = dict(connection.execute("SELECT id, record FROM games"))
        finally:
            connection.close()
        assert list(Path(db).parent.glob("*.corrupt-*")) == []
    missing = {game_id: record for game_id, record in expected.items() if kept.get(game_id) != record}
    assert not missing, f"{len(missing)} committed games lost or changed, e.g. {list(missing.items())[:3]}"


def check_tallies(db: str) -> None:
    """Each human-vs-computer game is in exactly one opponent tally: no score update was lost."""
    with open_store(db) as store:
        assert store.notices == []
        scores = store.scores()
        games = store.games(limit=1_000_000)
    mixed = sum(1 for g in games if g.x.kind != g.o.kind)
    two_person = sum(2 for g in games if g.x.kind == g.o.kind == "human")
    assert sum(t.games for t in scores.opponents.values()) == mixed
    assert sum(t.games for t in scores.people.values()) == two_person


def test_killing_the_writer_at_any_moment_loses_no_committed_game(tmp_path: Path, where: str) -> None:
    script, forker, outputs = tmp_path / "writer.py", tmp_path / "forker.py", tmp_path / "outputs"
    script.write_text(WRITER)
    forker.write_text(FORKER)
    outputs.mkdir()
    db = where
    rounds = 100 if db.endswith(".db") else 20  # each PostgreSQL connection costs the server a process
    rng = random.Random(2024)  # the plan of kills is the same every run; where each lands is up to the machine
    expected: dict[int, str] = {}
    kills_mid_run = 0
    errors_file = tmp_path / "errors"
    with errors_file.open("a") as errors_out:
        writers = subprocess.Popen([sys.executable, str(forker), str(script), str(db), str(outputs)],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors_out, text=True)
        assert writers.stdin is not None and writers.stdout is not None
        try:
            for round_number in range(rounds):
                writers.stdin.write(f"{round_number}\n")
                writers.stdin.flush()
                word, pid = writers.stdout.readline().split()
                assert word == "pid", (word, errors_file.read_text())
                output = outputs / str(round_number)
                if round_number % 5 == 0:  # at once, or while opening (even creating) the file
                    time.sleep(rng.uniform(0.0, 0.01))
                else:  # after some games were committed: mid-game, mid-commit, between the two
                    wanted = rng.randint(1, 3)
                    deadline = time.monotonic() + 30
                    while not output.exists() or output.read_text().count("\n") < wanted:
                        assert time.monotonic() < deadline, f"round {round_number}: no game committed in 30 s"
                        time.sleep(0.001)
                    time.sleep(rng.uniform(0.0, 0.005))
                os.kill(int(pid), signal.SIGKILL)
                word, status = writers.stdout.readline().split()
                errors = errors_file.read_text()
                assert (word, int(status)) == ("status", -signal.SIGKILL), (word, status, errors)
                assert "Traceback" not in errors, errors
                games = committed(output.read_text() if output.exists() else "")
                kills_mid_run += bool(games)
                assert not expected.keys() & games.keys(), "a game number was handed out twice"
                expected.update(games)
        finally:
            writers.stdin.close()
            writers.wait(timeout=30)
    assert kills_mid_run >= rounds // 5, "too few kills landed while games were being written to test anything"
    check_file(db, expected)
    check_tallies(db)


def test_two_processes_writing_at_once_lose_nothing(tmp_path: Path, where: str) -> None:
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    db = where  # both start on a file that does not exist yet, or an empty schema
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
