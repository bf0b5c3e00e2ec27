"""The attack suite at small sizes: each way a hostile tester hurt the web server (issue 12), against
a real uvicorn on loopback, with raw sockets where the attack is below HTTP.

Clients pick their source address from 127.0.0.0/8 (Linux answers on all of it), so one test's
"attacker" and "honest" addresses are told apart by the server's per-address accounting exactly
as two machines would be. ``benchmarks/web_attacks.py`` runs the same attacks at full size and
measures what honest players see meanwhile.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import re
import socket
import sqlite3
import subprocess
import sys
import time
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import ClientConnection
from websockets.sync.client import connect as ws_connect

from noughts.web import running
from noughts.web.protocol import CODE_ALPHABET, MESSAGE_TYPES, Limits, parse
from noughts.web.rooms import Room, new_code

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow  # two real servers and many sockets: a few seconds in all

# Counts small enough for CI; the timed defences short enough that waiting for them is cheap.
CAPS = Limits(max_rooms=12, rooms_per_address=3, address_share=0.5, connections_per_address=4,
              join_burst=4, join_rate=0.5, failed_joins=3, lockout=30.0, rate=1e6, burst=1e6,
              address_rate=1.0, address_burst=60)
# The idle limit stays well above every pause the other TIGHT tests take (a busy machine stretches them).
TIGHT = Limits(unjoined_ttl=0.5, sweep_every=0.1, handshake_timeout=0.5, idle_timeout=3.0,
               failed_joins=2, lockout=1.0, rate=1e6, burst=1e6)  # lockouts: 1 s, then 2 s


@pytest.fixture(scope="module")
def caps(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = str(tmp_path_factory.mktemp("caps") / "noughts.db")
    with running(limits=CAPS, db=db, notify=lambda line: None) as url:
        yield url


@pytest.fixture(scope="module")
def tight(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running(limits=TIGHT, scores=False, notify=lambda line: None) as url:
        yield url


def address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    return parts.hostname, parts.port


def open_socket(url: str, source: str) -> socket.socket:
    return socket.create_connection(address(url), timeout=10, source_address=(source, 0))


class Player:
    """A websocket from one source address, with helpers that read until the wanted message."""

    def __init__(self, url: str, source: str = "127.0.0.1", **options: Any) -> None:
        host, port = address(url)
        self.ws: ClientConnection = ws_connect(f"ws://{host}:{port}/ws", sock=open_socket(url, source),
                                               open_timeout=10, **options).__enter__()
        assert self.next()["type"] == "welcome"
        assert self.next()["type"] == "scores"

    def send(self, **message: Any) -> None:
        self.ws.send(json.dumps(message))

    def next(self, timeout: float = 10) -> dict[str, Any]:
        message: dict[str, Any] = json.loads(self.ws.recv(timeout))
        return message

    def until(self, kind: str, timeout: float = 10) -> dict[str, Any]:
        while True:
            message = self.next(timeout)
            if message["type"] == kind:
                return message
            assert message["type"] != "error", message

    def reply(self, kind: str, **message: Any) -> dict[str, Any]:
        """Send one message; the answer that matters (``joined``/``state`` or an ``error``)."""
        self.send(type=kind, **message)
        while True:
            answer = self.next()
            if answer["type"] in ("joined", "error", "left", "pong"):
                return answer

    def close(self) -> None:
        self.ws.close()


def refused(player: Player, kind: str, **message: Any) -> str:
    answer = player.reply(kind, **message)
    assert answer["type"] == "error", answer
    return str(answer["code"])


# 1. rooms ---------------------------------------------------------------------------------------
def test_one_address_cannot_take_more_than_its_share_of_the_rooms_and_others_still_can(caps: str) -> None:
    first, second = Player(caps, "127.0.0.11"), Player(caps, "127.0.0.11")
    codes = [first.reply("create_room")["room"], second.reply("play_computer")["room"],
             first.reply("create_room")["room"]]
    assert len(set(codes)) == 3
    third = Player(caps, "127.0.0.11")
    for player, kind in ((first, "create_room"), (second, "play_computer"), (third, "create_room")):
        assert refused(player, kind) == "too_many_rooms"  # a new connection from the same address too
    other = Player(caps, "127.0.0.12")
    assert other.reply("create_room")["type"] == "joined"


def test_the_cap_is_the_smaller_of_the_count_and_the_share() -> None:
    assert Limits(max_rooms=10_000).rooms_for_one_address == 50
    assert Limits(max_rooms=100, rooms_per_address=50, address_share=0.1).rooms_for_one_address == 10
    assert Limits(max_rooms=3, rooms_per_address=50, address_share=0.01).rooms_for_one_address == 1


def test_a_room_nobody_joined_or_played_in_expires_within_its_short_time(tight: str) -> None:
    host, waiting, played = Player(tight, "127.0.0.13"), Player(tight, "127.0.0.13"), Player(tight, "127.0.0.13")
    deserted = host.reply("create_room")["room"]
    assert host.reply("leave")["type"] == "left"
    kept_open = waiting.reply("create_room")["room"]  # its maker is still in it, waiting for a friend
    used = played.reply("play_computer", first="me")["room"]
    played.send(type="move", cell=4)
    played.until("state")
    played.close()
    time.sleep(TIGHT.unjoined_ttl + 4 * TIGHT.sweep_every)
    visitor = Player(tight, "127.0.0.14")
    assert refused(visitor, "join", room=deserted) == "no_room"
    assert visitor.reply("join", room=kept_open)["seat"] == 1
    assert visitor.reply("join", room=used)["seat"] is None


# 2. connections ------------------------------------------------------------------------------------
def test_one_address_holds_a_bounded_number_of_connections_and_others_still_connect(caps: str) -> None:
    held = [Player(caps, "127.0.0.21") for _ in range(CAPS.connections_per_address)]
    # Refused however it shows: websockets' sync client can trip its own internal assertion when
    # the server drops the socket in the middle of the handshake (a race a busy machine hits).
    with pytest.raises((ConnectionClosed, InvalidStatus, OSError, TimeoutError, AssertionError)) as refused:
        Player(caps, "127.0.0.21")
    if refused.type is AssertionError:
        assert "websockets" in str(refused.traceback[-1].path), refused.value  # not one of ours
    Player(caps, "127.0.0.22").close()  # another address is not affected
    held.pop().close()
    time.sleep(0.2)
    Player(caps, "127.0.0.21").close()  # a closed websocket gives its place back


def test_headers_sent_a_byte_at_a_time_are_cut_off(tight: str) -> None:
    request = f"GET /healthz HTTP/1.1\r\nHost: {address(tight)[0]}\r\nX-Padding: {'a' * 200}\r\n\r\n".encode()
    with open_socket(tight, "127.0.0.23") as slow:
        started = time.monotonic()
        slow.settimeout(0.05)
        closed = False
        for byte in request:
            try:
                slow.sendall(bytes([byte]))
                if slow.recv(1024) == b"":
                    closed = True
                    break
            except TimeoutError:
                continue
            except OSError:
                closed = True
                break
            if time.monotonic() - started > 5:
                break
        assert closed, "the server still waited for the headers after 5 s"
        assert time.monotonic() - started < TIGHT.handshake_timeout + 2
    with open_socket(tight, "127.0.0.23") as quick:  # the whole request at once is served
        quick.sendall(request)
        assert quick.recv(4096).startswith(b"HTTP/1.1 200")


def test_an_idle_websocket_is_closed_with_a_close_code() -> None:
    quick = Limits(idle_timeout=0.5)  # a server of its own: TIGHT's idle limit is kept long
    with running(limits=quick, scores=False, notify=lambda line: None) as url:
        idle = Player(url, "127.0.0.24")
        with pytest.raises(ConnectionClosed) as closed:
            idle.next(timeout=quick.idle_timeout + 3)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1001


def test_a_flood_of_bad_requests_writes_one_log_line_per_cause_with_a_count() -> None:
    from noughts.web.guard import LogLimiter

    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    logger = logging.getLogger("noughts.test.flood")
    logger.propagate = False
    logger.addHandler(Keep())
    clock = [100.0]
    limiter = LogLimiter(every=10.0, clock=lambda: clock[0])
    logger.addFilter(limiter)
    for _ in range(1000):
        logger.warning("Invalid HTTP request received.")
    logger.warning("another cause %s", 1)
    assert lines == ["Invalid HTTP request received.", "another cause 1"]
    clock[0] += 11
    logger.warning("Invalid HTTP request received.")
    assert lines[-1] == "Invalid HTTP request received. (and 999 more like it in the last 11 s)"


def test_the_descriptor_limit_is_raised_or_a_clear_warning_says_why_not() -> None:
    script = """
