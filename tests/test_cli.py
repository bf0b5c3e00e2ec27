"""The noughts command: one-shot commands, errors, --help/--version (the game: test_terminal.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest

from noughts import Board, __version__, solver
from noughts.cli import build_parser, main
from noughts.engine import handle
from noughts.errors import NoughtsError

COMMANDS = ["move", "analyse", "status", "players", "engine", "play", "history", "replay", "scores"]


# Without PYTHONUNBUFFERED, so prompts only appear if the game really flushes them.
BUFFERED = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}


def noughts(*args: str, stdin: bytes = b"", timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run the real command (as `python -m noughts`, which is what the console script calls)."""
    result = subprocess.run([sys.executable, "-m", "noughts", *args], input=stdin, capture_output=True,
                            timeout=timeout, env=BUFFERED)
    return subprocess.CompletedProcess(result.args, result.returncode,
                                       result.stdout.decode("utf-8", "replace"),
                                       result.stderr.decode("utf-8", "replace"))


def run_main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        status = main(list(args))
    except SystemExit as exit_:  # argparse exits for --help, --version and usage errors
        status = exit_.code if isinstance(exit_.code, int) else 1
    out, err = capsys.readouterr()
    return status, out, err


def assert_one_line_error(status: int, err: str, *words: str) -> None:
    assert status == 2
    assert err.startswith("noughts: ") and err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for word in words:
        assert word in err, (word, err)


# --help and --version ----------------------------------------------------------------------

def test_help_documents_every_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run_main(capsys, "--help")
    assert status == 0 and err == ""
    for command in COMMANDS:
        assert f"    {command}" in out, command
    for command in COMMANDS:
        status, out, _ = run_main(capsys, command, "--help")
        assert status == 0 and out.startswith(f"usage: noughts {command}"), command


def test_version() -> None:
    result = noughts("--version")  # the real command: the console script exits with main()'s status
    assert (result.returncode, result.stdout) == (0, f"noughts {__version__}\n")


def test_no_command_is_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run_main(capsys)
    assert_one_line_error(status, err, "move")
    commands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    named = set(err.split(": say what to do: ")[1].split(" (see")[0].replace(" or ", ", ").split(", "))
    assert named == set(commands) - {"analyze"}  # every command, the American spelling aside


