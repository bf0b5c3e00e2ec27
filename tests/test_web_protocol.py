"""The web game's websocket protocol without a browser: whole games, rooms, rejections, limits, abuse.

Most tests use Starlette's in-process TestClient; a few go through a real uvicorn on loopback
(frame size limits, `serve()` itself). docs/web-protocol.md documents every message used here.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.websockets import WebSocketDisconnect

from child_signals import default_sigint
from noughts import players, text
from noughts.board import Board
from noughts.errors import NoughtsError
from noughts.match import DEFAULT_FIRST, DEFAULT_OPPONENT, FIRST_RULES, ComputerMove, Match
from noughts.store import open_store
from noughts.web import MISSING, create_app, running
from noughts.web.protocol import Limits

with warnings.catch_warnings():  # starlette 1.x suggests httpx2 for its TestClient; httpx still works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

ROOT = Path(__file__).resolve().parents[1]
KNOWN_ERRORS = {"bad_json", "bad_message", "unknown_type", "too_big", "bad_field", "bad_cell", "no_room",
                "bad_token", "not_in_room", "spectator", "not_your_seat", "not_your_turn", "occupied", "game_over",
                "game_not_over", "stale", "rate_limited", "full", "too_many_rooms", "crowded",
                "unknown_field", "too_many_joins", "locked_out", "not_paper"}  # not_paper: a binary frame (paper mode)
GENEROUS = Limits(rate=1e9, burst=1e9, rooms_per_connection=10**6, address_rate=1e9, address_burst=10**9)


class Client:
    """One websocket, with helpers that read until the message a test is waiting for.

    Messages read past while waiting for another kind are kept (all but states and pongs, which
    are snapshots), so a ``recorded`` that arrives before an expected error is not lost.
    """

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.welcome = ws.receive_json()
        self.scores = ws.receive_json()
        assert (self.welcome["type"], self.scores["type"]) == ("welcome", "scores")
        self.state: dict[str, Any] | None = None
        self.pending: list[dict[str, Any]] = []

    def send(self, **message: Any) -> None:
        self.ws.send_json(message)

    def next(self) -> dict[str, Any]:
        message: dict[str, Any] = self.ws.receive_json()
        if message["type"] == "state":
            self.state = message
        return message

    def _skip(self, message: dict[str, Any]) -> None:
        if message["type"] not in ("state", "pong"):
            self.pending.append(message)

    def until(self, kind: str, **match: Any) -> dict[str, Any]:
        """Read until a message of this type (and these field values) arrives; fails on a surprise error."""
        def wanted(message: dict[str, Any]) -> bool:
            return message["type"] == kind and all(message.get(k) == v for k, v in match.items())

        for message in self.pending:
            if wanted(message):
                self.pending.remove(message)
                return message
        while True:
            message = self.next()
            if wanted(message):
                return message
            assert message["type"] != "error", message
            self._skip(message)

    def error(self, **message: Any) -> dict[str, Any]:
        """Send something that must be refused; returns the error."""
        self.send(**message)
        while True:
            reply = self.next()
            if reply["type"] == "error":
                assert reply["code"] in KNOWN_ERRORS and reply["message"], reply
                return reply
            self._skip(reply)

    def settled(self) -> dict[str, Any]:
        """Everything sent so far has been answered: returns the latest state."""
        self.send(type="ping")
        self.until("pong")
        assert self.state is not None
        return self.state


@pytest.fixture(autouse=True)
def no_hanging() -> Iterator[None]:
    """A test waiting for a message that never comes fails after a minute instead of hanging CI."""
    def give_up(signum: int, frame: object) -> None:
        raise TimeoutError("no answer from the web app within 60 s")

    previous = signal.signal(signal.SIGALRM, give_up)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "noughts.db")


@pytest.fixture
def client(db: str) -> Iterator[TestClient]:
    """An app whose only difference from the default is room for a test's quick succession of messages."""
    with TestClient(create_app(db, limits=GENEROUS, notify=lambda line: None)) as test_client:
        yield test_client


def connect(test_client: TestClient, path: str = "/ws", **options: Any) -> Any:
    return test_client.websocket_connect(path, **options)


