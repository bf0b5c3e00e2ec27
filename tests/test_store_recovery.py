"""The web server's score store comes back after it fails, and its failures reach the log, never the players.

On real servers: PostgreSQL down when the web server starts and brought up later, a database
dropped and made again while games are played, a SQLite file that cannot be written. Games that
end meanwhile wait in memory and are saved when the store is back; ``/healthz`` says how the
store is; the players read one plain sentence, the log the detail, once per cause.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

import pg_server
from noughts import Game, text
from noughts.store import Participant
from noughts.web import create_app
from noughts.web.guard import install_log_limiter
from noughts.web.protocol import Limits
from noughts.web.recording import Recorder, _FailureLog
from pg_server import PASSWORD, USER, PostgresServer, free_port

ANN, EASY = Participant.human("Ann"), Participant.computer("easy")
LEAKS = ("postgresql://", "relation", "does not exist", "NOUGHTS_DB", "--db", "Traceback", "Error", "/")


def sql(url: str, statement: str) -> list[tuple[object, ...]]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        cursor = connection.execute(statement)
        return cursor.fetchall() if cursor.description else []


def keys_in(url: str) -> set[str]:
    if not sql(url, "SELECT 1 FROM pg_tables WHERE tablename = 'games'"):
        return set()  # not made (again) yet
    return {str(key) for (key,) in sql(url, "SELECT game_key FROM games")}


def wait_until(condition: Any, what: str, seconds: float = 60) -> None:
    """Poll ``condition``; fail (not hang) if it never holds. Not a timing assertion: the bound is generous."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


async def wait_for(condition: Any, what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.02)


def play_one_game(client: TestClient) -> list[str]:
    """Play a game against the computer through the websocket, to its ``recorded`` message: every frame read, raw."""
    frames: list[str] = []
    with client.websocket_connect("/ws") as ws:
        def read() -> dict[str, Any]:
            frames.append(ws.receive_text())
            message: dict[str, Any] = json.loads(frames[-1])
            return message

        read(), read()  # welcome, scores
        ws.send_json({"type": "play_computer", "opponent": "random", "first": "you", "name": "Ann"})
        while True:
            message = read()
            assert message["type"] != "error", message
            if message["type"] == "recorded":
                return frames
            if message["type"] == "state" and message["result"] is None \
                    and message["turn"] == message["seats"][0]["mark"]:
                ws.send_json({"type": "move", "cell": message["cells"].index(None), "game": message["game"]})


def recorded_of(frames: list[str]) -> dict[str, Any]:
    [recorded] = [json.loads(frame) for frame in frames if json.loads(frame)["type"] == "recorded"]
    return recorded


def leaks(frames: list[str], *where: str) -> list[str]:
    """What in the frames a player must not read: the store's location, its words, an exception."""
    found = []
    for frame in frames:
        message = json.loads(frame)
        if message["type"] not in ("recorded", "scores", "welcome", "error"):
            continue
        said = json.dumps({k: v for k, v in message.items() if k != "words"})  # the page's own words are fixed text
        found += [word for word in (*where, *LEAKS) if word and word in said and message["type"] != "welcome"]
    return found


@pytest.fixture(autouse=True)
def _logs_limited_as_the_server_limits_them() -> None:
    """``noughts web`` puts its LogLimiter (one line per message pattern) on the web's loggers; the
    recorder's lines must still say each cause: they once went through it and were merged."""
    install_log_limiter(Limits().log_every)


