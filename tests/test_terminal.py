"""`noughts play` and its score commands, driven as a person would: scripted input run through the
command in this process, the real process answered prompt by prompt through pipes, and a
pseudo-terminal where colour and Ctrl-C need one."""

from __future__ import annotations

import contextlib
import io
import os
import random
import re
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from child_signals import default_sigint
from noughts import Board, players
from noughts.cli import build_parser, main, quick_play_args
from noughts.text import MARK_ANSI, first_choices

PROMPT = "Your move (X): "
NEXT_GAME = "(q to stop). "  # the pause between the games of a match
PROMPT_ENDINGS = (b": ", b"] ", NEXT_GAME.encode())  # every prompt of the game ends so, and no other output does
RESULT = re.compile(r"^(?:You win along .*!|.* \([XO]\) wins along .*"
                    r"|It's a draw: the board is full and nobody has a line\.)$", re.M)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """The environment of every run: a database of this test's own, no colour settings, buffered output."""
    environ = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONUNBUFFERED", "NO_COLOR", "NOUGHTS_DB", "USER", "USERNAME", "LOGNAME")}
    environ["NOUGHTS_DB"] = str(tmp_path / "scores.db")
    return environ


def run_process(env: dict[str, str], *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    """`noughts ARGS` as a process of its own, all of ``stdin`` through a pipe."""
    result = subprocess.run([sys.executable, "-m", "noughts", *args], input=stdin, capture_output=True,
                            env=env, timeout=60)
    return subprocess.CompletedProcess(result.args, result.returncode, result.stdout.decode("utf-8", "replace"),
                                       result.stderr.decode("utf-8", "replace"))


def run(env: dict[str, str], *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    """`noughts ARGS` in this process, as run_process sees it: main() with this environment, ``stdin`` and
    stdout and stderr that are not terminals, the exit status of sys.exit(main()). Quicker than a process,
    which is kept for what needs one: prompts flushed as they come, Ctrl-C, end of input, a terminal."""
    saved_environ, saved_streams = dict(os.environ), (sys.stdin, sys.stdout, sys.stderr)
    out, err = (io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True) for _ in range(2))
    os.environ.clear()
    os.environ.update(env)
    sys.stdin, sys.stdout, sys.stderr = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"), out, err
    try:
        try:
            status = main(list(args))
        except SystemExit as exit_:  # argparse: --help, usage errors
            status = exit_.code if isinstance(exit_.code, int) else int(exit_.code is not None)
        out.flush()
        err.flush()
        output = [stream.buffer.getvalue().decode("utf-8", "replace") for stream in (out, err)]  # type: ignore[attr-defined]
    finally:
        os.environ.clear()
        os.environ.update(saved_environ)
        sys.stdin, sys.stdout, sys.stderr = saved_streams
    return subprocess.CompletedProcess(["noughts", *args], status, *output)


def read_until(fd: int, done: object, data: bytes = b"", timeout: float = 30) -> bytes:
    """Read from ``fd`` until ``done(data)`` holds (or the other end closes)."""
    deadline = time.monotonic() + timeout
    while not done(data):  # type: ignore[operator]
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        assert ready, f"timed out; got {data[-400:]!r}"
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # a pseudo-terminal whose child has exited
            break
        if not chunk:
            break
        data += chunk
    return data


class Player:
    """The game in a process of its own, answered prompt by prompt through pipes."""

    def __init__(self, env: dict[str, str], *args: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "noughts", "play", *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                     preexec_fn=default_sigint)
        self.transcript = ""

    def prompt(self) -> str:
        """The output up to and including the next prompt."""
        assert self.proc.stdout is not None
        data = read_until(self.proc.stdout.fileno(), lambda d: d.endswith(PROMPT_ENDINGS))
        text = data.decode("utf-8", "replace")
        self.transcript += text
        return text

    def send(self, line: str | bytes) -> str:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line if isinstance(line, bytes) else line.encode() + b"\n")
        self.proc.stdin.flush()
        return self.prompt()

    def close(self) -> tuple[int, str, str]:
        """End of input; the exit status, the rest of the output and stderr."""
        assert self.proc.stdin is not None and self.proc.stdout is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        rest = self.proc.stdout.read().decode()
        self.transcript += rest
        status = self.proc.wait(timeout=30)
        err = self.proc.stderr.read().decode()
        self.proc.stdout.close()
        self.proc.stderr.close()
        return status, rest, err

    def __enter__(self) -> Player:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


def last_board(text: str) -> Board:
    """The last 3×3 grid printed in ``text``, read back (brackets and stars stripped)."""
    rows: list[str] = []
    for line in text.splitlines():
        match = re.match(r"^ ([123])  (.*\|.*)$", line)
        if match:
            cells = [c.strip(" []*") for c in match.group(2).split("|")]
            row = "".join(c if c in ("X", "O") else "." for c in cells)
            rows = [row] if match.group(1) == "1" else [*rows, row]
    assert len(rows) == 3, text
    return Board.parse("/".join(rows))


def play_out(game: Player, text: str, me: players.base.Player) -> tuple[str, Board]:
    """Answer every move prompt with ``me``'s move until the game ends; the result line and final board."""
    while text.endswith(("(X): ", "(O): ")):
        board = last_board(text)
        assert board.turn == text[-4], text  # the prompt names the side to move
        text = game.send(board.cell_name(me.choose(board)))
    result = RESULT.findall(text)
    assert len(result) == 1, text
    return result[0], last_board(text)


def words(text: str) -> str:
    """``text`` with its lines joined: a sentence longer than 80 columns is wrapped on screen."""
    return " ".join(text.split())


