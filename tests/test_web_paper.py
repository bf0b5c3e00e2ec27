"""Paper mode in the web game (issue 31): a real server, a websocket client sending camera frames made by the
synthetic photo generator, and the printable sheet."""

from __future__ import annotations

import asyncio
import io
import itertools
import json
import random
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from noughts.robot.sim.photos import Camera, marked_paper, photograph
from noughts.sheet.geometry import Sheet
from noughts.store import open_store
from noughts.web import running
from noughts.web.protocol import Limits

pytest.importorskip("cv2")
WAIT = 30.0
QUICK = Limits(picture_rate=100.0, picture_burst=100.0)  # a whole game's frames without waiting for the rate


def frame(sheet: Sheet, marks: list[str], seed: int, size: tuple[int, int] = (640, 480)) -> Any:
    """A photo of the sheet with these marks drawn by hand, taken by an easy random camera."""
    rng = random.Random(seed)
    paper = marked_paper(sheet, marks, rng, robot=None)
    return photograph(paper, rng, marks=marks, camera=Camera.random(rng, size=size, hard=False))


class Client:
    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.state: dict[str, Any] | None = None
        self.seen: list[dict[str, Any]] = []

    @classmethod
    async def open(cls, url: str) -> Client:
        client = cls(await connect(url.replace("http", "ws") + "/ws", open_timeout=WAIT, max_size=None))
        assert (await client.next())["type"] == "welcome"
        return client

    async def send(self, **message: Any) -> None:
        await self.ws.send(json.dumps(message))

    async def next(self) -> dict[str, Any]:
        message: dict[str, Any] = json.loads(await asyncio.wait_for(self.ws.recv(), WAIT))
        self.seen.append(message)
        if message["type"] == "state":
            self.state = message
        return message

    async def until(self, kind: str, **fields: Any) -> dict[str, Any]:
        while True:
            message = await self.next()
            if message["type"] == kind and all(message.get(k) == v for k, v in fields.items()):
                return message

    async def settle(self) -> list[dict[str, Any]]:
        """Everything sent so far is answered: returns what came meanwhile."""
        await self.send(type="ping")
        came = []
        while (message := await self.next())["type"] != "pong":
            came.append(message)
        return came


@pytest.fixture
def server(tmp_path: Any) -> Iterator[tuple[str, str]]:
    db = str(tmp_path / "noughts.db")
    with running(limits=QUICK, db=db, notify=lambda line: None) as url:
        yield url, db


async def start_paper(url: str, **options: Any) -> tuple[Client, dict[str, Any]]:
    client = await Client.open(url)
    await client.send(type="paper_start", opponent="easy", first="me", **options)
    joined = await client.until("joined")
    first = await client.until("paper")
    assert joined["seat"] == 0 and client.state is not None and client.state["kind"] == "paper"
    return client, first


def test_a_whole_paper_game_is_played_from_camera_frames_and_recorded_once(server: tuple[str, str]) -> None:
    url, db = server
    sheet = Sheet(3, 3)
    order = [4, 0, 2, 6, 8, 1, 3, 5, 7]  # the person's choices, first empty one each time

    async def play() -> tuple[list[str], list[dict[str, Any]], Client]:
        client, first = await start_paper(url)
        assert (first["phase"], first["frame"], first["owed"]) == ("move", 0, None)
        marks = [""] * 9
        phases: list[str] = []
        replies = []
        seed = 0
        while True:
            seed += 1
            assert seed < 200, phases
            photo = frame(sheet, marks, seed)
            await client.ws.send(photo.jpeg)
            reply = await client.until("paper", frame=seed)
            replies.append((reply, photo))
            if not phases or phases[-1] != reply["phase"]:
                phases.append(reply["phase"])
            assert client.state is not None
            if reply["phase"] == "over":
                break
            if reply["phase"] == "draw":
                marks[_cell(reply["owed"])] = "O"
            elif reply["phase"] == "move" and sum(bool(m) for m in marks) == len(client.state["moves"]):
                marks[next(c for c in order if not marks[c])] = "X"
        recorded = await client.until("recorded")
        assert recorded["game_id"] is not None
        await client.settle()
        outlines = [(r["outline"], p) for r, p in replies if r["outline"]]
        assert outlines
        for outline, photo in outlines:
            truth = photo.project([(0, 0), (sheet.width, 0), (sheet.width, sheet.height), (0, sheet.height)])
            assert max(abs(a - b) for corner, true in zip(outline, truth, strict=True)
                       for a, b in zip(corner, true, strict=True)) < 8, (outline, truth)
        sure = [r for r, _ in replies if r["cells"]]
        assert sure and all(len(r["cells"]) == 9 for r in sure)
        await client.ws.close()
        return phases, [m for m in client.seen if m["type"] == "recorded"], client

    phases, recorded, _ = asyncio.run(play())
    assert phases[0] == "move" and phases[-1] == "over"
    assert all(a != b and {a, b} == {"move", "draw"} for a, b in itertools.pairwise(phases[:-1])), phases
    assert len(recorded) == 1
    with open_store(db) as store:
        assert store.count_games() == 1


