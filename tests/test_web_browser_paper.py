"""Paper mode in the web page (issue 31), end to end in Debian's Chromium with a fake camera.

Chromium's fake camera plays a Y4M video made by the synthetic photo generator: a whole game filmed
as a phone would (noughts.robot.sim.paper_video: a hand over the sheet while a mark is drawn, the
phone turning and tilting, now and then blur or glare). The computer is Centre first (``parsons``),
which plays without randomness, so the game planned for the video is the game the server plays.
The page sends the video's frames to a real server, which reads them; the page shows what it says.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from noughts import text
from noughts.sheet.geometry import Sheet
from noughts.store import open_store
from noughts.web import running
from test_web_browser import CHROMIUM_ARGS, PHONE, chromium_path, new_page, shot, shots

try:
    from playwright.sync_api import Browser, Page, expect, sync_playwright
except ImportError:  # pragma: no cover - the dev extra installs it
    pytest.fail("the browser tests need Playwright: pip install -e '.[dev,web]'", pytrace=False)

cv2 = pytest.importorskip("cv2")
paper_video = pytest.importorskip("noughts.robot.sim.paper_video")

pytestmark = pytest.mark.slow
__all__ = ["new_page", "shots"]  # fixtures of test_web_browser.py, used here
DESKTOP = {"width": 1280, "height": 800}
FPS = 2.0
WAIT_SECONDS = 6.0  # each mark held still this long: the server sees it in two frames running, with room to spare
INSECURE_HOST = "noughts.test"  # mapped to 127.0.0.1 by Chromium: a plain http:// page that is not "localhost"
WORDS = text.WEB_WORDS


def write_y4m(images: Any, path: Path, fps: float) -> Path:
    """BGR pictures as a 4:2:0 Y4M video, the format Chromium's fake camera plays (it loops it)."""
    with path.open("wb") as out:
        for number, image in enumerate(images):
            height, width = image.shape[:2]
            if number == 0:
                out.write(f"YUV4MPEG2 W{width} H{height} F{round(fps)}:1 Ip A1:1 C420jpeg\n".encode())
            out.write(b"FRAME\n" + cv2.cvtColor(image, cv2.COLOR_BGR2YUV_I420).tobytes())
    return path


@pytest.fixture(scope="module")
def plan() -> Any:
    """A whole game on a 3×3 sheet against Centre first, the person moving first."""
    game = paper_video.plan_game(rows=3, cols=3, opponent="parsons", first="me", person_seed=5)
    assert game.finished
    return game


@pytest.fixture(scope="module")
def game_video(plan: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    frames = paper_video.paper_game_frames(plan, seed=3, fps=FPS, size=(640, 480), trouble=0.6,
                                           start_seconds=3.0, wait_seconds=WAIT_SECONDS, end_seconds=20.0)
    return write_y4m((frame.image for frame in frames), tmp_path_factory.mktemp("camera") / "game.y4m", FPS)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    db = str(tmp_path_factory.mktemp("web") / "noughts.db")
    # any Host name: the insecure page is asked for by a name that is not the loopback's
    with running(db=db, allowed_hosts=None, notify=lambda line: None) as url:
        yield url, db


def launch(playwright: Any, *extra: str) -> Browser:
    browser: Browser = playwright.chromium.launch(executable_path=chromium_path(), headless=True,
                                                  args=[*CHROMIUM_ARGS, *extra])
    return browser


@pytest.fixture(scope="module")
def playwright() -> Iterator[Any]:
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="module")
def browser(playwright: Any, game_video: Path) -> Iterator[Browser]:
    """Chromium whose camera is allowed and films the planned game."""
    launched = launch(playwright, "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
                      f"--use-file-for-fake-video-capture={game_video}")
    yield launched
    launched.close()


@pytest.fixture(scope="module")
def wary_browser(playwright: Any) -> Iterator[Browser]:
    """Chromium with a camera whose use nobody allows (no permission prompt is answered yes)."""
    launched = launch(playwright, "--use-fake-device-for-media-stream",
                      f"--host-resolver-rules=MAP {INSECURE_HOST} 127.0.0.1")
    yield launched
    launched.close()


def open_paper(page: Page, url: str, shape: str = "3") -> None:
    """The start screen: Centre first, the person first, then "Play on paper"."""
    page.goto(url)
    page.select_option("#opponent", "parsons")
    page.select_option("#first", "me")
    page.select_option("#rows", shape)
    page.select_option("#cols", shape)
    page.get_by_role("button", name=text.WEB_PAGE["play_paper"]).click()
    expect(page.locator("#paper")).to_be_visible()
    page.wait_for_function("() => window.noughts.state && window.noughts.state.kind === 'paper'")