def menu(text: str) -> list[tuple[str, str]]:
    """The last numbered menu in ``text``: (label, description) for each choice, in order."""
    choices: list[tuple[str, str]] = []
    for line in text.splitlines():
        choice = re.match(r"^ +(\d+)  (\S+(?: \S+)*)(?:  +(.*))?$", line)
        if choice and len(line) - len(line.lstrip()) < 6:
            if choice.group(1) == "1":
                choices = []
            choices.append((choice.group(2), choice.group(3) or ""))
        elif choices and line.startswith(" " * 8) and line.strip():  # a description wrapped to fit
            label, about = choices[-1]
            choices[-1] = (label, f"{about} {line.strip()}")
    return choices


def history(env: dict[str, str]) -> list[list[str]]:
    """`noughts history` as rows of fields (id, date, time, X, O, result, moves...)."""
    result = run(env, "history", "--limit", "100")
    assert result.returncode == 0 and result.stderr == "", result
    if result.stdout.startswith("No games recorded yet"):
        return []
    return [line.split() for line in result.stdout.splitlines()[1:] if not line.startswith("(")]


# whole games ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("difficulty", "first"), [("easy", "me"), ("medium", "computer"), ("hard", "me"),
                                                   ("hard", "computer")])
def test_a_whole_game_against_each_difficulty(env: dict[str, str], difficulty: str, first: str) -> None:
    # The person plays perfectly, so never loses; against hard, perfect play on both sides draws.
    me = players.get("perfect", random.Random(1))
    with Player(env, "--opponent", difficulty, "--first", first, "--seed", "3") as game:
        text = game.prompt()
        mark = "X" if first == "me" else "O"
        assert f"Your move ({mark}): " in text
        assert ("Computer move: " in text) == (first == "computer")
        result, board = play_out(game, text, me)
        assert board.is_over and board.winner != ("O" if mark == "X" else "X")
        if difficulty == "hard":
            assert result.startswith("It's a draw") and board.is_draw
        elif board.winner:
            assert board.winning_line is not None
            assert result.startswith("You win along") and board.cell_name(board.winning_line[0]) in result, result
        assert "Play again? [Y/n, m for the menu] " in game.transcript
        status, rest, err = game.close()
    assert (status, err) == (0, "") and rest.endswith("Goodbye.\n")
    out = game.transcript
    announced = re.findall(r"Computer move: (\w+)", out)
    computer_bits = board.o if mark == "X" else board.x
    assert sorted(board.parse_cell(c) for c in announced) == [c for c in range(9) if computer_bits >> c & 1]
    label = players.label(difficulty)
    assert f"Game 1: {'you are X and move first' if mark == 'X' else f'{label} is X'}" in out
    assert re.search(rf"This session: You: \d · {label}: \d · draws: \d\.", out)
    # the game is in the history, with its moves in order
    (row,) = history(env)
    assert row[0] == "1" and row[3 if mark == "O" else 4] == f"{label}*"  # * a computer player
    moves = row[row.index("won") + 1 if "won" in row else row.index("draw") + 1:]
    assert Board().play(moves[0]) and len(moves) == board.ply


@pytest.mark.parametrize("seed", range(6))
def test_hard_is_never_beaten_by_a_person_who_tries_cells_in_any_order(env: dict[str, str], seed: int) -> None:
    # Offer every cell in a shuffled order, again and again: taken cells are refused with a
    # message, so each turn the person plays the first free cell of the list.
    order = list(range(1, 10))
    random.Random(seed).shuffle(order)
    script = "".join(f"{cell}\n" for cell in order * 5).encode() + b"n\n"
    result = run(env, "play", "--opponent", "hard", "--first", "random", "--seed", str(seed), stdin=script)
    assert result.returncode == 0 and result.stderr == ""
    (line,) = RESULT.findall(result.stdout)
    mark = re.search(r"Your move \(([XO])\)", result.stdout)
    assert mark is not None
    assert line.startswith("It's a draw") or re.fullmatch(r"Hard \([XO]\) wins along .*\. You lose\.", line), line
    assert not line.startswith("You win")
    assert result.stdout.endswith("Goodbye.\n")
    assert len(history(env)) == 1


def test_cells_can_be_named_in_either_case(env: dict[str, str]) -> None:
    result = run(env, "play", "--opponent", "person", "--first", "me", "--no-scores",
                 stdin=b"B2\na1\nC3\nA3\n  a2 \nc1\n7\n3\nc2\n")
    assert "Player 1 (X) wins along the middle row a2–c2." in result.stdout
    assert "c1 is taken by O" in result.stdout and "a3 is taken by O" in result.stdout


def test_the_same_seed_and_moves_give_the_same_game(env: dict[str, str]) -> None:
    script = b"".join(b"%d\n" % c for c in range(1, 10)) + b"n\n"
    first = run(env, "play", "--opponent", "medium", "--first", "me", "--seed", "11", "--no-scores", stdin=script)
    again = run(env, "play", "--opponent", "medium", "--first", "me", "--seed", "11", "--no-scores", stdin=script)
    assert first.returncode == 0 and first.stdout == again.stdout and RESULT.search(first.stdout)
    others = [run(env, "play", "--opponent", "medium", "--first", "me", "--seed", str(seed), "--no-scores",
                  stdin=script) for seed in (12, 13, 14)]
    assert any(re.findall("Computer move: .*", other.stdout) != re.findall("Computer move: .*", first.stdout)
               for other in others)