import resource, sys
from noughts.web.guard import raise_descriptor_limit
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard))
print(raise_descriptor_limit(100) is None, resource.getrlimit(resource.RLIMIT_NOFILE)[0] == hard)
resource.setrlimit(resource.RLIMIT_NOFILE, (64, 128))
print(raise_descriptor_limit(10_000))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                         env={"PYTHONPATH": str(ROOT / "src")}, check=True).stdout.splitlines()
    assert out[0] == "True True"
    assert "128" in out[1] and "10000" in out[1] and "ulimit -n" in out[1]


def test_many_sockets_from_one_address_share_one_message_allowance(caps: str) -> None:
    sockets = [Player(caps, "127.0.0.25") for _ in range(3)]
    answers = []
    for _ in range(30):
        for player in sockets:
            answers.append(player.reply("ping"))
    limited = [a for a in answers if a["type"] == "error" and a["code"] == "rate_limited"]
    assert answers[:CAPS.address_burst] == [{"type": "pong"}] * CAPS.address_burst
    assert limited and "your address" in limited[0]["message"]
    assert Player(caps, "127.0.0.26").reply("ping") == {"type": "pong"}


# 3. slow consumers and spectators ----------------------------------------------------------------------
class StalledSocket:
    """A websocket whose client stopped reading: every send waits forever."""

    def __init__(self) -> None:
        self.closed: tuple[int, str] | None = None

    async def send_text(self, text: str) -> None:
        await asyncio.Event().wait()

    async def close(self, code: int = 1000, reason: str | None = None) -> None:
        self.closed = (code, reason or "")