def finish_against_computer(player: Client, state: dict[str, Any] | None = None) -> dict[str, Any]:
    """Play the first free cell whenever it is our turn until the game ends; returns the final state."""
    state = state or player.until("state")
    while True:
        mine = state["seats"][0]["mark"] == state["turn"]
        while state["result"] is None and not mine:  # the computer moves at once: wait for its state
            state = player.until("state")
            mine = state["seats"][0]["mark"] == state["turn"]
        if state["result"] is not None:
            return state
        player.send(type="move", cell=state["cells"].index(None), game=state["game"])
        state = player.until("state")


# pages --------------------------------------------------------------------------------------
def test_the_page_and_its_files_are_served_with_safe_headers(client: TestClient) -> None:
    for path in ("/", "/r/K7M2QX"):
        page = client.get(path)
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
        assert '<script type="module" src="/static/app.js">' in page.text
    script = client.get("/static/app.js")
    assert script.headers["content-type"].startswith("text/javascript")
    assert client.get("/static/app.js", headers={"if-none-match": script.headers["etag"]}).status_code == 304
    assert client.get("/static/style.css").headers["content-type"].startswith("text/css")
    for missing in ("/static/index.htm", "/static/..%2Fapp.py", "/nowhere", "/r/a/b"):
        assert client.get(missing).status_code == 404
    assert client.get("/healthz").json() == {"ok": True, "connections": 0, "status": "ok", "store": "ok", "waiting": 0,
                                              "lost": 0}


# games against the computer -------------------------------------------------------------------
def test_a_whole_game_against_every_computer_player_is_played_and_recorded(client: TestClient, db: str) -> None:
    with connect(client) as ws:
        player = Client(ws)
        assert [p["name"] for p in player.welcome["players"]] == players.names()
        for name in players.names():
            player.send(type="play_computer", opponent=name, first="you", name="Ann")
            joined = player.until("joined")
            assert joined["seat"] == 0 and len(joined["token"]) >= 32 and joined["link"] == f"/r/{joined['room']}"
            final = finish_against_computer(player)
            assert final["result"] in ("X", "O", "draw") and final["seats"][1]["name"] == name
            assert final["seats"][1]["label"] == players.label(name)
            recorded = player.until("recorded")
            assert recorded["game_id"] is not None and recorded["summary"].startswith("Saved as game")
            scores = player.until("scores")
            tally = scores["opponents"][name]
            assert tally["wins"] + tally["losses"] + tally["draws"] == 1
    with open_store(db) as store:
        games = store.games(limit=50)
        assert len(games) == len(players.names())
        assert {g.x.name for g in games} == {"Ann"} and {g.o.name for g in games} == set(players.names())


def test_who_starts_follows_the_matchs_rule_game_after_game(client: TestClient, db: str) -> None:
    with connect(client) as ws:
        player = Client(ws)
        player.send(type="play_computer", opponent="parsons", first="computer")  # the computer, every game
        player.until("joined")
        opened = player.until("state")  # the computer's move comes with the first state
        assert opened["seats"][0]["mark"] == "O" and opened["turn"] == "O" and opened["first"] == "computer"
        assert opened["moves"] == [4]  # parsons opens in the centre
        final = finish_against_computer(player, opened)
        assert player.until("recorded")["game_id"] == 1
        assert player.error(type="move", cell=0)["code"] == "game_over"
        player.send(type="rematch")
        again = player.until("state", game=2)
        assert again["seats"][0]["mark"] == "O" and again["moves"] == [4]
        assert sum(final["tally"]["wins"]) + final["tally"]["draws"] == 1

        player.send(type="play_computer", opponent="parsons")  # the default: take turns, the person first
        player.until("joined")
        first = player.until("state")
        assert first["first"] == "alternate" and first["seats"][0]["mark"] == "X" and first["moves"] == []
        for cell in (0, 8, 6, 3):  # parsons loses to its forced line when the person starts
            player.send(type="move", cell=cell, game=1)
        won = player.until("state", result="X")
        assert won["line"] == [0, 3, 6] and won["tally"]["wins"] == [1, 0]
        assert won["result_text"][0] == "You win along the left column a1–a3!"
        assert won["tally_text"] == "You: 1 · Centre first: 0 · draws: 0"
        assert player.until("recorded")["game_id"] == 2  # the unfinished game 2 of the first room is not kept
        player.send(type="rematch")
        swapped = player.until("state", game=2)
        assert swapped["seats"][0]["mark"] == "O" and swapped["moves"] == [4]
    with open_store(db) as store:
        assert store.scores().opponents["parsons"].wins >= 1