def _cell(name: str) -> int:
    """b2 → 4 on 3×3 (columns are letters, rows numbers from the top)."""
    from noughts.board import Board

    return Board(3, 3, 3).parse_cell(name)


def test_frames_too_big_too_fast_not_pictures_or_too_many_pixels_are_refused_with_one_sentence_each() -> None:
    import cv2
    import numpy as np

    async def check(url: str) -> None:
        client, _ = await start_paper(url)
        # over the rate: dropped, one notice, the socket stays open
        photo = frame(Sheet(3, 3), [""] * 9, 1).jpeg
        for _ in range(8):
            await client.ws.send(photo)
        await client.until("paper", frame=2)  # the two within the rate are taken (the newer read at least)
        await client.settle()
        notices = [m for m in client.seen if m["type"] == "paper" and m.get("dropped")]
        read = [m["frame"] for m in client.seen if m["type"] == "paper" and not m.get("dropped")]
        assert len(notices) == 1 and "Slow down" in notices[0]["say"] and notices[0]["frame"] == 3
        assert read[0] == 0 and read[-1] == 2 and set(read) <= {0, 1, 2}  # frame 1 may be passed over for 2
        assert not [m for m in client.seen if m["type"] == "error"]
        client.seen.clear()
        await client.ws.send(b"\xff\xd8" + bytes(210 * 1024))  # over 200 KB
        refused = await client.until("error")
        assert refused["code"] == "too_big" and "200 KB" in refused["message"]
        await client.ws.send(b"this is not a picture at all")
        refused = await client.until("error")
        assert refused["code"] == "not_a_picture"
        # a PNG whose header says 20000×20000: refused from the header, never decoded
        huge = cv2.imencode(".png", np.zeros((8, 8, 3), np.uint8))[1].tobytes()
        huge = huge[:16] + (20000).to_bytes(4, "big") * 2 + huge[24:]
        await client.ws.send(huge)
        refused = await client.until("error")
        assert refused["code"] == "too_many_pixels" and "20000×20000" in refused["message"]
        await client.ws.close()

    # 2 frames at once and hardly any more: the flood is one however slowly this machine sends it
    with running(limits=Limits(picture_burst=2, picture_rate=0.001), scores=False, notify=lambda line: None) as url:
        asyncio.run(check(url))


