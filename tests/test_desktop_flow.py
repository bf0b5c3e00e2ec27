"""The desktop game's layers without a window: the geometry (pure numbers) and the controller
(a state machine of high-level inputs), driven with a worker that answers when told to."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from fake_clock import Clock
from noughts import Board
from noughts.desktop.controller import Controller, ViewState
from noughts.desktop.layout import MIN_SIZE, Box, GameLayout, game_layout, start_layout
from noughts.errors import NoughtsError
from noughts.match import THINKING_AFTER
from noughts.store import Store, open_store


class Worker:
    """Holds the jobs until the test lets them finish (``answer``), as a slow computer would."""

    def __init__(self) -> None:
        self.jobs: list[tuple[int, Callable[[], object], float]] = []

    def submit(self, token: int, job: Callable[[], object], delay: float = 0.0) -> None:
        self.jobs.append((token, job, delay))

    def answer(self, controller: Controller) -> None:
        while self.jobs:
            token, job, _ = self.jobs.pop(0)
            controller.job_done(token, job())




def make(**options: object) -> tuple[Controller, Worker]:
    worker = Worker()
    options.setdefault("environ", {"USER": "ann"})
    options.setdefault("clock", Clock())
    return Controller(worker=worker, **options), worker  # type: ignore[arg-type]


def wait(controller: Controller, seconds: float) -> None:
    """Let ``seconds`` pass on the controller's (fake) clock."""
    assert isinstance(controller.clock, Clock)
    controller.clock.advance(seconds)


def board(controller: Controller) -> str:
    assert controller.game is not None
    return str(controller.game.board)


# geometry --------------------------------------------------------------------------------------
SIZES = [MIN_SIZE, (640, 760), (1920, 1080), (500, 1400), (2000, 420), (333, 777)]


def overlaps(a: Box, b: Box) -> bool:
    return a.x < b.right and b.x < a.right and a.y < b.bottom and b.y < a.bottom


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize(("rows", "cols"), [(3, 3), (4, 4), (3, 7), (6, 2)])
def test_game_layout_fits_the_window_and_cell_at_inverts_the_centres(size: tuple[int, int], rows: int,
                                                                     cols: int) -> None:
    layout = game_layout(*size, rows, cols)
    boxes = [layout.header, layout.board.box, layout.status, layout.info, *layout.buttons.values()]
    for box in boxes:
        assert box.x >= 0 and box.right <= size[0] and box.y >= 0 and box.bottom <= size[1], box
    for a, b in itertools.combinations(boxes, 2):
        assert not overlaps(a, b), (a, b)
    geometry = layout.board
    assert geometry.box.w == geometry.cell * cols and geometry.box.h == geometry.cell * rows
    for cell in range(rows * cols):
        box = geometry.cell_box(cell)
        assert geometry.cell_at(geometry.centre(cell)) == cell
        assert geometry.cell_at((box.x, box.y)) == cell and geometry.cell_at((box.right - 1, box.bottom - 1)) == cell
    assert geometry.cell_at((geometry.box.right, geometry.box.y)) is None
    assert geometry.cell_at((geometry.box.x - 1, geometry.box.y)) is None