def test_the_default_opponent_and_the_choices_come_from_the_match(client: TestClient) -> None:
    with connect(client) as ws:
        player = Client(ws)
        welcome = player.welcome
        assert welcome["default_opponent"] == players.default_for(Board()) == DEFAULT_OPPONENT
        assert welcome["default_first"] == DEFAULT_FIRST
        assert [r["name"] for r in welcome["first"]] == list(FIRST_RULES)
        # the labels and descriptions of who starts are the ones every front end shows
        assert [(r["name"], r["label"], r["description"]) for r in welcome["first"]] == text.first_choices()
        assert welcome["words"] == text.WEB_WORDS
        assert all(p["label"] == players.label(p["name"]) and p["description"] == players.describe(p["name"])
                   for p in welcome["players"])
        player.send(type="play_computer")
        seats = player.until("state")["seats"]
        assert seats[1]["name"] == DEFAULT_OPPONENT and seats[1]["label"] == players.label(DEFAULT_OPPONENT)
        assert seats[0]["label"] == "You"
        # on a board the default cannot play, the default is the board's own, as in every front end
        player.send(type="play_computer", rows=7, cols=7, k=5)
        player.until("joined")
        assert player.until("state")["seats"][1]["name"] == players.default_for(Board(7, 7, 5)) == "arduino"


def test_a_visitor_to_a_full_room_watches_at_once_and_one_to_a_free_seat_is_asked_to_join(client: TestClient) -> None:
    with connect(client) as ws_ann, connect(client) as ws_bo, connect(client) as ws_cy:
        ann, bo, cy = Client(ws_ann), Client(ws_bo), Client(ws_cy)
        ann.send(type="create_room", name="Ann")
        code = ann.until("joined")["room"]
        shown = "-".join((code[:4], code[4:8], code[8:]))
        # a visitor with no name yet looks first: the seat is free, so they are asked to join, and take no seat
        bo.send(type="join", room=code, watch=True)
        looked = bo.until("joined")
        assert looked["seat"] is None and looked["token"] is None and looked["seat_free"] is True
        assert looked["message"] == text.invited(shown) == f"You are invited to game {shown}: say your name to join."
        assert bo.until("state")["seats"][1] is None
        bo.send(type="join", room=code, name="Bo")  # then gives a name: the free seat is theirs
        seated = bo.until("joined")
        assert seated["seat"] == 1 and "message" not in seated
        # a third visitor, with or without a name, is told at once that the game is full and watches
        for asked in ({"watch": True}, {"name": "Cy"}):
            cy.send(type="join", room=code, **asked)
            full = cy.until("joined")
            assert (full["seat"], full["seat_free"], full["message"]) == (None, False, text.ROOM_FULL_WATCHING)
        assert ann.settled()["seats"][1]["name"] == "Bo"