def test_the_last_move_is_marked_and_the_winning_line_shown_and_named(env: dict[str, str]) -> None:
    with Player(env, "--opponent", "person", "--first", "me", "--name", "Ann", "--name", "Bob") as game:
        text = game.prompt()
        for cell in ["a1", "a2", "b1", "b2"]:
            text = game.send(cell)
        assert " 2   O |[O]| 6" in text  # Bob's b2, bracketed
        assert " 1   X | X | 3" in text
        text = game.send("c1")
        assert " 1  *X*|*X*|*X*" in text
        assert "Ann (X) wins along the top row a1–c1." in text
        assert "This session: Ann: 1 · Bob: 0 · draws: 0." in text
        game.close()
    (row,) = history(env)
    assert row[3:6] == ["Ann", "Bob", "X"] and row[-5:] == ["a1", "a2", "b1", "b2", "c1"]


def test_two_people_alternate_who_starts_and_are_scored_by_name(env: dict[str, str]) -> None:
    script = "\n".join(["a1", "a2", "b1", "b2", "c1",  # game 1: Ann (X) wins the top row
                        "y",
                        "b2", "a1", "c3", "b1", "c1", "a3", "a2", "c2", "b3",  # game 2: Bob is X; a draw
                        "n"]) + "\n"
    result = run(env, "play", "--opponent", "person", "--name", "Ann", "--name", "Bob", "--first", "alternate",
                 stdin=script.encode())
    assert result.returncode == 0, result
    out = result.stdout
    assert "Game 1: Ann is X and moves first; Bob is O." in out
    assert "Game 2: Bob is X and moves first; Ann is O." in out
    assert "Bob's move (X): " in out and "Ann's move (O): " in out
    assert "It's a draw: the board is full and nobody has a line." in out
    assert "This session: Ann: 1 · Bob: 0 · draws: 1." in out
    scores = run(env, "scores").stdout
    assert re.search(r"^  Ann +1 +0 +1$", scores, re.M) and re.search(r"^  Bob +0 +1 +1$", scores, re.M)


def test_pressing_enter_through_the_menu_starts_a_game_against_medium(env: dict[str, str]) -> None:
    with Player(env, "--seed", "5") as game:
        text = game.prompt()
        assert text.endswith("Opponent [Medium]: ")  # players.default_for(3×3), by its label
        for number, name in enumerate(players.names(), 1):  # every player by its label, with what it does
            label = players.label(name)
            what = players.describe(name).removeprefix(f"{label}: ")
            assert re.search(rf"^ +{number}  {re.escape(label)} +{re.escape(what)}$", text, re.M), name
        assert re.search(rf"^ +{len(players.names()) + 1}  Another person  at this keyboard", text, re.M)
        text = game.send("")
        assert text.endswith("First [Take turns]: ") and "X always moves first" in text
        # the who-starts labels and descriptions every front end shows, numbered
        assert menu(text) == [(label, about) for _, label, about in first_choices()]
        assert menu(text)[:2] == [("You first", "you are X and move first in every game"),
                                  ("Opponent first", "your opponent is X and moves first in every game")]
        assert all(len(line) <= 80 for line in text.splitlines())
        text = game.send("")
        assert "Type a cell as a number 1-9 or as column and row, a1-c3" in text
        assert " 1   1 | 2 | 3" in text  # the numbered grid
        assert "Game 1: you are X and move first; Medium is O." in text
        assert text.endswith(PROMPT)
        status, rest, _ = game.close()
    assert status == 0 and rest == "\nYou stopped: the unfinished game does not count. Goodbye.\n"
    assert history(env) == []


def test_the_menu_takes_numbers_and_names_and_refuses_anything_else(env: dict[str, str]) -> None:
    with Player(env, "--seed", "1", "--no-scores") as game:
        game.prompt()
        text = game.send("99")
        assert f"'99' is not on the list: type a number from 1 to {len(players.names()) + 1} or a name" in text
        text = game.send(b"\xff\xfe\x00junk\n")
        assert "is not on the list" in text and text.endswith("Opponent [Medium]: ")
        text = game.send("x" * 5000)
        assert "That line is far too long" in text
        text = game.send("3")  # hard
        text = game.send("robot")
        assert ("'robot' is not on the list: type a number from 1 to 5 or a name, or press Enter for Take turns"
                in words(text))
        text = game.send("COMPUTER")
        assert "Hard is X and moves first; you are O." in text
        assert "Computer move: " in text and text.endswith("Your move (O): ")
        game.close()
    with Player(env, "--no-scores") as game:
        game.prompt()
        text = game.send("Person")
        assert text.endswith("First player's name [Player 1]: ")  # no $USER in these tests
        text = game.send("Zoë")
        text = game.send("zoë")
        assert "different names" in text
        text = game.send("")
        assert text.endswith("First [Take turns]: ")
        assert re.search(r"1  Zoë first +Zoë is X and moves first in every game", text)
        assert re.search(r"2  Player 2 first +Player 2 is X and moves first in every game", text)
        text = game.send("2")
        assert "Player 2 is X and moves first; Zoë is O." in text and text.endswith("Player 2's move (X): ")
        game.close()


# never a silent wait ----------------------------------------------------------------------------

class SlowPlayer:
    """A computer player that moves (the first free cell) only once ``seen`` is set."""

    seen = threading.Event()

    def __init__(self, rng: random.Random | None = None, budget: object = None) -> None:
        pass

    def choose(self, board: Board) -> int:
        assert self.seen.wait(30), "the move was never announced as being worked out"
        return board.legal_moves[0]


