"""The web game end to end in a real browser: Debian's Chromium driven by Playwright.

The server runs in this process on a free loopback port. Nothing is downloaded: Playwright
drives /usr/bin/chromium (or $NOUGHTS_CHROMIUM). These tests are never skipped: without a
browser they fail and say how to install one.

Screenshots of the page are taken on every run; they replace docs/web-*.png only when asked
(``NOUGHTS_SCREENSHOTS=docs make test``), so a test run never changes tracked files.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from noughts import players, text
from noughts.match import DEFAULT_OPPONENT
from noughts.web import running
from noughts.web.protocol import Limits

try:
    from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright
except ImportError:  # pragma: no cover - the dev extra installs it
    pytest.fail("the browser tests need Playwright: pip install -e '.[dev,web]'", pytrace=False)

pytestmark = pytest.mark.slow  # started first: make test runs the files in parallel, slow ones first
DOCS = Path(__file__).resolve().parents[1] / "docs"
SCREENSHOTS = os.environ.get("NOUGHTS_SCREENSHOTS")  # "docs", or a folder
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]
DESKTOP = {"width": 1100, "height": 820}
PHONE = {"width": 390, "height": 844}


def chromium_path() -> str:
    path = os.environ.get("NOUGHTS_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        pytest.fail("the browser tests need Chromium: apt-get install chromium (or set NOUGHTS_CHROMIUM "
                    "to a Chromium binary); Playwright's own browser download is not used", pytrace=False)
    return path


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if SCREENSHOTS:
        folder = DOCS if SCREENSHOTS == "docs" else Path(SCREENSHOTS)
        folder.mkdir(parents=True, exist_ok=True)
        return folder
    return tmp_path_factory.mktemp("screenshots")


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("web") / "noughts.db"
    with running(db=str(db), notify=lambda line: None) as base:
        yield base


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def new_page(browser: Browser) -> Iterator[Callable[..., Page]]:
    """Pages in fresh browser contexts (separate localStorage: separate people); page errors fail the test."""
    contexts: list[BrowserContext] = []
    problems: list[str] = []

    def make(name: str | None = None, **options: Any) -> Page:
        context = browser.new_context(**{"viewport": DESKTOP, "reduced_motion": "reduce", **options})
        if name:
            context.add_init_script(f"localStorage.setItem('noughts.name', {name!r})")
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(8000)
        page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
        page.on("console", lambda message: problems.append(f"console: {message.text}")
                if message.type == "error" else None)
        return page

    yield make
    for context in contexts:
        context.close()
    assert not problems, problems


def cell(page: Page, index: int) -> Any:
    return page.locator(f"#board .cell[data-index='{index}']")


def press(page: Page, index: int) -> None:
    """Click a cell the page marks unavailable (taken, or the game is over): people can, and are told why not."""
    cell(page, index).click(force=True)


def open_game(page: Page, url: str, opponent: str = "hard", first: str = "alternate") -> None:
    page.goto(url)
    expect(page.locator("#opponent option")).to_have_count(len(players.names()))  # every computer player
    page.select_option("#opponent", opponent)
    page.select_option("#first", first)
    page.get_by_role("button", name="Play the computer").click()
    page.wait_for_function("() => window.noughts.state !== null")


def wait_for_my_turn_or_end(page: Page) -> dict[str, Any]:
    page.wait_for_function("""() => { const s = window.noughts.state;
        return s && (s.result || s.seats[window.noughts.seat].mark === s.turn); }""")
    state: dict[str, Any] = page.evaluate("window.noughts.state")
    return state


def shot(page: Page, folder: Path, name: str, full_page: bool = True) -> None:
    page.mouse.move(0, 0)  # no hover highlight in the picture
    page.screenshot(path=str(folder / name), full_page=full_page, animations="disabled", caret="hide")
    assert (folder / name).stat().st_size > 10_000


# --------------------------------------------------------------------------------------------------
def test_the_start_page_is_an_accessible_grid_of_labelled_buttons(url: str, new_page: Callable[..., Page],
                                                                  shots: Path) -> None:
    page = new_page()
    page.goto(url)
    expect(page.locator("#connection")).to_have_text("")  # connected
    expect(page.locator("#board")).to_have_attribute("role", "grid")
    buttons = page.locator("#board [role=row] [role=gridcell] button.cell")
    expect(buttons).to_have_count(9)
    expect(cell(page, 1)).to_have_attribute("aria-label", "b1, empty")  # the names every front end uses
    expect(cell(page, 8)).to_have_attribute("aria-label", "c3, empty")
    assert page.locator("#board .cell[tabindex='0']").count() == 1  # one Tab stop; arrows do the rest
    expect(page.locator("#status")).to_have_attribute("aria-live", "polite")
    expect(page.locator("#notice")).to_have_attribute("role", "alert")
    # the opponents by the names people see, the default the same as in every front end
    expect(page.locator("#opponent option")).to_have_text([players.label(n) for n in players.names()])
    expect(page.locator("#opponent")).to_have_value(DEFAULT_OPPONENT)
    expect(page.locator("#opponent-about")).to_have_text(players.describe(DEFAULT_OPPONENT))
    expect(page.locator("#first")).to_have_value("alternate")
    expect(page.locator("#first-about")).to_have_text(
        "You move first in the first game, then the first move alternates.")
    assert "seed" not in page.locator("body").inner_text().lower()
    shot(page, shots, "web-start.png")


def test_a_whole_game_against_the_computer_by_clicks(url: str, new_page: Callable[..., Page], shots: Path) -> None:
    page = new_page("Ann")
    open_game(page, url, "parsons")  # take turns to start, Ann first
    expect(page.locator("#game-heading")).to_have_text("You (X) against Centre first (O)")
    expect(page.locator("#status")).to_have_text("Your turn: you play X.")
    for turn, index in enumerate((0, 8, 6)):  # parsons' forced loss (see tests/test_players_strength.py)
        cell(page, index).click()
        page.wait_for_function(f"() => window.noughts.state.moves.length === {2 * turn + 2}")  # the answer came
        expect(page.locator("#status")).to_contain_text("Your turn")
        expect(page.locator("#status")).to_contain_text("The computer (Centre first) played")
    press(page, 4)  # taken (the computer's centre): the server refuses, the page shows why
    expect(page.locator("#notice")).to_have_text("b2 is taken by O: choose an empty square.")
    cell(page, 3).click()
    expect(page.locator("#status")).to_have_text("You win along the left column a1–a3!")  # the match's sentence
    expect(page.locator("#notice")).to_have_text("")
    expect(page.locator("#strike")).to_have_class("strike shown")
    expect(cell(page, 3)).to_have_attribute("aria-label", "a2, X, winning line")
    expect(page.locator("#tally")).to_have_text("Ann: 1 · Centre first: 0 · draws: 0")
    expect(page.locator("#saved")).to_contain_text("Saved as game")
    expect(page.locator("#versus")).to_contain_text("You against Centre first, all time: 1 won")
    shot(page, shots, "web-won.png")
    press(page, 8)
    expect(page.locator("#notice")).to_contain_text("This game is over: start another one.")
    page.get_by_role("button", name="Play again").click()  # the rematch: the computer starts
    expect(page.locator("#game-heading")).to_have_text("You (O) against Centre first (X)")
    expect(page.locator("#status")).to_have_text(
        "The computer (Centre first) played b2. Your turn: you play O.")


def test_a_whole_game_by_keyboard_alone(url: str, new_page: Callable[..., Page]) -> None:
    page = new_page()
    page.goto(url)
    expect(page.locator("#opponent option")).to_have_count(len(players.names()))  # every computer player
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip"
    for _ in range(12):  # through the form to its button, choosing Hard on the way
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.id") == "opponent":
            page.keyboard.press("h")
        if page.evaluate("document.activeElement.textContent") == "Play the computer":
            break
    assert page.evaluate("document.getElementById('opponent').value") == "hard"
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.activeElement.classList.contains('cell')")  # focus moves to the board
    focused = page.evaluate("document.activeElement.dataset.index")
    assert focused == "4"
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline == "solid"  # focus is visible
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowUp")  # stops at the edge
    page.keyboard.press("ArrowLeft")
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "a1, empty"
    page.keyboard.press("End")
    assert page.evaluate("document.activeElement.dataset.index") == "2"
    page.keyboard.press("Control+End")
    assert page.evaluate("document.activeElement.dataset.index") == "8"
    position = 8
    keys = ["Enter", "Space"]
    for turn in range(5):
        state = wait_for_my_turn_or_end(page)
        if state["result"]:
            break
        target = state["cells"].index(None)
        row, col = divmod(position, 3)
        to_row, to_col = divmod(target, 3)
        for _ in range(abs(to_row - row)):
            page.keyboard.press("ArrowDown" if to_row > row else "ArrowUp")
        for _ in range(abs(to_col - col)):
            page.keyboard.press("ArrowRight" if to_col > col else "ArrowLeft")
        assert page.evaluate("document.activeElement.dataset.index") == str(target)
        page.keyboard.press(keys[turn % 2])
        position = target
        page.wait_for_function(f"() => window.noughts.state.cells[{target}] !== null")
    state = wait_for_my_turn_or_end(page)
    assert state["result"] in ("O", "draw")  # hard never loses
    status = page.locator("#status").text_content() or ""
    assert status.startswith(("Hard (O) wins along the", "It's a draw: the board is full"))
    assert page.locator("#board .cell[tabindex='0']").count() == 1


def test_two_browsers_play_through_a_room_with_a_reload_rejections_and_a_spectator(
        url: str, new_page: Callable[..., Page], shots: Path) -> None:
    ann = new_page("Ann")
    ann.goto(url)
    expect(ann.locator("#opponent option")).to_have_count(len(players.names()))  # every computer player
    ann.get_by_role("button", name="Play a friend").click()
    expect(ann.locator("#room")).to_be_visible()
    expect(ann.locator("#status")).to_have_text(
        "Your turn: you play X. Your friend has not joined yet: send them the link below.")
    link = ann.locator("#room-link").text_content() or ""
    code = ann.locator("#room-code").text_content() or ""
    assert re.fullmatch(r"[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}", code)  # 12 symbols, shown in groups of four
    assert link.endswith(f"/r/{code.replace('-', '')}")
    expect(ann.locator("#reach")).to_contain_text("This link works only on this computer")  # served on loopback
    expect(ann.locator("#qr")).to_be_hidden()

    bo = new_page("Bo")
    bo.goto(link)
    expect(bo.locator("#status")).to_have_text("Ann's turn (X).")
    expect(bo.locator("#game-heading")).to_have_text("You (O) against Ann (X)")
    expect(ann.locator("#status")).to_have_text("Your turn: you play X.")
    expect(ann.locator("#seats")).to_contain_text("O: Bo")

    cell(bo, 4).click()  # out of turn
    expect(bo.locator("#notice")).to_have_text("It is not your turn: Ann is to move.")
    cell(ann, 4).click()
    expect(bo.locator("#status")).to_have_text("Ann played b2. Your turn: you play O.")
    press(bo, 4)  # an occupied cell
    expect(bo.locator("#notice")).to_have_text("b2 is taken by X: choose an empty square.")
    cell(bo, 0).click()
    expect(ann.locator("#status")).to_contain_text("Your turn")
    cell(ann, 1).click()
    expect(bo.locator("#status")).to_contain_text("Your turn")

    bo.reload()  # mid-game: the token in localStorage takes Bo back to his seat
    expect(bo.locator("#game-heading")).to_have_text("You (O) against Ann (X)")
    expect(bo.locator("#status")).to_contain_text("Your turn: you play O.")
    expect(cell(bo, 1)).to_have_attribute("aria-label", "b1, X, last move")  # marked
    bo.evaluate("window.noughts.send({type: 'move', cell: 5, mark: 'X'})")  # a move for the other seat
    expect(bo.locator("#notice")).to_have_text("You play O, so you cannot move for X.")

    cy = new_page("Cy")
    cy.goto(link)
    expect(cy.locator("#watching")).to_be_visible()
    expect(ann.locator("#seats")).to_contain_text("1 watching")  # the room's count, sent to all of it at once
    expect(cy.locator("#status")).to_have_text("Ann played b1. Watching: Bo (O) to move.")  # and kept the last move
    cell(cy, 8).click()
    expect(cy.locator("#notice")).to_contain_text("You are watching this game, so you cannot move")
    shot(ann, shots, "web-room.png")

    cell(bo, 2).click()
    expect(ann.locator("#status")).to_contain_text("Your turn")
    cell(ann, 7).click()
    expect(ann.locator("#status")).to_have_text("You win along the middle column b1–b3!")
    expect(bo.locator("#status")).to_have_text("Ann (X) wins along the middle column b1–b3. You lose.")
    expect(cy.locator("#status")).to_have_text("Ann (X) wins along the middle column b1–b3.")
    expect(bo.locator("#tally")).to_have_text("Ann: 1 · Bo: 0 · draws: 0")
    expect(ann.locator("#versus")).to_have_text("Ann against friends, all time: 1 won, 0 lost, 0 drawn.")
    press(bo, 8)
    expect(bo.locator("#notice")).to_contain_text("This game is over: start another one.")
    expect(cy.locator("#rematch")).to_be_hidden()

    bo.get_by_role("button", name="Play again").click()  # friends take turns to start: Bo now
    expect(ann.locator("#status")).to_have_text("Bo's turn (X).")
    expect(bo.locator("#status")).to_have_text("Your turn: you play X.")
    expect(cy.locator("#status")).to_have_text("Watching: Bo (X) to move.")


def test_the_page_fits_a_phone(url: str, new_page: Callable[..., Page], shots: Path) -> None:
    page = new_page("Ann", viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True)
    open_game(page, url, "newell-simon", first="computer")
    state = wait_for_my_turn_or_end(page)
    cell(page, state["cells"].index(None)).tap()
    page.wait_for_function("() => window.noughts.state.moves.length >= 3")
    wait_for_my_turn_or_end(page)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]  # nothing runs off the side
    board = page.locator("#board").bounding_box()
    assert board is not None and board["x"] >= 0 and board["x"] + board["width"] <= PHONE["width"]
    assert board["width"] >= 300  # big enough to tap
    side = page.locator("#setup").bounding_box()
    assert side is not None and side["y"] > board["y"]  # the board comes first on a phone
    shot(page, shots, "web-phone.png", full_page=False)


def rgb(colour: str) -> str:
    """'#1f5fbf' as the browser reports it: 'rgb(31, 95, 191)'."""
    red, green, blue = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgb({red}, {green}, {blue})"


def mark_colours(page: Page) -> dict[str, str]:
    colours: dict[str, str] = page.evaluate("""() => Object.fromEntries(["X", "O"].map((mark) => {
        const shown = document.querySelector(`#board .cell[data-mark=${mark}] .mark`);
        return [mark, shown ? getComputedStyle(shown).color : null]; }))""")
    return colours


def test_the_marks_are_the_one_pair_of_colours_with_their_letters_or_the_letters_alone(
        url: str, new_page: Callable[..., Page]) -> None:
    wanted = {mark: rgb(colour) for mark, colour in text.MARK_COLOURS.items()}
    for scheme in ("light", "dark"):
        page = new_page(color_scheme=scheme)
        open_game(page, url, "parsons")
        cell(page, 0).click()
        page.wait_for_function("() => window.noughts.state.moves.length === 2")
        assert mark_colours(page) == wanted, scheme
        assert cell(page, 0).inner_text() == "X" and cell(page, 4).inner_text() == "O"  # the letters too
        if scheme == "dark":  # the board stays light, so the pair reads on it
            background = page.evaluate("getComputedStyle(document.querySelector('#board .cell')).backgroundColor")
            assert sum(int(part) for part in background[4:-1].split(",")) > 3 * 200, background
        page.get_by_label("Marks without colour").check()  # the person's own no-colour mode
        plain = mark_colours(page)
        assert plain["X"] == plain["O"] and plain["X"] not in wanted.values()
        page.reload()  # remembered
        page.wait_for_function("() => window.noughts.state && window.noughts.state.moves.length === 2")
        assert page.get_by_label("Marks without colour").is_checked() and mark_colours(page) == plain

    page = new_page(forced_colors="active")  # Windows high contrast: the system's colours, the letters tell
    open_game(page, url, "parsons")
    cell(page, 0).click()
    page.wait_for_function("() => window.noughts.state.moves.length === 2")
    forced = mark_colours(page)
    assert forced["X"] == forced["O"] and forced["X"] not in wanted.values()
    assert cell(page, 0).inner_text() == "X" and cell(page, 4).inner_text() == "O"


# --------------------------------------------------------------------------------------------------
# any board, undo and hint, a friend's name and link, double clicks

def choose_board(page: Page, rows: int, cols: int, k: int | None = None) -> None:
    page.select_option("#rows", str(rows))
    page.select_option("#cols", str(cols))
    if k is not None:
        page.select_option("#k", str(k))
    expect(page.locator("#play-computer")).to_have_text("Play the computer")  # the server has said who can play


def settle(page: Page) -> dict[str, Any]:
    """Everything sent so far has been answered (the server answers in order): the latest state."""
    page.evaluate("window.noughts.send({type: 'ping', id: 'settle'})")
    page.wait_for_timeout(150)
    state: dict[str, Any] = page.evaluate("window.noughts.state")
    return state


def test_a_seven_by_seven_game_offers_only_its_players_and_plays_by_keyboard_with_undo_and_hint(
        url: str, new_page: Callable[..., Page]) -> None:
    page = new_page("Ann")
    page.goto(url)
    expect(page.locator("#opponent option")).to_have_count(len(players.names()))  # every computer player
    choose_board(page, 7, 7)
    expect(page.locator("#k")).to_have_value("5")  # gomoku's five, unless chosen otherwise
    from noughts.board import Board

    # (with five, far beyond the probe of the players that work out every move, on any machine;
    # with four it is at its edge, about a second, so their verdict there depends on the machine)
    able = players.able(Board(7, 7, 5))
    expect(page.locator("#opponent option")).to_have_text([players.label(n) for n in able])
    exact = [players.label(n) for n in players.names()
             if (players.unable(n, Board(7, 7, 5)) or "").startswith("it works out every move exactly")]
    assert exact  # some players search the whole game: 7×7 is too big for them
    expect(page.locator("#opponent-unable")).to_contain_text(f"{', '.join(exact)}: each works out every move exactly")
    choose_board(page, 7, 7, 4)
    expect(page.locator("#board .cell")).to_have_count(49)  # the chosen board, drawn before the game
    expect(page.locator("#coords-cols span")).to_have_text(list("abcdefg"))
    page.select_option("#opponent", "arduino")
    page.select_option("#first", "me")
    page.get_by_role("button", name="Play the computer").click()
    page.wait_for_function("() => document.activeElement.classList.contains('cell')")
    assert page.evaluate("document.activeElement.dataset.index") == "24"  # the centre has the focus
    for key in ["ArrowUp"] * 4 + ["ArrowLeft"] * 4:  # stops at the edges
        page.keyboard.press(key)
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") == "solid"  # a focus ring
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "a1, empty"
    page.keyboard.press("Enter")
    page.wait_for_function("() => window.noughts.state.moves.length === 2")
    state = page.evaluate("window.noughts.state")
    reply = state["moves"][1]
    expect(cell(page, 0)).to_have_text("X")
    expect(cell(page, reply)).to_have_class("cell last")  # the last move is marked
    expect(page.locator("#status")).to_contain_text(f"played {Board(7, 7, 4).cell_name(reply)}.")
    page.keyboard.press("End")  # a1 → g1 (or g2 if the computer took g1), then Space plays it, twice over
    target = 6
    if reply == 6:
        page.keyboard.press("ArrowDown")
        target = 13
    page.keyboard.press("Space")
    page.keyboard.press("Space")
    page.wait_for_function("() => window.noughts.state.moves.length === 4")
    assert settle(page)["moves"][:3] == [0, reply, target] and len(page.evaluate("window.noughts.state.moves")) == 4
    expect(page.locator("#notice")).to_have_text("")  # the second press is the same request: no error
    page.get_by_role("button", name="Undo").dblclick()  # takes back one move and its reply, once
    page.wait_for_function("() => window.noughts.state.moves.length === 2")
    expect(page.locator("#news")).to_contain_text(
        f"Took back your move {Board(7, 7, 4).cell_name(target)} and Arduino rules's reply")
    assert settle(page)["moves"] == [0, reply]
    expect(page.locator("#notice")).to_have_text("")
    expect(page.get_by_role("button", name="Hint")).to_be_visible()  # tests/test_web_page.py: no hint on 7×7


def test_a_page_idle_on_the_start_screen_is_closed_and_quietly_connects_again(new_page: Callable[..., Page]) -> None:
    with running(scores=False, notify=lambda line: None, limits=Limits(idle_timeout=1.0)) as base:
        page = new_page("Ann")
        opened: list[str] = []
        closed: list[str] = []
        page.on("websocket", lambda ws: (opened.append(ws.url), ws.on("close", lambda ws: closed.append(ws.url))))
        page.goto(base)
        expect(page.locator("#opponent option")).to_have_count(len(players.names()))
        page.evaluate("""() => {
          const line = document.getElementById("connection");
          window.connectionSaid = [];
          new MutationObserver(() => window.connectionSaid.push(line.textContent))
            .observe(line, { childList: true, characterData: true, subtree: true });
        }""")
        for _ in range(60):  # the first socket is closed with 1001 after a second of silence
            if closed:
                break
            page.wait_for_timeout(100)
        assert closed, opened
        # pressed before the page has opened a new socket: the press opens one and is sent on it
        page.get_by_role("button", name="Play the computer").click()
        page.wait_for_function("() => window.noughts.state !== null")
        expect(page.locator("#notice")).to_have_text("")
        assert page.evaluate("window.connectionSaid.filter(Boolean)") == []  # a normal end, not "Connection lost"
        assert len(opened) == 2, opened
        page.close()  # before its server stops: no reconnection attempts to a closed port


def test_a_fifteen_by_fifteen_board_fits_a_phone(url: str, new_page: Callable[..., Page], shots: Path) -> None:
    page = new_page("Ann", viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True)
    page.goto(url)
    expect(page.locator("#opponent option")).to_have_count(len(players.names()))  # every computer player
    choose_board(page, 15, 15)
    page.select_option("#opponent", "easy")
    page.select_option("#first", "me")
    page.get_by_role("button", name="Play the computer").click()
    page.wait_for_function("() => window.noughts.state && window.noughts.state.cells.length === 225")
    for index in (112, 113, 97):
        if page.evaluate(f"window.noughts.state.cells[{index}]") is None:
            moves = page.evaluate("window.noughts.state.moves.length")
            cell(page, index).tap()
            page.wait_for_function(f"() => window.noughts.state.moves.length === {moves + 2}")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]  # the page never runs off the side
    one = cell(page, 0).bounding_box()
    assert one is not None and one["width"] >= 28  # a fingertip's cell: the board scrolls sideways instead
    scroller = page.locator(".board-scroll").bounding_box()
    assert scroller is not None and scroller["x"] >= 0 and scroller["x"] + scroller["width"] <= PHONE["width"]
    assert page.evaluate("(box => box.scrollWidth > box.clientWidth)(document.querySelector('.board-scroll'))")
    page.locator("#board").scroll_into_view_if_needed()
    shot(page, shots, "web-phone-15.png", full_page=False)


@pytest.fixture(scope="module")
def lan_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    """A server that believes it listens on every interface (it is on loopback, for the test)."""
    from noughts.web import create_app

    db = tmp_path_factory.mktemp("lan") / "noughts.db"
    app = create_app(str(db), notify=lambda line: None, listen_host="0.0.0.0")
    with running(app) as base:
        yield base, app


def test_a_friend_gets_a_link_that_works_elsewhere_a_qr_code_and_is_asked_their_name(
        lan_server: tuple[str, Any], new_page: Callable[..., Page], shots: Path) -> None:
    import cv2
    import numpy as np

    from noughts.web.share import lan_address

    base, app = lan_server
    rooms = app.state.lobby.rooms
    before = len(rooms)
    ann = new_page("Ann")
    ann.goto(base)
    expect(ann.locator("#opponent option")).to_have_count(len(players.names()))  # every computer player
    choose_board(ann, 7, 7, 4)
    ann.get_by_role("button", name="Play a friend").dblclick()  # one room, not two
    expect(ann.locator("#room")).to_be_visible()
    settle(ann)
    assert len(rooms) == before + 1
    expect(ann.locator("#notice")).to_have_text("")
    link = ann.locator("#room-link").text_content() or ""
    code = ann.locator("#room-code").text_content() or ""  # K7M2-QXAB-9CDE
    lan = lan_address()
    assert "127.0.0.1" not in link and "0.0.0.0" not in link and link.endswith(f"/r/{code.replace('-', '')}")
    if lan is not None:
        assert link == f"http://{lan}:{base.rsplit(':', 1)[1]}/r/{code.replace('-', '')}"
    qr = ann.locator("#qr")
    expect(qr).to_be_visible()
    ann.wait_for_function("() => document.getElementById('qr').naturalWidth > 0")
    picture = cv2.imdecode(np.frombuffer(qr.screenshot(), np.uint8), cv2.IMREAD_GRAYSCALE)
    assert cv2.QRCodeDetector().detectAndDecode(picture)[0] == link  # a phone's camera reads the link
    expect(ann.locator("#reach")).to_have_text("")
    shot(ann, shots, "web-friend.png")

    bo = new_page()  # no name known in this browser: asked before taking the seat
    bo.goto(f"{base}/r/{code.lower()}")  # the code as a person might type it: dashes and case do not matter
    expect(bo.locator("#ask-name")).to_be_visible()
    expect(bo.locator("#status")).to_have_text(f"You are invited to game {code}: say your name to join.")
    bo.locator("#ask-input").fill("Bo")
    bo.locator("#ask-input").press("Enter")
    expect(bo.locator("#game-heading")).to_have_text("You (O) against Ann (X)")
    expect(ann.locator("#seats")).to_contain_text("O: Bo")
    assert bo.evaluate("localStorage.getItem('noughts.name')") == "Bo"  # remembered for next time

    for turn, (who, index) in enumerate([(ann, 0), (bo, 7), (ann, 1), (bo, 8), (ann, 2), (bo, 9), (ann, 3)]):
        expect(who.locator("#status")).to_contain_text("Your turn")
        cell(who, index).dblclick()  # a double click is one move, and no "taken" or "not your turn" error
        who.wait_for_function(f"() => window.noughts.state.moves.length === {turn + 1}")
    expect(ann.locator("#status")).to_have_text("You win along the top row a1–d1!")
    expect(bo.locator("#status")).to_have_text("Ann (X) wins along the top row a1–d1. You lose.")
    expect(ann.locator("#strike")).to_have_class("strike thin shown")
    expect(cell(ann, 3)).to_have_attribute("aria-label", "d1, X, winning line")
    for page in (ann, bo):
        settle(page)
        expect(page.locator("#notice")).to_have_text("")
    shot(ann, shots, "web-7x7.png")
    bo.get_by_role("button", name="Play again").dblclick()  # one rematch: game 2, and no "still going on"
    expect(ann.locator("#status")).to_have_text("Bo's turn (X).")
    assert settle(bo)["game"] == 2
    expect(bo.locator("#notice")).to_have_text("")


def test_pressing_the_cell_just_played_again_is_the_same_move_not_an_error(url: str,
                                                                          new_page: Callable[..., Page]) -> None:
    page = new_page("Ann")
    open_game(page, url, "parsons", first="me")
    cell(page, 0).click()
    page.wait_for_function("() => window.noughts.state.moves.length === 2")  # the answer is in
    press(page, 0)  # the second click of a slow double click: the same request, answered as before
    assert settle(page)["moves"] == [0, 4]
    expect(page.locator("#notice")).to_have_text("")
    page.get_by_role("button", name="Hint").click()  # the solver's best move, tinted and said
    expect(page.locator("#news")).to_contain_text("Hint: ")
    hinted = page.locator("#board .cell.hinted")
    expect(hinted).to_have_count(1)
    assert (hinted.get_attribute("aria-label") or "").endswith(", the hint")
    hinted.click()  # played: the hint goes with the board it was for
    page.wait_for_function("() => window.noughts.state.moves.length === 4")
    expect(page.locator("#board .cell.hinted")).to_have_count(0)


# --------------------------------------------------------------------------------------------------
# cells typed by name, a move shown at once, the page on a phone's first screen

def test_digits_play_a_three_by_three_board_and_typed_names_a_bigger_one(url: str,
                                                                        new_page: Callable[..., Page]) -> None:
    page = new_page("Ann")
    open_game(page, url, "parsons", first="me")
    page.wait_for_function("() => document.activeElement.classList.contains('cell')")  # the centre has the focus
    page.keyboard.press("1")  # cell 1 in reading order, as in the terminal and the window: a1, not the focused b2
    page.wait_for_function("() => window.noughts.state.moves.length === 2")
    page.keyboard.press("9")
    page.wait_for_function("() => window.noughts.state.moves.length === 4")
    assert page.evaluate("window.noughts.state.moves")[0::2] == [0, 8]

    page.get_by_role("button", name="New game").click()
    choose_board(page, 7, 7, 4)
    page.select_option("#opponent", "arduino")
    page.select_option("#first", "me")
    page.get_by_role("button", name="Play the computer").click()
    page.wait_for_function("() => document.activeElement.classList.contains('cell')")
    typed = page.locator("#typed")
    expect(typed).to_be_hidden()
    page.keyboard.type("c5")
    expect(typed).to_have_text("c5")  # shown beside the board as it is typed
    expect(cell(page, 4 * 7 + 2)).to_have_class(re.compile(r"\baimed\b"))  # and the cell it names outlined
    page.keyboard.press("Backspace")
    page.keyboard.type("4")
    expect(typed).to_have_text("c4")
    page.keyboard.press("Escape")
    expect(typed).to_be_hidden()
    expect(page.locator("#board .cell.aimed")).to_have_count(0)
    page.keyboard.type("c4")
    page.keyboard.press("Enter")  # the typed cell, not the focused centre
    page.wait_for_function("() => window.noughts.state.moves.length === 2")
    assert page.evaluate("window.noughts.state.moves")[0] == 3 * 7 + 2
    expect(typed).to_be_hidden()
    page.keyboard.type("z9")
    page.keyboard.press("Enter")
    expect(page.locator("#notice")).to_contain_text("z9")  # a name that is no cell here is said, not ignored
    assert settle(page)["moves"][0] == 3 * 7 + 2 and len(page.evaluate("window.noughts.state.moves")) == 2
    page.keyboard.press("ArrowLeft")  # the arrows still move the focus
    assert page.evaluate("document.activeElement.dataset.index") == str(3 * 7 + 2)


class Gated:
    """A computer player that answers only when its test opens the gate: a reply as slow as the test wants."""

    def __init__(self, gate: threading.Event) -> None:
        self.gate = gate

    def choose(self, board: Any) -> int:
        self.gate.wait(20)  # (never for ever, should the test fail first)
        return int(board.legal_moves[0])


@pytest.fixture
def gated_server() -> Iterator[tuple[str, threading.Event]]:
    """A server with a computer player that waits for the test (registered after its start-up warm-up)."""
    gate = threading.Event()
    with running(scores=False, notify=lambda line: None) as base:
        players.register("gated", lambda rng, budget=None: Gated(gate), label="Slowcoach",
                         description="answers when the test says so")
        try:
            yield base, gate
        finally:
            gate.set()
            players.unregister("gated")


def test_a_move_shows_at_once_and_a_slow_reply_says_the_computer_is_thinking(
        gated_server: tuple[str, threading.Event], new_page: Callable[..., Page]) -> None:
    base, gate = gated_server
    page = new_page("Ann")
    open_game(page, base, "gated", first="me")
    cell(page, 0).click()
    expect(cell(page, 0)).to_have_text("X")  # the person's own mark, before the server has answered
    expect(cell(page, 0)).to_have_attribute("aria-label", "a1, X")
    assert page.evaluate("window.noughts.state.moves.length") == 0  # (nothing has come back: the gate is shut)
    expect(page.locator("#status")).to_have_text(text.thinking("Slowcoach"))  # the reply is slow: said, by name
    cell(page, 4).click()  # another move meanwhile: the person is told why not
    expect(page.locator("#notice")).to_have_text(text.wait_for("Slowcoach"))
    gate.set()
    page.wait_for_function("() => window.noughts.state.moves.length === 2")
    expect(cell(page, 0)).to_have_text("X")
    expect(cell(page, 1)).to_have_text("O")  # the reply (its first free cell), and the turn is the person's again
    expect(page.locator("#status")).to_contain_text("Your turn")
    expect(page.locator("#notice")).to_have_text("")
    expect(cell(page, 4)).to_have_text("")
    page.close()  # before its server stops


def test_a_game_the_slow_computer_opens_says_it_is_thinking(gated_server: tuple[str, threading.Event],
                                                            new_page: Callable[..., Page]) -> None:
    base, gate = gated_server
    page = new_page("Ann")
    page.goto(base)
    expect(page.locator("#opponent option")).to_have_count(len(players.names()))
    page.select_option("#opponent", "gated")
    page.select_option("#first", "computer")
    page.get_by_role("button", name="Play the computer").click()
    expect(page.locator("#status")).to_have_text(text.thinking("Slowcoach"))  # its opening move is slow: said meanwhile
    assert page.evaluate("window.noughts.state") is None
    gate.set()
    expect(page.locator("#status")).to_contain_text("Your turn")
    expect(cell(page, 0)).to_have_text("X")
    page.close()  # before its server stops


def test_a_refused_move_takes_its_mark_back(url: str, new_page: Callable[..., Page]) -> None:
    page = new_page("Ann")
    routes: list[Any] = []
    held: list[dict[str, Any]] = []

    def route(ws: Any) -> None:  # the page's socket, through the test: its moves are held here
        server = ws.connect_to_server()
        routes.append(ws)

        def from_page(message: str | bytes) -> None:
            data = json.loads(message)
            if data.get("type") == "move":
                held.append(data)
            else:
                server.send(message)

        ws.on_message(from_page)
        server.on_message(ws.send)

    page.route_web_socket(re.compile(r"/ws$"), route)
    open_game(page, url, "parsons", first="me")
    expect(page.locator("#status")).to_have_text("Your turn: you play X.")
    cell(page, 0).click()
    expect(cell(page, 0)).to_have_text("X")  # drawn at once
    for _ in range(50):
        if held:
            break
        page.wait_for_timeout(100)
    refusal = "The board changed before that move arrived: look again and choose."
    routes[0].send(json.dumps({"type": "error", "code": "stale", "re": "move", "id": held[0]["id"],
                               "message": refusal}))
    expect(page.locator("#notice")).to_have_text(refusal)
    expect(cell(page, 0)).to_have_text("")  # taken back: the board is the server's again
    expect(cell(page, 0)).to_have_attribute("aria-label", "a1, empty")
    expect(page.locator("#status")).to_have_text("Your turn: you play X.")


def test_a_phone_shows_the_new_game_controls_first_and_a_tap_on_the_board_starts_a_game(
        url: str, new_page: Callable[..., Page], shots: Path) -> None:
    page = new_page("Ann", viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True)
    page.goto(url)
    expect(page.locator("#opponent option")).to_have_count(len(players.names()))
    for control in ("#opponent", "#first", "#play-computer", "#friend"):  # on the first screen, no scrolling
        box = page.locator(control).bounding_box()
        assert box is not None and box["y"] + box["height"] <= PHONE["height"], control
    shot(page, shots, "web-phone-start.png", full_page=False)
    page.select_option("#opponent", "parsons")
    page.select_option("#first", "me")
    cell(page, 2).tap()  # the empty start board: a game against the chosen opponent, opened there
    page.wait_for_function("() => window.noughts.state && window.noughts.state.moves.length === 2")
    assert page.evaluate("window.noughts.state.moves")[0] == 2
    expect(cell(page, 2)).to_have_text("X")
    expect(page.locator("#notice")).to_have_text("")
    board = page.locator("#board").bounding_box()  # in a game the board comes first, whole
    setup = page.locator("#setup").bounding_box()
    assert board is not None and setup is not None and board["y"] < setup["y"]
    assert board["x"] >= 0 and board["x"] + board["width"] <= PHONE["width"]


SMALL_PHONE = {"width": 360, "height": 740}


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE, SMALL_PHONE], ids=["desktop", "phone", "small-phone"])
def test_the_join_code_example_fits_its_field(url: str, new_page: Callable[..., Page],
                                              viewport: dict[str, int]) -> None:
    phone = viewport["width"] < 500
    page = new_page(viewport=viewport, is_mobile=phone, has_touch=phone)
    page.goto(url)
    room, needed = page.evaluate("""() => {
        const field = document.getElementById("code"), style = getComputedStyle(field);
        const pen = document.createElement("canvas").getContext("2d");
        pen.font = style.font;
        return [field.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight),
                pen.measureText(field.placeholder).width]; }""")
    assert needed <= room, (needed, room)  # the whole example code shows, not cut off