def test_an_opponent_that_cannot_play_the_board_is_refused_with_the_matchs_sentence(
        db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(players, "unable", lambda name, board: "it is on holiday" if name == "easy" else None)
    with pytest.raises(NoughtsError) as direct:
        Match("easy")
    with TestClient(create_app(db, limits=GENEROUS, notify=lambda line: None)) as test_client, \
            connect(test_client) as ws:
        player = Client(ws)
        assert "easy" not in [p["name"] for p in player.welcome["players"]]  # not offered
        refused = player.error(type="play_computer", opponent="easy")
        assert refused["code"] == "bad_field" and refused["message"] == f"{direct.value}."


def test_with_scores_off_a_finished_game_says_so_and_nothing_is_written(db: str) -> None:
    with TestClient(create_app(db, scores=False, limits=GENEROUS, notify=lambda line: None)) as test_client, \
            connect(test_client) as ws:
        player = Client(ws)
        assert player.scores["enabled"] is False
        player.send(type="play_computer", opponent="easy")
        assert finish_against_computer(player)["result"]
        recorded = player.until("recorded")
        assert recorded["game_id"] is None and recorded["summary"] == ""
        assert recorded["message"] == "Scores and history are off for this server."
    assert not Path(db).exists()


def test_the_computer_thinks_off_the_event_loop(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []
    run = ComputerMove.run

    def watched(job: ComputerMove) -> int:
        try:
            asyncio.get_running_loop()
            seen.append(True)  # on the event loop: every other room would wait for it
        except RuntimeError:
            seen.append(False)
        return run(job)

    monkeypatch.setattr(ComputerMove, "run", watched)
    with connect(client) as ws:
        player = Client(ws)
        player.send(type="play_computer", opponent="hard", first="computer")
        finish_against_computer(player)
    assert seen and not any(seen)


# rooms between people ---------------------------------------------------------------------------
def test_a_friend_room_seats_two_people_refuses_every_wrong_move_and_lets_others_watch(client: TestClient,
                                                                                       db: str) -> None:
    with connect(client) as ws_ann, connect(client) as ws_bo, connect(client) as ws_cy:
        ann, bo, cy = Client(ws_ann), Client(ws_bo), Client(ws_cy)
        ann.send(type="create_room", name="Ann")
        joined = ann.until("joined")
        code, ann_token = joined["room"], joined["token"]
        waiting = ann.until("state")
        assert waiting["kind"] == "friend" and waiting["seats"][1] is None

        bo.send(type="join", room=code.lower(), name="Bo")
        bo_joined = bo.until("joined")
        assert bo_joined["seat"] == 1 and bo_joined["token"] not in (None, ann_token)
        seated = ann.until("state")
        assert seated["seats"][1] == {"name": "Bo", "label": "Bo", "kind": "human", "mark": "O", "connected": True}

        cy.send(type="join", room=code)
        assert cy.until("joined") == {"type": "joined", "room": code, "seat": None, "token": None, "link": f"/r/{code}",
                                      "url": f"http://testserver/r/{code}", "reach": "network", "seat_free": False,
                                      "message": "This game is full: you are watching."}
        assert cy.until("state")["watchers"] == 1

        # every refusal comes back as a sentence to the person who tried
        assert "not your turn" in bo.error(type="move", cell=4)["message"]
        assert bo.error(type="move", cell=4, mark="X")["code"] == "not_your_seat"
        assert ann.error(type="move", cell=4, mark="O")["code"] == "not_your_seat"
        assert cy.error(type="move", cell=4)["code"] == "spectator"
        assert cy.error(type="rematch")["code"] == "spectator"
        assert ann.error(type="move", cell=4, game=7)["code"] == "stale"
        ann.send(type="move", cell=4)
        assert bo.until("state")["cells"][4] == "X"
        assert bo.error(type="move", cell=4)["message"] == "b2 is taken by X: choose an empty square."  # as everywhere
        assert ann.error(type="move", cell=0)["code"] == "not_your_turn"
        assert bo.error(type="move", cell=0, ply=0)["code"] == "stale"
        assert bo.error(type="rematch")["code"] == "game_not_over"
        moves = [4]
        for mover, cell in ((bo, 0), (ann, 1), (bo, 2), (ann, 7)):  # X wins down the middle column
            mover.send(type="move", cell=cell)
            moves = [*moves, cell]
            cy.until("state", moves=moves)
        final = cy.settled()
        assert final["result"] == "X" and final["line"] == [1, 4, 7] and final["tally"]["wins"] == [1, 0]
        assert final["result_text"] == ["You win along the middle column b1–b3!",
                                        "Ann (X) wins along the middle column b1–b3. You lose.",
                                        "Ann (X) wins along the middle column b1–b3."]
        assert final["tally_text"] == "Ann: 1 · Bo: 0 · draws: 0"
        assert ann.error(type="move", cell=8)["code"] == "game_over"
        assert bo.error(type="move", cell=8)["code"] == "game_over"
        assert ann.until("recorded")["game_id"] == 1 and bo.until("recorded")["game_id"] == 1

        bo.send(type="rematch")  # friends take turns to start: Bo is X now
        again = cy.until("state", game=2)
        assert [s["mark"] for s in again["seats"]] == ["O", "X"] and again["turn"] == "X"
        assert ann.error(type="move", cell=4)["code"] == "not_your_turn"
        bo.send(type="move", cell=4)
        assert ann.until("state")["moves"] == [4]
    with open_store(db) as store:
        game = store.game(1)
        assert (game.x.name, game.o.name, game.result) == ("Ann", "Bo", "X")
        assert store.scores().people["Ann"].wins == 1 and store.scores().people["Bo"].losses == 1


def test_a_seat_token_resumes_the_seat_and_a_forged_one_is_refused(client: TestClient) -> None:
    with connect(client) as ws_ann, connect(client) as ws_bo:
        ann, bo = Client(ws_ann), Client(ws_bo)
        ann.send(type="create_room")
        joined = ann.until("joined")
        code, token = joined["room"], joined["token"]
        bo.send(type="join", room=code)
        bo_token = bo.until("joined")["token"]
        ann.send(type="move", cell=0)
        assert ann.settled()["moves"] == [0]
    with connect(client) as ws_bo:  # Bo's connection dropped; he comes back with his token
        bo = Client(ws_bo)
        assert bo.error(type="join", room=code, token=token[:-2] + "xx")["code"] == "bad_token"
        assert bo.error(type="join", room=code, token="A" * 100)["code"] == "bad_token"
        assert bo.error(type="move", cell=4)["code"] == "not_in_room"
        bo.send(type="join", room=code, token=bo_token)
        assert bo.until("joined")["seat"] == 1
        state = bo.until("state")
        assert state["moves"] == [0] and state["seats"][0]["connected"] is False  # Ann has gone
        bo.send(type="move", cell=4)
        assert bo.until("state")["moves"] == [0, 4]
        with connect(client) as ws_ann:  # Ann's reload: same seat, same game
            ann = Client(ws_ann)
            ann.send(type="join", room=code, token=token)
            assert ann.until("joined")["seat"] == 0
            assert ann.until("state")["seats"][0]["connected"] is True
            ann.send(type="move", cell=8)
            assert bo.until("state", moves=[0, 4, 8])["turn"] == "O"
        bo.send(type="leave")
        bo.until("left")
        assert bo.error(type="move", cell=1)["code"] == "not_in_room"
        assert bo.error(type="join", room="ZZZZZZ")["code"] == "no_room"


# limits ---------------------------------------------------------------------------------------
def test_another_sites_page_cannot_open_the_socket(client: TestClient) -> None:
    with pytest.raises(WebSocketDisconnect) as refused, connect(client, headers={"origin": "https://evil.example"}):
        pass
    assert refused.value.code == 1008
    with connect(client, headers={"origin": "http://testserver"}) as ws:
        Client(ws)  # the page's own origin is welcome


def app_with(db: str, **limits: Any) -> TestClient:
    return TestClient(create_app(db, limits=Limits(**limits), notify=lambda line: None))


def test_the_number_of_rooms_is_bounded(db: str) -> None:
    # one address may take every room here (address_share): the server's own limit is what is tested
    with app_with(db, max_rooms=2, rooms_per_connection=3, address_share=10.0) as test_client, \
            connect(test_client) as ws:
        one = Client(ws)
        one.send(type="create_room")
        one.until("joined")
        one.send(type="play_computer")
        one.until("joined")
        assert "already holds 2 games" in one.error(type="create_room")["message"]
    with app_with(db, rooms_per_connection=3) as test_client, connect(test_client) as ws:
        one = Client(ws)
        for _ in range(3):
            one.send(type="create_room")
            one.until("joined")
        assert one.error(type="play_computer")["code"] == "too_many_rooms"


def test_the_number_of_watchers_and_connections_is_bounded(db: str) -> None:
    with (app_with(db, max_watchers=1, max_connections=3) as test_client, connect(test_client) as ws_one,
          connect(test_client) as ws_two, connect(test_client) as ws_three):
        one, two, three = Client(ws_one), Client(ws_two), Client(ws_three)
        one.send(type="play_computer")
        code = one.until("joined")["room"]
        two.send(type="join", room=code)
        assert two.until("joined")["seat"] is None  # nobody takes a computer game's seat
        assert three.error(type="join", room=code)["code"] == "crowded"
        with connect(test_client) as ws_four, pytest.raises(WebSocketDisconnect) as busy:
            ws_four.receive_json()
        assert busy.value.code == 1013


def test_idle_rooms_expire_and_everyone_in_them_is_told(db: str) -> None:
    with (app_with(db, room_ttl=0.2, sweep_every=0.05) as test_client, connect(test_client) as ws_one,
          connect(test_client) as ws_two):
        one, two = Client(ws_one), Client(ws_two)
        one.send(type="create_room")
        code = one.until("joined")["room"]
        two.send(type="join", room=code)
        two.until("joined")
        for player in (one, two):
            closed = player.until("closed")
            assert closed["room"] == code and "minutes without a move" in closed["message"]
        assert two.error(type="move", cell=0)["code"] == "not_in_room"
        assert two.error(type="join", room=code)["code"] == "no_room"


def test_a_flood_is_refused_then_closed_and_the_server_carries_on(db: str) -> None:
    with app_with(db) as client, connect(client) as ws:
        Client(ws)
        for _ in range(600):
            ws.send_text('{"type":"ping"}')
        replies = []
        with pytest.raises(WebSocketDisconnect) as closed:
            for _ in range(600):
                replies.append(ws.receive_json())
        assert closed.value.code == 1008
        kinds = [r.get("code", r["type"]) for r in replies]
        assert kinds.count("rate_limited") == 1 and 40 <= kinds.count("pong") < 100
        with connect(client) as ws:
            player = Client(ws)
            player.send(type="play_computer", opponent="easy")
            assert finish_against_computer(player)["result"]


def hostile_messages(rng: random.Random, code: str, tokens: list[str]) -> Iterator[str | bytes]:
    """1,000 messages a careless or malicious client might send."""
    junk_values: list[Any] = [None, True, 0, -1, 9, 2**70, 1e308, float("nan"), "", "💥", "x" * 300, [], {}, [4],
                              {"$gt": ""}, "'; DROP TABLE games; --", "\u202e", "a0", "d1", "<script>"]
    types = ["play_computer", "create_room", "join", "move", "rematch", "leave", "scores"]  # a ping is the test's own
    fields = ["type", "cell", "room", "token", "name", "opponent", "first", "mark", "game", "ply"]
    for _ in range(1000):
        kind = rng.randrange(12)
        if kind == 0:
            yield bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))  # a binary frame
        elif kind == 1:
            yield "".join(chr(rng.randrange(32, 0x2FFF)) for _ in range(rng.randrange(0, 80)))  # not JSON
        elif kind == 2:
            yield json.dumps(rng.choice(junk_values))  # JSON, but not an object
        elif kind == 3:
            yield json.dumps({"type": "move", "cell": "x" * rng.choice([3000, 70_000, 1_000_000])})  # huge
        elif kind == 4:
            depth = rng.randrange(100, 1500)
            yield '{"type":"move","cell":' + "[" * depth + "]" * depth + "}"
        elif kind == 5:
            yield json.dumps({"type": "join", "room": code, "token": rng.choice(
                [t[:-1] + "A" for t in tokens] + ["", "null", "x" * 99, tokens[0].upper()])})  # forged
        elif kind == 6:
            room = rng.choice([code[:5], code + "Q", "0OIL11", "🙂" * 6, "\x00" * 6])
            yield json.dumps({"type": "join", "room": room, "token": tokens[0]})
        elif kind == 7:
            yield json.dumps({"type": "move", "cell": rng.choice(junk_values), "mark": rng.choice(junk_values)})
        elif kind == 8:  # well-formed moves the rules refuse: turn, seat, occupied cell, stale game
            yield json.dumps({"type": "move", "cell": rng.randrange(9), "mark": rng.choice(["X", "O"]),
                              "game": rng.choice([1, 2, 99])})
        elif kind == 9:
            message = {rng.choice(fields): rng.choice(junk_values) for _ in range(rng.randrange(1, 6))}
            message["type"] = rng.choice(types + junk_values[:5])
            if message["type"] in ("play_computer", "create_room", "join", "leave"):
                message["type"] = "rematch"  # these would move the connection away from the room under attack
            yield json.dumps(message, allow_nan=True)
        elif kind == 10:
            yield rng.choice(['{"type":"move","cell":4,', '{"type":"move"}}', "{'type':'move'}", "\x00", " ",
                              "[]" * 500])
        else:
            yield json.dumps({"type": rng.choice(types[3:]), "cell": rng.randrange(-3, 12), "extra": "x" * 1900})