@pytest.mark.parametrize("on_a_terminal", [True, False])
def test_a_slow_computer_is_said_to_be_thinking_until_it_moves(on_a_terminal: bool) -> None:
    from noughts import terminal
    from noughts.match import play_options

    note = "Slowpoke is thinking…"

    class Screen(io.StringIO):
        def isatty(self) -> bool:
            return on_a_terminal

        def write(self, written: str) -> int:
            count = super().write(written)
            if note in self.getvalue():
                SlowPlayer.seen.set()  # only now may the computer move
            return count

    SlowPlayer.seen.clear()
    players.register("slowpoke", SlowPlayer, label="Slowpoke", description="thinks until it is seen to")
    screen = Screen()
    try:
        options = play_options(opponent="slowpoke", first="computer", no_scores=True)
        assert terminal.play(options, stdin=io.BytesIO(b""), stdout=screen, environ={"TERM": "dumb"}) == 0
    finally:
        players.unregister("slowpoke")
    shown = screen.getvalue()
    assert shown.count(note) == 1  # after match.THINKING_AFTER, once, in the words of noughts.text
    before, after = shown.split(note)
    assert before.endswith("\n")  # a line of its own
    if on_a_terminal:  # rubbed out when the move comes
        assert after.startswith("\r" + " " * len(note) + "\r" + "Computer move: a1\n")
    else:
        assert after.startswith("\nComputer move: a1\n")


# commands at the move prompt ------------------------------------------------------------------

def test_undo_takes_back_your_move_and_the_reply(env: dict[str, str]) -> None:
    with Player(env, "--opponent", "hard", "--first", "computer", "--seed", "2") as game:
        text = game.prompt()
        assert "There is no move of yours" in game.send("undo")  # only the computer's opening is down
        before = last_board(text)
        text = game.send(before.cell_name(before.legal_moves[0]))
        reply = re.findall(r"Computer move: (\w+)", text)[-1]
        mine = before.cell_name(before.legal_moves[0])
        text = game.send("undo")
        assert f"Took back your move {mine} and Hard's reply {reply}." in text
        assert last_board(text) == before and text.endswith("Your move (O): ")
        status, _, _ = game.close()
    assert status == 0 and history(env) == []


def test_hint_names_the_best_move_and_where_it_leads(env: dict[str, str]) -> None:
    with Player(env, "--opponent", "person", "--first", "me", "--no-scores") as game:
        game.prompt()
        text = game.send("hint")
        assert text.startswith("Hint: a1 draws with best play on both sides. Just as good: ")
        for cell in ["a1", "a2", "b1", "b2"]:
            text = game.send(cell)
        text = game.send("hint")
        assert text.startswith("Hint: c1 wins at once.")
        game.send("c3")  # not the hint; O can now win at once
        text = game.send("hint")
        assert text.startswith("Hint: c2 wins at once.")
        text = game.send("a3")  # O blocks nothing and misses the win
        text = game.send("help")
        assert "undo" in text and "hint" in text and " 1   1 | 2 | 3" in text
        game.close()
    with Player(env, "--opponent", "person", "--first", "me", "--no-scores") as game:
        game.prompt()
        for cell in ["a1", "b1"]:  # O's edge reply loses
            text = game.send(cell)
        text = game.send("hint")
        assert words(text).startswith("Hint: a2 wins in 5 (moves by both sides, this one included). "
                                      "Just as good: b2, a3.")
        for cell in ["b2", "c3", "a2"]:  # X threatens a3 and c2 at once
            text = game.send(cell)
        text = game.send("hint")
        assert words(text).startswith("Hint: c1: every move loses against best play; this one holds out longest "
                                      "(loses in 2). Just as good: c2, a3, b3.")
        game.close()


@pytest.mark.parametrize("word", ["quit", "q", "QUIT"])
def test_quit_says_goodbye_and_records_nothing(env: dict[str, str], word: str) -> None:
    result = run(env, "play", "--opponent", "easy", "--first", "me", stdin=f"5\n{word}\n".encode())
    assert result.returncode == 0
    assert result.stdout.endswith("\nYou stopped: the unfinished game does not count. Goodbye.\n")
    assert history(env) == []


def test_bad_input_gets_one_clear_line_and_the_prompt_again(env: dict[str, str]) -> None:
    bad = [b"abc", b"0", b"10", b"z9", b"", b"x" * 100_000, b"\xff\xfe\x00\x01junk", b"   ", b"\x1b[2J"]
    # b2 is good; after the computer answers, b2 again is taken: then end of input
    script = b"\n".join([*bad, b"b2", b"5"]) + b"\n"
    result = run(env, "play", "--opponent", "hard", "--first", "me", "--seed", "4", stdin=script)
    assert result.returncode == 0 and result.stderr == "" and "Traceback" not in result.stdout
    out = result.stdout
    assert out.count(PROMPT) == len(bad) + 3  # one prompt per line read, and the one end of input answers
    replies = [chunk.split("\n", 1)[0] for chunk in out.split(PROMPT)[1:]]
    expected = [
        "'abc' is not a cell",
        "there is no cell 0:",
        "there is no cell 10:",
        "z9 is off the board",
        "Type a cell like 5 or b2 (1-9), or help, hint, undo or quit.",
        "That line is far too long. Type a cell like 5 or b2",
        "is not a cell",
        "Type a cell like 5 or b2",
        "'\\x1b[2J' is not a cell",  # control characters are shown escaped, never sent to the terminal
    ]
    for reply, start in zip(replies, expected, strict=False):
        assert start in reply, (start, reply)
    assert all(len(r) < 200 for r in replies)
    assert "\x1b" not in out
    assert replies[len(bad)].startswith("Computer move: ")  # b2 accepted: the computer answers
    assert "b2 is taken by X" in replies[len(bad) + 1]
    assert out.endswith("\nYou stopped: the unfinished game does not count. Goodbye.\n")
    assert history(env) == []


