"""The PostgreSQL store: what only a server can do wrong (reach, login, schemas of other versions, lost connections).

The store's behaviour (scoring, history, keys, batches) is tested on both backends in test_store.py
and test_store_processes.py; this file is about the server, on a real one from Debian's packages.
"""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from noughts.game import Game
from noughts.store import SCHEMA_VERSION, Participant, Store, StoreError, Tally, open_store, schema
from noughts.store.postgresql import PostgreSQLStore
from pg_server import PASSWORD, PostgresServer, free_port

ANN, HARD = Participant.human("Ann"), Participant.computer("hard")
X_WINS = "a1 b1 a2 b2 a3"


def win() -> Game:
    return Game.from_text(X_WINS)


def assert_off(store: Store, *words: str) -> str:
    assert not store.enabled and store.reason is not None and store.notices == [store.reason]
    reason = store.reason
    assert "\n" not in reason and reason.startswith("Scores and history are off because ") and reason.endswith(".")
    for word in words:
        assert word in reason, reason
    assert store.record(win(), ANN, HARD).game_id is None  # the game plays on
    return reason


def sql(url: str, statement: str) -> list[tuple[object, ...]]:
    import psycopg  # here, not at the top: every pytest-xdist worker imports this file to collect it

    with psycopg.connect(url, autocommit=True) as connection:
        cursor = connection.execute(statement)
        return cursor.fetchall() if cursor.description else []


# reaching the server -----------------------------------------------------------------------
def test_a_server_nobody_listens_on(postgres: PostgresServer) -> None:
    port = free_port()
    assert_off(open_store(f"postgresql://ann:secret@127.0.0.1:{port}/noughts"),
               f"the PostgreSQL server for postgresql://ann@127.0.0.1:{port}/noughts cannot be reached",
               "Connection refused")


def test_a_command_that_only_reads_is_not_told_a_game_plays_on(postgres: PostgresServer) -> None:
    url = f"postgresql://ann@127.0.0.1:{free_port()}/noughts"
    assert "still plays" in (open_store(url).reason or "")
    reason = open_store(url, read_only=True).reason or ""
    assert reason.startswith("Scores and history are off because") and "still plays" not in reason


def test_a_wrong_password_is_told_and_never_shown(postgres: PostgresServer) -> None:
    reason = assert_off(open_store(postgres.tcp_url("not-the-password")), "refused the login",
                        "password authentication failed")
    assert "not-the-password" not in reason
    with open_store(postgres.tcp_url()) as right:  # the right one, over TCP, works
        assert right.enabled and PASSWORD not in right.location and PASSWORD not in repr(right)


def test_a_database_that_does_not_exist(postgres: PostgresServer) -> None:
    assert_off(open_store(postgres.url(database="no_such_db")), "does not exist")


def test_a_url_libpq_cannot_read() -> None:
    assert_off(open_store("postgresql://ann@/db?no_such_option=1"), "not a PostgreSQL URL noughts can use",
               "no_such_option")


def test_without_psycopg_the_extra_is_named(postgres: PostgresServer) -> None:
    code = ("import sys; sys.modules['psycopg'] = None; from noughts.store import open_store; "
            f"print(open_store({postgres.url()!r}).reason)")
    said = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "pip install 'noughts[postgres]'" in said and said.count("\n") == 1


def test_the_environment_may_name_a_server(postgres: PostgresServer) -> None:
    url = postgres.fresh_url()
    with open_store(environ={"NOUGHTS_DB": url}) as store:
        assert isinstance(store, PostgreSQLStore) and store.record(win(), ANN, HARD).game_id == 1


# schemas ---------------------------------------------------------------------------------
def test_a_blank_database_gets_the_current_schema(postgres: PostgresServer) -> None:
    url = postgres.fresh_url()
    with open_store(url) as store:
        assert store.enabled and store.notices == []
    assert sql(url, "SELECT version FROM noughts_schema") == [(SCHEMA_VERSION,)]
    tables = {name for (name,) in sql(url, "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")}
    assert tables == {"noughts_schema", "games", "opponents", "people", "board_scores"}


