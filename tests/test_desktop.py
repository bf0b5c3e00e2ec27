"""The desktop game driven as a person would: real pygame events posted into the running window
(headless, SDL's dummy video driver), one ``app.step()`` at a time, checking the game and the
pixels drawn: marks at cell centres, the strike through a winning line, the status line."""

from __future__ import annotations

import os

os.environ["SDL_VIDEODRIVER"] = "dummy"  # before pygame opens anything: no real window, no sound card
os.environ["SDL_AUDIODRIVER"] = "dummy"

import itertools
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fake_clock import Clock

pygame = pytest.importorskip("pygame")

from noughts import Board  # noqa: E402
from noughts.desktop import MISSING_PYGAME, open_app  # noqa: E402
from noughts.desktop.app import App  # noqa: E402
from noughts.desktop.draw import CELL, HINT, LAST, O_COLOUR, STRIKE, X_COLOUR, layout_for  # noqa: E402
from noughts.desktop.layout import GameLayout, StartLayout  # noqa: E402
from noughts.errors import NoughtsError  # noqa: E402
from noughts.match import THINKING_AFTER  # noqa: E402
from noughts.store import open_store  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
Pos = tuple[int, int]


# driving the window ----------------------------------------------------------------------------
@pytest.fixture
def make_app(tmp_path: Path) -> Iterator[Callable[..., App]]:
    """Open windows with a store of this test's own; every one is closed at the end."""
    apps: list[App] = []

    def make(**options: object) -> App:
        options.setdefault("db", str(tmp_path / "scores.db"))
        options.setdefault("window", (600, 720))
        options.setdefault("environ", {"USER": "tester"})
        app = open_app(**options)  # type: ignore[arg-type]
        apps.append(app)
        app.step()
        return app

    yield make
    for app in apps:
        if app.running:
            app.close()


def game_layout(app: App) -> GameLayout:
    layout = layout_for(app.controller.view(), app.surface.get_size())
    assert isinstance(layout, GameLayout)
    return layout


def start_layout(app: App) -> StartLayout:
    layout = layout_for(app.controller.view(), app.surface.get_size())
    assert isinstance(layout, StartLayout)
    return layout


def click(app: App, pos: Pos) -> None:
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=pos, button=1))
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONUP, pos=pos, button=1))
    app.step()


def click_cell(app: App, cell: int) -> None:
    click(app, game_layout(app).board.centre(cell))


def click_button(app: App, name: str) -> None:
    click(app, game_layout(app).buttons[name].centre)


def press(app: App, key: int) -> None:
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=key, mod=0, unicode="", scancode=0))
    app.step()


def settle(app: App, timeout: float = 10.0) -> None:
    """Step the loop until the computer has answered (its move, any hint, which opponents can play)."""
    deadline = time.monotonic() + timeout
    while app.controller.thinking or app.controller._hint_job is not None or app.controller._able_job is not None:
        assert time.monotonic() < deadline, "the computer never answered"
        app.step()
        time.sleep(0.002)
    app.step()




def pixel(app: App, pos: tuple[float, float]) -> tuple[int, int, int]:
    r, g, b, _ = app.surface.get_at((int(pos[0]), int(pos[1])))
    return (r, g, b)


def status(app: App) -> str:
    return app.controller.view().status