def test_states_queued_for_a_slow_reader_are_replaced_by_the_newest_not_piled_up() -> None:
    from noughts.web.connection import Connection

    async def scenario() -> tuple[bool, int]:
        conn = Connection(StalledSocket(), Limits())  # type: ignore[arg-type]
        conn.seat = 0
        for version in range(2000):
            conn.push({"type": "state", "room": "X", "version": version})
        await asyncio.sleep(0)
        still_open, pending = conn.open, conn.pending
        await conn.finish()
        return still_open, pending

    still_open, pending = asyncio.run(scenario())
    assert still_open and pending <= 2


def test_a_slow_spectator_is_dropped_with_a_close_code_at_its_own_smaller_budget() -> None:
    from noughts.web.connection import Connection

    async def scenario(seat: int | None) -> tuple[int, tuple[int, str] | None]:
        ws = StalledSocket()
        conn = Connection(ws, Limits())  # type: ignore[arg-type]
        conn.seat = seat
        conn.push({"type": "pong"})
        await asyncio.sleep(0)  # the writer takes the first message and waits on the socket
        pushed = 1
        while conn.open and pushed < 1000:
            conn.push({"type": "pong"})
            pushed += 1
        await asyncio.sleep(0.05)
        return pushed, ws.closed

    pushed, closed = asyncio.run(scenario(None))
    assert pushed == Limits().watcher_outbox + 2  # the writer holds one, the queue the budget, one more overflows
    assert closed is not None and closed[0] == 1008
    pushed, closed = asyncio.run(scenario(0))
    assert pushed == Limits().outbox + 2 and closed is not None and closed[0] == 1008


def test_a_spectator_rejoining_in_a_loop_is_slowed_and_the_players_keep_their_seats(caps: str) -> None:
    host, friend = Player(caps, "127.0.0.31"), Player(caps, "127.0.0.32")
    code = host.reply("create_room", first="me")["room"]
    assert friend.reply("join", room=code)["seat"] == 1
    looper = Player(caps, "127.0.0.33")
    codes = []
    for _ in range(30):  # each join refused for rate costs its address refused_join_cost messages too
        codes.append(looper.reply("join", room=code).get("code"))
        codes.append(looper.reply("leave").get("code"))
        if "rate_limited" in codes:
            break  # the address's messages are ignored now
    burst = int(CAPS.join_burst)
    assert codes[:2 * burst] == [None] * 2 * burst and codes[2 * burst] == "too_many_joins"
    # 60 messages at once would have let 26 refused joins through; the cost silences the loop after a few
    assert codes.count("too_many_joins") <= (CAPS.address_burst - 2 * burst) / CAPS.refused_join_cost + 1
    assert codes[-1] == "rate_limited"
    host.send(type="move", cell=0)
    while (state := host.until("state"))["moves"] != [0]:
        pass
    assert [seat["connected"] for seat in state["seats"]] == [True, True]
    friend.send(type="move", cell=4)
    while host.until("state")["moves"] != [0, 4]:
        pass