def test_the_board_grows_with_the_window() -> None:
    cells = [game_layout(w, h, 3, 3).board.cell for w, h in [(320, 400), (640, 760), (1280, 1500)]]
    assert cells == sorted(cells) and cells[-1] > 2.5 * cells[0]


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("resume", [False, True])
@pytest.mark.parametrize("names", [False, True])
def test_start_layout_fits_the_window_without_overlaps(size: tuple[int, int], resume: bool, names: bool) -> None:
    layout = start_layout(*size, 12, 5, resume, names=names)
    boxes = [layout.title, layout.subtitle, layout.opponent_label, *layout.opponents, layout.description,
             layout.side_label, *layout.sides, layout.play, layout.notes, *layout.name_fields]
    assert len(layout.name_fields) == (2 if names else 0)
    if layout.names_label is not None:
        boxes.append(layout.names_label)
    if resume:
        assert layout.resume is not None
        boxes.append(layout.resume)
    for box in boxes:
        assert box.x >= 0 and box.right <= size[0] and box.y >= 0 and box.bottom <= size[1] + 1, box
        assert box.w > 0 and box.h > 0
    for a, b in itertools.combinations(boxes, 2):
        assert not overlaps(a, b), (a, b)
    names = tuple(f"o{i}" for i in range(12))
    sides = ("me", "computer", "alternate", "loser", "random")
    assert layout.target_at(layout.opponents[5].centre, names, sides) == ("opponent", "o5")
    assert layout.target_at(layout.sides[1].centre, names, sides) == ("side", "computer")
    assert layout.target_at(layout.sides[4].centre, names, sides) == ("side", "random")
    assert layout.target_at(layout.play.centre) == ("button", "play")
    for seat, field in enumerate(layout.name_fields):
        assert layout.target_at(field.centre) == ("name", str(seat))


def test_strike_ends_reach_past_the_end_cells_but_stay_on_the_board() -> None:
    geometry = game_layout(640, 760, 3, 3).board
    for line in Board().geometry.lines:
        (x0, y0), (x1, y1) = geometry.strike_ends(line)
        for x, y in ((x0, y0), (x1, y1)):
            assert geometry.box.contains((int(x), int(y)))
        assert geometry.cell_at((int(x0), int(y0))) == line[0] and geometry.cell_at((int(x1), int(y1))) == line[-1]


# the flow ------------------------------------------------------------------------------------
def test_with_opponent_and_side_given_the_game_starts_at_once_else_the_menu() -> None:
    controller, _ = make(opponent="easy", first="me")
    assert controller.view().screen == "game"
    controller, _ = make(opponent="easy")
    assert controller.view().screen == "start"
    assert [c.key for c in controller.view().opponents if c.selected] == ["easy"]


def test_the_computer_moves_only_when_its_answer_arrives_and_stale_answers_are_dropped() -> None:
    controller, worker = make(opponent="parsons", first="me")
    controller.play_cell(0)
    assert controller.thinking and len(worker.jobs) == 1
    wait(controller, THINKING_AFTER)
    assert controller.view().status == "Centre first is thinking…"
    stale_token, job, _ = worker.jobs.pop()
    controller.undo()  # take the move back while the computer thinks
    assert board(controller) == ".../.../..." and not controller.thinking
    assert controller.view().status == "Took back your move a1. Your turn (X)."
    controller.play_cell(0)  # the same move again: a new question, the old answer still unwanted
    assert len(worker.jobs) == 1
    controller.job_done(stale_token, 8)  # a stale answer at the same ply: dropped by its token
    assert board(controller) == "X../.../..." and controller.thinking
    controller.undo()
    controller.job_done(stale_token, job())  # its answer comes anyway: dropped
    assert board(controller) == ".../.../..."
    controller.play_cell(8)
    worker.answer(controller)
    assert board(controller) == ".../.O./..X"
    assert controller.view().last == 4


def test_the_computer_moves_first_when_the_person_plays_noughts() -> None:
    controller, worker = make(opponent="parsons", first="computer")
    assert controller.person_mark == "O" and controller.thinking
    controller.undo()
    assert controller.view().status == "There is no move of yours to take back. Centre first (X) to move."
    wait(controller, THINKING_AFTER)
    assert controller.view().status == "There is no move of yours to take back. Centre first is thinking…"
    controller.play_cell(0)
    assert controller.view().status == "Wait: it is Centre first's turn. Centre first is thinking…"
    worker.answer(controller)
    assert board(controller) == ".../.X./..."
    assert controller.view().status.startswith("Your turn (O)")


