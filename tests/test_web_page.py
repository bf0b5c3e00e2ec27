"""What the page asks of the server: any board, the players that can play it, undo and hint,
repeated requests answered once, and a friend link (with its QR code) that works from another device.

Through Starlette's in-process TestClient; tests/test_web_browser.py drives the page itself.
"""

from __future__ import annotations

import html
import json
import os
import re
import socket
import warnings
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from noughts import players, text
from noughts.board import Board
from noughts.errors import NoughtsError, SettingError
from noughts.web import create_app, running
from noughts.web.app import SECURITY_HEADERS, ListedFiles
from noughts.web.lobby import HINT_NODES, HINT_NODES_CELLS
from noughts.web.protocol import Limits
from noughts.web.share import Share, check_public_url, is_loopback, lan_address, qr_svg
from socket_reads import receive_json

with warnings.catch_warnings():  # starlette 1.x suggests httpx2 for its TestClient; httpx still works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

GENEROUS = Limits(rate=1e9, burst=1e9, rooms_per_connection=10**6)


class Client:
    """One websocket; ``until`` reads up to the message wanted, keeping every message seen in ``seen``."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.welcome = ws.receive_json()
        ws.receive_json()  # scores
        self.seen: list[dict[str, Any]] = []

    def send(self, **message: Any) -> None:
        self.ws.send_json(message)

    def until(self, kind: str, **match: Any) -> dict[str, Any]:
        while True:
            message: dict[str, Any] = receive_json(self.ws, kind)
            self.seen.append(message)
            if message["type"] == kind and all(message.get(k) == v for k, v in match.items()):
                return message
            assert message["type"] != "error" or kind == "error", message

    def settled(self) -> list[dict[str, Any]]:
        """Everything that came before the answer to a ping (so nothing else is on its way)."""
        start = len(self.seen)
        self.send(type="ping", id=f"ping{start}")
        while True:
            message: dict[str, Any] = receive_json(self.ws, "pong")
            if message == {"type": "pong", "id": f"ping{start}"}:
                return self.seen[start:]
            self.seen.append(message)


@pytest.fixture(scope="module")
def app_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    db = tmp_path_factory.mktemp("web") / "noughts.db"
    app = create_app(str(db), limits=GENEROUS, notify=lambda line: None, listen_host="0.0.0.0")
    app.state.lobby.hint_seconds = 0.2  # the solver gives up on 7×7 all the same, sooner
    with TestClient(app) as test_client:
        yield test_client


@pytest.fixture
def player(app_client: TestClient) -> Iterator[Client]:
    with app_client.websocket_connect("/ws") as ws:
        yield Client(ws)


def test_a_message_that_never_comes_fails_the_test_instead_of_hanging(player: Client) -> None:
    with pytest.raises(AssertionError, match=r"no message within 0\.2 s while waiting for state"):
        receive_json(player.ws, "state", seconds=0.2)
    player.send(type="ping", id="after")
    assert receive_json(player.ws, "pong") == {"type": "pong", "id": "after"}  # the socket still works


# any board ----------------------------------------------------------------------------------------
def test_the_players_of_a_board_are_the_registrys_verdicts_worked_out_once_per_shape(
        app_client: TestClient, player: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    assert player.welcome["max_side"] == 15
    asked: list[tuple[str, tuple[int, int, int]]] = []
    real = players.unable

    def counting(name: str, board: Board, **options: Any) -> str | None:
        asked.append((name, (board.rows, board.cols, board.k)))
        return real(name, board, **options)

    monkeypatch.setattr(players, "unable", counting)
    # far beyond a proof, so perfect is refused on any machine (7×6 with four is now solved within the probe sometimes)
    player.send(type="players", rows=9, cols=8, k=5, id="p1")
    answer = player.until("players", id="p1")
    expected = {name: real(name, Board(9, 8, 5)) for name in players.names()}
    assert answer["able"] == [n for n, why in expected.items() if why is None]
    assert set(answer["unable"]) == {n for n, why in expected.items() if why is not None}
    assert answer["unable"]["perfect"] == expected["perfect"]  # the registry's reason, to follow a label
    # and the sentence the page shows, worded by the server: one per reason, "each" for several players
    assert answer["unable_text"] == text.web_not_for_board(
        (players.label(name), why) for name, why in expected.items() if why is not None)
    assert answer["unable_text"].startswith("Not for this board: ")
    assert f"{players.label('perfect')}" in answer["unable_text"]
    assert "perfect" not in answer["able"] and "minimax" in answer["able"]
    # the opponent offered first is the board's own, as in every front end (not the first one able)
    assert answer["default"] == players.default_for(Board(9, 8, 5)) == "arduino" != answer["able"][0]
    assert {name for name, _ in asked} == set(players.names())
    worked_out = len(asked)
    player.send(type="players", rows=9, cols=8, k=5, id="p2")  # the same board again: kept
    again = player.until("players", id="p2")
    assert (again["able"], again["default"]) == (answer["able"], "arduino") and len(asked) == worked_out
    player.send(type="players", id="p3")
    assert player.until("players", id="p3")["default"] == players.default_for(Board()) == "medium"
    refused = [("rows", 16), ("cols", 0), ("k", 8), ("rows", "7"), ("k", True)]
    for field, value in refused:
        player.send(type="players", **{"rows": 7, "cols": 7, "k": 4, field: value})
        assert player.until("error")["code"] == "bad_field"


def test_a_game_on_a_seven_by_seven_board_with_named_cells_undo_and_hint(player: Client) -> None:
    # 7×7 with five is far beyond the probe of a player that works out every move (with four it is at
    # its edge: about a second, so that verdict depends on the machine). Read up to the answer to a
    # ping: a game started by mistake fails here instead of waiting for ever for the refusal.
    player.send(type="play_computer", opponent="perfect", rows=7, cols=7, k=5)
    answers = player.settled()
    assert [m["type"] for m in answers] == ["error"], answers
    assert answers[0]["code"] == "bad_field" and answers[0]["message"].startswith("Perfect cannot play a 7×7 board")
    player.send(type="play_computer", opponent="arduino", first="me", rows=7, cols=7, k=4, name="Ann")
    player.until("joined")
    state = player.until("state")
    assert (state["rows"], state["cols"], state["k"], len(state["cells"])) == (7, 7, 4, 49)
    player.send(type="move", cell="g7", game=1, ply=0)  # a cell by the name people see
    state = player.until("state")
    assert state["moves"][0] == 48 and len(state["moves"]) == 2
    player.send(type="move", cell=49)
    assert player.until("error")["message"] == "There is no cell 49: cells are 0 to 48, or a1 to g7."
    player.send(type="move", cell="h1")
    assert player.until("error")["code"] == "bad_cell"
    player.send(type="undo", id="u1")
    undone = player.until("undone")
    reply = Board(7, 7, 4).cell_name(state["moves"][1])
    assert undone["message"] == f"Took back your move g7 and Arduino rules's reply {reply}."
    assert undone["cells"] == [state["moves"][1], 48] and undone["id"] == "u1"
    assert [m for m in player.seen if m["type"] == "state"][-1]["moves"] == []
    player.send(type="undo")
    assert player.until("error")["message"] == "There is no move of yours to take back."
    player.send(type="hint", id="h1")  # 7×7 with 4 in a row is beyond a hint's few seconds
    hint = player.until("hint", id="h1")
    assert hint["cell"] is None and hint["message"].startswith("No hint")


def test_a_hint_against_the_computer(player: Client) -> None:
    player.send(type="play_computer", opponent="parsons", first="me")
    player.until("state")
    player.send(type="move", cell=0)
    state = player.until("state")
    assert len(state["moves"]) == 2
    player.send(type="hint")
    hint = player.until("hint")
    assert hint["message"].startswith("Hint: ") and hint["cell"] in range(9) and state["cells"][hint["cell"]] is None
    assert (hint["game"], hint["ply"]) == (1, 2)


def test_undo_and_hint_between_friends_follow_the_matchs_one_rule(app_client: TestClient) -> None:
    with app_client.websocket_connect("/ws") as ws_ann, app_client.websocket_connect("/ws") as ws_bo:
        ann, bo = Client(ws_ann), Client(ws_bo)
        ann.send(type="create_room", name="Ann", first="me")
        code = ann.until("joined")["room"]
        bo.send(type="join", room=code, name="Bo")
        bo.until("joined")
        ann.send(type="hint", id="h1")  # a hint at one's own move
        assert ann.until("hint", id="h1")["message"].startswith("Hint: ")
        bo.send(type="hint", id="h2")  # and only then
        refused = bo.until("error")
        assert (refused["code"], refused["message"]) == ("not_your_turn", text.HINT_AT_YOUR_MOVE)
        ann.send(type="move", cell=4)
        ann.until("state", moves=[4])
        bo.send(type="undo", id="u1")  # not Bo's move to take back
        refused = bo.until("error")
        assert (refused["code"], refused["message"]) == ("no_undo", text.NOT_YOURS_TO_UNDO)
        ann.send(type="undo", id="u2")  # Ann takes back her own move before the reply
        undone = ann.until("undone", id="u2")
        assert undone["cells"] == [4] and undone["message"]
        assert bo.until("state", moves=[])["turn"] == "X"
        ann.send(type="move", cell=0)
        bo.until("state", moves=[0])
        bo.send(type="move", cell=4)
        ann.until("state", moves=[0, 4])
        ann.send(type="undo", id="u3")  # after the reply, Ann's move is no longer hers alone to take back
        refused = ann.until("error")
        assert (refused["code"], refused["message"]) == ("no_undo", text.NOT_YOURS_TO_UNDO)


def test_hints_cost_the_solver_once_per_position_and_one_at_a_time_per_connection(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import noughts.match

    budgets: list[tuple[float, int | None]] = []
    hint = noughts.match.hint

    def counted(board: Board, seconds: float = 3.0, nodes: int | None = None) -> tuple[int | None, str]:
        budgets.append((seconds, nodes))
        return hint(board, seconds) if nodes is None else hint(board, seconds, nodes)

    monkeypatch.setattr(noughts.match, "hint", counted)
    app = create_app(str(tmp_path / "noughts.db"), limits=GENEROUS, notify=lambda line: None)
    app.state.lobby.hint_seconds = 0.5
    with TestClient(app) as test_client, test_client.websocket_connect("/ws") as ws, \
            test_client.websocket_connect("/ws") as ws_other:
        player, other = Client(ws), Client(ws_other)
        player.send(type="play_computer", opponent="arduino", first="me", rows=7, cols=7, k=5)
        player.until("state")
        for n in range(60):
            player.send(type="hint", id=f"h{n}")
        answers = [m for m in player.settled() if m["type"] in ("hint", "error")]
        busy = [m for m in answers if m["type"] == "error"]
        # while the first is worked out, more from the same connection are refused with a sentence
        assert all((m["code"], m["message"]) == ("no_hint", text.HINT_BEING_WORKED_OUT) for m in busy), busy[:1]
        hints = [m for m in answers if m["type"] == "hint"]
        while len(hints) + len(busy) < 60:  # the first one's answer may still be on its way
            hints.append(player.until("hint"))
        assert hints and all(h["message"] == hints[0]["message"] for h in hints)
        for n in range(60):  # asked again, it is kept: answered at once, the same way
            player.send(type="hint", id=f"again{n}")
        assert [m["message"] for m in player.settled() if m["type"] == "hint"] == [hints[0]["message"]] * 60
        # the same position in another game, another room: kept for everyone
        other.send(type="play_computer", opponent="arduino", first="me", rows=7, cols=7, k=5)
        other.until("state")
        other.send(type="hint", id="o1")
        assert other.until("hint", id="o1")["message"] == hints[0]["message"]
    # the solver ran once, with a node budget as well as the seconds (smaller on 49 cells than on 16)
    assert budgets == [(0.5, HINT_NODES * HINT_NODES_CELLS // 49)]


# repeated requests --------------------------------------------------------------------------------
def test_a_request_sent_twice_with_its_id_is_answered_once_the_same_way(app_client: TestClient,
                                                                       player: Client) -> None:
    lobby = app_client.app.state.lobby  # type: ignore[attr-defined]
    rooms_before = len(lobby.rooms)
    player.send(type="play_computer", opponent="parsons", first="me", id="new.1")
    player.send(type="play_computer", opponent="parsons", first="me", id="new.1")  # a double click
    first, second = player.until("joined"), player.until("joined")
    assert first == second and first["id"] == "new.1"
    assert len(lobby.rooms) == rooms_before + 1  # one room, no orphan
    player.settled()
    player.send(type="move", cell=0, game=1, ply=0, id="m.1.0.0")
    player.send(type="move", cell=0, game=1, ply=0, id="m.1.0.0")
    after = player.settled()
    assert [m["type"] for m in after] == ["state", "done", "done"]  # the move once; no "taken" error
    assert after[1] == after[2] == {"type": "done", "re": "move", "id": "m.1.0.0"}
    player.send(type="move", cell=4, game=1, ply=2, id="m.1.2.4")  # taken by the computer: a true refusal
    player.send(type="move", cell=4, game=1, ply=2, id="m.1.2.4")
    refusals = player.settled()
    assert len(refusals) == 2 and refusals[0] == refusals[1] and refusals[0]["code"] == "occupied"
    player.send(type="move", cell=0, id="again")  # without the same id, the same move is refused
    assert player.until("error")["code"] == "occupied"
    for bad in (7, "", "x" * 65, "é"):
        player.send(type="ping", id=bad)
        assert player.until("error")["code"] == "bad_field"


def test_only_the_newest_ids_are_remembered(player: Client) -> None:
    player.send(type="play_computer", opponent="parsons", first="me")
    player.send(type="move", cell=0, id="move")
    assert [m["type"] for m in player.settled()] == ["joined", "state", "state", "done"]
    for n in range(30):  # with the ping that settled: 32 ids since the move's
        player.send(type="ping", id=f"p{n}")
    player.send(type="move", cell=0, id="move")  # the 32 newest ids include it: answered as before
    assert player.settled()[-1] == {"type": "done", "re": "move", "id": "move"}
    player.send(type="move", cell=0, id="move")  # one more id since: the connection forgot it; its seat has not
    assert player.settled()[-1] == {"type": "done", "re": "move", "repeated": True, "id": "move"}


# the friend link and its QR code -----------------------------------------------------------
def test_a_friend_is_never_sent_a_wildcard_or_loopback_address(app_client: TestClient) -> None:
    with app_client.websocket_connect("/ws", headers={"host": "127.0.0.1:8000"}) as ws:
        ann = Client(ws)
        ann.send(type="create_room", name="Ann")
        joined = ann.until("joined")
    lan = lan_address()
    host = re.match(r"http://([^/]+)/r/", joined["url"])
    assert host is not None and joined["url"].endswith(f"/r/{joined['room']}")
    if lan is None:  # a machine without a network: the page says the link works here only
        assert joined["reach"] == "machine"
    else:
        assert joined["reach"] == "network" and host.group(1) == f"{lan}:8000"
        assert not is_loopback(lan) and not lan.startswith("0.")


def test_where_the_server_listens_decides_the_link() -> None:
    assert Share(listen_host="127.0.0.1").link("ABCD", "localhost:8000") == ("http://localhost:8000/r/ABCD", "machine")
    assert Share(listen_host="::1").link("ABCD", "[::1]:8000")[1] == "machine"
    # the page came by a name or an address others can reach: that one
    assert Share(listen_host="0.0.0.0").link("ABCD", "games.lan:80", "https") == ("https://games.lan:80/r/ABCD",
                                                                                  "network")
    assert Share(listen_host="192.168.1.20").link("ABCD", "127.0.0.1:8000") == ("http://192.168.1.20:8000/r/ABCD",
                                                                                "network")
    configured = Share(check_public_url("https://play.example.org/"), "127.0.0.1")
    assert configured.link("ABCD", "127.0.0.1:8000") == ("https://play.example.org/r/ABCD", "network")
    for bad in ("play.example.org", "ftp://x", "http://", "http://x/?a=1"):
        with pytest.raises(SettingError, match=r"^the public URL is an address like http://") as refused:
            check_public_url(bad)
        assert refused.value.setting == "public_url" and refused.value.shown == repr(bad)
    assert is_loopback("127.8.0.1") and is_loopback("[::1]") and is_loopback("LOCALHOST")
    assert not is_loopback("192.168.1.2") and not is_loopback("example.org")


def rasterise(svg: str, scale: int = 8) -> np.ndarray:
    """segno's SVG (one path of horizontal strokes, ``M x y h n m dx dy …``) as a black-on-white image."""
    size = int(re.search(r'viewBox="0 0 (\d+) (\d+)"', svg).group(1))  # type: ignore[union-attr]
    path = re.search(r'<path[^>]*stroke="[^"]+"[^>]*\sd="([^"]+)"', svg)
    assert path is not None, svg[:200]
    modules = np.zeros((size, size), dtype=bool)
    x = y = 0.0
    for op, numbers in re.findall(r"([MmHhVv])([-\d.\s]+)", path.group(1)):
        values = [float(v) for v in numbers.split()]
        if op in "Mm":
            x, y = (values[0], values[1]) if op == "M" else (x + values[0], y + values[1])
        elif op in "Hh":
            end = values[0] if op == "H" else x + values[0]
            modules[int(y), int(x):int(end)] = True
            x = end
        else:
            raise AssertionError(f"unexpected path command {op}")
    image = np.where(modules, 0, 255).astype(np.uint8)
    return np.kron(image, np.ones((scale, scale), dtype=np.uint8))


