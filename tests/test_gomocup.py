"""The Gomocup brain (noughts gomocup) and our manager: the protocol, coordinates, time limits, bad input."""

from __future__ import annotations

import io
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from child_signals import default_sigint
from noughts import Board, players
from noughts.gomocup import FAST_SECONDS, MARGIN_SECONDS, SHARE, Brain, run
from noughts.gomocup_manager import GameResult, play_game, play_match

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
BRAIN = [sys.executable, "-m", "noughts", "gomocup"]
COORDINATES = re.compile(r"\d+,\d+")


def started(size: str = "START 3", player: str = "minimax", **options: object) -> Brain:
    brain = Brain(player, **options)  # type: ignore[arg-type]
    assert brain.feed(size) == ["OK"]
    return brain


def board_lines(board: Board, own: str) -> list[str]:
    """BOARD … DONE for a noughts position, from the side ``own``'s point of view (x = column, y = row)."""
    lines = ["BOARD"]
    for cell, mark in enumerate(board.cells):
        if mark is not None:
            y, x = divmod(cell, board.cols)
            lines.append(f"{x},{y},{1 if mark == own else 2}")
    return [*lines, "DONE"]


def feed_all(brain: Brain, lines: list[str]) -> list[str]:
    replies: list[str] = []
    for line in lines:
        replies += brain.feed(line)
    return replies


def cell_of(reply: str, cols: int) -> int:
    assert COORDINATES.fullmatch(reply), reply
    x, y = map(int, reply.split(","))
    return y * cols + x


def all_positions_to_move() -> list[Board]:
    seen: dict[Board, None] = {}
    frontier = [Board()]
    while frontier:
        board = frontier.pop()
        if board in seen:
            continue
        seen[board] = None
        if not board.is_over:
            frontier.extend(board.play(cell) for cell in board.legal_moves)
    return [board for board in seen if not board.is_over]


# the protocol, in-process ------------------------------------------------------------------

def test_every_3x3_position_through_board_gets_a_perfect_move() -> None:
    """BOARD's own/opponent fields become X and O by their counts, and x,y is column,row: over every
    position of 3×3 with a move to make, the reply is one of the perfect player's best moves."""
    positions = all_positions_to_move()
    assert len(positions) == 4520
    brain = started(player="perfect", seed=1)
    perfect = players.get("perfect")
    for board in positions:
        reply = feed_all(brain, ["RESTART", *board_lines(board, own=board.turn or "X")])
        assert reply[0] == "OK" and len(reply) == 2, (board, reply)
        assert cell_of(reply[1], 3) in perfect.candidates(board), (board, reply)  # type: ignore[attr-defined]


def test_a_game_by_begin_and_turn_on_a_rectangular_board() -> None:
    """RECTSTART is width,height: x runs along a row. Arduino rules win at once when they can."""
    brain = started("RECTSTART 5,3", player="arduino", seed=2, k=3)
    assert Board(3, 5, 3).k == 3
    # own stones at (0,2) and (1,2): the only winning cell is (2,2), bottom row, middle column
    replies = feed_all(brain, ["BOARD", "0,2,1", "1,2,1", "4,0,2", "4,1,2", "DONE"])
    assert replies == ["2,2"]
    assert feed_all(brain, ["RESTART", "BEGIN"])[0] == "OK"
    own_first = brain.own
    assert own_first.bit_count() == 1
    reply = brain.feed("TURN 4,2")
    assert COORDINATES.fullmatch(reply[0])
    assert brain.opponent == 1 << (2 * 5 + 4) and brain.own.bit_count() == 2


def test_a_whole_3x3_game_between_two_brains_in_process() -> None:
    first, second = started(player="perfect", seed=3), started(player="minimax")
    move = first.feed("BEGIN")[0]
    board = Board().play(cell_of(move, 3))
    mover = second
    while not board.is_over:
        reply = mover.feed(f"TURN {move}")
        assert len(reply) == 1
        move = reply[0]
        board = board.play(cell_of(move, 3))
        mover = first if mover is second else second
    assert board.is_draw  # two players that never lose
    assert mover.feed(f"TURN {move}")[0].startswith("ERROR the game is over: the board is full")