def test_end_of_input_anywhere_says_goodbye_and_exits_0(env: dict[str, str]) -> None:
    result = run_process(env, "play")  # at the menu's first question
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.endswith("Opponent [Medium]: \nGoodbye.\n")
    result = run_process(env, "play", "--opponent", "hard", "--first", "me")
    assert result.returncode == 0 and result.stdout.endswith(
        PROMPT + "\nYou stopped: the unfinished game does not count. Goodbye.\n")
    result = run_process(env, "play", "--opponent", "person", "--first", "me", stdin=b"a1\na2\nb1\nb2\nc1\n")
    assert result.returncode == 0 and result.stdout.endswith("[Y/n, m for the menu] \nGoodbye.\n")
    assert len(history(env)) == 1  # the finished game only


# Ctrl-C ---------------------------------------------------------------------------------------

def test_ctrl_c_exits_130_and_records_nothing_for_the_unfinished_game(env: dict[str, str]) -> None:
    with Player(env, "--opponent", "person", "--first", "me") as game:
        game.prompt()
        for cell in ["a1", "a2", "b1", "b2", "c1"]:  # one finished game: recorded
            game.send(cell)
        game.send("y")
        game.send("b2")  # the second game, unfinished
        game.proc.send_signal(signal.SIGINT)
        status, rest, err = game.close()
    assert status == 130 and rest == "\nInterrupted: the unfinished game does not count. Goodbye.\n"
    assert "Traceback" not in err
    rows = history(env)
    assert len(rows) == 1 and rows[0][-5:] == ["a1", "a2", "b1", "b2", "c1"]


def spawn_on_a_terminal(env: dict[str, str], *args: str) -> tuple[int, int]:
    import pty

    pid, fd = pty.fork()
    if pid == 0:  # the child: the game, on the terminal
        default_sigint()
        os.execve(sys.executable, [sys.executable, "-m", "noughts", *args], env)
    return pid, fd


def finish(pid: int, fd: int) -> int:
    os.close(fd)
    try:
        _, status = os.waitpid(pid, 0)
        return os.waitstatus_to_exitcode(status)
    except ChildProcessError:
        return -1
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_ctrl_c_typed_at_a_real_terminal(env: dict[str, str]) -> None:
    pid, fd = spawn_on_a_terminal(env, "play", "--opponent", "hard", "--first", "me", "--seed", "1")
    try:
        seen = read_until(fd, lambda d: d.endswith(PROMPT.encode()))
        os.write(fd, b"5\n")
        seen = read_until(fd, lambda d: d.count(PROMPT.encode()) == 2, seen)
        assert b"Computer move: " in seen
        os.write(fd, b"\x03")  # what Ctrl-C sends; the terminal turns it into SIGINT
        seen = read_until(fd, lambda d: b"Goodbye.\r\n" in d, seen)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 130
        assert b"Interrupted: the unfinished game does not count. Goodbye." in seen and b"Traceback" not in seen
    finally:
        finish(pid, fd)
    assert history(env) == []


# colour ---------------------------------------------------------------------------------------

@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
@pytest.mark.parametrize("no_color", [None, "1"])
def test_colour_on_a_terminal_unless_no_color(env: dict[str, str], no_color: str | None) -> None:
    if no_color is not None:
        env["NO_COLOR"] = no_color
    env["TERM"] = "xterm-256color"
    pid, fd = spawn_on_a_terminal(env, "play", "--opponent", "person", "--first", "me", "--no-scores")
    try:
        seen = read_until(fd, lambda d: d.endswith(b"(X): "))
        os.write(fd, b"b2\n")
        seen = read_until(fd, lambda d: d.endswith(b"(O): "), seen)
    finally:
        finish(pid, fd)
    coloured = MARK_ANSI["X"].encode() + b"X\x1b[0m" in seen  # X in the blue of every front end
    assert coloured == (no_color is None)
    assert (b"\x1b[" in seen) == (no_color is None)


def test_no_colour_into_a_pipe(env: dict[str, str]) -> None:
    env["TERM"] = "xterm-256color"
    result = run_process(env, "play", "--opponent", "person", "--first", "me", "--no-scores", stdin=b"b2\na1\n")
    assert result.returncode == 0 and "\x1b" not in result.stdout and " 2   4 | X | 6" in result.stdout


# matches --------------------------------------------------------------------------------------

def test_best_of_3_names_the_match_winner_and_stops_once_it_is_decided(env: dict[str, str]) -> None:
    # The person plays the first free cell every time; hard wins every game, so two settle the match.
    with Player(env, "--opponent", "hard", "--first", "alternate", "--best-of", "3", "--seed", "9") as game:
        text = game.prompt()
        pauses = 0
        while text.endswith(("(X): ", "(O): ", NEXT_GAME)):
            if text.endswith(NEXT_GAME):  # the result stays on screen until Enter
                assert text.endswith("Hard (O) wins along the diagonal c1–a3. You lose.\n"
                                     "Saved as game 1. Your run is back to 0; hard high score 0.\n"
                                     "This session: You: 0 · Hard: 1 · draws: 0.\n"
                                     "Match, best of 3: You: 0 · Hard: 1 · draws: 0.\n"
                                     "\nPress Enter for game 2 (q to stop). "), text
                pauses += 1
                text = game.send("")
                continue
            board = last_board(text)
            text = game.send(board.cell_name(board.legal_moves[0]))
        out = game.transcript
        assert pauses == 1 and out.count("Press Enter for game") == 1  # none after the deciding game
        assert "Game 1 of the match (best of 3): you are X and move first" in out
        assert "Game 2 of the match (best of 3): Hard is X" in out
        assert "Game 3" not in out
        assert "Match, best of 3: You: 0 · Hard: 1 · draws: 0.\n" in out
        assert "Match, best of 3: You: 0 · Hard: 2 · draws: 0." in out
        assert "Hard wins the match 2–0 (best of 3)." in out
        assert text.endswith("Play another match? [Y/n, m for the menu] ")
        game.close()
    scores = run(env, "scores").stdout
    assert re.search(r"^  Hard +0 +2 +0$", scores, re.M)


