"""The web's recorder under load: batches, a bounded queue that pushes back, and no finished game lost on SIGTERM.

A child process records games through a real Recorder as fast as its event loop can finish
them, into SQLite or a real PostgreSQL; the store is slower than that, so the queue is full
when the signal comes. SIGTERM (what uvicorn turns into the server's shutdown) must keep every
game the recorder accepted; SIGKILL may lose at most one batch.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from noughts import Game
from noughts.store import Participant, open_store
from noughts.web.recording import Recorder

BATCH = 10

CHILD = """
import asyncio, signal, sys
from noughts import Game
from noughts.store import Participant
from noughts.web.recording import Recorder

db, batch = sys.argv[1], int(sys.argv[2])
ended = []

async def main():
    recorder = Recorder(db, batch=batch, wait=30)
    await recorder.start()
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    game, ann, hard = Game.from_text("a1 b1 a2 b2 a3"), Participant.human("Ann"), Participant.computer("hard")
    saved = lambda code, recorded, scores: None
    number = 0
    while not stop.is_set():
        number += 1
        refused = await recorder.reserve()  # as the lobby does before it stores the change that ends a game
        recorder.write_later("room", game, ann, hard, saved, game_key=f"game-{number}",
                             reserved=refused is None, refused=refused)
        if refused is None:
            print("accepted", number, flush=True)  # the players see the game end from here on
        await asyncio.sleep(0)
    print("waiting at the signal", recorder.waiting, flush=True)
    await recorder.stop()
    print("stopped", flush=True)

asyncio.run(main())
"""


@pytest.fixture(params=["sqlite", "postgresql"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "noughts.db")
    return str(request.getfixturevalue("postgres").fresh_url())


def run_child(tmp_path: Path, db: str, how: signal.Signals) -> tuple[int, list[str]]:
    """Start recording, send ``how`` once 300 games were accepted; the games accepted and the child's last lines."""
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    out = tmp_path / "out"
    with out.open("w") as sink:
        child = subprocess.Popen([sys.executable, str(script), db, str(BATCH)], stdout=sink, stderr=subprocess.PIPE,
                                 text=True)
        deadline = time.monotonic() + 60
        while out.read_text().count("\n") < 300:
            assert child.poll() is None and time.monotonic() < deadline, child.stderr.read() if child.stderr else ""
            time.sleep(0.01)
        child.send_signal(how)
        _, errors = child.communicate(timeout=60)
    text = out.read_text()
    lines = text[:text.rfind("\n") + 1].splitlines()  # whole lines: unbuffered (PYTHONUNBUFFERED), a kill can cut one
    accepted = [int(line.split()[1]) for line in lines if line.startswith("accepted ")]
    assert accepted == list(range(1, len(accepted) + 1))  # a line cut short by a kill is not counted above
    assert "Traceback" not in errors, errors
    return len(accepted), lines


def kept(db: str) -> set[str]:
    """The keys of the games in the store."""
    if db.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(db) as server:
            return {key for (key,) in server.execute("SELECT game_key FROM games")}
    connection = sqlite3.connect(db)
    try:
        return {key for (key,) in connection.execute("SELECT game_key FROM games")}
    finally:
        connection.close()


@pytest.mark.slow
def test_sigterm_keeps_every_accepted_game(tmp_path: Path, where: str) -> None:
    accepted, lines = run_child(tmp_path, where, signal.SIGTERM)
    assert lines[-1] == "stopped"
    waiting = int(lines[-2].split()[-1])
    assert 0 < waiting <= BATCH  # games were waiting when the signal came, and never more than a batch
    assert kept(where) == {f"game-{n}" for n in range(1, accepted + 1)}


@pytest.mark.slow
def test_sigkill_loses_at_most_one_batch(tmp_path: Path, where: str) -> None:
    accepted, _lines = run_child(tmp_path, where, signal.SIGKILL)
    keys = kept(where)
    assert keys <= {f"game-{n}" for n in range(1, accepted + 1)}
    lost = accepted - len(keys)
    assert 0 <= lost <= BATCH, f"{lost} accepted games lost, more than a batch of {BATCH}"
    assert keys == {f"game-{n}" for n in range(1, len(keys) + 1)}  # the oldest are kept: only the last ones lost


# back-pressure, in process -------------------------------------------------------------------
def hold_lock(path: Path, release: threading.Event) -> threading.Thread:
    held = threading.Event()

    def hold() -> None:
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        held.set()
        release.wait(30)
        other.execute("COMMIT")
        other.close()

    thread = threading.Thread(target=hold)
    thread.start()
    held.wait()
    return thread