def test_the_qr_code_of_the_link_decodes_to_the_link(app_client: TestClient) -> None:
    answer = app_client.get("/r/K7M2QXAB9CDE/qr.svg", headers={"host": "192.168.1.20:8000"})
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("image/svg+xml")
    assert "default-src 'self'" in answer.headers["content-security-policy"]
    assert answer.headers["x-content-type-options"] == "nosniff"
    text, _, _ = cv2.QRCodeDetector().detectAndDecode(rasterise(answer.text))
    assert text == "http://192.168.1.20:8000/r/K7M2QXAB9CDE"
    for not_a_code in ("K7M2QX", "K7M2QXAB9CDU", "K7M2QXAB9CDE0"):  # too short, U is no symbol, too long
        assert app_client.get(f"/r/{not_a_code}/qr.svg").status_code == 404  # no picture
    long = "https://play.example.org/r/" + "X" * 12
    assert cv2.QRCodeDetector().detectAndDecode(rasterise(qr_svg(long)))[0] == long


def test_the_qr_code_is_refused_to_a_host_the_server_does_not_answer_to() -> None:
    app = create_app(scores=False, notify=lambda line: None, allowed_hosts=["localhost", "127.0.0.1"])
    with TestClient(app, base_url="http://localhost") as client:
        assert client.get("/r/K7M2QXAB9CDE/qr.svg").status_code == 200
        refused = client.get("/r/K7M2QXAB9CDE/qr.svg", headers={"host": "evil.example:8000"})
        assert refused.status_code == 421 and "svg" not in refused.headers.get("content-type", "")
        assert refused.text == text.web_not_this_host("evil.example:8000")  # no flag: a visitor cannot use one