# 4. recording under attack ----------------------------------------------------------------------------
def test_finished_games_are_recorded_once_while_the_server_is_attacked(tmp_path: Path) -> None:
    db = str(tmp_path / "noughts.db")
    games = 12

    async def honest(url: str, number: int) -> int:
        from websockets.asyncio.client import connect

        recorded = 0
        async with connect(url.replace("http", "ws") + "/ws") as ws:
            await ws.send(json.dumps({"type": "play_computer", "opponent": "easy", "first": "me",
                                      "name": f"honest{number}"}))
            while True:
                message = json.loads(await ws.recv())
                if message["type"] == "recorded":
                    recorded += 1
                    return recorded
                if message["type"] == "state" and message["result"] is None and message["turn"] == "X":
                    await ws.send(json.dumps({"type": "move", "cell": message["cells"].index(None),
                                              "game": message["game"]}))

    async def hostile(url: str, stop: asyncio.Event) -> None:
        from websockets.asyncio.client import connect

        # It never reads, so the server stops writing to it, its close frame too: waiting 1 s for that
        # rather than websockets' 10 s is enough (the test is about the honest games).
        async with connect(url.replace("http", "ws") + "/ws", close_timeout=1) as ws:
            while not stop.is_set():
                for text in ('{"type":"join","room":"ZZZZZZZZZZZZ","token":"\u00e9"}', "[" * 1500,
                             '{"type":"move","cell":[1]}', '{"type":"create_room","first":{"a":1}}'):
                    await ws.send(text)
                await asyncio.sleep(0.01)

    async def attack(url: str) -> list[int]:
        stop = asyncio.Event()
        attackers = [asyncio.create_task(hostile(url, stop)) for _ in range(2)]
        recorded = await asyncio.gather(*(honest(url, n) for n in range(games)))
        stop.set()
        await asyncio.gather(*attackers, return_exceptions=True)
        return recorded

    with running(db=db, limits=Limits(rate=1e6, burst=1e6), notify=lambda line: None) as url:
        recorded = asyncio.run(attack(url))
    assert recorded == [1] * games
    with sqlite3.connect(db) as kept:
        names = [row[0] for row in kept.execute("SELECT x_name FROM games")]
    assert sorted(names) == sorted(f"honest{n}" for n in range(games))


# 5. room codes, guessing, tokens ---------------------------------------------------------------------------
def test_room_codes_carry_at_least_60_random_bits_and_forgive_typing_slips() -> None:
    codes = {new_code() for _ in range(5000)}
    assert len(codes) == 5000
    assert all(len(code) == 12 and set(code) <= set(CODE_ALPHABET) for code in codes)
    assert 12 * math.log2(len(CODE_ALPHABET)) >= 60
    limits = Limits()
    for typed in ("k7m2-qxab-9cde", "K7M2 QXAB 9CDE", " k7m2qxab9cde "):
        assert parse(json.dumps({"type": "join", "room": typed}), limits)["room"] == "K7M2QXAB9CDE"
    assert parse('{"type": "join", "room": "OIL0-1234-5678"}', limits)["room"] == "011012345678"


def test_seat_tokens_come_from_secrets_and_never_from_the_code(monkeypatch: pytest.MonkeyPatch) -> None:
    import secrets

    drawn = iter(["first-secret", "second-secret"])
    monkeypatch.setattr(secrets, "token_urlsafe", lambda size: next(drawn))
    room = Room.for_friend()
    assert room.tokens[0] == "first-secret"
    assert room.take_free_seat("Bob") == (1, "second-secret")


def test_guessing_codes_locks_the_address_out_with_growing_back_off(tight: str) -> None:
    host = Player(tight, "127.0.0.51")
    code = host.reply("create_room")["room"]
    guesser = Player(tight, "127.0.0.52")
    for guess in ("AAAAAAAAAAAA", "BBBBBBBBBBBB"):
        assert refused(guesser, "join", room=guess) == "no_room"
    locked = guesser.reply("join", room=code)
    assert locked["code"] == "locked_out" and "second" in locked["message"]
    assert Player(tight, "127.0.0.53").reply("join", room=code)["seat"] == 1  # others are not locked out
    time.sleep(TIGHT.lockout + 0.1)
    assert guesser.reply("join", room=code)["type"] == "joined"  # the lockout ends
    assert refused(guesser, "join", room="CCCCCCCCCCCC") == "no_room"
    assert refused(guesser, "join", room="DDDDDDDDDDDD") == "no_room"
    time.sleep(TIGHT.lockout + 0.1)
    assert refused(guesser, "join", room=code) == "locked_out"  # the second lockout lasts twice as long
    time.sleep(TIGHT.lockout)
    assert guesser.reply("join", room=code)["type"] == "joined"
    host.close()