def test_take_turns_and_coin_toss() -> None:
    controller, _ = make(opponent="person", first="alternate")
    marks = []
    for _ in range(4):
        marks.append(controller.person_mark)
        for cell in (0, 1, 3, 4, 6):
            controller.play_cell(cell)
        assert controller.over
        controller.press("again")
    assert marks == ["X", "O", "X", "O"]
    tossed = []
    for seed in range(8):
        controller, _worker = make(opponent="person", first="random", seed=seed)
        tossed.append(controller.person_mark)
        again, _ = make(opponent="person", first="random", seed=seed)
        assert again.person_mark == controller.person_mark  # the same seed tosses the same coin
    assert set(tossed) == {"X", "O"}


def test_the_tally_belongs_to_one_opponent() -> None:
    controller, worker = make(opponent="person", first="me")
    for cell in (0, 1, 3, 4, 6):
        controller.play_cell(cell)
    assert controller.tally == [1, 0, 0]
    assert controller.view().tally == "ann: 1 · Player 2: 0 · draws: 0"
    controller.press("again")  # the same opponent: the tally goes on
    assert controller.view().tally == "ann: 1 · Player 2: 0 · draws: 0"
    controller.press("menu")
    controller.choose_opponent("easy")
    controller.press("play")  # waits for the check of which opponents can play this board
    assert controller.view().screen == "start"
    worker.answer(controller)
    assert controller.view().screen == "game"
    assert controller.tally == [0, 0, 0]
    assert controller.view().tally == "ann: 0 · Easy: 0 · draws: 0"


def test_keys_on_the_start_screen() -> None:
    controller, worker = make()
    worker.answer(controller)  # which opponents can play this board
    assert [c.key for c in controller.view().sides if c.selected] == ["alternate"]  # the default
    controller.key("down")
    controller.key("left")
    view = controller.view()
    assert [c.key for c in view.opponents if c.selected] == ["hard"]  # medium is the default
    assert [c.key for c in view.sides if c.selected] == ["computer"]
    controller.key("escape")  # nothing to resume
    assert controller.view().screen == "start"
    controller.key("enter")
    assert controller.view().screen == "game" and controller.person_mark == "O"


def test_the_cursor_stays_on_the_board() -> None:
    controller, _ = make(opponent="person", first="me", rows=3, cols=4, k=3)
    controller.key("up")
    assert controller.cursor == 6  # starts in the middle: row 1, column 2
    for _ in range(5):
        controller.key("right")
    assert controller.cursor == 7
    for _ in range(5):
        controller.key("down")
    assert controller.cursor == 11
    controller.key("enter")
    assert board(controller) == "..../..../...X"
    assert controller.view().hover is None  # a taken cell is not offered
    controller.key("left")
    assert controller.view().hover == 10 and controller.view().cursor == 10


def test_digits_beyond_the_board() -> None:
    controller, _ = make(opponent="person", first="me", rows=2, cols=2, k=2)
    controller.key("7")
    assert controller.view().status.startswith("There is no cell 7: type a number from 1 to 4 or a column a-b")


def test_record_errors_are_shown_and_play_goes_on(tmp_path: Path) -> None:
    store = open_store(tmp_path / "s.db")

    def broken(*args: object, **kwargs: object) -> object:
        from noughts.store import StoreError

        raise StoreError("The game could not be saved to s.db (disk I/O error). The scores are unchanged.")

    store.record = broken  # type: ignore[method-assign,assignment]
    controller, _ = make(opponent="person", first="me", store=store)
    for cell in (0, 1, 3, 4, 6):
        controller.play_cell(cell)
    assert controller.view().status.endswith("could not be saved to s.db (disk I/O error). The scores are unchanged.")
    controller.press("again")
    assert controller.view().screen == "game" and board(controller) == ".../.../..."
    store.close()


def test_a_disabled_store_says_so_and_records_nothing() -> None:
    store = Store.disabled("Scores and history are off: the folder cannot be written. The game still plays.")
    controller, _ = make(opponent="person", first="me", store=store)
    assert controller.view().status.startswith("Scores and history are off")
    assert controller.view().scores == "Scores are off (see the note above)."
    for cell in (0, 1, 3, 4, 6):
        controller.play_cell(cell)
    assert "Saved" not in controller.view().status