def test_noughts_web_answers_to_the_host_of_its_public_url() -> None:
    from noughts.web.server import answered_names

    assert answered_names("127.0.0.1", None, None) == ["127.0.0.1", "::1", "localhost"]
    assert answered_names("127.0.0.1", None, "https://Games.Example.org:8443") == [
        "127.0.0.1", "::1", "games.example.org", "localhost"]
    assert answered_names("0.0.0.0", ["lan.example"], "http://192.168.1.20:8000") == ["192.168.1.20", "lan.example"]
    assert answered_names("127.0.0.1", ["*"], "https://games.example.org") == ["*"]


def test_serve_refuses_a_public_url_that_is_no_address(tmp_path: Path) -> None:
    from noughts.web.server import serve

    with pytest.raises(NoughtsError, match="public URL is an address like"):
        serve(port=0, public_url="nonsense")


# the static files, through Starlette's StaticFiles ---------------------------------------------------
STATIC = Path(__file__).resolve().parents[1] / "src" / "noughts" / "web" / "static"


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """A real uvicorn: what a browser (or anyone with a socket) sends reaches it unnormalised."""
    with running(scores=False, notify=lambda line: None) as url:
        yield url


def raw_get(url: str, target: str, *fields: str) -> tuple[int, dict[str, str], bytes]:
    """``GET target`` sent as is (no client tidies ``..`` or ``%2e`` away): status, headers, body."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        head = "".join(f"{field}\r\n" for field in fields)
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: {host}:{port}\r\n{head}Connection: close\r\n\r\n".encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    top, _, body = data.partition(b"\r\n\r\n")
    lines = top.decode("latin-1").split("\r\n")
    headers = {name.lower(): value for name, value in (line.split(": ", 1) for line in lines[1:])}
    return int(lines[0].split()[1]), headers, body


def has_security_headers(headers: dict[str, str]) -> bool:
    return all(headers.get(name) == value for name, value in SECURITY_HEADERS.items())


def test_the_script_and_stylesheet_are_served_with_their_types_and_the_security_headers(server: str) -> None:
    for name, kind in (("app.js", "text/javascript; charset=utf-8"), ("style.css", "text/css; charset=utf-8")):
        status, headers, body = raw_get(server, f"/static/{name}")
        assert (status, headers["content-type"]) == (200, kind)
        assert body == (STATIC / name).read_bytes() and has_security_headers(headers), headers
        assert headers["cache-control"] == "no-cache"  # kept, but asked again each time: a new version is seen


def test_the_script_keeps_its_type_where_the_machines_mime_types_say_otherwise(
        app_client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    import starlette.responses

    # older /etc/mime.types name .js application/javascript; the page's module script is text/javascript
    monkeypatch.setattr(starlette.responses, "guess_type", lambda *args, **kwargs: ("application/javascript", None))
    assert app_client.get("/static/app.js").headers["content-type"] == "text/javascript; charset=utf-8"


def test_the_page_template_is_not_served_from_static(server: str) -> None:
    # its {{placeholders}} are filled in by the server, at / and /r/CODE only
    for target in ("/static/index.html", "/static/./index.html", "/static/%69ndex.html", "/static/app.js/../index.html",
                   "/static/", "/static/.", "/static/index.html/"):
        status, headers, body = raw_get(server, target)
        assert status == 404 and b"{{" not in body and has_security_headers(headers), (target, status, body[:80])
    status, _, body = raw_get(server, "/")
    assert status == 200 and b"{{" not in body and b'src="/static/app.js"' in body


@pytest.mark.parametrize("target", [
    "/static/../app.py", "/static/%2e%2e/app.py", "/static/%2E%2E/__init__.py", "/static/..%2fapp.py",
    "/static/..%2F..%2Fweb%2Fapp.py", "/static/....//app.py", "/static/%2e%2e%2f%2e%2e%2fpyproject.toml",
    "/static/..\\app.py", "/static//etc/passwd", "/static/%2fetc%2fpasswd", "/static/app.js%00.py",
    "/static/" + "a" * 300, "/static/App.js", "/static/nothing"])
def test_a_name_outside_the_list_or_the_folder_is_not_found(server: str, target: str) -> None:
    status, headers, body = raw_get(server, target)
    assert status == 404 and body == b"Not Found" and has_security_headers(headers), (status, body[:80])


def test_a_revalidated_file_answers_304_and_a_changed_file_gets_a_new_etag(tmp_path: Path) -> None:
    from starlette.applications import Starlette
    from starlette.routing import Mount

    script = tmp_path / "app.js"
    script.write_text("let a = 1;")
    files = ListedFiles({"app.js": "text/javascript; charset=utf-8"}, directory=tmp_path)
    with TestClient(Starlette(routes=[Mount("/static", files)])) as client:
        first = client.get("/static/app.js")
        assert first.status_code == 200 and first.text == "let a = 1;"
        tag = first.headers["etag"]
        again = client.get("/static/app.js", headers={"if-none-match": tag})
        assert (again.status_code, again.content, again.headers["etag"]) == (304, b"", tag)
        script.write_text("let a = 2;")  # a new version of the same size, as after an upgrade
        stat = script.stat()
        os.utime(script, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
        changed = client.get("/static/app.js", headers={"if-none-match": tag})
        assert (changed.status_code, changed.text) == (200, "let a = 2;") and changed.headers["etag"] != tag


def test_a_revalidated_static_file_answers_304_with_the_security_headers(server: str) -> None:
    status, headers, _ = raw_get(server, "/static/app.js")
    status, again, body = raw_get(server, "/static/app.js", f"If-None-Match: {headers['etag']}")
    assert (status, body, again["etag"]) == (304, b"", headers["etag"])
    assert has_security_headers(again), again
    assert raw_get(server, "/static/app.js", 'If-None-Match: "stale"')[0] == 200


# the page's words ----------------------------------------------------------------------------------


def string_literals(script: str) -> list[str]:
    """The double-quoted and template strings of a script, its // comments left out."""
    found = []
    for match in re.finditer(r'//[^\n]*|"((?:[^"\\\n]|\\.)*)"|`((?:[^`\\]|\\.)*)`', script):
        if not match.group(0).startswith("//"):
            found.append(match.group(1) if match.group(1) is not None else match.group(2))
    return found