def test_help_does_not_import_the_solver_or_the_players() -> None:
    code = ("import sys\nfrom noughts.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('noughts')), file=sys.stderr)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "noughts.solver" not in result.stderr and "noughts.players" not in result.stderr
    assert "noughts.engine" not in result.stderr


# move --------------------------------------------------------------------------------------

def test_move_prints_the_players_choice(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run_main(capsys, "move", "X.O/.X./..O", "--player", "perfect", "--seed", "7")
    assert (status, out, err) == (0, "perfect plays c2 (cell 6)\n", "")


def test_move_json_is_the_engines_reply(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_main(capsys, "move", "X../O../...", "--k", "2", "--json", "--seed", "3")
    assert status == 0
    reply = json.loads(out)
    assert reply == handle({"cmd": "move", "position": "X../O../...", "k": 2, "seed": 3})
    assert reply["cell"] in {"b1", "b2"}
    assert out == json.dumps(reply, separators=(",", ":")) + "\n"


def test_move_seeds_are_reproducible_between_runs() -> None:
    first = noughts("move", "--player", "random", "--seed", "99")
    again = noughts("move", "--player", "random", "--seed", "99")
    assert first.returncode == 0 and first.stdout == again.stdout
    assert first.stdout.startswith("random plays ")


def test_move_on_an_empty_board_of_another_size(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_main(capsys, "move", "--rows", "5", "--cols", "7", "--player", "random",
                              "--seed", "1", "--json")
    assert status == 0 and 0 <= json.loads(out)["index"] < 35


@pytest.mark.parametrize("command", [["status"], ["move", "--player", "random", "--seed", "1"],
                                     ["analyse", "--value-only"]])
def test_the_board_commands_take_the_board_notation(capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    spelled_out = run_main(capsys, *command, "--rows", "4", "--cols", "4", "--k", "3", "--json")
    assert spelled_out[0] == 0
    assert run_main(capsys, *command, "--size", "4x4k3", "--json") == spelled_out
    assert run_main(capsys, *command, "--size", "4X4", "--k", "3", "--json") == spelled_out
    assert run_main(capsys, *command, "--size", "4x4k3", "--rows", "4", "--json") == spelled_out  # agreeing
    status, out, _ = run_main(capsys, *command, "--help")
    assert status == 0 and "7x7k5" in out


def test_the_board_notation_and_a_position_must_agree(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_main(capsys, "status", "XX./O../...", "--size", "3x3k2")
    assert status == 0 and out.splitlines()[-1] == "game over: X has won (a1 b1)"
    status, out, _ = run_main(capsys, "status", "XX./OO./...", "--size", "3")
    assert status == 0 and out.splitlines()[-1].startswith("X to move")


# analyse -----------------------------------------------------------------------------------

def test_analyse_text(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_main(capsys, "analyse", "X.O/.X./..O")
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == "X to move: draw in 5 plies"
    assert lines[1].split() == ["cell", "no.", "result", "for", "X"]
    assert lines[2].split() == ["c2", "6", "draw", "(best)"]  # the best move comes first
    assert sorted(line.split()[0] for line in lines[3:]) == ["a2", "a3", "b1", "b3"]
    assert all(line.split()[2:] == ["loss", "in", "2"] for line in lines[3:])


def test_analyse_text_orders_quick_wins_first(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_main(capsys, "analyse", "XX./OO./...")
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == "X to move: win in 1 ply"
    assert [line.split()[0] for line in lines[2:]] == ["c1", "c2", "a3", "b3", "c3"]
    assert lines[2].split()[2:] == ["win", "in", "1", "(best)"]
    assert lines[3].split()[2:] == ["draw"]


def test_analyse_text_of_a_finished_game(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_main(capsys, "analyse", "XXX/OO./...")[1] == "game over: X has won (a1 b1 c1)\n"
    assert run_main(capsys, "analyze", "XOX/XOO/OXX")[1] == "game over: a draw (the board is full)\n"


def test_analyse_json_and_the_empty_board(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_main(capsys, "analyse", "--json")
    reply = json.loads(out)
    assert status == 0 and (reply["value"], reply["plies"]) == tuple(solver.solve(Board()))
    assert len(reply["moves"]) == 9
    status, out, _ = run_main(capsys, "analyse", "--rows", "4", "--cols", "4")
    assert status == 0 and out.startswith("X to move: draw in 16 plies\n")


# status and players ------------------------------------------------------------------------

def test_status_text_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_main(capsys, "status", "X.O/.X./..O")
    assert status == 0
    assert " 1   X | 2 | O" in out
    assert out.splitlines()[-1] == "X to move; legal moves: b1 a2 c2 a3 b3"
    status, out, _ = run_main(capsys, "status", "OOO/XX./X..", "--json")
    assert json.loads(out) == {"turn": None, "winner": "O", "line": [0, 1, 2], "over": True, "legal": []}


@pytest.mark.parametrize("size", ["15", "26", "3x26", "26x3", "12", "13x13k5"])
def test_status_fits_80_columns_on_every_board(capsys: pytest.CaptureFixture[str], size: str) -> None:
    status, out, _ = run_main(capsys, "status", "--size", size)
    assert status == 0 and max(len(line) for line in out.splitlines()) <= 80, out
    assert " a1 " in out.split("legal moves:")[1] + " "


def test_players_text_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    from noughts import players

    status, out, _ = run_main(capsys, "players")
    assert status == 0
    assert [line.split()[0] for line in out.splitlines()] == players.names()
    status, out, _ = run_main(capsys, "players", "--json")
    assert json.loads(out)["players"] == players.names()


# errors ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("args", "words"), [
    (["move", "XXX/OO./..."], ["game is over"]),
    (["move", "XXXX"], ["not a position"]),
    (["move", "--player", "nobody"], ["nobody"]),
    (["move", "--player", "parsons", "--rows", "4", "--cols", "4"], ["3×3"]),
    (["move", "--seed", "seven"], ["--seed"]),
    (["move", "--bogus"], ["--bogus"]),
    (["analyse", "X.O/.X./..O", "--k", "9"], ["k"]),
    (["analyse", "X.O/.X./..O", "--rows", "4"], ["rows"]),
    (["analyse", "XXO/X../..."], ["X has 3 marks"]),
    (["status", "--rows", "0"], ["rows"]),
    (["status", "a", "b"], ["unrecognized"]),
    (["frobnicate"], ["frobnicate"]),
    (["play", "--opponent", "nobody"], ["nobody"]),
    (["play", "--mark", "O", "--first", "me"], ["--mark O means --first computer"]),
    (["replay", "seven"], ["invalid int value"]),
    (["move", "\udcff\udcfe"], ["not a position"]),
    (["status", "--size", "4", "--rows", "5"], ["--size 4 says 4 rows, but --rows says 5"]),
    (["move", "--size", "4x5", "--cols", "4"], ["--size 4x5 says 5 cols, but --cols says 4"]),
    (["analyse", "--size", "7x7k5", "--k", "4"], ["--size 7x7k5 says 5 in a row, but --k says 4"]),
    (["status", "X.O/.X./..O", "--size", "4"], ["--size 4 is 4×4, but the position is 3×3"]),
    (["status", "--size", "7y"], ["--size takes a board like", "7x7k5", "'7y'"]),
    (["move", "--size", "30"], ["--size", "1 to 26 rows"]),
    (["move", "--seconds", "0"], ["--seconds", "above 0"]),
    (["move", "--seconds", "soon"], ["--seconds", "'soon'"]),
    (["analyse", "--seconds", "nan"], ["--seconds"]),
    (["analyse", "--nodes", "-5"], ["--nodes", "whole number"]),
    (["analyse", "--rows", "4", "--cols", "4", "--nodes", "10"], ["gave up after searching 10 positions"]),
    (["move", "--rows", "9", "--cols", "9", "--player", "perfect", "--nodes", "50"], ["within 50 positions"]),
])
def test_errors_are_one_line_on_stderr_with_status_2(capsys: pytest.CaptureFixture[str], args: list[str],
                                                     words: list[str]) -> None:
    status, out, err = run_main(capsys, *args)
    assert out == ""
    assert_one_line_error(status, err, *words)


def test_budget_options_reach_the_search(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_main(capsys, "analyse", "XX./OO./...", "--seconds", "2.5", "--nodes", "0", "--json")
    assert status == 0 and json.loads(out)["value"] == 1  # 3×3 is a lookup: no search to spend it
    status, out, _ = run_main(capsys, "move", "--rows", "9", "--cols", "9", "--player", "minimax", "--nodes", "40")
    assert status == 0 and out.startswith("minimax plays ")


def test_a_slow_move_says_it_is_thinking(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The move waits until the notice is out, as a move that takes more than a second would."""
    from noughts import engine
    from noughts.cli import positions

    monkeypatch.setattr(positions, "THINKING_AFTER", 0.01)
    said = threading.Event()
    show = positions.Thinking._show

    def show_and_tell(self: positions.Thinking) -> None:
        show(self)
        said.set()

    monkeypatch.setattr(positions.Thinking, "_show", show_and_tell)
    answer = engine.handle

    def slow_answer(request: dict[str, object], progress: object = None) -> dict[str, object]:
        assert said.wait(30), "nothing was said while the move was worked out"
        return answer(request)

    monkeypatch.setattr(engine, "handle", slow_answer)
    status, out, err = run_main(capsys, "move", "XX./OO./...")
    assert (status, out) == (0, "perfect plays c1 (cell 3)\n")
    assert err == "noughts: Perfect is thinking…\n"  # not a terminal: a line of its own


def test_a_quick_move_says_nothing_but_the_move(capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from noughts.cli import positions

    monkeypatch.setattr(positions, "THINKING_AFTER", 60.0)
    status, out, err = run_main(capsys, "move", "XX./OO./...")
    assert (status, out, err) == (0, "perfect plays c1 (cell 3)\n", "")
    assert "noughts-thinking" not in [thread.name for thread in threading.enumerate()]  # the timer is gone


def test_errors_from_the_real_command() -> None:
    result = noughts("analyse", "X.O/.X")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("noughts: ") and result.stderr.count("\n") == 1
    assert "Traceback" not in result.stderr
    # undecodable bytes in an argument are reported, not crashed on
    raw = subprocess.run([sys.executable.encode(), b"-m", b"noughts", b"status", b"X\xff./.../..."],
                         capture_output=True, timeout=60)
    assert raw.returncode == 2 and b"Traceback" not in raw.stderr and raw.stderr.count(b"\n") == 1


def test_an_error_reply_from_the_engine_with_json_still_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run_main(capsys, "move", "XXX/OO./...", "--json")
    assert out == ""
    assert_one_line_error(status, err, "game is over")


def test_analyse_on_a_board_too_big_to_solve_is_an_error_not_a_hang(capsys: pytest.CaptureFixture[str],
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from noughts import engine

    assert engine.ANALYSE_MAX_NODES == 2_000_000  # what the command really allows
    # A smaller budget (about 0.1 s of search), and the clock only as a backstop far beyond it: the
    # node budget stops this search, however busy the machine (the clock's own error: test_engine.py).
    monkeypatch.setattr(engine, "ANALYSE_MAX_NODES", 2_000)
    monkeypatch.setattr(engine, "ANALYSE_MAX_SECONDS", 300.0)
    solver.clear_cache()
    status, out, err = run_main(capsys, "analyse", "--rows", "4", "--cols", "9", "--k", "4")
    assert (status, out) == (2, "")
    assert err == ("noughts: the solver gave up after searching 2,000 positions, its budget "
                   "(max_nodes); this board is too big to solve exactly in that budget\n")


def test_a_closed_pipe_is_not_an_error() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "noughts", "players"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader goes away before the output is written
    proc.wait(timeout=30)
    assert proc.stderr.read() == b""
    proc.stderr.close()


# play, history, replay and scores: tests/test_terminal.py drives them as a person would.


# play and gui: the core checks the options in its own words, the command says them with its flags

BAD_PLAY_OPTIONS = [  # (flags, the keywords of play_options, the setting refused, what the command says)
    (["--best-of", "0"], {"best_of": "0"}, "best_of", "--best-of takes a number of games from 1 to 99, like 3, not 0"),
    (["--best-of", "three"], {"best_of": "three"}, "best_of",
     "--best-of takes a number of games from 1 to 99, like 3, not 'three'"),
    (["--first", "later"], {"first": "later"}, "first",
     "--first takes me, computer, alternate, loser, random, not 'later'"),
    (["--mark", "Z"], {"mark": "Z"}, "mark", "--mark takes X or O, not 'Z'"),
    (["--mark", "O", "--first", "me"], {"mark": "O", "first": "me"}, "first",
     "X always moves first, so --mark O means --first computer, not --first me"),
    (["--seed", "1.5"], {"seed": "1.5"}, "seed", "--seed takes a whole number, not '1.5'"),
    (["--k", "x"], {"k": "x"}, "k", "--k takes the number of marks in a row that wins, like 3, not 'x'"),
    (["--size", "4y4"], {"size": "4y4"}, "size",
     "--size takes a board like 4 (4×4), 4x5 (4 rows, 5 columns) or 7x7k5 (and 5 in a row): a board is written "
     "like 3x3k3, 4x4 or 7x7k5 (rows x columns, k in a row), not '4y4'"),
    (["--size", "7x7k5", "--k", "4"], {"size": "7x7k5", "k": "4"}, "k", "--size says 5 in a row, but --k says 4"),
    (["--k", "9"], {"k": "9"}, "k", "k (marks in a row to win) must be between 1 and 3 on a 3×3 board, not 9"),
    (["--name", "A", "--name", "B", "--name", "C"], {"names": ["A", "B", "C"]}, "names",
     "--name can be given twice at most: your name, then the other person's"),
    (["--name", "A", "--name", "a"], {"names": ["A", "a"]}, "names", "the two people need different names"),
    (["--opponent", "nobody"], {"opponent": "nobody"}, "opponent",
     "there is no opponent called 'nobody'; choose one of: "),
]


BAD_PLAY_IDS = [" ".join(flags) for flags, *_ in BAD_PLAY_OPTIONS]


@pytest.mark.parametrize(("flags", "keywords", "setting", "said"), BAD_PLAY_OPTIONS, ids=BAD_PLAY_IDS)
def test_play_options_refuse_in_the_words_of_settings_not_flags(flags: list[str], keywords: dict[str, object],
                                                                setting: str, said: str) -> None:
    from noughts.match import PlayOptionError, play_options

    with pytest.raises(PlayOptionError) as refused:
        play_options(**keywords)  # type: ignore[arg-type]
    assert refused.value.setting == setting
    assert "--" not in str(refused.value), str(refused.value)  # the core knows no flags


@pytest.mark.parametrize("command", ["play", "gui"])
@pytest.mark.parametrize(("flags", "keywords", "setting", "said"), BAD_PLAY_OPTIONS, ids=BAD_PLAY_IDS)
def test_the_command_says_a_refused_play_option_with_its_flag(capsys: pytest.CaptureFixture[str], command: str,
                                                              flags: list[str], keywords: dict[str, object],
                                                              setting: str, said: str) -> None:
    # gui checks the options before it looks for pygame or a screen: no window opens here
    status, out, err = run_main(capsys, command, *flags, "--no-scores")
    assert out == ""
    assert_one_line_error(status, err)
    assert err.startswith(f"noughts: {said}"), err
    if said.endswith(": "):  # the list of opponents follows
        return
    assert err == f"noughts: {said}\n"


# web: the server refuses its settings in its own words, the command says them with its flags

BAD_WEB_OPTIONS = [  # (flags, what the command says)
    (["--workers", "0"], "--workers is a number of processes from 1 to 64, not 0"),
    (["--workers", "65", "--redis", "redis://127.0.0.1:1/0"],
     "--workers is a number of processes from 1 to 64, not 65"),
    (["--workers", "2"], "--workers needs --redis: each process would hold its own rooms, and a friend reaching "
                         "another process could not find the game. Start Redis (redis-server) and add --redis "
                         "redis://127.0.0.1:6379/0"),
    (["--public-url", "nonsense"],
     "--public-url takes an address like http://192.168.1.20:8000 or https://games.example.org, not 'nonsense'"),
    (["--trusted-proxy", "10.0.0.0/8,proxy.example"],
     "--trusted-proxy takes addresses or networks, like 127.0.0.1 or 10.0.0.0/8, not 'proxy.example'"),
]


@pytest.mark.parametrize(("flags", "said"), BAD_WEB_OPTIONS, ids=[" ".join(flags) for flags, _ in BAD_WEB_OPTIONS])
def test_the_command_says_a_refused_web_option_with_its_flag(capsys: pytest.CaptureFixture[str], flags: list[str],
                                                             said: str) -> None:
    status, out, err = run_main(capsys, "web", *flags, "--no-scores", "--port", "0")
    assert_one_line_error(status, err)
    assert (out, err) == ("", f"noughts: {said}\n")


def test_the_server_refuses_its_settings_without_the_commands_flags() -> None:
    from noughts.errors import SettingError
    from noughts.web.server import serve

    for keywords in ({"workers": 0}, {"workers": 2}, {"public_url": "nonsense"}, {"trusted_proxies": ["x"]}):
        with pytest.raises(NoughtsError) as refused:
            serve(port=0, scores=False, **keywords)  # type: ignore[arg-type]
        assert "--" not in str(refused.value), str(refused.value)
    with pytest.raises(SettingError, match=r"^a server runs 1 to 64 worker processes, not 0$"):
        serve(port=0, scores=False, workers=0)


def test_a_port_in_use_is_one_line_that_suggests_another(capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        status, out, err = run_main(capsys, "web", "--port", str(port), "--no-scores")
    assert_one_line_error(status, err)
    assert out == ""
    assert err.startswith(f"noughts: cannot listen on 127.0.0.1 port {port} (")
    assert err.endswith("): another program is using that port (try --port)\n"), err


# export, import and picture: the command reads files and flags, the formats take plain values

def test_the_formats_name_a_files_format_without_the_command() -> None:
    from noughts import picture, records

    assert records.format_of("games.SGF") == "sgf" and records.format_of("games.txt") is None
    assert records.format_of(None) is None
    assert picture.format_of("board.PNG") == "png" and picture.format_of(None) == picture.format_of("-") == "svg"
    with pytest.raises(NoughtsError, match=r"ends in \.svg or \.png, not 'board\.gif'"):
        picture.format_of("board.gif")
    assert not hasattr(records, "run_export") and not hasattr(picture, "run_picture")  # the command's, in noughts.cli


# fuzz the argument parser -----------------------------------------------------------------

def test_fuzz_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    words = st.sampled_from(["move", "analyse", "status", "players", "--json", "--k", "--rows", "--cols", "--size",
                             "7x7k5", "4x4", "3x3k4",
                             "--seed", "--player", "X.O/.X./..O", "3", "-1", "99", "perfect", "random",
                             "XXX", "", "--", "-"]) | st.text(max_size=12)

    @settings(max_examples=300, deadline=None)
    @given(st.lists(words, max_size=6))
    def check(argv: list[str]) -> None:
        if any(a in ("engine", "play", "history", "replay", "scores") for a in argv[:1]):  # stdin, databases
            return
        status, _, err = run_main(capsys, *argv)
        assert status in (0, 2), (argv, status, err)
        assert "Traceback" not in err
        if status == 2:
            assert err.startswith("noughts: ") and err.count("\n") == 1, (argv, err)

    check()


def test_gui_without_a_screen_says_so_instead_of_hiding_a_window() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER")}
    result = subprocess.run([sys.executable, "-m", "noughts", "gui", "--opponent", "hard", "--first", "me",
                             "--no-scores"], capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 2
    assert "no screen" in result.stderr and "noughts play" in result.stderr
    assert "Traceback" not in result.stderr