@pytest.fixture
def database(postgres: PostgresServer) -> Iterator[str]:
    """A database of its own (not a schema): the test drops and makes it again."""
    name = f"recovery_{free_port()}"
    sql(postgres.url(), f"CREATE DATABASE {name}")
    yield name
    sql(postgres.url(), f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


# PostgreSQL down at the start -------------------------------------------------------------------
def test_postgresql_down_at_the_start_then_up_keeps_every_game_and_healthz_says_so(
        monkeypatch: pytest.MonkeyPatch) -> None:
    port = free_port()
    url = f"postgresql://{USER}:{PASSWORD}@127.0.0.1:{port}/postgres"
    server = PostgresServer()
    monkeypatch.setattr(pg_server, "free_port", lambda: port)  # the server comes up where the web server looks
    try:
        with TestClient(create_app(url, notify=lambda line: None)) as client:
            health = client.get("/healthz")
            assert health.status_code == 200  # still serving games
            assert health.json() == {"ok": True, "connections": 0, "status": "degraded", "store": "retrying",
                                     "waiting": 0, "lost": 0}
            while_down = [recorded_of(play_one_game(client)) for _ in range(3)]
            assert [r["message"] for r in while_down] == [text.GAME_SAVED_LATER] * 3
            assert client.get("/healthz").json()["waiting"] == 3
            server.start()
            wait_until(lambda: client.get("/healthz").json()["store"] == "ok", "the store never came back")
            assert client.get("/healthz").json() == {"ok": True, "connections": 0, "status": "ok", "store": "ok",
                                                     "waiting": 0, "lost": 0}
            after = recorded_of(play_one_game(client))
            assert after["game_id"] == 4 and after["summary"].startswith("Saved as game 4")
        assert sql(url, "SELECT count(*) FROM games") == [(4,)]
    finally:
        server.stop()


# a database dropped and made again ---------------------------------------------------------------
def test_a_database_dropped_and_made_again_gets_its_tables_back_and_every_later_game(
        postgres: PostgresServer, database: str) -> None:
    url = postgres.url(database=database)
    told: list[dict[str, Any]] = []
    game = Game.from_text("a1 b1 a2 b2 a3")

    async def scenario() -> None:
        recorder = Recorder(url, gather=0, notify=lambda line: None)
        await recorder.start()

        def end(key: str) -> None:
            recorder.write_later("room", game, ANN, EASY, lambda code, recorded, scores: told.append(recorded), key)

        for number in range(3):
            end(f"before-{number}")
        await wait_for(lambda: len(told) == 3, "the first games were not kept")
        assert [r["game_id"] for r in told] == [1, 2, 3]
        await asyncio.get_running_loop().run_in_executor(None, lambda: (
            sql(postgres.url(), f"DROP DATABASE {database} WITH (FORCE)"),
            sql(postgres.url(), f"CREATE DATABASE {database}")))
        for number in range(5):
            end(f"after-{number}")
        await wait_for(lambda: len(told) == 8, "the games after the drop were never answered")
        loop = asyncio.get_running_loop()
        wanted = {f"after-{n}" for n in range(5)}
        deadline = time.monotonic() + 30
        while not wanted <= await loop.run_in_executor(None, keys_in, url):
            assert time.monotonic() < deadline, "the games after the drop were never kept"
            await asyncio.sleep(0.05)
        end("later")
        await wait_for(lambda: len(told) == 9, "a game after the store came back was not kept")
        assert told[-1]["game_id"] is not None
        await recorder.stop()

    asyncio.run(scenario())
    assert keys_in(url) == {f"after-{n}" for n in range(5)} | {"later"}
    assert all("relation" not in r.get("message", "") for r in told)


def test_a_dropped_database_s_words_never_reach_the_players(postgres: PostgresServer, database: str,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    url = postgres.url(database=database)
    caplog.set_level(logging.WARNING, logger="noughts.web")
    with TestClient(create_app(url, notify=lambda line: None)) as client:
        assert recorded_of(play_one_game(client))["game_id"] == 1
        sql(postgres.url(), f"DROP DATABASE {database} WITH (FORCE)")  # and not made again
        frames = play_one_game(client)
        assert recorded_of(frames)["message"] == text.GAME_SAVED_LATER
        assert leaks(frames, database, postgres.folder.as_posix()) == []
        wait_until(lambda: any("score store" in r.getMessage() for r in caplog.records), "nothing was logged")
        assert client.get("/healthz").json()["status"] == "degraded"
    logged = " ".join(r.getMessage() for r in caplog.records if "score store" in r.getMessage())
    assert database in logged  # the detail is the log's: where the store is and what it said


# SQLite that cannot be written ---------------------------------------------------------------------
def test_a_sqlite_file_that_cannot_be_written_is_logged_once_and_players_read_a_plain_sentence(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "in-the-way").write_text("a file where the folder should be")
    db = str(tmp_path / "in-the-way" / "noughts.db")
    caplog.set_level(logging.WARNING, logger="noughts.web")
    with TestClient(create_app(db, notify=lambda line: None)) as client:
        games = [play_one_game(client) for _ in range(4)]
        for frames in games:
            assert recorded_of(frames)["message"] == text.GAME_SAVED_LATER
            assert leaks(frames, str(tmp_path)) == []
        assert client.get("/healthz").json()["waiting"] == 4
    lines = [r.getMessage() for r in caplog.records if "score store" in r.getMessage()]
    # one line for the cause (not one a game, nor one a try), one when the server stopped with games unsaved
    assert len(lines) == 2, lines
    assert "cannot be created: a file is in the way" in lines[0] and str(tmp_path) in lines[0]
    assert "4 finished games that waited in memory were not saved" in lines[1]


def test_failed_saves_are_logged_once_per_cause_per_interval_with_counts(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    failures = _FailureLog(60, clock=lambda: now[0])
    caplog.set_level(logging.WARNING, logger="noughts.web")
    for second in range(50):
        now[0] = float(second)
        failures.failed("disk full", 2, 10, now[0] + 1)
    failures.failed("server gone", 1, 10, now[0] + 1)
    now[0] = 61.0
    failures.failed("disk full", 3, 12, 62.0)
    failures.recovered(12)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 4, lines
    assert lines[0].startswith("score store: disk full (1 try, 2 finished games not saved yet")
    assert lines[1].startswith("score store: server gone (1 try, 1 finished game")
    assert lines[2].startswith("score store: disk full (50 tries, 101 finished games")  # 49 held back, and this one
    assert "12 wait in memory" in lines[2]
    assert lines[3] == "score store: working again after 61 s; 12 finished games that waited in memory were saved"


def test_a_full_memory_queue_gives_games_up_counts_them_and_never_blocks(tmp_path: Path,
                                                                        caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "in-the-way").write_text("")
    told: list[str] = []
    caplog.set_level(logging.WARNING, logger="noughts.web")

    async def scenario() -> None:
        recorder = Recorder(str(tmp_path / "in-the-way" / "noughts.db"), batch=2, backlog=3, gather=0,
                            notify=lambda line: None)
        await recorder.start()
        game = Game.from_text("a1 b1 a2 b2 a3")
        for number in range(8):
            refused = await recorder.reserve()  # as the lobby does: a place is free again at once
            recorder.write_later("room", game, ANN, EASY,
                                 lambda code, recorded, scores: told.append(recorded["message"]), f"key-{number}",
                                 reserved=refused is None, refused=refused)
            await wait_for(lambda n=number: len(told) > n, "a game's end was never answered")
        assert recorder.health() == {"status": "degraded", "store": "retrying", "waiting": 3, "lost": 5}
        await recorder.stop()
        assert recorder.lost == 8

    asyncio.run(scenario())
    assert told == [text.GAME_SAVED_LATER] * 3 + [text.GAME_NOT_SAVED] * 5
    assert sum("memory queue of 3 games is full" in r.getMessage() for r in caplog.records) == 1