def test_high_scores_follow_the_robot_rules(tmp_path: Path) -> None:
    store = open_store(tmp_path / "s.db")
    controller, worker = make(opponent="hard", first="me", store=store, seed=5)
    rng = random.Random(5)
    while not controller.over:
        assert controller.game is not None
        controller.play_cell(rng.choice(controller.game.board.legal_moves))
        worker.answer(controller)
    assert controller.game is not None and controller.game.result != "X"
    assert "Your run is back to 0; hard high score 0." in controller.view().status
    assert store.count_games() == 1
    store.close()


def test_the_view_is_plain_data() -> None:
    controller, _ = make(opponent="person", first="me")
    view = controller.view()
    assert isinstance(view, ViewState)
    with pytest.raises(AttributeError):
        view.status = "changed"  # type: ignore[misc]
    assert isinstance(game_layout(640, 760, 3, 3), GameLayout)


# defects, each pinned ---------------------------------------------------------------------------
def test_choosing_two_people_in_the_menu_after_a_game_shows_the_start_screen() -> None:
    controller, worker = make(opponent="parsons", first="me")
    controller.play_cell(0)
    worker.answer(controller)
    controller.press("menu")
    controller.activate(("opponent", "person"))  # crashed building the tally line (IndexError)
    view = controller.view()
    assert view.screen == "start" and [c.key for c in view.opponents if c.selected] == ["person"]
    controller.key("down")  # and round again with the keys: person, then the first opponent
    controller.key("up")
    assert [c.key for c in controller.view().opponents if c.selected] == ["person"]
    worker.answer(controller)  # which opponents can play this board
    controller.press("play")
    view = controller.view()
    assert view.screen == "game" and "Player 2" in view.header


def test_resume_goes_back_to_the_same_game_against_the_same_opponent() -> None:
    controller, worker = make(opponent="easy", first="me", seed=2)
    controller.play_cell(4)
    worker.answer(controller)
    before = board(controller)
    header = controller.view().header
    controller.press("menu")
    controller.activate(("opponent", "hard"))
    controller.press("resume")
    view = controller.view()
    assert view.screen == "game" and board(controller) == before
    assert view.header == header and "Hard" not in view.header
    assert controller.game is not None
    controller.play_cell(controller.game.board.legal_moves[0])
    worker.answer(controller)
    assert controller.view().header == header and controller.game.board.ply == 4


def test_the_thinking_line_shows_whenever_the_computer_works() -> None:
    store = Store.disabled("Scores and history are off: the folder cannot be written. The game still plays.")
    controller, worker = make(opponent="parsons", first="computer", store=store)
    wait(controller, THINKING_AFTER)
    assert worker.jobs and "is thinking…" in controller.view().status  # the notice hid it
    worker.answer(controller)
    controller.play_cell(0)
    wait(controller, THINKING_AFTER)
    assert worker.jobs and "is thinking…" in controller.view().status
    controller.play_cell(8)  # not your turn: said, and the thinking still shows
    assert "is thinking…" in controller.view().status
    controller.press("hint")
    assert "is thinking…" in controller.view().status
    controller.press("menu")  # the computer works on: the start screen says so too
    assert controller.view().notes.startswith("Centre first is thinking…")
    worker.answer(controller)  # the computer's move, and which opponents can play this board
    assert "thinking" not in controller.view().notes
    controller.press("play")  # a new game over the unfinished one: the computer starts it
    assert worker.jobs and controller.view().screen == "game"
    assert controller.view().status.startswith("The unfinished game does not count: a new game begins.")
    wait(controller, THINKING_AFTER)
    assert "is thinking…" in controller.view().status
    assert controller.view().thinking