def test_takeback_and_play() -> None:
    brain = started(player="minimax")
    assert brain.feed("BEGIN") == ["0,0"]
    assert brain.feed("TAKEBACK 0,0") == ["OK"] and brain.own == 0
    assert brain.feed("TAKEBACK 0,0") == ["ERROR there is no stone at 0,0 to take back"]
    assert brain.feed("PLAY 2,1") == ["2,1"] and brain.own == 1 << 5
    assert brain.feed("PLAY 0,0")[0].startswith("ERROR it is not noughts' move")


def test_about_is_keyword_equals_quoted_value() -> None:
    from noughts import __version__

    (about,) = Brain().feed("ABOUT")
    fields = dict(re.findall(r'(\w+)="([^"]*)"', about))
    assert fields["name"] == "noughts" and fields["version"] == __version__ and fields["author"]
    assert about.count("=") == len(fields)


def test_the_game_ends_at_k_in_a_row_whoever_made_it() -> None:
    brain = started(player="arduino", seed=1)
    assert feed_all(brain, ["BOARD", "0,0,1", "1,0,1", "0,1,2", "1,1,2", "DONE"]) == ["2,0"]
    assert brain.feed("TURN 2,1") == ["ERROR the game is over: noughts has 3 in a row (0,0 1,0 2,0)"]
    assert feed_all(brain, ["BOARD", "0,0,2", "1,0,2", "2,0,2", "0,1,1", "1,1,1", "DONE"]) == [
        "ERROR the game is over: the opponent has 3 in a row (0,0 1,0 2,0)"]


# the time limits ---------------------------------------------------------------------------

class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(("infos", "free_cells", "seconds"), [
    ([], 9, None),  # no limits: the player's own budget
    (["INFO timeout_turn 1000"], 9, 1.0 * SHARE - MARGIN_SECONDS),
    (["INFO timeout_turn 0"], 9, FAST_SECONDS - MARGIN_SECONDS),
    (["INFO timeout_turn 30000", "INFO time_left 10000"], 9, 10.0 * SHARE / 5 - MARGIN_SECONDS),
    (["INFO timeout_turn 30000", "INFO time_left 10000"], 225, 10.0 * SHARE / 20 - MARGIN_SECONDS),
    (["INFO timeout_turn 300", "INFO time_left 2147483647"], 225, 0.3 * SHARE - MARGIN_SECONDS),
    (["INFO timeout_match 60000"], 225, 60.0 * SHARE / 20 - MARGIN_SECONDS),
    (["INFO timeout_turn 5000", "INFO time_left -20"], 225, 0.0),  # out of time: the quickest move
])
def test_the_budget_comes_from_info(infos: list[str], free_cells: int, seconds: float | None) -> None:
    clock = FakeClock()
    brain = Brain("minimax", clock=clock)
    size = 3 if free_cells == 9 else 15
    assert brain.feed(f"START {size}") == ["OK"]
    for line in infos:
        assert brain.feed(line) == []
    board = Board(size, size)
    budget = brain._budget(clock.now, board)
    if seconds is None:
        assert budget is None
        return
    assert budget is not None and budget.nodes is None
    assert budget.seconds == pytest.approx(max(0.0, seconds))
    clock.now += 0.05  # time spent reading the command counts
    later = brain._budget(clock.now - 0.05, board)
    assert later is not None and later.seconds == pytest.approx(max(0.0, seconds - 0.05))


def test_nodes_cap_every_move() -> None:
    brain = started("START 15", player="minimax", nodes=500)
    brain.feed("INFO timeout_turn 10000")
    budget = brain._budget(brain.clock(), Board(15, 15))
    assert budget is not None and budget.nodes == 500