def ring_point(layout: GameLayout, cell: int) -> Pos:
    """A point in the middle of an O's stroke (its centre is empty)."""
    board = layout.board
    x, y = board.centre(cell)
    return (x + board.o_radius - board.mark_width // 2, y)


def check_pixels(app: App) -> None:
    """Every cell shows what the board holds: X crossing at the centre, O's ring, or an empty centre;
    the winning line is struck through (at its cells' centres and between them)."""
    view = app.controller.view()
    layout = game_layout(app)
    board, line = view.board, view.line or ()
    for cell, mark in enumerate(board.cells):
        centre = layout.board.centre(cell)
        if cell in line:
            assert pixel(app, centre) == STRIKE, board.cell_name(cell)
        elif mark == "X":
            assert pixel(app, centre) == X_COLOUR, board.cell_name(cell)
        else:
            background = HINT if cell == view.hint else LAST if cell == view.last else CELL
            assert pixel(app, centre) == background, board.cell_name(cell)
        if mark == "O":
            assert pixel(app, ring_point(layout, cell)) == O_COLOUR, board.cell_name(cell)
        if mark is None:
            assert pixel(app, ring_point(layout, cell)) != O_COLOUR
    for a, b in itertools.pairwise(line):  # between cells too: over the grid lines
        (xa, ya), (xb, yb) = layout.board.centre(a), layout.board.centre(b)
        assert pixel(app, ((xa + xb) / 2, (ya + yb) / 2)) == STRIKE


def person_move(board: Board) -> int:
    """A plain person's play: win, else block, else centre, else the first free cell."""
    for mover in (board.turn, "O" if board.turn == "X" else "X"):
        for cell in board.legal_moves:
            bits = (board.x if mover == "X" else board.o) | 1 << cell
            if any(bits & m == m for m in board.geometry.lines_through[cell]):
                return cell
    centre = board.size // 2
    return centre if board[centre] is None else board.legal_moves[0]


# a whole game ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("difficulty", "how"), [("easy", "arrows"), ("medium", "digits"), ("hard", "mouse")])
def test_a_whole_game_against_each_difficulty(make_app: Callable[..., App], tmp_path: Path,
                                              difficulty: str, how: str) -> None:
    app = make_app(opponent=difficulty, mark="X", seed=3)
    controller = app.controller
    assert controller.view().screen == "game" and controller.person_mark == "X"
    while not controller.over:
        settle(app)
        if controller.over:
            break
        board = controller.game.board  # type: ignore[union-attr]
        cell = person_move(board)
        if how == "mouse":
            click_cell(app, cell)
        elif how == "digits":
            press(app, getattr(pygame, f"K_{cell + 1}"))
        else:  # the cursor starts in the centre; walk it to the cell and press Enter
            press(app, pygame.K_RIGHT)
            row, col = divmod(controller.cursor or 0, 3)
            target_row, target_col = divmod(cell, 3)
            for _ in range(abs(target_row - row)):
                press(app, pygame.K_DOWN if target_row > row else pygame.K_UP)
            for _ in range(abs(target_col - col)):
                press(app, pygame.K_RIGHT if target_col > col else pygame.K_LEFT)
            assert controller.cursor == cell
            press(app, pygame.K_RETURN)
        assert controller.game.board != board, f"{how}: the move {board.cell_name(cell)} was not played"  # type: ignore[union-attr]
        check_pixels(app)
    settle(app)
    view = controller.view()
    result = controller.game.result  # type: ignore[union-attr]
    assert result is not None
    assert view.banner == {"X": "You win", "O": "You lose", "draw": "It's a draw"}[result]
    if difficulty == "hard":
        assert result != "X", "hard never loses"
    check_pixels(app)
    assert "Saved as game 1." in view.status
    app.step()  # later frames record nothing more
    app.close()
    with open_store(tmp_path / "scores.db") as store:
        assert store.count_games() == 1
        stored = store.games()[0]
        assert (stored.x.name, stored.o.name, stored.result) == ("tester", difficulty, result)
        tally = store.scores().opponents[difficulty]
        assert (tally.wins, tally.losses, tally.draws) == (
            int(result == "X"), int(result == "O"), int(result == "draw"))


def test_two_people_take_turns_and_the_strike_and_banner_show_x_wins(make_app: Callable[..., App],
                                                                       tmp_path: Path) -> None:
    app = make_app(opponent="person", first="me")
    for cell in (0, 1, 3, 4):  # a1 b1 a2 b2
        click_cell(app, cell)
    assert str(app.controller.game.board) == "XO./XO./..."  # type: ignore[union-attr]
    assert "tester (X) to move" in status(app)
    click_cell(app, 6)  # a3: X has the left column
    view = app.controller.view()
    assert view.banner == "tester wins" and view.line == (0, 3, 6)
    assert "tester (X) wins along the left column a1–a3" in view.status
    check_pixels(app)
    assert pixel(app, game_layout(app).board.centre(1)) == CELL  # an O's cell: its centre is empty
    app.close()
    with open_store(tmp_path / "scores.db") as store:
        people = store.scores().people
        assert (people["tester"].wins, people["Player 2"].losses) == (1, 1)


# the start screen -----------------------------------------------------------------------------
def test_start_screen_chooses_the_opponent_and_noughts_go_second(make_app: Callable[..., App]) -> None:
    app = make_app()
    view = app.controller.view()
    assert view.screen == "start"
    layout = start_layout(app)
    names = [c.key for c in view.opponents]
    assert names[:3] == ["easy", "medium", "hard"] and names[-1] == "person"
    click(app, layout.opponents[names.index("hard")].centre)
    click(app, layout.sides[[c.key for c in view.sides].index("computer")].centre)
    view = app.controller.view()
    assert [c.key for c in view.opponents if c.selected] == ["hard"]
    assert [c.key for c in view.sides if c.selected] == ["computer"]
    assert [c.label for c in view.sides if c.selected] == ["Opponent first"]
    settle(app)  # the check of which opponents can play this board is in
    click(app, start_layout(app).play.centre)
    assert app.controller.view().screen == "game"
    settle(app)  # hard is X and moves first
    board = app.controller.game.board  # type: ignore[union-attr]
    assert board.ply == 1 and board.x and app.controller.person_mark == "O"
    assert app.controller.view().header == "You (O) vs Hard (X)"
    check_pixels(app)
    # Esc: back to the menu, where the game can be resumed (Esc again) as it was
    press(app, pygame.K_ESCAPE)
    assert app.controller.view().screen == "start" and app.controller.view().can_resume
    press(app, pygame.K_ESCAPE)
    assert app.controller.view().screen == "game" and app.controller.game.board == board  # type: ignore[union-attr]
    click_button(app, "menu")
    assert app.controller.view().screen == "start"


# resizing -------------------------------------------------------------------------------------
@pytest.mark.parametrize("size", [(900, 520), (400, 1000), (1400, 1000)])
def test_resize_keeps_the_marks_at_the_new_cell_centres(make_app: Callable[..., App],
                                                        size: tuple[int, int]) -> None:
    app = make_app(opponent="person", first="me")
    for cell in (4, 0, 8):
        click_cell(app, cell)
    before = game_layout(app).board
    pygame.event.post(pygame.event.Event(pygame.VIDEORESIZE, size=size, w=size[0], h=size[1]))
    app.step()
    assert app.surface.get_size() == size
    after = game_layout(app).board
    assert after != before
    assert after.box.right <= size[0] and after.box.bottom <= size[1]
    check_pixels(app)
    click_cell(app, 2)  # clicks land on the new cells
    assert app.controller.game.board[2] == "O"  # type: ignore[union-attr]
    check_pixels(app)
    pygame.event.post(pygame.event.Event(pygame.WINDOWRESIZED, x=size[0], y=size[1]))
    app.step()
    check_pixels(app)


def test_a_tiny_resize_is_held_at_the_minimum_size_and_still_draws(make_app: Callable[..., App]) -> None:
    app = make_app(opponent="person", first="me")
    click_cell(app, 4)
    pygame.event.post(pygame.event.Event(pygame.VIDEORESIZE, size=(50, 40), w=50, h=40))
    app.step()
    assert app.surface.get_size() == (320, 400)
    check_pixels(app)


def test_a_non_square_board_draws_and_plays(make_app: Callable[..., App]) -> None:
    app = make_app(opponent="person", first="me", size="4x5", k=4)
    layout = game_layout(app)
    assert (layout.board.rows, layout.board.cols) == (4, 5)
    for cell in (0, 5, 1, 6, 2, 7, 3):  # a1–d1 for X
        click_cell(app, cell)
    assert app.controller.view().line == (0, 1, 2, 3)
    check_pixels(app)


# misuse ---------------------------------------------------------------------------------------
def test_misuse_does_nothing_and_says_why(make_app: Callable[..., App]) -> None:
    app = make_app(opponent="parsons", mark="X", think_delay=0.4)
    controller = app.controller
    controller.clock = clock = Clock()
    click_cell(app, 0)  # a1; parsons now "thinks" for 0.4 s
    assert controller.thinking
    clock.advance(THINKING_AFTER)
    click_cell(app, 8)  # not your turn
    assert status(app) == "Wait: it is Centre first's turn. Centre first is thinking…"
    press(app, pygame.K_9)
    assert status(app) == "Wait: it is Centre first's turn. Centre first is thinking…"
    press(app, pygame.K_h)
    assert status(app) == "A hint comes at your move. Centre first is thinking…"
    assert str(controller.game.board) == "X../.../..."  # type: ignore[union-attr]
    settle(app)
    assert str(controller.game.board) == "X../.O./..."  # type: ignore[union-attr]
    click_cell(app, 4)  # occupied
    assert status(app) == "b2 is taken by O: choose an empty square. Your turn (X)."
    press(app, pygame.K_1)
    assert status(app) == "a1 is taken by X: choose an empty square. Your turn (X)."
    press(app, pygame.K_RETURN)
    assert status(app) == "Move to a cell with the arrow keys first, or type its name. Your turn (X)."
    click_button(app, "again")
    assert status(app) == "Finish this game first, or use Menu to start a different one. Your turn (X)."
    assert str(controller.game.board) == "X../.O./..."  # type: ignore[union-attr]
    check_pixels(app)
    controller.think_delay = 0.0  # what it says while thinking is checked: the rest needs no pause
    while not controller.over:  # play on to the end, then try to go on playing
        click_cell(app, controller.game.board.legal_moves[0])  # type: ignore[union-attr]
        settle(app)
    board = controller.game.board  # type: ignore[union-attr]
    empty = next(c for c in range(9) if board[c] is None)
    click_cell(app, empty)
    assert status(app).startswith("This game is over: press Play again")
    click_button(app, "undo")
    assert status(app).startswith("This game is over: press Play again")
    click_button(app, "hint")
    assert status(app) == "This game is over: start another one."
    assert controller.game.board == board  # type: ignore[union-attr]
    check_pixels(app)


def test_undo_takes_back_the_persons_move_and_the_reply(make_app: Callable[..., App]) -> None:
    app = make_app(opponent="parsons", mark="X")
    click_button(app, "undo")
    assert status(app) == "There is no move of yours to take back. Your turn (X)."
    click_cell(app, 0)
    settle(app)
    click_cell(app, 8)
    settle(app)
    board = app.controller.game.board  # type: ignore[union-attr]
    assert board.ply == 4
    click_button(app, "undo")
    assert app.controller.game.board.ply == 2  # type: ignore[union-attr]
    assert status(app).startswith("Took back your move c3 and Centre first's reply")
    assert app.controller.view().last == 4  # parsons's b2 is the last move again
    check_pixels(app)
    press(app, pygame.K_u)
    assert str(app.controller.game.board) == ".../.../..."  # type: ignore[union-attr]
    assert status(app).startswith("Took back your move a1 and Centre first's reply b2")
    check_pixels(app)


def test_hint_highlights_the_best_cell_and_says_how_it_ends(make_app: Callable[..., App]) -> None:
    app = make_app(opponent="person", first="me")
    click_button(app, "hint")
    settle(app)
    assert "draws with best play on both sides." in status(app)
    for cell in (0, 1, 3, 4):  # X to move, a3 wins at once
        click_cell(app, cell)
    press(app, pygame.K_h)
    settle(app)
    view = app.controller.view()
    assert view.hint == 6 and status(app) == "Hint: a3 wins at once. tester (X) to move."
    check_pixels(app)  # the hinted cell is tinted
    click_cell(app, 2)  # c1 instead: the hint goes away
    assert app.controller.view().hint is None
    click_cell(app, 7)  # O takes b3: the middle column
    assert app.controller.view().banner == "Player 2 wins"


def test_hint_says_wins_in_three(make_app: Callable[..., App]) -> None:
    app = make_app(opponent="person", first="me")
    for cell in (0, 1, 4, 8):  # X a1, O b1, X b2, O c3: X forks at a2 (c2 and a3) and wins in 3
        click_cell(app, cell)
    click_button(app, "hint")
    settle(app)
    assert status(app).startswith("Hint: a2 wins in 3 (moves by both sides, this one included).")
    assert app.controller.view().hint == 3
    check_pixels(app)


# the computer thinks off the event loop -------------------------------------------------------
def test_the_window_keeps_running_while_the_computer_thinks(make_app: Callable[..., App],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    release, answered = threading.Event(), threading.Event()

    class Slow:
        name = "slow"

        def choose(self, board: Board) -> int:
            release.wait(10)  # a search that takes as long as the test wants
            answered.set()
            return board.legal_moves[0]

    from noughts import players

    monkeypatch.setattr(players, "get", lambda name, rng=None: Slow())
    app = make_app(opponent="perfect", mark="X")
    app.controller.clock = clock = Clock()
    click_cell(app, 4)
    clock.advance(THINKING_AFTER)
    assert app.controller.thinking
    for _ in range(20):  # frames keep coming while the search goes on (a step that waited for it would see it end)
        pygame.event.post(pygame.event.Event(pygame.VIDEORESIZE, size=(610, 730), w=610, h=730))
        app.step()
    assert not answered.is_set()
    assert app.controller.thinking and "Perfect is thinking" in status(app)
    release.set()
    settle(app)
    assert app.controller.game.board.ply == 2  # type: ignore[union-attr]


def test_the_thinking_pause_is_a_setting(make_app: Callable[..., App]) -> None:
    def pauses(app: App) -> list[float]:
        """The pause of every job the window hands its worker."""
        asked: list[float] = []
        submit = app.worker.submit

        def recorded(token: int, job: Callable[[], object], delay: float = 0.0) -> None:
            asked.append(delay)
            submit(token, job, delay)

        app.worker.submit = recorded  # type: ignore[method-assign]
        return asked

    app = make_app(opponent="parsons", mark="X", think_delay=0.3)
    asked = pauses(app)
    started = time.monotonic()
    click_cell(app, 0)
    settle(app)
    assert time.monotonic() - started >= 0.3 and asked == [0.3]  # a lower bound: no race with a busy machine
    quick = make_app(opponent="parsons", mark="X")
    asked = pauses(quick)
    click_cell(quick, 0)
    settle(quick)
    assert asked == [0.0]


def test_a_computer_that_fails_abandons_the_game_uncounted(make_app: Callable[..., App], tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken:
        name = "broken"

        def choose(self, board: Board) -> int:
            raise NoughtsError("its rule book is missing a page.")

    from noughts import players

    monkeypatch.setattr(players, "get", lambda name, rng=None: Broken())
    app = make_app(opponent="arduino", mark="O")
    settle(app)
    view = app.controller.view()
    assert view.banner == "Game abandoned"
    assert view.status == ("Arduino rules cannot go on (its rule book is missing a page): "
                           "the unfinished game does not count.")
    click_cell(app, 0)
    assert status(app).startswith("This game is over")
    app.close()
    with open_store(tmp_path / "scores.db") as store:
        assert store.count_games() == 0


# closing and the store ------------------------------------------------------------------------
def test_closing_while_the_computer_thinks_exits_at_once_and_records_nothing(
        make_app: Callable[..., App], tmp_path: Path) -> None:
    app = make_app(opponent="hard", mark="X", think_delay=30)
    click_cell(app, 4)
    assert app.controller.thinking
    pygame.event.post(pygame.event.Event(pygame.QUIT))
    started = time.monotonic()
    assert app.step() is False
    assert app.run() == 0  # run() on a closed window returns at once and tidies up
    assert time.monotonic() - started < 10  # far less than the 30 s pause it did not wait for
    app.worker.thread.join(2)
    assert not app.worker.thread.is_alive()  # the pause was cut short
    with open_store(tmp_path / "scores.db") as store:
        assert store.count_games() == 0


def test_closing_on_the_start_screen_and_mid_game(make_app: Callable[..., App], tmp_path: Path) -> None:
    app = make_app()
    pygame.event.post(pygame.event.Event(pygame.QUIT))
    assert app.run() == 0 and not app.running
    app = make_app(opponent="person", first="me")
    click_cell(app, 0)
    pygame.event.post(pygame.event.Event(pygame.QUIT))
    assert app.run() == 0
    with open_store(tmp_path / "scores.db") as store:
        assert store.count_games() == 0


def test_finished_games_are_recorded_once_and_abandoned_ones_never(make_app: Callable[..., App],
                                                                   tmp_path: Path) -> None:
    app = make_app(opponent="person", first="me")
    for cell in (0, 1, 3, 4, 6):
        click_cell(app, cell)
    assert app.controller.view().banner == "tester wins"
    for _ in range(5):
        app.step()
        click_cell(app, 8)
    with open_store(tmp_path / "scores.db") as store:
        assert store.count_games() == 1
    click_button(app, "again")
    click_cell(app, 4)
    click_button(app, "menu")
    settle(app)
    click(app, start_layout(app).play.centre)  # a new game: the unfinished one is dropped
    assert status(app) == "The unfinished game does not count: a new game begins. tester (X) to move."
    for cell in (0, 1, 3, 4, 6):
        click_cell(app, cell)
    assert app.controller.tally == [2, 0, 0]
    assert app.controller.view().tally == "tester: 2 · Player 2: 0 · draws: 0"
    click_button(app, "again")
    click_cell(app, 4)
    app.close()
    with open_store(tmp_path / "scores.db") as store:
        assert store.count_games() == 2


def test_store_notices_and_high_scores_show(make_app: Callable[..., App], tmp_path: Path) -> None:
    foreign = b"this is not a database" * 100
    (tmp_path / "scores.db").write_bytes(foreign)
    app = make_app(opponent="easy", mark="X", seed=1)
    assert "scores.db" in status(app) and "untouched" in status(app)  # not ours: left as it is
    assert app.controller.view().scores == "Scores are off (see the note above)."
    click_button(app, "menu")
    assert "untouched" in app.controller.view().notes
    app.close()
    assert (tmp_path / "scores.db").read_bytes() == foreign
    (tmp_path / "scores.db").unlink()
    app = make_app(opponent="easy", mark="X", seed=1)
    assert app.controller.view().scores == "High scores: easy 0 · medium 0 · hard 0 · current run 0"


def test_scores_off_still_plays(make_app: Callable[..., App], tmp_path: Path) -> None:
    app = make_app(opponent="person", first="me", no_scores=True)
    for cell in (0, 1, 3, 4, 6):
        click_cell(app, cell)
    assert app.controller.view().banner == "tester wins"
    assert "Saved" not in status(app)
    assert not (tmp_path / "scores.db").exists()


def test_without_pygame_the_desktop_game_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pygame", None)  # import pygame now fails, as if not installed
    with pytest.raises(NoughtsError) as caught:
        open_app(no_scores=True)
    assert str(caught.value) == MISSING_PYGAME == "the desktop game needs pygame-ce: pip install 'noughts[desktop]'"


def test_bad_options_are_refused_before_a_window_opens() -> None:
    with pytest.raises(NoughtsError, match="no opponent called 'nobody'"):
        open_app(opponent="nobody")
    with pytest.raises(NoughtsError, match="thinking pause"):
        open_app(think_delay="soon")
    with pytest.raises(NoughtsError, match="playing O means 'Opponent first', not 'You first'"):
        open_app(first="me", mark="O")


def test_the_core_does_not_import_pygame() -> None:
    import subprocess

    code = ("import sys, noughts, noughts.cli, noughts.terminal, noughts.desktop; "
            "import noughts.desktop.controller, noughts.desktop.layout; print('pygame' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# screenshots ----------------------------------------------------------------------------------
def parsons_losing_line() -> list[int]:
    """X moves that beat the deterministic parsons player (found by search, not typed in)."""
    from noughts.players import get

    parsons = get("parsons")

    def search(board: Board, moves: list[int]) -> list[int] | None:
        for cell in board.legal_moves:
            after = board.play(cell)
            if after.winner == "X":
                return [*moves, cell]
            if after.is_over:
                continue
            reply = after.play(parsons.choose(after))
            if not reply.is_over and (found := search(reply, [*moves, cell])):
                return found
        return None

    line = search(Board(), [])
    assert line is not None
    return line


def test_screenshots(make_app: Callable[..., App], tmp_path: Path) -> None:
    """Renders the start screen and a won game; with NOUGHTS_SCREENSHOTS=1 they are saved under docs/."""
    folder = ROOT / "docs" if os.environ.get("NOUGHTS_SCREENSHOTS") == "1" else tmp_path
    app = make_app(window=(640, 760))
    pygame.event.post(pygame.event.Event(pygame.MOUSEMOTION, pos=start_layout(app).opponents[2].centre,
                                         rel=(0, 0), buttons=(0, 0, 0)))
    app.step()
    pygame.image.save(app.surface, str(folder / "desktop-start.png"))
    click(app, start_layout(app).opponents[[c.key for c in app.controller.view().opponents].index("parsons")].centre)
    click(app, start_layout(app).play.centre)
    for cell in parsons_losing_line():
        settle(app)
        click_cell(app, cell)
    settle(app)
    assert app.controller.view().banner == "You win"
    check_pixels(app)
    pygame.image.save(app.surface, str(folder / "desktop-won.png"))
    for name in ("desktop-start.png", "desktop-won.png"):
        assert pygame.image.load(str(folder / name)).get_size() == (640, 760)


# defects, each pinned ---------------------------------------------------------------------------
def test_resume_after_changing_the_opponent_records_the_game_against_the_same_one(
        make_app: Callable[..., App], tmp_path: Path) -> None:
    app = make_app(opponent="parsons", mark="X")
    line = parsons_losing_line()
    click_cell(app, line[0])
    settle(app)
    header = app.controller.view().header
    click_button(app, "menu")
    keys = [c.key for c in app.controller.view().opponents]
    click(app, start_layout(app).opponents[keys.index("hard")].centre)
    resume = start_layout(app).resume
    assert resume is not None
    click(app, resume.centre)
    assert app.controller.view().header == header and "Hard" not in header
    for cell in line[1:]:
        click_cell(app, cell)
        settle(app)
    assert app.controller.view().banner == "You win"
    app.close()
    with open_store(tmp_path / "scores.db") as store:
        assert [g.o.name for g in store.games()] == ["parsons"]
        assert store.scores().high["hard"] == 0  # no +3 for a game hard never played


def test_an_opponent_that_cannot_play_the_board_is_refused_before_the_window_opens() -> None:
    with pytest.raises(NoughtsError, match=r"cannot play a 4×4 board.*Opponents that can"):
        open_app(opponent="parsons", size="4", mark="O", no_scores=True)


def test_marks_are_drawn_in_the_shared_colours_and_plain_with_no_color(make_app: Callable[..., App]) -> None:
    from noughts.text import MARK_COLOURS

    def rgb(hex_colour: str) -> tuple[int, int, int]:
        return (int(hex_colour[1:3], 16), int(hex_colour[3:5], 16), int(hex_colour[5:7], 16))

    app = make_app(opponent="person", first="me")
    click_cell(app, 4)
    click_cell(app, 0)
    layout = game_layout(app)
    assert pixel(app, layout.board.centre(4)) == rgb(MARK_COLOURS["X"])
    assert pixel(app, ring_point(layout, 0)) == rgb(MARK_COLOURS["O"])
    plain = make_app(opponent="person", first="me", environ={"USER": "tester", "NO_COLOR": "1"})
    click_cell(plain, 4)
    click_cell(plain, 0)
    layout = game_layout(plain)
    x, o = pixel(plain, layout.board.centre(4)), pixel(plain, ring_point(layout, 0))
    assert x == o and max(x) - min(x) < 24  # one plain ink for both, a grey: the shapes tell them apart
    assert x != rgb(MARK_COLOURS["X"])


def test_a_display_with_nothing_behind_it_is_refused_with_one_line() -> None:
    import subprocess

    number = next(n for n in range(87, 200) if not Path(f"/tmp/.X11-unix/X{n}").exists())
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER")}
    env["DISPLAY"] = f":{number}"
    result = subprocess.run([sys.executable, "-m", "noughts", "gui", "--opponent", "hard", "--first", "me",
                             "--no-scores"], capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("noughts: ") and result.stderr.count("\n") == 1
    assert f":{number}" in result.stderr and "Traceback" not in result.stderr


def test_the_screen_probe_finds_a_listening_x_socket_and_refuses_a_silent_one() -> None:
    import socket

    from noughts.desktop.app import _require_a_screen, _x_answers

    number = next(n for n in range(87, 200) if not Path(f"/tmp/.X11-unix/X{n}").exists())
    assert not _x_answers(f":{number}") and not _x_answers(f"unix:{number}.0")
    with pytest.raises(NoughtsError, match=f"no screen answers at DISPLAY=:{number} "):
        _require_a_screen({"DISPLAY": f":{number}"})
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:  # an X server's abstract socket
        server.bind(f"\0/tmp/.X11-unix/X{number}")
        server.listen(16)
        assert _x_answers(f":{number}") and _x_answers(f":{number}.0")
        _require_a_screen({"DISPLAY": f":{number}"})
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:  # over TCP, as ssh -X forwards it
        port = next(p for p in range(6087, 6200) if not _x_answers(f"127.0.0.1:{p - 6000}"))
        server.bind(("127.0.0.1", port))
        server.listen(16)
        assert _x_answers(f"127.0.0.1:{port - 6000}")
    with pytest.raises(NoughtsError, match="no DISPLAY or WAYLAND_DISPLAY"):
        _require_a_screen({})
    with pytest.raises(NoughtsError, match="WAYLAND_DISPLAY=wayland-87"):
        _require_a_screen({"WAYLAND_DISPLAY": "wayland-87", "XDG_RUNTIME_DIR": "/nonexistent"})


def test_the_start_screen_chooses_the_board_and_offers_the_opponents_that_can_play_it(
        make_app: Callable[..., App], tmp_path: Path) -> None:
    folder = ROOT / "docs" if os.environ.get("NOUGHTS_SCREENSHOTS") == "1" else tmp_path
    app = make_app(window=(640, 760))
    settle(app)
    steps = dict(start_layout(app).board_steps)
    for step in ["rows+"] * 4 + ["cols+"] * 4:  # 3×3 → 7×7: k follows, 3 → 5 (gomoku)
        click(app, steps[step].centre)
    click(app, steps["k-"].centre)
    board = app.controller.view().board
    assert (board.rows, board.cols, board.k) == (7, 7, 4)
    settle(app)  # which opponents can play it: asked off the event loop
    offered = {c.key: c.enabled for c in app.controller.view().opponents}
    from noughts.players import able

    assert {n for n, ok in offered.items() if ok} == {*able(Board(7, 7, 4)), "person"}
    pygame.image.save(app.surface, str(folder / "desktop-start-board.png"))
    click(app, start_layout(app).opponents[[c.key for c in app.controller.view().opponents].index("easy")].centre)
    for _ in range(20):  # k cannot pass the longer side, nor go under 3
        click(app, steps["k+"].centre)
    assert app.controller.view().board.k == 7
    click(app, start_layout(app).play.centre)
    settle(app)
    view = app.controller.view()
    assert view.screen == "game" and (view.board.rows, view.board.cols, view.board.k) == (7, 7, 7)
    click_cell(app, 48)
    settle(app)
    assert app.controller.board[48] == "X" and len(app.controller.game.moves) == 2  # type: ignore[union-attr]


# issue 28: one vocabulary, one rulebook, no silent waits ----------------------------------------
def text_input(app: App, typed: str) -> None:
    pygame.event.post(pygame.event.Event(pygame.TEXTINPUT, text=typed))
    app.step()


def inked(app: App, box: object) -> bool:
    """Whether anything but the background is drawn in ``box`` (a layout Box)."""
    from noughts.desktop.draw import BACKGROUND

    x0, y0, w, h = box.x, box.y, box.w, box.h  # type: ignore[attr-defined]
    return any(pixel(app, (x, y)) != BACKGROUND for x in range(x0, x0 + w) for y in range(y0, y0 + h))


@pytest.mark.parametrize("size", ["3", "15", "26"])
def test_the_coordinates_are_drawn_round_the_board(make_app: Callable[..., App], size: str) -> None:
    app = make_app(opponent="person", first="me", size=size)
    board = game_layout(app).board
    assert all(inked(app, board.column_label(col)) for col in range(board.cols))
    assert all(inked(app, board.row_label(row)) for row in range(board.rows))
    check_pixels(app)


def test_typed_cell_names_play_on_a_big_board_in_the_window(make_app: Callable[..., App]) -> None:
    app = make_app(opponent="person", first="me", size="15")
    for key in (pygame.K_c, pygame.K_4):
        press(app, key)
    assert status(app).startswith("Cell c4: press Enter")
    press(app, pygame.K_RETURN)
    assert app.controller.board[app.controller.board.parse_cell("c4")] == "X"
    for key in (pygame.K_1, pygame.K_2, pygame.K_3, pygame.K_BACKSPACE, pygame.K_KP_ENTER):
        press(app, key)
    assert app.controller.board[11] == "O"
    check_pixels(app)


def test_two_people_type_their_names_in_the_window(make_app: Callable[..., App], tmp_path: Path) -> None:
    app = make_app()
    settle(app)
    keys = [c.key for c in app.controller.view().opponents]
    click(app, start_layout(app).opponents[keys.index("person")].centre)
    fields = start_layout(app).name_fields
    assert len(fields) == 2 and inked(app, fields[0]) and inked(app, fields[1])
    click(app, fields[1].centre)
    for _ in range(8):
        press(app, pygame.K_BACKSPACE)
    press(app, pygame.K_b)  # the key of a letter does nothing here: the text comes as text input
    text_input(app, "Bøb")
    press(app, pygame.K_SPACE)  # a space in a name, not Play
    text_input(app, " ")
    press(app, pygame.K_j)
    text_input(app, "J")
    assert app.controller.view().names == ("tester", "Bøb J") and app.controller.view().screen == "start"
    press(app, pygame.K_ESCAPE)  # out of the name: now Space presses Play
    press(app, pygame.K_SPACE)
    assert app.controller.view().header == "tester (X) vs Bøb J (O)"
    for cell in (0, 1, 3, 4, 6):
        click_cell(app, cell)
    app.close()
    with open_store(tmp_path / "scores.db") as store:
        assert store.scores().people["Bøb J"].losses == 1


def test_best_of_from_the_command_line_reaches_the_match(make_app: Callable[..., App]) -> None:
    app = make_app(opponent="person", first="me", best_of=3)
    assert app.controller.match is not None and app.controller.match.best_of == 3
    for game in range(2):
        for cell in (0, 1, 3, 4, 6):
            click_cell(app, cell)
        if game == 0:
            click_button(app, "again")
    assert status(app).endswith("tester wins the match 2–0 (best of 3). Saved as game 2.")
    assert app.controller.view().tally == "Match, best of 3, game 2: tester: 2 · Player 2: 0 · draws: 0"


def test_the_window_wakes_up_in_time_to_say_the_computer_is_thinking(make_app: Callable[..., App]) -> None:
    app = make_app(opponent="parsons", mark="X", think_delay=5)
    app.controller.clock = clock = Clock()
    assert app.idle_wait_ms() == 250
    click_cell(app, 0)
    clock.advance(THINKING_AFTER - 0.2)
    assert 190 <= app.idle_wait_ms() <= 201  # not a whole idle wait: the thinking line is due sooner
    clock.advance(0.2)
    app.step()
    assert status(app) == "Centre first is thinking…" and app.idle_wait_ms() == 250