def test_the_start_screens_choices_shape_only_the_next_new_game() -> None:
    controller, worker = make(opponent="easy", first="me", seed=4)
    controller.play_cell(4)
    worker.answer(controller)
    controller.press("menu")
    worker.answer(controller)
    controller.choose_opponent("person")
    controller.choose_side("computer")
    controller.press("resume")  # back to the game as it was; the menu's choices are dropped with it
    assert controller.match is not None and controller.match.opponent == "easy"
    controller.press("menu")
    view = controller.view()
    assert [c.key for c in view.opponents if c.selected] == ["easy"]
    assert [c.key for c in view.sides if c.selected] == ["me"]
    controller.choose_opponent("person")
    controller.choose_side("computer")
    controller.press("play")  # New game: now they apply
    assert controller.view().status == "The unfinished game does not count: a new game begins. Player 2 (X) to move."
    assert controller.view().header == "ann (O) vs Player 2 (X)"


def test_loser_starts() -> None:
    controller, _ = make(opponent="person", first="loser", names=["Ann", "Bob"])
    assert controller.view().header == "Ann (X) vs Bob (O)"
    for cell in (0, 1, 3, 4, 6):  # Ann (X) wins
        controller.play_cell(cell)
    assert controller.view().banner == "Ann wins"
    controller.press("again")
    assert controller.view().header == "Ann (O) vs Bob (X)"  # Bob lost, Bob starts


def test_opponents_that_cannot_play_the_board_are_marked_and_refused_with_the_reason() -> None:
    controller, worker = make(rows=4, cols=4)
    controller.choose_opponent("parsons")
    controller.press("play")  # the check is under way: Play waits for it
    assert controller.view().problem == "Checking which opponents can play this board…"
    worker.answer(controller)
    view = controller.view()
    assert view.screen == "start"
    assert view.problem.startswith("Centre first cannot play a 4×4 board with 4 in a row: "
                                   "it only plays 3×3 with 3 in a row. Opponents that can: ")
    assert view.status == view.problem
    marked = {c.key for c in view.opponents if not c.enabled}
    # the 3×3-only players; (on a busy machine the solver's one-second test may leave out more)
    assert {"parsons", "mdttt", "newell-simon", "simple-rules"} <= marked
    assert not marked & {"easy", "random", "arduino", "minimax", "person"}
    controller.choose_opponent("mdttt")
    view = controller.view()
    assert view.problem == "" and "It cannot play this board: it only plays 3×3" in view.description
    controller.choose_opponent("easy")
    controller.press("play")
    assert controller.view().screen == "game"


def test_the_solved_players_are_marked_on_a_board_too_big_to_solve() -> None:
    controller, worker = make(rows=15, cols=15)
    worker.answer(controller)
    marked = {c.key for c in controller.view().opponents if not c.enabled}
    assert {"perfect", "medium", "parsons"} <= marked and not {"easy", "person", "hard", "strong"} & marked
    controller.choose_opponent("medium")
    controller.press("play")
    view = controller.view()
    assert view.screen == "start" and view.problem.startswith("Medium cannot play a 15×15 board with 5 in a row")
    assert "Opponents that can: easy" in view.problem


def test_an_opponent_given_that_cannot_play_opens_on_the_start_screen_saying_why() -> None:
    controller, worker = make(opponent="parsons", first="me", rows=4, cols=4)
    view = controller.view()
    assert view.screen == "start" and view.problem.startswith("Centre first cannot play a 4×4 board")
    worker.answer(controller)
    assert not next(c for c in controller.view().opponents if c.key == "parsons").enabled


def test_no_color_reaches_the_view() -> None:
    controller, _ = make(opponent="person", first="me", environ={"USER": "ann", "NO_COLOR": "1"})
    assert controller.view().colour is False
    controller, _ = make(opponent="person", first="me")
    assert controller.view().colour is True


def test_the_desktop_imports_no_other_front_end() -> None:
    import ast

    folder = Path(__file__).resolve().parent.parent / "src" / "noughts" / "desktop"
    others = ("noughts.terminal", "noughts.web", "noughts.hardware")
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                assert not name.startswith(others), f"{path.name} imports {name}"