def test_a_thousand_hostile_messages_are_answered_and_a_normal_game_works_afterwards(db: str) -> None:
    rng = random.Random(20250105)
    with TestClient(create_app(db, limits=GENEROUS, notify=lambda line: None)) as test_client:
        with connect(test_client) as ws_ann, connect(test_client) as ws_bo, connect(test_client) as ws_cy:
            ann, bo, cy = Client(ws_ann), Client(ws_bo), Client(ws_cy)
            ann.send(type="create_room", name="Ann")
            joined = ann.until("joined")
            bo.send(type="join", room=joined["room"], name="Bo")
            tokens = [joined["token"], bo.until("joined")["token"]]
            cy.send(type="join", room=joined["room"])
            cy.until("joined")
            ann.send(type="move", cell=4)
            ann.settled()
            senders = [ann, bo, cy]
            answered = 0
            for number, message in enumerate(hostile_messages(rng, joined["room"], tokens)):
                sender = senders[number % 3]
                if isinstance(message, bytes):
                    sender.ws.send_bytes(message)
                else:
                    sender.ws.send_text(message)
                sender.send(type="ping")
                replies = []
                while (reply := sender.next())["type"] != "pong":
                    replies.append(reply)
                errors = [r for r in replies if r["type"] == "error"]
                assert all(e["code"] in KNOWN_ERRORS and e["message"] for e in errors), errors
                answered += bool(replies)
            assert answered == 1000
            state = ann.settled()
            assert state["room"] == joined["room"]  # nobody was pushed out of the room
        with connect(test_client) as ws:  # and the server plays on normally
            player = Client(ws)
            player.send(type="play_computer", opponent="hard", first="opponent")
            assert finish_against_computer(player)["result"] in ("X", "draw")  # hard (X) never loses
            assert player.until("recorded")["game_id"] is not None
        assert test_client.get("/healthz").json()["ok"] is True