@pytest.mark.parametrize("answer", [b"", b"q\n", b"n\n"])
def test_the_pause_between_the_games_of_a_match_ends_cleanly(env: dict[str, str], answer: bytes) -> None:
    result = run(env, "play", "--opponent", "person", "--first", "me", "--best-of", "3",
                 stdin=b"a1\na2\nb1\nb2\nc1\n" + answer)  # game 1, then end of input or q at the pause
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.endswith("Player 1 (X) wins along the top row a1–c1.\nSaved as game 1.\n"
                                  "This session: Player 1: 1 · Player 2: 0 · draws: 0.\n"
                                  "Match, best of 3: Player 1: 1 · Player 2: 0 · draws: 0.\n"
                                  "\nPress Enter for game 2 (q to stop). \nGoodbye.\n")
    assert "Game 2" not in result.stdout and len(history(env)) == 1


def test_a_match_of_draws_is_a_drawn_match(env: dict[str, str]) -> None:
    me = players.get("perfect", random.Random(4))
    with Player(env, "--opponent", "hard", "--first", "random", "--best-of", "3", "--seed", "4") as game:
        text = game.prompt()
        for number in range(3):
            result, _ = play_out(game, text, me)
            assert result.startswith("It's a draw")
            if number < 2:
                assert game.transcript.endswith(f"Press Enter for game {number + 2} {NEXT_GAME}")
                text = game.send("")
        assert "The match is drawn 0–0 (best of 3)." in game.transcript
        game.close()
    assert len(history(env)) == 3


# scores, history, replay ----------------------------------------------------------------------

def test_scores_follow_the_robot_rules(env: dict[str, str]) -> None:
    # parsons and mdttt lose to a1 b2 c3 a3...; here: beat easy twice with its seed, then lose to hard
    me = players.get("perfect", random.Random(0))
    wins = 0
    for seed in range(20):
        with Player(env, "--opponent", "easy", "--first", "me", "--seed", str(seed), "--name", "Ann") as game:
            result, _ = play_out(game, game.prompt(), me)
            game.close()
        if not result.startswith("You win"):
            break  # a draw ends the run, as on the robot
        wins += 1
        assert f"+1 point: your run is {wins}; easy high score {wins}" in game.transcript
        if wins == 2:
            break
    scores = run(env, "scores")
    assert scores.returncode == 0
    assert re.search(rf"^  Easy +{wins}$", scores.stdout, re.M), scores.stdout
    assert re.search(r"^Current run: \d+$", scores.stdout, re.M)
    assert re.search(r"^  Easy +\d+ +0 +\d+$", scores.stdout, re.M)  # never lost against easy
    assert "Two-person games:\n  (none yet)" in scores.stdout
    rows = history(env)
    assert rows and all(row[3] == "Ann" and row[4] == "Easy*" for row in rows)


def test_history_replay_and_reset(env: dict[str, str]) -> None:
    assert run(env, "history").stdout.startswith("No games recorded yet")
    run(env, "play", "--opponent", "person", "--first", "me", "--name", "Ann", "--name", "Bob",
        stdin=b"a1\na2\nb1\nb2\nc1\ny\nb2\na1\nc3\nb1\nc1\na3\na2\nc2\nb3\nn\n")
    listing = run(env, "history")
    lines = listing.stdout.splitlines()
    assert lines[0].split() == ["id", "when", "X", "O", "result", "moves"]
    assert re.match(r"^ *2  \d{4}-\d\d-\d\d \d\d:\d\d  Ann +Bob +draw +b2 a1 c3 b1 c1 a3 a2 c2 b3$", lines[1])
    assert re.match(r"^ *1  .*  Ann +Bob +X won +a1 a2 b1 b2 c1$", lines[2])
    assert run(env, "history", "--limit", "1").stdout.splitlines()[-1] == \
        "(the newest 1 of 2 games; --limit N shows more)"
    # replay --all: every step at once
    replay = run(env, "replay", "1", "--all")
    assert replay.returncode == 0 and "[Enter]" not in replay.stdout
    assert replay.stdout.startswith("Game 1, played ") and "X Ann, O Bob." in replay.stdout
    assert [m for m in re.findall(r"^Move (\d): ([XO]) (\w\d)$", replay.stdout, re.M)] == [
        ("1", "X", "a1"), ("2", "O", "a2"), ("3", "X", "b1"), ("4", "O", "b2"), ("5", "X", "c1")]
    assert " 1  *X*|*X*|*X*" in replay.stdout
    assert replay.stdout.endswith("Ann (X) wins along the top row a1–c1.\n")
    # step by step: Enter for the next move, q to stop
    stepped = run(env, "replay", "2", stdin=b"\n\nq\n")
    assert stepped.returncode == 0 and stepped.stdout.count("[Enter] next move, q to stop: ") == 3
    assert "Move 2: O a1" in stepped.stdout and "Move 3" not in stepped.stdout
    assert run(env, "replay", "2", stdin=b"").stdout.endswith("q to stop: \n")  # end of input: stop
    missing = run(env, "replay", "7")
    assert missing.returncode == 2 and missing.stderr == "noughts: There is no game number 7 in the history.\n"
    # reset asks first
    refused = run(env, "scores", "--reset", stdin=b"n\n")
    assert refused.returncode == 1 and refused.stdout.endswith("Nothing was deleted.\n")
    assert re.search(r"^  Ann +1 +0 +1$", run(env, "scores").stdout, re.M)
    agreed = run(env, "scores", "--reset", stdin=b"yes\n")
    assert agreed.returncode == 0 and agreed.stdout.endswith("Scores reset.\n")
    after = run(env, "scores").stdout
    assert "Two-person games:\n  (none yet)" in after
    assert len(history(env)) == 2  # the history is kept
    assert run(env, "scores", "--reset", "--yes").stdout == "Scores reset.\n"
    assert run(env, "scores", "--yes").returncode == 2