# issue 28: one vocabulary, one rulebook, no silent waits ----------------------------------------
def test_who_starts_and_the_opponents_are_labelled_in_the_shared_words() -> None:
    from noughts import text
    from noughts.players import names

    controller, worker = make(names=["Ann", "Bob"])
    worker.answer(controller)
    view = controller.view()
    assert [(c.key, c.label) for c in view.sides] == [(rule, label) for rule, label, _ in text.first_choices()]
    assert [c.label for c in view.opponents] == [text.opponent_label(n) for n in [*names(), "person"]]
    assert view.opponents[-1].label == text.PERSON_LABEL == "Another person"
    controller.choose_opponent("person")  # two people: the labels name them
    assert [c.label for c in controller.view().sides][:2] == ["Ann first", "Bob first"]
    assert [c.label for c in controller.view().sides][2:] == ["Take turns", "Loser starts", "Toss a coin"]
    assert controller.view().side_heading == text.WINDOW_WORDS["who_starts"]


def test_the_default_opponent_is_the_boards_own() -> None:
    from noughts.players import default_for

    controller, worker = make(rows=15, cols=15)
    worker.answer(controller)  # which opponents can play it, and the default, worked out off the loop
    assert [c.key for c in controller.view().opponents if c.selected] == [default_for(Board(15, 15))] == ["arduino"]
    controller.press("play")  # medium cannot play 15×15: Play used to be refused
    assert controller.view().screen == "game" and controller.match is not None
    assert controller.match.opponent == "arduino"
    controller, worker = make()
    worker.answer(controller)
    assert [c.key for c in controller.view().opponents if c.selected] == [default_for(Board())] == ["medium"]


def test_a_new_board_the_chosen_opponent_cannot_play_falls_back_to_the_boards_default() -> None:
    from noughts.players import default_for

    controller, worker = make()
    worker.answer(controller)
    controller.choose_opponent("parsons")  # a 3×3-only player
    for _ in range(4):
        controller.step_board("rows+")
        controller.step_board("cols+")
    worker.answer(controller)
    shown = controller.view()
    assert (shown.board.rows, shown.board.cols, shown.board.k) == (7, 7, 5)
    assert [c.key for c in shown.opponents if c.selected] == [default_for(Board(7, 7, 5))] == ["arduino"]
    assert shown.problem == "" and "cannot play" not in shown.description
    controller.choose_opponent("hard")  # one that can play the next board is kept
    controller.step_board("rows-")
    worker.answer(controller)
    assert [c.key for c in controller.view().opponents if c.selected] == ["hard"]
    controller.press("play")
    assert controller.view().screen == "game"


def test_the_board_has_its_coordinates_round_it_at_every_size() -> None:
    from noughts.desktop.layout import LABEL_BAND

    for size in SIZES:
        for rows, cols in [(3, 3), (15, 15), (26, 26), (4, 7)]:
            layout = game_layout(*size, rows, cols)
            board = layout.board
            assert board.band >= LABEL_BAND[0]  # legible on 26×26 too
            letters = [board.column_label(c) for c in range(cols)]
            numbers = [board.row_label(r) for r in range(rows)]
            for col, box in enumerate(letters):  # above its column, below the header
                assert box.bottom == board.box.y and box.x == board.cell_box(col).x and box.w == board.cell
                assert box.y >= layout.header.bottom
            for row, box in enumerate(numbers):  # beside its row, inside the window
                assert box.right == board.box.x and box.y == board.cell_box(row * cols).y and box.x >= 0
            assert board.box.right + board.band <= size[0]  # the board stays centred
    small, large = game_layout(640, 760, 15, 15).board, game_layout(1600, 1900, 15, 15).board
    assert large.band > small.band  # the labels grow with the window