def test_a_move_keeps_to_a_short_turn_limit_on_15x15() -> None:
    """Measured in CPU time, which a busy machine does not stretch (the search stops by the wall clock,
    so it can only take less CPU than that)."""
    brain = started("START 15", player="minimax")
    brain.feed("INFO timeout_turn 150")
    rng = random.Random(5)
    assert brain.feed("BEGIN") == ["7,7"]
    slowest = 0.0
    for _ in range(4):
        free = [c for c in range(225) if not (brain.own | brain.opponent) >> c & 1]
        cell = rng.choice(free)
        began = time.process_time()
        reply = brain.feed(f"TURN {cell % 15},{cell // 15}")
        slowest = max(slowest, time.process_time() - began)
        assert COORDINATES.fullmatch(reply[-1]), reply
    assert slowest < 0.15  # without the limit minimax searches 100,000 positions, about half a second


def test_a_player_that_gives_up_hands_over_to_minimax_in_time(monkeypatch: pytest.MonkeyPatch) -> None:
    from noughts.errors import BudgetExceeded

    class GivesUp:
        name = "perfect"

        def choose(self, board: Board) -> int:
            time.sleep(0.05)
            raise BudgetExceeded("the solver gave up")

    brain = started("START 15")
    monkeypatch.setattr(players, "get", lambda *args, **kwargs: GivesUp())
    brain.feed("INFO timeout_turn 200")
    assert brain.feed("BEGIN")[-1] == "7,7"
    began = time.monotonic()
    replies = brain.feed("TURN 0,0")
    assert time.monotonic() - began < 0.2
    assert replies[0] == "MESSAGE Minimax gave no move (the solver gave up); minimax chose " + replies[1]
    assert COORDINATES.fullmatch(replies[1]) and replies[1] != "0,0"


# bad input ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("lines", "expected"), [
    (["HELLO"], "UNKNOWN 'HELLO' is not a command of the Gomocup protocol"),
    (["BEGIN"], "ERROR BEGIN before START: send START [size] or RECTSTART [width],[height] first"),
    (["TURN 1,1"], "ERROR TURN before START"),
    (["START"], "ERROR START takes the board's size, like START 15, not ''"),
    (["START -5"], "ERROR START takes the board's size"),
    (["START 27"], "ERROR noughts plays boards of 1 to 26 cells a side, not 27×27"),
    (["START 0"], "ERROR noughts plays boards of 1 to 26 cells a side, not 0×0"),
    (["START 99999999999999"], "ERROR START takes the board's size"),
    (["RECTSTART 20"], "ERROR RECTSTART takes width,height"),
    (["START 15", "TURN 15,0"], "ERROR 15,0 is off the 15×15 board (x runs from 0 to 14, y from 0 to 14)"),
    (["START 15", "TURN a,b"], "ERROR TURN takes x,y, like TURN 7,7, not 'a,b'"),
    (["START 15", "TURN -1,3"], "ERROR TURN takes x,y"),
    (["START 15", "INFO timeout_turn 10", "TURN 7,7", "TURN 7,7"], "ERROR 7,7 is already taken"),
    (["START 15", "BOARD", "1,1,1", "1,1,2", "DONE"], "ERROR BOARD line 2: 1,1 is given twice; the board is unchanged"),
    (["START 15", "BOARD", "1,1", "DONE"], "ERROR BOARD line 1: '1,1' is not x,y,field (or DONE)"),
    (["START 15", "BOARD", "1,1,7", "DONE"], "ERROR BOARD line 1: the field is 1 (own stone), 2 (opponent's) or 3"),
    (["START 15", "BOARD", "1,1,3", "DONE"], "ERROR BOARD line 1: field 3"),
    (["START 15", "BOARD", "20,1,1", "DONE"], "ERROR BOARD line 1: 20,1 is off the 15×15 board"),
    (["START 15", "BOARD", "1,1,1", "2,2,1", "DONE"], "ERROR it is not noughts' move: it has 2 stones and the"),
    (["START 15", "SWAP2BOARD", "7,7", "DONE"], "UNKNOWN SWAP2BOARD: noughts does not play the swap2 opening"),
    (["START 15", "BEGIN", "BEGIN"], "ERROR BEGIN opens a game on an empty board, but 1 stones are on it"),
    (["RESTART"], "ERROR RESTART before START"),
    (["START 3", "INFO rule 4", "BEGIN"], "ERROR noughts does not know renju's forbidden moves for the first player"),
    (["START 3", "INFO k 4"], None),  # an unknown INFO is ignored, as the protocol says
])
def test_bad_commands_get_one_error_line(lines: list[str], expected: str | None) -> None:
    brain = Brain("minimax")
    replies = feed_all(brain, lines[:-1])
    last = brain.feed(lines[-1])
    if expected is None:
        assert last == []
        return
    assert len(last) == 1 and last[0].startswith(expected), (replies, last)