# the real server --------------------------------------------------------------------------------
def test_through_uvicorn_an_oversized_frame_closes_only_that_socket(db: str) -> None:
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect as ws_connect

    with running(db=db, notify=lambda line: None) as url:
        address = url.replace("http://", "ws://") + "/ws"
        with ws_connect(address) as big:
            assert json.loads(big.recv(timeout=5))["type"] == "welcome"
            big.send("x" * (Limits().max_frame_bytes + 1))
            with pytest.raises(ConnectionClosed) as closed:
                for _ in range(5):  # the scores sent on connecting may come first
                    big.recv(timeout=5)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
        with ws_connect(address) as fine:
            assert [json.loads(fine.recv(timeout=5))["type"] for _ in range(2)] == ["welcome", "scores"]
            fine.send('{"type":"play_computer","opponent":"perfect"}')
            assert json.loads(fine.recv(timeout=5))["type"] == "joined"


def test_the_server_log_has_no_colour_when_no_color_is_set() -> None:
    from noughts.web.server import _config

    app = create_app(notify=lambda line: None)
    assert _config(app, Limits(), "warning", environ={"NO_COLOR": "1"}).use_colors is False
    assert _config(app, Limits(), "warning", environ={"TERM": "xterm"}).use_colors is None  # uvicorn: if a tty