def test_a_frame_outside_a_paper_game_is_refused_and_spectators_never_see_paper_messages(
        server: tuple[str, str]) -> None:
    url, _ = server
    photo = frame(Sheet(3, 3), [""] * 9, 2).jpeg

    async def check() -> None:
        nowhere = await Client.open(url)
        await nowhere.ws.send(photo)
        assert (await nowhere.until("error"))["code"] == "not_paper"
        computer = await Client.open(url)
        await computer.send(type="play_computer", opponent="easy")
        await computer.until("joined")
        await computer.ws.send(photo)
        assert (await computer.until("error"))["code"] == "not_paper"

        player, _ = await start_paper(url)
        assert player.state is not None
        code = player.state["room"]
        watcher = await Client.open(url)
        await watcher.send(type="join", room=code, watch=True)
        await watcher.until("joined")
        await watcher.ws.send(photo)
        assert (await watcher.until("error"))["code"] == "not_paper"
        marks = [""] * 9
        marks[4] = "X"
        for seed in range(3, 9):
            await player.ws.send(frame(Sheet(3, 3), marks, seed).jpeg)
            await player.until("paper", frame=seed - 2)
        await player.settle()
        came = await watcher.settle()
        assert [m for m in came if m["type"] == "state"][-1]["moves"][:1] == [4]
        assert all(m["type"] != "paper" for m in watcher.seen)
        await player.send(type="move", cell=0)
        assert (await player.until("error"))["code"] == "paper_game"

    asyncio.run(check())


def test_a_paper_game_s_state_survives_the_room_store() -> None:
    from noughts.match import Match
    from noughts.sheet.reading import SheetReading, cell_readings
    from noughts.web.rooms import Room

    match = Match("easy", names=["You"], first="me", seed=3)
    match.new_game()
    room = Room("ABCDEFGHJKMN", "paper", match, ["t", None])
    assert room.paper is not None
    room.paper.see(SheetReading(cell_readings("....X....")))
    room.paper.see(SheetReading(cell_readings("....X....")))
    cell = room.paper.think()
    assert cell is not None
    again = Room.from_dict(json.loads(json.dumps(room.to_dict())))
    assert again.kind == "paper" and again.paper is not None
    assert again.paper.owed == cell and again.paper.phase() == "draw"
    assert again.state()["kind"] == "paper"


def fetch(url: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(url, timeout=WAIT) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_the_printable_sheet_comes_as_svg_png_and_a4_pdf_at_its_real_size() -> None:
    from PIL import Image

    with running(scores=False, notify=lambda line: None) as url:
        status, headers, svg = fetch(url + "/paper/sheet.svg?size=4x5k4")
        assert status == 200 and headers["content-type"].startswith("image/svg+xml")
        assert b'width="180mm" height="150mm"' in svg  # 5 columns and 4 rows of 30 mm, margins of 15
        assert headers["x-content-type-options"] == "nosniff"
        status, headers, png = fetch(url + "/paper/sheet.png?size=3x3")
        assert status == 200 and headers["content-type"] == "image/png"
        picture = Image.open(io.BytesIO(png))
        assert picture.size == (2480, 3508) and round(picture.info["dpi"][0]) == 300
        grey = picture.convert("L")
        # the 120 mm sheet centred: its top-left marker (3.5 to 11.5 mm in) is black, the page's corner white
        left = round((210 - 120) / 2 / 25.4 * 300)
        top = round((297 - 120) / 2 / 25.4 * 300)
        assert grey.getpixel((left + round(7.5 / 25.4 * 300), top + round(7.5 / 25.4 * 300))) == 0
        assert grey.getpixel((10, 10)) == 255
        status, headers, pdf = fetch(url + "/paper/sheet.pdf?size=5x5k4")
        assert status == 200 and headers["content-type"] == "application/pdf" and pdf.startswith(b"%PDF")
        box = re.search(rb"/MediaBox\s*\[\s*([\d.\s]+)\]", pdf)
        assert box is not None
        x0, y0, x1, y1 = (float(v) for v in box[1].split())
        assert (x0, y0) == (0, 0) and abs(x1 - 595.28) < 0.5 and abs(y1 - 841.89) < 0.5  # A4 in points
        for bad in ("/paper/sheet.png?size=9x9", "/paper/sheet.pdf?size=3x3k7", "/paper/sheet.gif?size=3x3",
                    "/paper/sheet.svg?size=%00"):
            status, headers, body = fetch(url + bad)
            assert status == 404 and b"There is no printable sheet" in body
            assert headers["x-frame-options"] == "DENY"