def test_board_interrupted_by_a_command_is_an_error_and_the_command_is_answered() -> None:
    brain = started("START 15")
    assert brain.feed("BOARD") == [] and brain.feed("7,7,2") == []
    assert brain.feed("ABOUT")[0] == "ERROR BOARD ended without DONE; the board is unchanged"
    assert brain.feed("DONE") == ["UNKNOWN 'DONE' is not a command of the Gomocup protocol"]
    assert brain.opponent == 0


def test_bad_info_is_told_at_the_next_command_and_rules_once_a_game() -> None:
    brain = started("START 3", player="minimax")
    assert brain.feed("INFO timeout_turn soon") == []
    assert brain.feed("INFO rule 9") == []  # exactly five + caro
    replies = brain.feed("BEGIN")
    assert replies == ["MESSAGE ignored INFO timeout_turn 'soon': not a whole number of milliseconds",
                       "MESSAGE INFO rule 1: exactly five in a row wins (noughts counts five or more)",
                       "MESSAGE INFO rule 8: caro (noughts counts a five even when both its ends are blocked)",
                       "0,0"]
    assert brain.timeout_turn is None
    assert brain.feed("TURN 1,1") == ["1,0"]  # told once a game
    assert brain.feed("RESTART") == ["OK"] and brain.feed("BEGIN")[0].startswith("MESSAGE INFO rule 1")


def test_a_player_that_cannot_play_the_board_refuses_start() -> None:
    assert Brain("parsons").feed("START 15") == [
        "ERROR Centre first cannot play a 15×15 board with 5 in a row: it only plays 3×3 with 3 in a row"]
    assert Brain(k=9).feed("START 5") == ["ERROR 9 in a row cannot fit on a 5×5 board"]


def test_end_stops_and_end_of_input_ends_quietly() -> None:
    out = io.StringIO()
    assert run(io.BytesIO(b"START 3\r\nBEGIN\r\nEND\r\nABOUT\r\n"), out, Brain("minimax")) == 0
    assert out.getvalue() == "OK\n0,0\n"
    out = io.StringIO()
    assert run(io.BytesIO(b"START 3\nBOARD\n1,1,2\n"), out, Brain()) == 0
    assert out.getvalue() == "OK\n"


def test_long_lines_and_bytes_that_are_not_utf8() -> None:
    out = io.StringIO()
    data = b"START 3\n" + b"7" * 100_000 + b"\n\xff\xfe BEGIN\n\n   \nbegin\n"
    assert run(io.BytesIO(data), out, Brain("minimax")) == 0
    assert out.getvalue().splitlines() == [
        "OK", "ERROR a line longer than 4096 bytes was skipped",
        "UNKNOWN '\ufffd\ufffd' is not a command of the Gomocup protocol", "0,0"]


REPLY = re.compile(r"(OK|\d+,\d+|(ERROR|UNKNOWN|MESSAGE) [^\r\n]+|name=\"noughts\".*)")