# 6. every field's type and size ----------------------------------------------------------------------------
def documented_error_codes() -> set[str]:
    """The codes in docs/web-protocol.md's error table: a refusal must be one a client can look up."""
    text = (ROOT / "docs" / "web-protocol.md").read_text(encoding="utf-8")
    table = text[text.index("| code | when |"):].split("\n\n")[0]
    return {code for line in table.splitlines()[2:] for code in re.findall(r"`([a-z_]+)`", line.split("|")[1])}


KNOWN_ERRORS = documented_error_codes() - {"internal"}  # "internal" is a bug by definition

FIELDS = ["type", "opponent", "first", "name", "room", "token", "cell", "game", "ply", "mark", "extra", "id"]
scalars = (st.none() | st.booleans() | st.integers() | st.integers(-10, 10) | st.floats(allow_nan=True)
           | st.text(max_size=50) | st.text(alphabet=CODE_ALPHABET, min_size=12, max_size=12)
           | st.sampled_from(["me", "computer", "easy", "hard", "b2", "X", "O"]))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner,
                                                                                          max_size=4), max_leaves=8)
messages = st.fixed_dictionaries({"type": st.sampled_from(MESSAGE_TYPES) | values},
                                 optional={field: values for field in FIELDS[1:]})


class Collector:
    """What the lobby needs of a connection, keeping what it is sent."""

    def __init__(self) -> None:
        self.room: str | None = None
        self.seat: int | None = None
        self.shown = None
        self.created = 0
        self.address = "192.0.2.1"
        self.answers = None
        self.sent: list[dict[str, Any]] = []
        # the socket's request, as the lobby reads it for a friend's link (host and scheme)
        self.ws = types.SimpleNamespace(headers={"host": "127.0.0.1:8000"}, url=types.SimpleNamespace(scheme="ws"))

    def push(self, message: str | dict[str, Any]) -> None:
        text = message if isinstance(message, str) else json.dumps(message, ensure_ascii=False)
        text.encode("utf-8")  # what uvicorn will do: a lone surrogate would fail here
        self.sent.append(json.loads(text))


@pytest.fixture(scope="module")
def lobby() -> Iterator[tuple[Any, asyncio.AbstractEventLoop]]:
    from noughts.web.hub import Hub
    from noughts.web.lobby import Lobby
    from noughts.web.recording import Recorder
    from noughts.web.rooms import MemoryRoomStore

    limits = Limits(rate=1e6, burst=1e6, failed_joins=10**9, join_burst=1e9, rooms_per_address=10**6,
                    address_share=1.0, max_rooms=10**6)
    rooms = MemoryRoomStore(limits.max_rooms, limits.room_ttl)
    loop = asyncio.new_event_loop()
    the_lobby = Lobby(limits, rooms, Recorder(None, False, lambda line: None), Hub(rooms))
    loop.run_until_complete(the_lobby.recorder.start())
    yield the_lobby, loop
    loop.run_until_complete(the_lobby.recorder.stop())
    loop.close()


def check_answers(lobby: tuple[Any, asyncio.AbstractEventLoop], texts: list[str],
                  caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    the_lobby, loop = lobby
    conn = Collector()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="noughts.web"):
        for text in texts:
            loop.run_until_complete(the_lobby.handle(conn, text))
    loop.run_until_complete(the_lobby.leave(conn))
    assert not caplog.records, [r.getMessage() for r in caplog.records]
    errors = [m for m in conn.sent if m["type"] == "error"]
    assert {e["code"] for e in errors} <= KNOWN_ERRORS, errors
    return conn.sent