def test_typed_cell_names_play_on_a_big_board() -> None:
    from noughts import text

    controller, _ = make(opponent="person", first="me", rows=15, cols=15)
    for key in "c4":
        controller.key(key)
    assert controller.view().status == text.window_typing("c4")
    controller.key("enter")
    assert controller.board[controller.board.parse_cell("c4")] == "X"
    for key in ["h", "1", "5", "backspace", "2"]:  # h names a column here: it types; Backspace edits
        controller.key(key)
    assert controller.view().status == text.window_typing("h12")
    controller.key("enter")
    assert controller.board[controller.board.parse_cell("h12")] == "O"
    for key in ["1", "2", "escape"]:  # Esc clears what is typed, and stays on the game
        controller.key(key)
    assert controller.typed == "" and controller.view().screen == "game"
    for key in ["1", "2", "enter"]:  # a cell's number works too
        controller.key(key)
    assert controller.board[11] == "X"
    for key in ["z", "9", "enter"]:  # a bad name says why, in the board's words
        controller.key(key)
    with pytest.raises(NoughtsError) as why:
        Board(15, 15).parse_cell("z9")
    assert controller.view().status.startswith(str(why.value))
    controller.key("c")
    controller.key("4")
    controller.key("enter")
    assert controller.view().status.startswith("c4 is taken by X: choose an empty square.")
    controller.key("u")  # not a column of this board: still undo
    assert controller.board[11] is None


def test_digits_play_at_once_on_three_by_three_and_letters_type_a_name() -> None:
    controller, _ = make(opponent="person", first="me")
    controller.key("5")
    assert board(controller) == ".../.X./..."
    controller.key("a")
    controller.key("3")
    assert board(controller) == ".../.X./..."  # a name waits for Enter
    controller.key("enter")
    assert board(controller) == ".../.X./O.."
    controller.key("h")  # h is no column of 3×3: the hint shortcut
    assert controller.view().status.startswith("Working out a hint…")


def test_after_a_new_game_the_status_says_whose_turn_it_is() -> None:
    from noughts import text

    controller, worker = make(opponent="parsons", first="me")
    controller.play_cell(0)
    worker.answer(controller)
    controller.press("menu")
    worker.answer(controller)
    controller.choose_side("computer")
    controller.press("play")
    assert controller.view().status == f"{text.NEW_GAME_ABANDONS} Centre first (X) to move."
    worker.answer(controller)
    controller.play_cell(0)
    worker.answer(controller)
    controller.press("menu")
    controller.choose_side("me")
    controller.press("play")
    assert controller.view().status == f"{text.NEW_GAME_ABANDONS} Your turn (X)."


def test_two_people_type_their_names_on_the_start_screen(tmp_path: Path) -> None:
    store = open_store(tmp_path / "s.db")
    controller, worker = make(store=store)
    worker.answer(controller)
    controller.activate(("opponent", "person"))
    view = controller.view()
    assert view.names == ("ann", "Player 2") and view.name_focus is None  # the login name, then Player 2
    controller.activate(("name", "1"))
    for _ in range(8):
        controller.key("backspace")
    controller.type_text("Bob")
    controller.key("left")  # arrows do not change the choices while a name is typed
    assert controller.view().names == ("ann", "Bob") and controller.view().name_focus == 1
    controller.key("tab")
    controller.key("backspace")
    controller.key("backspace")
    controller.key("backspace")
    controller.type_text("Ann\x07")  # control characters are dropped
    assert controller.view().names == ("Ann", "Bob")
    assert [c.label for c in controller.view().sides][:2] == ["Ann first", "Bob first"]
    controller.key("enter")
    view = controller.view()
    assert view.screen == "game" and view.header == "Ann (X) vs Bob (O)"
    for cell in (0, 1, 3, 4, 6):
        controller.play_cell(cell)
    people = store.scores().people
    assert (people["Ann"].wins, people["Bob"].losses) == (1, 1)
    store.close()


def test_names_are_checked_before_the_game_starts() -> None:
    controller, worker = make(opponent="person")
    worker.answer(controller)
    controller.key("tab")  # Tab goes to the first name
    assert controller.view().name_focus == 0
    controller.key("tab")
    for _ in range(8):
        controller.key("backspace")
    controller.key("enter")
    assert controller.view().screen == "start"
    assert controller.view().problem == "The second person's name cannot be empty."
    controller.activate(("name", "1"))
    controller.type_text("  ANN ")
    controller.press("play")
    assert controller.view().problem == "The two people need different names."
    controller.activate(("name", "1"))
    controller.type_text("x" * 60)  # a field holds at most a name's length
    assert len(controller.names[1]) == 40
    controller.key("escape")  # leaves the field, not the screen
    assert controller.view().name_focus is None and controller.view().screen == "start"