def record_speech(page: Page) -> None:
    """What the page says aloud is kept in window.said (Chromium here has no voice to hear)."""
    page.add_init_script("""window.said = [];
        speechSynthesis.speak = (utterance) => window.said.push(utterance.text);""")


# --------------------------------------------------------------------------------------------------
def test_a_whole_game_on_paper_filmed_by_the_camera_is_played_announced_and_recorded_once(
        browser: Browser, server: tuple[str, str], plan: Any, shots: Path) -> None:
    url, db = server
    context = browser.new_context(viewport=PHONE, reduced_motion="reduce", has_touch=True, is_mobile=True,
                                  device_scale_factor=2)
    problems: list[str] = []
    try:
        page = context.new_page()
        page.set_default_timeout(20_000)
        page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
        record_speech(page)
        open_paper(page, url)
        expect(page.locator("#paper-say")).to_have_text(text.paper_your_move("X"))
        expect(page.locator("#sheet-pdf")).to_have_attribute("href", "/paper/sheet.pdf?size=3x3")
        expect(page.locator("#sheet-png")).to_have_attribute("href", "/paper/sheet.png?size=3x3")
        expect(page.locator("#undo")).to_be_hidden()
        page.get_by_role("button", name=text.WEB_PAGE["start_camera"]).click()
        expect(page.locator("#paper-video")).to_be_visible()
        computer_moves = [mark.cell for mark in plan.marks if mark.by == "computer"]
        for number, cell in enumerate(computer_moves):
            name = f"{'abc'[cell % 3]}{cell // 3 + 1}"
            # the computer's square in very large letters, and said aloud once
            owed = page.locator("#paper-owed-cell")
            expect(owed).to_have_text(name, timeout=60_000)
            expect(page.locator("#paper-owed-label")).to_have_text("Draw an O in")
            said = text.paper_draw_mine("Centre first", "O", name)
            expect(page.locator("#paper-say")).to_have_text(said)
            size = float(owed.evaluate("element => parseFloat(getComputedStyle(element).fontSize)"))
            assert size >= 70, size
            if number == 0:
                shot(page, shots, "paper-phone.png", full_page=False)
            expect(page.locator("#paper-owed")).to_be_hidden(timeout=60_000)  # seen drawn: the person's move again
            spoken = page.evaluate("window.said")
            # said aloud when new: again only after another sentence (a question while the hand was over the sheet)
            assert said in spoken and all(a != b for a, b in itertools.pairwise(spoken)), spoken
        status = page.locator("#status")
        expect(status).to_be_visible(timeout=60_000)
        state = page.evaluate("window.noughts.state")
        assert state["result"] and state["moves"] == [mark.cell for mark in plan.marks]
        expect(status).to_have_text(state["result_text"][0])
        assert state["result_text"][0] == plan.result
        expect(page.locator("#tally")).to_contain_text("Centre first")
        expect(page.locator("#saved")).to_contain_text("Saved as game")
        assert page.evaluate("window.noughts.paper.phase") == "over"
        spoken = page.evaluate("window.said")
        assert spoken and all(a != b for a, b in itertools.pairwise(spoken)), spoken  # never the same twice running
        with open_store(db) as store:
            assert store.count_games() == 1
        page.get_by_role("button", name=text.WEB_PAGE["new_game"]).click()  # back to the start
        expect(page.locator("#paper")).to_be_hidden()
        expect(page.locator("#setup")).to_be_visible()
        assert page.evaluate("document.getElementById('paper-video').srcObject") is None  # the camera let go
    finally:
        context.close()
    assert not problems, problems