@settings(max_examples=80, deadline=None)
@given(st.lists(st.one_of(
    st.sampled_from(["START 3", "START 7", "RECTSTART 4,6", "BEGIN", "BOARD", "DONE", "RESTART", "END", "ABOUT",
                     "INFO timeout_turn 50", "INFO time_left 10", "INFO rule 3", "TAKEBACK 1,1", "SWAP2BOARD"]),
    st.builds(lambda c, x, y: f"{c} {x},{y}", st.sampled_from(["TURN", "PLAY", "TAKEBACK"]),
              st.integers(-2, 8), st.integers(-2, 8)),
    st.builds(lambda x, y, f: f"{x},{y},{f}", st.integers(0, 8), st.integers(0, 8), st.integers(0, 4)),
    st.text(max_size=30)), max_size=25))
def test_hostile_managers_get_protocol_lines_never_a_crash(lines: list[str]) -> None:
    brain = Brain("arduino", seed=0)
    for line in lines:
        for reply in brain.feed(line):
            assert REPLY.fullmatch(reply), (line, reply)
            assert "internal error" not in reply


# the command, as a process -----------------------------------------------------------------

def test_the_command_reads_crlf_and_answers_in_lf() -> None:
    done = subprocess.run([*BRAIN, "--player", "perfect"], input=b"START 3\r\nBOARD\r\n0,0,2\r\n1,0,2\r\n"
                          b"1,1,1\r\nDONE\r\nEND\r\n", capture_output=True, env=ENV, timeout=60, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"OK\n2,0\n", b"")


def test_ctrl_c_exits_130_without_a_word() -> None:
    process = subprocess.Popen(BRAIN, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=ENV, preexec_fn=default_sigint)
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(b"START 3\n")
    process.stdin.flush()
    assert process.stdout.readline() == b"OK\n"  # it is running and reading
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert (process.returncode, out, err) == (130, b"", b"")


def test_the_readme_example_is_true() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    example = readme[readme.index("$ printf 'START 15"):]
    command, *expected = example[:example.index("```")].strip().splitlines()
    given = command.split("'")[1].encode().decode("unicode_escape").encode()
    options = command.split("noughts gomocup")[1].split()
    done = subprocess.run([*BRAIN, *options], input=given, capture_output=True, env=ENV, timeout=60, check=False)
    assert done.stdout.decode().splitlines() == expected and len(expected) == 3


def test_an_unknown_player_is_a_one_line_error() -> None:
    done = subprocess.run([*BRAIN, "--player", "nobody"], capture_output=True, text=True, env=ENV, timeout=60,
                          stdin=subprocess.DEVNULL, check=False)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("noughts: there is no computer player called 'nobody'") and done.stderr.count(
        "\n") == 1


# our manager -------------------------------------------------------------------------------

def brain(*options: str) -> list[str]:
    return [*BRAIN, *options]


@pytest.fixture(scope="module")
def three_by_three() -> dict[str, GameResult]:
    return {
        "perfect-perfect": play_game(brain("--player", "perfect", "--seed", "1"),
                                     brain("--player", "perfect", "--seed", "2"), size=(3, 3), env=ENV),
        "minimax-easy": play_game(brain("--player", "minimax"), brain("--player", "easy", "--seed", "4"),
                                  size=(3, 3), timeout_turn=2000, env=ENV),
    }


def test_manager_plays_3x3_between_noughts_brains(three_by_three: dict[str, GameResult]) -> None:
    for result in three_by_three.values():
        board = Board()
        for x, y in result.moves:
            board = board.play(y * 3 + x)  # every move legal, in turn
        assert board.is_over
        assert (result.winner is None) == board.is_draw
        if board.winner is not None:
            assert result.winner == (0 if board.winner == "X" else 1) and result.reason == "three in a row"
        assert len(result.times) == len(result.moves)
    assert three_by_three["perfect-perfect"].winner is None
    assert three_by_three["perfect-perfect"].reason == "draw"
    assert three_by_three["minimax-easy"].winner in (0, None)  # minimax never loses on 3×3