def test_a_best_of_match_shows_its_score_and_its_end() -> None:
    from noughts import text

    controller, _ = make(opponent="person", first="me", best_of=3, names=["Ann", "Bob"])
    assert controller.view().tally == "Match, best of 3, game 1: Ann: 0 · Bob: 0 · draws: 0"
    assert [b.label for b in controller.view().buttons][-1] == text.WINDOW_WORDS["next_game"]
    for cell in (0, 1, 3, 4, 6):  # Ann wins game 1
        controller.play_cell(cell)
    assert controller.view().tally == "Match, best of 3, game 1: Ann: 1 · Bob: 0 · draws: 0"
    assert "the match" not in controller.view().status
    controller.press("again")
    for cell in (0, 1, 3, 4, 6):  # Ann (X again: she starts every game) wins game 2, and the match
        controller.play_cell(cell)
    view = controller.view()
    assert text.match_sentence("Ann", "Bob", [2, 0, 0], 3) in view.status == (
        "Ann (X) wins along the left column a1–a3. Ann wins the match 2–0 (best of 3).")
    assert view.tally == "Match, best of 3, game 2: Ann: 2 · Bob: 0 · draws: 0"
    assert [b.label for b in view.buttons][-1] == text.WINDOW_WORDS["new_match"]
    controller.press("again")  # a new match: its score starts again
    assert controller.view().tally == "Match, best of 3, game 1: Ann: 0 · Bob: 0 · draws: 0"


def test_thinking_shows_only_after_the_computer_has_worked_a_moment() -> None:
    controller, worker = make(opponent="parsons", first="me")
    controller.play_cell(0)
    assert controller.thinking and controller.view().status == ""  # a quick reply needs no word
    assert not controller.view().thinking
    assert controller.seconds_until_change() == pytest.approx(THINKING_AFTER)
    wait(controller, THINKING_AFTER / 2)
    assert controller.view().status == "" and controller.seconds_until_change() == pytest.approx(THINKING_AFTER / 2,
                                                                                                 abs=0.01)
    wait(controller, THINKING_AFTER / 2)
    assert controller.view().status == "Centre first is thinking…" and controller.view().thinking
    assert controller.seconds_until_change() is None
    worker.answer(controller)
    assert "thinking" not in controller.view().status and controller.seconds_until_change() is None


def test_move_errors_are_shown_by_their_type() -> None:
    from noughts import text
    from noughts.errors import GameOver

    controller, worker = make(opponent="parsons", first="me")
    controller.play_cell(0)
    controller.play_cell(8)  # the computer is working out its move
    assert controller.view().status == text.wait_for("Centre first")
    worker.answer(controller)
    assert controller.match is not None

    def over(cell: object, seat: object = None) -> None:
        raise GameOver("the match says this game is over")

    controller.match.play = over  # type: ignore[assignment,method-assign]
    controller.play_cell(8)  # the window does not look at the board: the error's type says it
    assert controller.view().status == f"{text.WINDOW_WORDS['game_over']} Your turn (X)."


def test_undo_and_hint_follow_the_matchs_one_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    from noughts.match import Match

    controller, worker = make(opponent="person", first="me")
    controller.play_cell(0)
    buttons = {b.name: b.enabled for b in controller.view().buttons}
    assert buttons["undo"] and buttons["hint"]
    monkeypatch.setattr(Match, "hint_refusal", lambda self, seat=None: "No hints in this match.")
    monkeypatch.setattr(Match, "undo_refusal", lambda self, seat=None: "No taking back in this match.")
    buttons = {b.name: b.enabled for b in controller.view().buttons}
    assert not buttons["undo"] and not buttons["hint"]
    controller.press("hint")
    assert controller.view().status.startswith("No hints in this match.") and not worker.jobs
    controller.press("undo")
    assert controller.view().status.startswith("No taking back in this match.")
    assert board(controller) == "X../.../..."