def test_serve_listens_says_where_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    # port 0: the system picks a free one (a port probed free here could be taken before the server binds it)
    code = f"from noughts.web import serve; serve(port=0, db={str(tmp_path / 'n.db')!r})"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    server = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=env, preexec_fn=default_sigint)
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        where = re.search(r"http://127\.0\.0\.1:(\d+)/ ", line)
        assert where and where.group(1) != "0", line
        port = int(where.group(1))
        import httpx

        deadline = time.monotonic() + 20
        while True:
            try:
                assert httpx.get(f"http://127.0.0.1:{port}/healthz").json()["ok"] is True
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the server did not answer"
                time.sleep(0.05)
        with (pytest.raises(NoughtsError, match=f"cannot listen on 127.0.0.1 port {port}.*another program"),
              running(port=port, db=str(tmp_path / "other.db"))):
            pass
    finally:
        server.send_signal(signal.SIGINT)
        _, err = server.communicate(timeout=20)
    assert server.returncode == 0, err


def test_without_the_web_packages_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from noughts import web

    monkeypatch.setitem(sys.modules, "uvicorn", None)  # an import of it now fails
    for call in (lambda: web.serve(port=0), lambda: web.create_app(), lambda: web.running()):
        with pytest.raises(NoughtsError) as caught:
            call()
        assert str(caught.value) == MISSING == "the web game needs: pip install 'noughts[web]'"