def test_manager_plays_15x15_within_a_short_turn_limit() -> None:
    limit = 250
    result = play_game(brain("--player", "minimax"), brain("--player", "random", "--seed", "3"),
                       timeout_turn=limit, tolerance=2000, env=ENV)
    assert result.reason == "five in a row" and result.winner == 0, result
    minimax_times = sorted(seconds for who, seconds in result.times if who == 0)
    # INFO timeout_turn is honoured, not only tolerated: the middle move is within the limit even on a busy
    # machine (whose pauses the manager's clock counts), and the manager never had to step in.
    assert len(minimax_times) >= 3 and minimax_times[len(minimax_times) // 2] < limit / 1000


def test_manager_opening_goes_to_both_brains_as_board() -> None:
    result = play_game(brain("--player", "arduino", "--seed", "1", "--k", "3"),
                       brain("--player", "arduino", "--seed", "2", "--k", "3"),
                       size=(5, 4), k=3, opening=[(0, 0), (4, 3), (1, 0)], env=ENV)
    assert result.moves[:4] == [(0, 0), (4, 3), (1, 0), (2, 0)]  # the second brain blocks at once
    assert result.reason in ("three in a row", "draw")


FAKE = {  # brains that misbehave, in a few lines of Python
    "sleeper": "import sys,time\nfor line in sys.stdin:\n    if line.startswith('START'): print('OK', flush=True)\n"
               "    elif line.startswith(('BEGIN','TURN')): time.sleep(30)\n",
    "cheater": "import sys\nfor line in sys.stdin:\n    if line.startswith('START'): print('OK', flush=True)\n"
               "    elif line.startswith(('BEGIN','TURN')):\n"
               "        print('MESSAGE hmm', flush=True); print('0,0', flush=True)\n",
    "quitter": "import sys\nfor line in sys.stdin:\n    if line.startswith('START'): print('OK', flush=True)\n"
               "    elif line.startswith(('BEGIN','TURN')): sys.exit(3)\n",
}


def test_manager_kills_a_brain_that_overruns_its_turn() -> None:
    began = time.monotonic()
    result = play_game(brain("--player", "minimax"), [sys.executable, "-c", FAKE["sleeper"]], size=(15, 15),
                       timeout_turn=300, tolerance=200, env=ENV)
    assert time.monotonic() - began < 10
    assert (result.winner, result.reason, result.moves) == (0, "timeout", [(7, 7)])
    assert "gave no move within its time (300 ms + 200 ms tolerance)" in result.detail


def test_manager_forfeits_illegal_moves_and_brains_that_exit() -> None:
    cheat = play_game([sys.executable, "-c", FAKE["cheater"]], brain("--player", "minimax"), size=(15, 15),
                      timeout_turn=1000, env=ENV)
    assert (cheat.winner, cheat.reason, len(cheat.moves), cheat.moves[0]) == (1, "illegal move", 2, (0, 0))
    assert "the first brain answered '0,0', not a free cell" in cheat.detail.replace("brain 0", "the first brain")
    assert (0, "MESSAGE hmm") in cheat.messages
    quit_ = play_game([sys.executable, "-c", FAKE["quitter"]], brain(), size=(15, 15), env=ENV)
    assert (quit_.winner, quit_.reason) == (1, "exited")


def test_play_match_alternates_who_begins() -> None:
    results = play_match(brain("--player", "minimax"), brain("--player", "easy", "--seed", "7"), games=2,
                         size=(3, 3), env=ENV)
    assert results[0].moves[0] == (0, 0)  # minimax's opening: the lowest of equal cells
    x, y = results[1].moves[0]  # easy's opening in game 2; minimax answers it
    assert results[1].moves[1] == divmod(players.get("minimax").choose(Board().play(y * 3 + x)), 3)[::-1]
    assert all(r.winner in (0, None) for r in results)  # minimax never loses, and is the first brain in both
