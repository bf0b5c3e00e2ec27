"""`noughts paper`: whole games filmed by the simulated phone (noughts.robot.sim.paper_video), read
by the real command from a video file, and twenty more read in-process frame by frame."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from child_signals import default_sigint
from noughts import text
from noughts.board import Board
from noughts.cli.paper import NEEDS_COMPUTER, file_step
from noughts.robot.sim.paper_video import (
    GamePlan,
    PaperFrame,
    paper_game_frames,
    plan_game,
    watch_game,
    write_game_sequence,
)
from noughts.robot.sim.photos import write_video
from noughts.sheet.camera import MISSING_OPENCV, read_image
from noughts.sheet.geometry import Sheet
from noughts.store import open_store

pytestmark = pytest.mark.slow  # whole games filmed and read: a minute and a half in all

SIZE = (640, 480)  # a phone's frame as the page sends it, downscaled
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONUNBUFFERED", "DISPLAY", "WAYLAND_DISPLAY",
                                                        "NOUGHTS_DB")}


def noughts_paper(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "noughts", "paper", *args], capture_output=True, text=True,
                          timeout=timeout, env=ENV)


def film(plan: GamePlan, path: Path, *, seed: int, trouble: float = 1.0) -> list[PaperFrame]:
    frames = list(paper_game_frames(plan, seed=seed, size=SIZE, trouble=trouble))
    write_video((frame.image for frame in frames), path, fps=2.0)
    return frames


def said_lines(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line and not line.startswith("===")]


def check_game_played(result: subprocess.CompletedProcess[str], plan: GamePlan, db: Path) -> None:
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    lines = said_lines(result.stdout)
    assert plan.result in lines  # the result, in the match's own words
    assert lines[-1] == text.PAPER_VIDEO_ENDED
    assert any(line.startswith("This session: You: ") for line in lines)
    # A sentence is printed when it changes, never once a frame.
    assert all(one != two for one, two in itertools.pairwise(lines)), result.stdout
    computer = [drawn for drawn in plan.marks if drawn.by == "computer"]
    for drawn in computer:  # each of the computer's moves in large letters, once
        banner = text.paper_banner("Easy", drawn.mark, Board().cell_name(drawn.cell))
        assert result.stdout.count(banner) == 1, result.stdout
    assert result.stdout.count("EASY PLAYS") == len(computer)
    with open_store(db) as store:
        assert store.count_games() == 1
        (stored,) = store.games(5)
        assert list(stored.to_game().moves) == [drawn.cell for drawn in plan.marks]


def test_a_filmed_game_is_played_to_the_end_and_recorded_once(tmp_path: Path) -> None:
    plan = plan_game(opponent="easy", first="me", seed=1, person_seed=1)
    assert plan.finished
    film(plan, tmp_path / "game.avi", seed=1)
    db = tmp_path / "scores.db"
    result = noughts_paper("--camera", str(tmp_path / "game.avi"), "--opponent", "easy", "--first", "me",
                           "--seed", "1", "--no-window", "--db", str(db))
    check_game_played(result, plan, db)


def test_a_game_filmed_as_numbered_pictures_is_read_picture_by_picture(tmp_path: Path) -> None:
    plan = plan_game(opponent="easy", first="me", seed=1, person_seed=1)
    pattern = write_game_sequence(plan, tmp_path / "frames", seed=1, size=SIZE)
    db = tmp_path / "scores.db"
    result = noughts_paper("--camera", pattern, "--opponent", "easy", "--first", "me", "--seed", "1", "--no-window",
                           "--db", str(db))
    check_game_played(result, plan, db)


def test_a_hand_over_the_sheet_and_a_pushed_sheet_still_end_right(tmp_path: Path) -> None:
    plan = plan_game(opponent="easy", first="computer", seed=5, person_seed=2)
    assert plan.finished and plan.marks[0].by == "computer"
    frames = film(plan, tmp_path / "rough.avi", seed=11, trouble=2.0)
    assert sum(frame.pushed for frame in frames) >= 2 and sum(frame.drawing is not None for frame in frames) >= 6
    db = tmp_path / "scores.db"
    result = noughts_paper("--camera", str(tmp_path / "rough.avi"), "--opponent", "easy", "--first", "computer",
                           "--seed", "5", "--no-window", "--db", str(db))
    check_game_played(result, plan, db)
    assert any(line.startswith("I cannot see the sheet") or line.startswith("I am not sure")
               for line in said_lines(result.stdout))  # the hand made it ask, and it went on


def test_a_camera_that_cannot_be_opened_is_one_sentence(tmp_path: Path) -> None:
    missing = noughts_paper("--camera", str(tmp_path / "nothing.avi"), "--no-window", "--no-scores")
    assert missing.returncode == 2
    assert missing.stderr.count("\n") == 1 and "there is no video or picture at" in missing.stderr
    not_video = tmp_path / "notes.txt"
    not_video.write_text("not a video")
    refused = noughts_paper("--camera", str(not_video), "--no-window", "--no-scores")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and "cannot open" in refused.stderr
    no_device = noughts_paper("--camera", "57", "--no-window", "--no-scores")
    assert no_device.returncode == 2, no_device.stderr
    assert no_device.stderr.count("\n") == 1 and "cannot open camera 57" in no_device.stderr
    person = noughts_paper("--camera", str(not_video), "--opponent", "person", "--no-scores")
    assert person.returncode == 2 and NEEDS_COMPUTER in person.stderr


def test_ctrl_c_says_where_the_game_was_left_and_exits_130(tmp_path: Path) -> None:
    plan = plan_game(opponent="easy", first="me", seed=3, person_seed=3)
    frames = list(paper_game_frames(plan, seed=3, size=SIZE, trouble=0.0, start_seconds=1.0))
    write_video([frames[0].image] * 400, tmp_path / "still.avi", fps=2.0)  # an empty sheet, on and on
    process = subprocess.Popen([sys.executable, "-m", "noughts", "paper", "--camera", str(tmp_path / "still.avi"),
                                "--opponent", "easy", "--seed", "3", "--no-window", "--db", str(tmp_path / "s.db")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
                               preexec_fn=default_sigint)
    assert process.stdout is not None
    seen = []
    for line in process.stdout:
        seen.append(line.rstrip("\n"))
        if line.startswith("Your move"):
            break
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "Traceback" not in err
    assert text.paper_stopped(".../.../...", False) in out.splitlines()
    assert seen[-1] == text.paper_your_move("X")


def test_no_opencv_is_one_sentence() -> None:
    code = ("import sys\nsys.modules['cv2'] = None  # as if OpenCV were not installed\n"
            "from noughts.cli import main\nsys.exit(main(['paper', '--camera', 'game.avi', '--no-scores']))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=60)
    assert result.returncode == 2
    assert result.stderr == f"noughts: {MISSING_OPENCV}\n"


def test_without_windows_it_watches_in_the_terminal(tmp_path: Path) -> None:
    plan = plan_game(opponent="easy", first="me", seed=3, person_seed=3)
    frames = paper_game_frames(plan, seed=3, size=SIZE, trouble=0.0, start_seconds=1.0)
    write_video([next(frames).image] * 3, tmp_path / "short.avi", fps=2.0)
    result = subprocess.run([sys.executable, "-m", "noughts", "paper", "--camera", str(tmp_path / "short.avi"),
                             "--no-scores"], capture_output=True, text=True, timeout=60, env={**ENV, "DISPLAY": ":99"})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert text.PAPER_NO_WINDOW in lines and lines[-1] == text.PAPER_VIDEO_ENDED


def test_a_file_is_read_at_two_frames_a_second() -> None:
    assert [file_step(fps) for fps in (30.0, 25.0, 10.0, 4.0, 2.0, 1.0, 0.0)] == [15, 12, 5, 2, 1, 1, 1]


GAMES = [(opponent, first, seed) for seed in range(10) for opponent, first in
         (("easy", "me"), ("medium", "computer"))]


@pytest.mark.parametrize(("opponent", "first", "seed"), GAMES)
def test_simulated_games_read_frame_by_frame_play_no_wrong_move(opponent: str, first: str, seed: int) -> None:
    plan = plan_game(opponent=opponent, first=first, seed=seed, person_seed=100 + seed)
    sheet = Sheet(plan.rows, plan.cols)
    frames = paper_game_frames(plan, seed=200 + seed, size=SIZE)
    watched = watch_game(plan, frames, lambda frame: read_image(frame.image, sheet))
    assert watched.wrong == 0
    assert watched.played == [drawn.cell for drawn in plan.marks]  # every move the person drew, in order
    assert watched.finished