# the server's words -----------------------------------------------------------------------------
def test_every_refusal_the_server_sends_is_worded_in_text_py() -> None:
    """A Rejection or an error message gets its sentence from noughts.text, never a string of its own."""
    import ast

    worded = []
    for path in sorted((ROOT / "src" / "noughts" / "web").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
                continue
            if node.func.id in ("Rejection", "error_message") and len(node.args) > 1:
                sentence = node.args[1]  # (code, sentence, ...)
                if isinstance(sentence, ast.JoinedStr) or (isinstance(sentence, ast.Constant)
                                                           and isinstance(sentence.value, str)):
                    worded.append(f"{path.name}:{node.lineno}")
    assert worded == []


def test_the_refusals_say_what_they_said_before_from_text_py(client: TestClient) -> None:
    with connect(client) as ws:
        player = Client(ws)
        assert player.error(type="rematch")["message"] == text.WEB_NOT_IN_A_GAME \
            == "You are not in a game: start one, or join one with its code."
        assert player.error(type="move", cell=900)["message"] == text.web_no_cell(900) \
            == "There is no cell 900: no board here has that many cells."
        assert player.error(type="join", room="nonsense")["message"] == text.web_not_a_code("nonsense")
        assert player.error(type="players", rows=20)["message"] == "'rows' must be a whole number from 1 to 15."
    assert text.web_watching_cannot("hint") == ("You are watching this game, so you cannot ask for a hint. "
                                                "Choose New game to play your own.")
    assert text.web_rooms_per_address(1) == ("Your address already has 1 open game, the most one address may have. "
                                             "Finish or leave one, or wait for it to expire.")
    assert text.web_locked_out(2).endswith("try again in 2 seconds.")
    assert text.web_too_many_messages(20, address=True) == ("Too many messages: at most 20 a second from your "
                                                            "address. Some were ignored.")


def test_a_negative_cell_and_other_unreadable_messages_say_so_and_keep_their_type_and_id(client: TestClient) -> None:
    """Before, ``cell: -1`` said "no board here has that many cells", with ``re: null`` and no id."""
    with connect(client) as ws:
        def answer(message: str) -> dict[str, Any]:
            ws.send_text(message)
            while (said := ws.receive_json())["type"] != "error":  # (welcome, scores)
                pass
            return said

        negative = answer('{"type":"move","cell":-1,"id":"m.1"}')
        nameless = answer('{"type":"move","cell":"zz9","id":"m.2"}')
        too_wide = answer('{"type":"players","rows":99,"id":"p.1"}')
        bad_id = answer('{"type":"hint","id":7}')
    assert negative == {"type": "error", "code": "bad_cell", "re": "move", "id": "m.1",
                        "message": text.web_negative_cell(-1)}
    assert negative["message"] == "There is no cell -1: cells are counted from 0 (or named, like b2)."
    assert nameless["re"] == "move" and nameless["id"] == "m.2"
    assert "0 to 8" not in nameless["message"]  # a 7×7 room has more cells than 3×3
    assert too_wide["re"] == "players" and too_wide["id"] == "p.1" and too_wide["code"] == "bad_field"
    assert bad_id["re"] == "hint" and "id" not in bad_id