def test_the_page_words_nothing_itself_every_sentence_comes_from_the_server() -> None:
    script = (STATIC / "app.js").read_text(encoding="utf-8")
    page = (STATIC / "index.html").read_text(encoding="utf-8")
    words = text.WEB_WORDS
    # every word the page asks for is one the server sends, and every one the server sends is used
    asked = set()
    for call in re.finditer(r'\bword\((?:[^()"]*\?\s*)?"(\w+)"(?:\s*:\s*"(\w+)")?', script):
        asked.update(key for key in call.groups() if key)
    assert asked and asked <= set(words), asked - set(words)
    assert not [key for key in words if f'"{key}"' not in script and f"words.{key}" not in script]
    # no sentence of its own, not even a fallback for the moment before the welcome (the words are in the page)
    sentences = [s for s in string_literals(script) if re.search(r"[A-Za-z]{2,} [a-z]{2,}", s)]
    assert sentences == []
    # the choices come from the server's welcome: who starts (with its labels) and the opponents
    assert "<option" not in page
    for empty in ("game-heading", "status", "watching"):
        assert re.search(rf'id="{empty}"[^>]*></', page), empty
    # templates fill only named placeholders
    assert all(field.isidentifier() for template in words.values()
               for field in re.findall(r"\{([^}]*)\}", template))