def test_db_flag_and_environment(env: dict[str, str], tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    run(env, "play", "--opponent", "person", "--first", "me", "--db", str(other), stdin=b"a1\na2\nb1\nb2\nc1\n")
    assert history(env) == []
    assert len(run(env, "history", "--db", str(other)).stdout.splitlines()) == 2
    assert not run(env, "play", "--opponent", "person", "--first", "me", "--no-scores",
                   stdin=b"a1\na2\nb1\nb2\nc1\n").stdout.count("Saved as game")
    assert history(env) == []


def test_scores_off_when_the_database_cannot_be_written(env: dict[str, str], tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    env["NOUGHTS_DB"] = str(blocker / "scores.db")
    result = run(env, "play", "--opponent", "person", "--first", "me", stdin=b"a1\na2\nb1\nb2\nc1\n")
    assert result.returncode == 0
    first = words(result.stdout.split("\n\n")[0])
    assert first.startswith("Scores and history are off") and "still plays" in first
    assert "Player 1 (X) wins along the top row" in result.stdout and "Saved as" not in result.stdout
    listed = run(env, "history")
    assert listed.returncode == 2 and listed.stderr.startswith("noughts: Scores and history are off")


# options --------------------------------------------------------------------------------------

def test_a_bigger_board(env: dict[str, str]) -> None:
    script = b"".join(b"%d\n" % c for c in range(1, 17)) + b"n\n"
    result = run(env, "play", "--opponent", "random", "--first", "me", "--size", "4", "--seed", "2", stdin=script)
    assert result.returncode == 0, result.stderr
    assert "4 in a row" in result.stdout and "a number 1-16" in result.stdout
    assert " 4   13 | 14 | 15 | 16" in result.stdout
    assert RESULT.search(result.stdout)
    wide = run(env, "play", "--opponent", "person", "--first", "me", "--size", "3x5", "--k", "3", "--no-scores",
               stdin=b"a1\na2\nb1\nb2\nc1\n")
    assert "Player 1 (X) wins along the top row a1–c1" in wide.stdout and "     a    b    c    d    e" in wide.stdout


def test_every_board_up_to_26_by_26_is_drawn_in_80_columns() -> None:
    from noughts.text import board_diagram, diagram_numbers_cells

    for rows in range(1, 27):
        for cols in range(1, 27):
            board = Board(rows, cols, min(rows, cols, 5))
            last = cols - 1  # a bracketed mark at the end of the widest line: the widest a line gets
            board = board.play(last)
            lines = board_diagram(board, last=last, line=[last]).splitlines()
            assert max(len(line) for line in lines) <= 80, (rows, cols)
            assert len(lines) <= 2 * rows + 1
            assert "*X*" in lines[1]
            assert diagram_numbers_cells(board) or cols > 12, (rows, cols)  # numbered up to 12 columns at least
            if not diagram_numbers_cells(board):  # every column's letter stands over its cells
                header, first = lines[0], lines[1]
                assert first.index("*X*") + 1 == header.index(chr(ord("a") + cols - 1))


def test_a_15_by_15_game_fits_80_columns(env: dict[str, str]) -> None:
    moves = b"h8\na1\ni8\na2\nj8\na3\nk8\na4\nl8\n"
    result = run(env, "play", "--opponent", "person", "--first", "me", "--size", "15", "--no-scores", stdin=moves)
    assert result.returncode == 0 and "Player 1 (X) wins along row 8 h8–l8." in result.stdout
    assert max(len(line) for line in result.stdout.splitlines()) <= 80
    assert "Type a cell as column and row, a1-o15 (an empty cell shows as .):" in result.stdout
    assert "\n 8  .  .  .  .  .  .  . *X**X**X**X**X* .  .  .\n" in result.stdout


def test_long_names_and_sentences_are_wrapped_to_80_columns(env: dict[str, str]) -> None:
    ann, bob = "Annabel " + "A" * 32, "Bartholomew " + "B" * 28  # 40 characters each, the most a name has
    result = run(env, "play", "--opponent", "person", "--name", ann, "--name", bob, "--first", "me",
                 stdin=b"a1\na2\nb1\nb2\nc1\n")
    assert result.returncode == 0 and max(len(line) for line in result.stdout.splitlines()) <= 80
    words = " ".join(result.stdout.split())
    assert f"Game 1: {ann} is X and moves first; {bob} is O." in words
    assert f"{ann} (X) wins along the top row a1–c1." in words
    assert f"This session: {ann}: 1 · {bob}: 0 · draws: 0." in words


@pytest.mark.parametrize("first", [["--first", "computer"], []])
def test_a_player_that_cannot_play_the_board_is_refused_before_any_question(env: dict[str, str],
                                                                            first: list[str]) -> None:
    result = run(env, "play", "--opponent", "parsons", *first, "--size", "4", stdin=b"\n\n")
    assert (result.returncode, result.stdout) == (2, "")  # nothing asked, not even who moves first
    assert result.stderr.startswith("noughts: Centre first cannot play a 4×4 board with 4 in a row: "
                                    "it only plays 3×3 with 3 in a row. Opponents that can: easy, ")
    assert result.stderr.count("\n") == 1 and history(env) == []


def test_the_menu_offers_the_one_default_opponent_for_the_board(env: dict[str, str]) -> None:
    with Player(env, "--size", "7x7k5", "--no-scores") as game:
        text = game.prompt()  # medium cannot play 7×7: the default every front end offers there
        assert players.default_for(Board(7, 7, 5)) == "arduino"
        assert "on this 7×7 board (5 in a row):" in text and text.endswith("Opponent [Arduino rules]: ")
        assert ("Medium", "not on this board") in menu(text)
        text = game.send("")
        assert text.endswith("First [Take turns]: ")
        assert ("Opponent first", "your opponent is X and moves first in every game") in menu(text)
        text = game.send("toss a coin")  # a label, typed
        assert "Game 1: " in text and ("you are X" in text or "Arduino rules is X" in text)
        game.close()


def test_the_menu_offers_only_opponents_that_can_play_the_board_and_fits_80_columns(env: dict[str, str]) -> None:
    with Player(env, "--size", "4", "--no-scores") as game:
        text = game.prompt()
        assert all(len(line) <= 80 for line in text.splitlines()), text
        assert ("Centre first", "not on this board") in menu(text)
        assert ("Arduino rules", "win, block, random") in menu(text)
        text = game.send("parsons")
        assert "Centre first cannot play this board: it only plays 3×3 with 3 in a row. Choose another." in words(text)
        text = game.send("arduino")
        assert text.endswith("First [Take turns]: ") and all(len(line) <= 80 for line in text.splitlines())
        text = game.send("")  # the instructions and the first board
        assert "Type a cell as a number 1-16" in text and all(len(line) <= 80 for line in text.splitlines()), text
        game.close()


@pytest.mark.parametrize(("args", "words"), [
    (["--opponent", "nobody"], ["no opponent called 'nobody'", "person"]),
    (["--first", "later"], ["--first takes me, computer, alternate, loser, random"]),
    (["--mark", "Z"], ["--mark takes X or O"]),
    (["--mark", "O", "--first", "me"], ["X always moves first, so --mark O means --first computer"]),
    (["--mark", "x", "--first", "random"], ["--first random"]),
    (["--best-of", "0"], ["--best-of takes a number of games from 1 to 99"]),
    (["--best-of", "three"], ["--best-of"]),
    (["--seed", "1.5"], ["--seed takes a whole number"]),
    (["--size", "4y4"], ["--size takes a board like 4 (4×4), 4x5 (4 rows, 5 columns) or 7x7k5"]),
    (["--size", "30"], ["1 to 26 rows"]),
    (["--k", "9"], ["k (marks in a row to win) must be between 1 and 3"]),
    (["--name", ""], ["a name cannot be empty"]),
    (["--name", "a\x07b"], ["printable"]),
    (["--name", "A", "--name", "a"], ["different names"]),
    (["--name", "A", "--name", "B", "--name", "C"], ["twice at most"]),
    (["--opp", "hard"], []),  # abbreviations go to argparse, which accepts them: the menu asks the rest
    (["--bogus"], ["unrecognized arguments: --bogus"]),
    (["--seed"], ["expected one argument"]),
])
def test_bad_options_are_one_line_and_status_2(env: dict[str, str], args: list[str], words: list[str]) -> None:
    result = run(env, "play", *args, "--no-scores")
    if not words:  # ...and play: this one is good
        assert result.returncode == 0 and "Opponent [" not in result.stdout  # not asked: it was given
        return
    assert result.returncode == 2 and result.stdout == "", result
    assert result.stderr.startswith("noughts: ") and result.stderr.count("\n") == 1
    for word in words:
        assert word in result.stderr, (word, result.stderr)


def test_play_help_documents_the_design(env: dict[str, str]) -> None:
    out = run(env, "play", "--help").stdout
    for text in ["X always moves first", "--first", "--mark", "--best-of", "--size", "--db", "--no-scores",
                 "undo", "hint", "medium"]:
        assert text in out, text


# the fast path --------------------------------------------------------------------------------

def test_the_fast_path_reads_options_exactly_as_argparse_does() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    parser = build_parser()
    words = st.sampled_from(["--opponent", "--first", "--mark", "--best-of", "--seed", "--size", "--k", "--db",
                             "--name", "--no-scores", "--opponent=hard", "--seed=-3", "--name=", "--opp", "-h",
                             "hard", "me", "X", "3", "-1", "4x5", "a=b", "", "--", "-", "--no-scores=1"])
    tokens = st.lists(words | st.text(max_size=6), max_size=8)

    @settings(max_examples=400, deadline=None)
    @given(tokens)
    def check(argv: list[str]) -> None:
        quick = quick_play_args(argv)
        if quick is None:
            return  # argparse decides
        namespace = vars(parser.parse_args(["play", *argv]))
        assert {key: namespace[key] for key in quick} == quick, argv

    check()
    assert quick_play_args(["--opponent", "hard", "--first=me", "--name", "A", "--name", "B"]) == {
        "opponent": "hard", "first": "me", "mark": None, "best_of": None, "seed": None, "size": None,
        "k": None, "db": None, "name": ["A", "B"], "no_scores": False}
    assert quick_play_args(["--help"]) is None and quick_play_args(["--seed", "-1"]) is None