def test_an_old_schema_is_upgraded_by_the_same_migrations_keeping_everything(postgres: PostgresServer) -> None:
    import psycopg

    url = postgres.fresh_url()
    with psycopg.connect(url, autocommit=True) as connection:  # version 1, as the first noughts made it
        from noughts.store.postgresql import _Db

        connection.execute("CREATE TABLE noughts_schema (version INTEGER NOT NULL)")
        connection.execute("INSERT INTO noughts_schema VALUES (1)")
        schema.migrate(_Db(connection), 0, schema.MIGRATIONS[:1])
        connection.execute(
            "INSERT INTO games (played_at, x_name, x_kind, o_name, o_kind, first, rows, cols, k, record, result) "
            "VALUES ('2024-01-01T10:00:00.000000Z', 'Ann', 'human', 'Bob', 'human', 'X', 3, 3, 3, %s, 'X'), "
            "('2024-01-01T11:00:00.000000Z', 'Ann', 'human', 'hard', 'computer', 'X', 3, 3, 3, %s, 'X')",
            (X_WINS, X_WINS))
        connection.execute("INSERT INTO opponents VALUES ('hard', 1, 0, 0)")
    reason = open_store(url, read_only=True).reason  # reading does not upgrade
    assert reason is not None and "older noughts (schema 1)" in reason
    with open_store(url) as store:
        assert store.notices == [] and store.count_games() == 2
        scores = store.scores()
        assert scores.people == {"Ann": Tally(1, 0, 0), "Bob": Tally(0, 1, 0)}  # version 2 filled them in
        assert scores.run == 3 and scores.high["hard"] == 3  # version 3 scored the board again
        assert store.record(win(), ANN, HARD).run == 6
    assert sql(url, "SELECT version FROM noughts_schema") == [(SCHEMA_VERSION,)]


def test_a_failing_migration_changes_nothing(postgres: PostgresServer, monkeypatch: pytest.MonkeyPatch) -> None:
    url = postgres.fresh_url()
    broken = ("CREATE TABLE half_done (x INTEGER)", "INSERT INTO no_such_table VALUES (1)")
    monkeypatch.setattr(schema, "MIGRATIONS", [*schema.MIGRATIONS, broken])
    assert_off(open_store(url), "no_such_table")
    assert sql(url, "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()") == []  # all rolled back
    monkeypatch.undo()
    with open_store(url) as fixed:
        assert fixed.enabled and fixed.count_games() == 0


@pytest.mark.parametrize("read_only", [False, True])
def test_a_database_from_a_newer_noughts_is_refused_and_left_untouched(postgres: PostgresServer,
                                                                      read_only: bool) -> None:
    url = postgres.fresh_url()
    with open_store(url) as store:
        store.record(win(), ANN, HARD)
    sql(url, "UPDATE noughts_schema SET version = 99")
    assert_off(open_store(url, read_only=read_only), "was made by a newer noughts (schema 99; this noughts knows up "
               f"to {SCHEMA_VERSION}); it was left untouched")
    assert sql(url, "SELECT count(*) FROM games") == [(1,)]


def test_another_programs_tables_are_refused_and_left_untouched(postgres: PostgresServer) -> None:
    url = postgres.fresh_url()
    sql(url, "CREATE TABLE games (id INTEGER, title TEXT)")
    assert_off(open_store(url), "holds a table named games that noughts did not make; it was left untouched")
    assert sql(url, "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()") == [("games",)]


def test_reading_a_blank_database_creates_nothing(postgres: PostgresServer) -> None:
    url = postgres.fresh_url()
    with open_store(url, read_only=True) as store:
        assert store.enabled and store.count_games() == 0 and store.games() == [] and store.scores().people == {}
        with pytest.raises(StoreError, match="only to read"):
            store.record(win(), ANN, HARD)
    assert sql(url, "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()") == []


def test_servers_setting_up_one_database_at_once_take_turns(postgres: PostgresServer) -> None:
    url = postgres.fresh_url()
    opened: list[Store] = []
    start = threading.Barrier(4)

    def open_one() -> None:
        start.wait()
        opened.append(open_store(url))

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [store.notices for store in opened] == [[]] * 4
    assert [store.record(win(), ANN, HARD).run for store in opened] == [3, 6, 9, 12]
    for store in opened:
        store.close()
    assert sql(url, "SELECT version FROM noughts_schema") == [(SCHEMA_VERSION,)]


# while it runs ---------------------------------------------------------------------------------
def test_a_lost_connection_is_opened_again(postgres: PostgresServer) -> None:
    url = postgres.fresh_url()
    with open_store(url) as store:
        assert store.record(win(), ANN, HARD).game_id == 1
        sql(postgres.url(), "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                            "WHERE application_name = 'noughts' AND pid <> pg_backend_pid()")
        assert store.record(win(), ANN, HARD).game_id == 2  # not an error for the person who just won
        assert store.count_games() == 2 and store.scores().run == 6


def test_a_server_gone_for_good_fails_cleanly(postgres: PostgresServer) -> None:
    server = PostgresServer().start()
    try:
        store = open_store(server.fresh_url())
        store.record(win(), ANN, HARD)
    finally:
        server.stop()
    with pytest.raises(StoreError) as caught:
        store.record(win(), ANN, HARD)
    said = str(caught.value)
    assert "\n" not in said and "could not be saved" in said and "cannot be opened again" in said, said
    with pytest.raises(StoreError, match="could not be read"):
        store.scores()
    store.close()