def test_hostile_fields_get_an_error_and_never_a_traceback(lobby: Any, caplog: pytest.LogCaptureFixture) -> None:
    made = check_answers(lobby, ['{"type": "create_room"}'], caplog)
    code = next(m for m in made if m["type"] == "joined")["room"]
    cases = {
        json.dumps({"type": "join", "room": code, "token": "s\u00e9same-\u2603"}): "bad_token",
        json.dumps({"type": "join", "room": code, "token": ["a"]}): "bad_field",
        json.dumps({"type": "create_room", "first": ["me"]}): "bad_field",
        json.dumps({"type": "create_room", "first": {"who": "me"}}): "bad_field",
        json.dumps({"type": "play_computer", "opponent": {"name": "easy"}}): "bad_field",
        json.dumps({"type": "join", "room": {"code": code}}): "bad_field",
        json.dumps({"type": "move", "cell": 4, "colour": "red"}): "unknown_field",
        json.dumps({"type": "ping", "x" * 40: 1}): "unknown_field",
        json.dumps({"type": "create_room", "name": "A" * 1900}): None,  # long names are cut, not refused
        json.dumps({"type": "ping", "pad": "é" * 1500}): "too_big",
        "[" * 500 + "]" * 500: "bad_message",
        "[" * 1000 + "]" * 1000: "bad_json",  # nested too deeply
        "[" * 2000: "bad_json",
    }
    for text, expected in cases.items():
        answers = check_answers(lobby, [text], caplog)
        errors = [m["code"] for m in answers if m["type"] == "error"]
        assert errors == ([expected] if expected else []), (text[:80], answers)


@pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisDeprecationWarning")  # the computer's dice
# 75 examples: test_web_protocol's thousand seeded hostile messages (any field, junk values) cover the same space
@settings(max_examples=75, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(messages, min_size=1, max_size=4))
def test_any_shape_of_message_is_answered_without_a_traceback(lobby: Any, caplog: pytest.LogCaptureFixture,
                                                             sequence: list[dict[str, Any]]) -> None:
    texts = [json.dumps(message, ensure_ascii=False) for message in sequence]
    answers = check_answers(lobby, texts, caplog)
    assert len(answers) >= len(texts)  # every message gets a reply (an error, a state, a pong...)


# 7. hosts, origins, headers -----------------------------------------------------------------------------
HEADERS = ("content-security-policy", "x-content-type-options", "x-frame-options", "referrer-policy")


def http(url: str, path: str, host: str | None = None, source: str = "127.0.0.61") -> tuple[int, dict[str, str]]:
    with open_socket(url, source) as sock:
        shown = host if host is not None else "{}:{}".format(*address(url))
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {shown}\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    fields = dict(line.split(": ", 1) for line in head[1:])
    return int(head[0].split()[1]), {name.lower(): value for name, value in fields.items()}


def test_only_configured_hosts_are_served_and_every_response_has_the_security_headers(caps: str) -> None:
    port = address(caps)[1]
    for path, status in (("/", 200), ("/healthz", 200), ("/nowhere", 404), ("/static/nothing", 404)):
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", "localhost"):
            got, headers = http(caps, path, host)
            assert got == status, (path, host)
            assert all(name in headers for name in HEADERS), (path, headers)
        got, headers = http(caps, path, f"rebound.example:{port}")  # DNS rebinding: a name we do not serve
        assert got == 421 and all(name in headers for name in HEADERS)
    csp = http(caps, "/")[1]["content-security-policy"]
    assert "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp
    assert http(caps, "/")[1]["x-frame-options"] == "DENY"


def test_a_websocket_from_another_sites_page_or_host_name_is_refused(caps: str) -> None:
    port = address(caps)[1]
    for headers in ({"Origin": f"http://rebound.example:{port}"}, {"Host": f"rebound.example:{port}"}):
        with pytest.raises((InvalidStatus, ConnectionClosed)):
            Player(caps, "127.0.0.62", additional_headers=headers).next(timeout=5)
    Player(caps, "127.0.0.62", additional_headers={"Origin": f"http://localhost:{port}"}).close()


def test_the_default_hosts_follow_the_address_served() -> None:
    from noughts.web.guard import default_allowed_hosts

    assert default_allowed_hosts("127.0.0.1") == {"localhost", "127.0.0.1", "::1"}
    assert default_allowed_hosts("::1") == {"localhost", "127.0.0.1", "::1"}
    assert default_allowed_hosts("192.0.2.7") == {"192.0.2.7"}
    everywhere = default_allowed_hosts("0.0.0.0")
    assert socket.gethostname().lower() in everywhere and "localhost" in everywhere