def test_a_full_queue_makes_the_game_end_wait_then_tells_the_players(tmp_path: Path) -> None:
    path = tmp_path / "noughts.db"
    open_store(path).close()
    told: list[tuple[str, dict[str, Any]]] = []
    logged: list[str] = []

    async def scenario() -> None:
        recorder = Recorder(str(path), batch=3, wait=0.3, notify=logged.append)
        await recorder.start()
        game, ann = Game.from_text("a1 b1 a2 b2 a3"), Participant.human("Ann")

        async def end(number: int) -> float:
            started = time.monotonic()
            refused = await recorder.reserve()
            recorder.write_later(f"room-{number}", game, ann, Participant.computer("easy"),
                                 lambda code, recorded, scores: told.append((code, recorded)), f"key-{number}",
                                 reserved=refused is None, refused=refused)
            return time.monotonic() - started

        release = threading.Event()
        holder = hold_lock(path, release)  # another process holds the database: nothing can be committed
        try:
            quick = [await end(n) for n in range(1, 4)]  # the first batch: taken at once
            await asyncio.sleep(0.05)
            waited = await end(4)  # the queue is full: this game's end waits, in vain
            at_once = await end(5)  # still stuck: refused without waiting again
            await asyncio.sleep(0.05)
        finally:
            release.set()
            holder.join()
        assert max(quick) < 0.2 and 0.25 < waited < 2 and at_once < 0.2
        refused = [(code, recorded["message"]) for code, recorded in told]
        assert refused == [(f"room-{n}", "The score database is not keeping up, so this game was not saved.")
                           for n in (4, 5)]
        assert len(logged) == 1 and "not kept up for 0.3 s" in logged[0]
        deadline = time.monotonic() + 20
        while len(told) < 5:  # once the lock is gone, the waiting three are kept
            assert time.monotonic() < deadline
            await asyncio.sleep(0.01)
        await end(6)  # and games are taken again
        await recorder.stop()
        assert [recorded["game_id"] for _, recorded in told[2:]] == [1, 2, 3, 4]
        assert [code for code, _ in told[2:]] == ["room-1", "room-2", "room-3", "room-6"]

    asyncio.run(scenario())
    with open_store(path) as store:
        assert store.count_games() == 4 and store.scores().run == 4


def test_while_the_queue_is_full_only_the_game_end_waits_and_the_event_loop_goes_on(tmp_path: Path) -> None:
    """The ending that finds no place awaits one; a tick on the same loop meanwhile is on time."""
    path = tmp_path / "noughts.db"
    open_store(path).close()
    told: list[str] = []

    async def scenario() -> None:
        recorder = Recorder(str(path), batch=1, wait=5, notify=lambda line: None)
        await recorder.start()
        game, ann, easy = Game.from_text("a1 b1 a2 b2 a3"), Participant.human("Ann"), Participant.computer("easy")
        release = threading.Event()
        holder = hold_lock(path, release)
        try:
            recorder.write_later("a", game, ann, easy, lambda code, recorded, scores: told.append(code), "key-a")
            ending = asyncio.ensure_future(recorder.reserve())  # no place: waits for the database
            lags = []
            for _ in range(5):  # the loop serves other work meanwhile, on time
                started = time.monotonic()
                await asyncio.sleep(0.02)
                lags.append(time.monotonic() - started - 0.02)
            assert not ending.done() and max(lags) < 2.0  # blocked, the loop stood still for the whole 5 s wait
        finally:
            release.set()
            holder.join()
        assert await asyncio.wait_for(ending, 20) is None  # the database caught up: the place is this game's
        recorder.write_later("b", game, ann, easy, lambda code, recorded, scores: told.append(code), "key-b",
                             reserved=True)
        await recorder.stop()
        assert told == ["a", "b"] and recorder.waiting == 0

    asyncio.run(scenario())


def test_the_scores_message_holds_only_the_leading_names(tmp_path: Path) -> None:
    path = tmp_path / "noughts.db"
    with open_store(path) as store:
        for number in range(30):
            store.record(Game.from_text("a1 b1 a2 b2 a3"), Participant.human(f"P{number:02}"),
                         Participant.human("Zed"))
    messages: list[dict[str, Any] | None] = []  # the scores sent with each recorded game

    async def scenario() -> None:
        recorder = Recorder(str(path), batch=50)
        await recorder.start()
        assert [p["name"] for p in recorder.scores["people"]] == [f"P{n:02}" for n in range(10)]
        game = Game.from_text("a1 b1 a2 b2 a3")
        for _ in range(3):
            recorder.write_later("room", game, Participant.human("P29"), Participant.human("Zed"),
                                 lambda code, recorded, scores: messages.append(scores))
        await recorder.stop()
        assert recorder.scores["people"][0] == {"name": "P29", "wins": 4, "losses": 0, "draws": 0}
        assert len(recorder.scores["people"]) == 10

    asyncio.run(scenario())
    assert len(messages) == 3 and all(m is not None and len(m["people"]) == 10 for m in messages)