def test_the_overlay_draws_the_sheet_s_outline_and_each_square_on_a_desktop(
        browser: Browser, server: tuple[str, str], shots: Path, new_page: Callable[..., Page]) -> None:
    url, _ = server
    page = new_page(viewport=DESKTOP)
    page.set_default_timeout(30_000)
    record_speech(page)
    open_paper(page, url)
    page.get_by_role("button", name=text.WEB_PAGE["start_camera"]).click()
    page.wait_for_function("() => window.noughts.paper && window.noughts.paper.outline")
    # the outline's corners, scaled from the frame's pixels to the canvas's: the line is drawn there
    drawn = page.evaluate("""() => {
        const canvas = document.getElementById('paper-overlay');
        const video = document.getElementById('paper-video');
        const view = window.noughts.paper;
        const context = canvas.getContext('2d');
        const pixels = context.getImageData(0, 0, canvas.width, canvas.height).data;
        let green = 0, other = 0;
        for (let i = 0; i < pixels.length; i += 4) {
            if (pixels[i + 3] < 200) continue;
            if (pixels[i] < 80 && pixels[i + 1] > 150 && pixels[i + 2] < 130) green++; else other++;
        }
        const near = (x, y) => { let found = 0;
            for (let dy = -3; dy <= 3; dy++) for (let dx = -3; dx <= 3; dx++) {
                const at = 4 * ((Math.round(y) + dy) * canvas.width + Math.round(x) + dx);
                if (pixels[at + 3] > 200 && pixels[at + 1] > 150 && pixels[at] < 80) found++; }
            return found; };
        const frameWidth = canvas.width / (video.videoWidth > 960 ? 960 : video.videoWidth);
        return { green, other, corners: view.outline.map(([x, y]) => near(x * frameWidth, y * frameWidth)),
                 cells: view.cells.length, label: canvas.getAttribute('aria-label') };
    }""")
    assert drawn["cells"] == 9
    assert drawn["green"] > 300 and all(found > 0 for found in drawn["corners"]), drawn
    assert drawn["label"].startswith("The camera's view, with the sheet and each square as read")
    shot(page, shots, "paper-desktop.png", full_page=False)


def test_a_refused_camera_is_said_in_a_sentence(wary_browser: Browser, server: tuple[str, str]) -> None:
    url, _ = server
    context = wary_browser.new_context(viewport=PHONE)
    try:
        page = context.new_page()
        page.set_default_timeout(20_000)
        open_paper(page, url)
        page.get_by_role("button", name=text.WEB_PAGE["start_camera"]).click()
        expect(page.locator("#camera-problem")).to_have_text(WORDS["camera_refused"])
        expect(page.locator("#camera")).to_be_hidden()
        expect(page.locator("#start-camera")).to_be_visible()  # to try again once allowed
    finally:
        context.close()


def test_a_page_that_is_not_secure_says_https_is_needed(wary_browser: Browser, server: tuple[str, str]) -> None:
    url, _ = server
    context = wary_browser.new_context(viewport=PHONE)
    try:
        page = context.new_page()
        page.set_default_timeout(20_000)
        open_paper(page, url.replace("127.0.0.1", INSECURE_HOST))
        assert page.evaluate("window.isSecureContext") is False
        page.get_by_role("button", name=text.WEB_PAGE["start_camera"]).click()
        expect(page.locator("#camera-problem")).to_have_text(WORDS["camera_needs_https"])
        assert "HTTPS" in WORDS["camera_needs_https"]
    finally:
        context.close()


def test_play_on_paper_is_offered_for_boards_of_three_to_five_and_links_the_sheet(
        server: tuple[str, str], new_page: Callable[..., Page]) -> None:
    url, _ = server
    page = new_page(viewport=PHONE)
    page.goto(url)
    button = page.get_by_role("button", name=text.WEB_PAGE["play_paper"])
    expect(button).to_be_enabled()
    page.select_option("#rows", "6")
    expect(button).to_be_disabled()
    expect(page.locator("#paper-sides")).to_have_text(WORDS["paper_sides"])
    page.select_option("#rows", "4")
    page.select_option("#cols", "5")
    expect(button).to_be_enabled()
    expect(page.locator("#paper-sides")).to_have_text("")
    button.click()
    expect(page.locator("#sheet-pdf")).to_have_attribute("href", "/paper/sheet.pdf?size=4x5")
    expect(page.locator("#paper-sheet-for")).to_have_text("The sheet for a 4×5 board:")
    response = page.request.get(url + "/paper/sheet.png?size=4x5")
    assert response.status == 200 and response.headers["content-type"] == "image/png"


def test_the_page_knows_the_sheet_s_margin_in_cells() -> None:
    """The overlay puts each square's verdict at its centre from the sheet's outline: the page assumes a
    margin of half a cell round the grid (app.js MARGIN_CELLS), as noughts.sheet lays the sheet out."""
    sheet = Sheet(4, 5)
    source = (Path(__file__).resolve().parents[1] / "src/noughts/web/static/app.js").read_text()
    assert f"const MARGIN_CELLS = {sheet.margin_mm / sheet.cell_mm:g};" in source