class _PageText(HTMLParser):
    """The words of an HTML page a person reads: its text and its labelling attributes."""

    SAID = ("placeholder", "aria-label", "alt", "title", "value", "label")

    def __init__(self) -> None:
        super().__init__()
        self.said: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.said += [value for name, value in attrs if name in self.SAID and value]

    def handle_data(self, data: str) -> None:
        if data.strip():
            self.said.append(data.strip())


def page_words(page: str) -> list[str]:
    reader = _PageText()
    reader.feed(page)
    return reader.said


def test_the_page_template_holds_placeholders_and_the_server_fills_them_from_text_py(app_client: TestClient) -> None:
    template = (STATIC / "index.html").read_text(encoding="utf-8")
    worded = [said for said in page_words(template) if re.search(r"[A-Za-z]", re.sub(r"\{\{\w+\}\}", "", said))]
    assert worded == []  # every word is a {{placeholder}}
    assert set(re.findall(r"\{\{(\w+)\}\}", template)) == {*text.WEB_PAGE, "words"}  # and every word is used
    page = app_client.get("/")
    served = page_words(page.text)
    assert "{{" not in page.text
    for key, said in text.WEB_PAGE.items():
        assert said in served, key  # as text or as a label, HTML-escaped in the page and read back whole
    assert "Connecting…" in served and "Skip to the board" in served
    words = re.search(r'<body data-words="([^"]*)"', page.text)
    assert words is not None and json.loads(html.unescape(words[1])) == text.WEB_WORDS  # before the welcome
    # rendered once: the same bytes and ETag every time, and a 304 for the tag
    again = app_client.get("/r/K7M2QXAB9CDE")
    assert again.content == page.content and again.headers["etag"] == page.headers["etag"]
    assert app_client.get("/", headers={"if-none-match": page.headers["etag"]}).status_code == 304
    assert page.headers["content-security-policy"] == again.headers["content-security-policy"]


def test_the_computer_thinking_is_named_as_in_the_other_front_ends() -> None:
    assert text.WEB_WORDS["computer_thinking"].format(name="Hard") == text.thinking("Hard") == "Hard is thinking…"


def test_a_host_waiting_for_a_friend_reads_so_in_the_heading() -> None:
    heading = text.WEB_WORDS["heading_waiting"].format(first=text.WEB_WORDS["you_as"].format(mark="X"))
    assert heading == "You (X) — waiting for a friend to join"