def test_the_recorder_stops_once_and_refuses_after(tmp_path: Path) -> None:
    told: list[dict[str, Any]] = []

    async def scenario() -> None:
        recorder = Recorder(str(tmp_path / "noughts.db"))
        await recorder.start()
        await recorder.stop()
        await recorder.stop()
        recorder.write_later("room", Game.from_text("a1 b1 a2 b2 a3"), Participant.human("Ann"),
                             Participant.computer("easy"), lambda code, recorded, scores: told.append(recorded))
        await asyncio.sleep(0)

    asyncio.run(scenario())
    assert [m["message"] for m in told] == ["The server is stopping, so this game was not saved."]
    assert os.path.exists(tmp_path / "noughts.db")


def test_a_lone_game_waits_for_others_to_share_its_commit_but_half_a_batch_goes_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The recorder's thread holds a game that ends alone for ``gather`` seconds, so that games ending
    soon after share its commit; once half a batch is waiting it commits at once (a fixed wait, under
    load, held every place in the queue and made the games ending meanwhile wait)."""
    batches: list[int] = []
    write = Recorder._write

    def counted(store: Any, batch: list[Any]) -> Any:
        batches.append(len(batch))
        return write(store, batch)

    monkeypatch.setattr(Recorder, "_write", staticmethod(counted))

    async def scenario() -> None:
        recorder = Recorder(str(tmp_path / "noughts.db"), batch=4, gather=60)
        await recorder.start()
        game, ann, easy = Game.from_text("a1 b1 a2 b2 a3"), Participant.human("Ann"), Participant.computer("easy")
        saved = asyncio.Event()
        told: list[str] = []

        def one_saved(code: str, recorded: dict[str, Any], scores: Any) -> None:
            told.append(code)
            if len(told) == 3:
                saved.set()

        recorder.write_later("a", game, ann, easy, one_saved)
        while recorder._queue.qsize():  # taken by the thread: it came alone, so it waits for company
            await asyncio.sleep(0.005)
        await asyncio.sleep(0.05)
        recorder.write_later("b", game, ann, easy, one_saved)
        recorder.write_later("c", game, ann, easy, one_saved)  # two waiting: half of 4, so no 60 s wait
        await asyncio.wait_for(saved.wait(), 20)
        await recorder.stop()

    asyncio.run(scenario())
    assert batches == [3]  # one commit for the three


class _TextSocket:
    """A websocket as Starlette's: each message goes out through ``send_text`` (as connection.py's writer sends)."""

    client = None
    headers = {"host": "127.0.0.1"}  # noqa: RUF012 - read only
    url = type("URL", (), {"scheme": "ws"})

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []  # what reached the client, in order

    async def send_text(self, text: str) -> None:
        self.messages.append(json.loads(text))

    async def close(self, code: int = 1000, reason: str | None = None) -> None:
        pass


def test_a_kept_game_s_recorded_and_scores_reach_the_player_once_together_and_in_order(tmp_path: Path) -> None:
    from noughts.web.app import create_app
    from noughts.web.connection import Connection

    async def scenario() -> list[dict[str, Any]]:
        app = create_app(str(tmp_path / "noughts.db"), notify=lambda line: None)
        lobby = app.state.lobby
        lobby.recorder.gather = 0
        await lobby.start()
        socket = _TextSocket()
        conn = Connection(socket, lobby.limits, "192.0.2.1")  # type: ignore[arg-type]

        async def sent() -> None:  # the connection's writer has handed every queued message to the socket
            await asyncio.sleep(0)
            while conn.pending:
                await asyncio.sleep(0)

        await lobby.handle(conn, '{"type":"play_computer","opponent":"random","first":"me"}')
        await sent()
        while True:
            state = [m for m in socket.messages if m["type"] == "state"][-1]
            if state["result"] is not None:
                break
            cell = state["cells"].index(None)
            await lobby.handle(conn, json.dumps({"type": "move", "cell": cell, "game": state["game"]}))
            await sent()
        for _ in range(200):
            if any(m["type"] == "recorded" for m in socket.messages):
                break
            await asyncio.sleep(0.01)
        await sent()
        await conn.finish()
        await lobby.stop()
        return socket.messages

    messages = asyncio.run(scenario())
    kinds = [m["type"] for m in messages]
    at = kinds.index("recorded")
    assert kinds.count("recorded") == kinds.count("scores") == 1
    assert kinds[at:at + 2] == ["recorded", "scores"]  # together: nothing between them
    assert messages[at]["game_id"] is not None and messages[at + 1]["enabled"] is True
