"""The arena: reproducible round robins on any number of processes, ratings, the chart, the command."""

from __future__ import annotations

import io
import json
import math
import os
import signal
import struct
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest

from child_signals import default_sigint
from noughts import Board, arena
from noughts.arena import (
    ArenaError,
    GameSpec,
    Progress,
    bootstrap_ratings,
    chart_svg,
    fit_ratings,
    pair_rows,
    parse_board,
    play_game,
    results_json,
    results_text,
    run_arena,
    schedule,
    standings,
)
from noughts.errors import UnsupportedBoardError
from noughts.players import UnknownPlayerError

ROOT = Path(__file__).resolve().parent.parent
THREE = ["random", "arduino", "perfect"]


@pytest.fixture(scope="module")
def small() -> object:
    return run_arena(THREE, games=30, seed=11, jobs=1)


def test_the_schedule_is_every_pair_with_both_colours() -> None:
    specs = schedule(["a", "b", "c"], 4)
    assert [spec.place for spec in specs] == list(range(len(specs)))
    assert Counter((spec.x, spec.o) for spec in specs) == {
        (x, o): 4 for x in "abc" for o in "abc" if x != o}
    assert {spec.game for spec in specs} == {0, 1, 2, 3}


def test_results_do_not_depend_on_the_number_of_processes(small: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(arena, "POOL_WORTH_SECONDS", 0.0)  # use the workers however quick the games are
    reports: list[int] = []
    parallel = run_arena(THREE, games=30, seed=11, jobs=2, progress=lambda done, total: reports.append(done))
    assert parallel.outcomes == small.outcomes  # type: ignore[attr-defined]
    assert len(reports) < 30 and reports[-1] == 180  # the workers report in chunks: they did play
    board = Board(4, 4)
    one = run_arena(["random", "arduino", "minimax"], board, games=2, seed=5, jobs=1, nodes=2_000)
    two = run_arena(["random", "arduino", "minimax"], board, games=2, seed=5, jobs=2, nodes=2_000)
    assert one.outcomes == two.outcomes and one.complete and two.complete


def test_a_game_depends_only_on_its_seed_names_and_number(small: object) -> None:
    spec = GameSpec(0, "random", "arduino", 7)
    first = play_game(spec, (3, 3, 3), 11)
    assert play_game(spec._replace(place=99), (3, 3, 3), 11)[1:] == first[1:]
    # a bigger tournament plays the same games between the same two players
    bigger = run_arena([*THREE, "mdttt"], games=30, seed=11, jobs=1)
    for key, counts in small.outcomes.items():  # type: ignore[attr-defined]
        assert bigger.outcomes[key] == counts
    other_seed = run_arena(THREE, games=30, seed=12, jobs=1)
    assert other_seed.outcomes != small.outcomes  # type: ignore[attr-defined]


def test_the_tally_adds_up(small: object) -> None:
    table = standings(small)  # type: ignore[arg-type]
    assert sum(s.wins for s in table) == sum(s.losses for s in table)
    assert all(s.games == 2 * 2 * 30 for s in table)
    for row in pair_rows(small):  # type: ignore[arg-type]
        assert row.wins + row.draws + row.losses == 60
        assert sum(row.first_as_x) + sum(row.first_as_o) == 60
    by_name = {s.name: s for s in table}
    assert by_name["perfect"].losses == 0  # it never loses, as the audit proves
    assert [s.name for s in table] == ["perfect", "arduino", "random"]


# ratings ---------------------------------------------------------------------------------------

def test_the_fit_recovers_known_ratings() -> None:
    true = {"a": 200.0, "b": 0.0, "c": -150.0, "d": -50.0}
    games = 100_000
    points = {}
    names = list(true)
    for i, first in enumerate(names):
        for second in names[i + 1:]:
            expected = 1 / (1 + 10 ** ((true[second] - true[first]) / 400))
            points[(first, second)] = (expected * games, games)
    fitted = fit_ratings(names, points)
    mean = sum(true.values()) / len(true)
    for name in names:
        assert fitted[name] == pytest.approx(true[name] - mean, abs=0.5)
    assert sum(fitted.values()) == pytest.approx(0, abs=1e-6)


def test_a_player_that_never_loses_gets_a_finite_rating() -> None:
    fitted = fit_ratings(["strong", "weak"], {("strong", "weak"): (50.0, 50)})
    assert math.isfinite(fitted["strong"]) and fitted["strong"] > 300 > -300 > fitted["weak"]


def test_bootstrap_intervals(small: object) -> None:
    ratings = bootstrap_ratings(small)  # type: ignore[arg-type]
    assert ratings == bootstrap_ratings(small)  # type: ignore[arg-type]  # seeded by the arena's seed
    for rating in ratings.values():
        assert rating.low <= rating.value <= rating.high
        assert rating.high - rating.low > 1  # the games do vary
    assert ratings["random"].high < ratings["arduino"].low  # 60 games each tell them apart


# output ----------------------------------------------------------------------------------------

def test_text_json_and_chart(small: object) -> None:
    table = standings(small)  # type: ignore[arg-type]
    text = results_text(small, table)  # type: ignore[arg-type]
    data = results_json(small, table)  # type: ignore[arg-type]
    assert json.loads(json.dumps(data))["played"] == 180
    for row in data["players"]:  # type: ignore[attr-defined]
        assert f"{row['elo']:+.0f}" in text and row["name"] in text
    svg = chart_svg(small, table)  # type: ignore[arg-type]
    root = ET.fromstring(svg)
    texts = [element.text or "" for element in root.iter("{http://www.w3.org/2000/svg}text")]
    for name in THREE:
        assert name in texts
    bars = [r for r in root.iter("{http://www.w3.org/2000/svg}rect") if r.get("fill") != "white"]
    assert len(bars) == len(THREE)
    # the longest bar is the player furthest from the mean
    widest = max(bars, key=lambda r: float(r.get("width", 0)))
    assert bars.index(widest) in (0, 2)


def test_progress_lines() -> None:
    lines = io.StringIO()
    progress = Progress("arena", lines, every=0)
    progress(5, 10)
    progress(10, 10)
    assert lines.getvalue() == "arena: 5/10 games (50%), 0.0 s\n"

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    progress = Progress("arena", screen)
    progress(10, 10)
    progress.close()
    assert screen.getvalue().startswith("\r\033[Karena: 10/10 games (100%)") and screen.getvalue().endswith("\r\033[K")


# refusals --------------------------------------------------------------------------------------

def test_bad_requests_are_refused() -> None:
    with pytest.raises(UnsupportedBoardError, match=r"Centre first \(parsons\) cannot play 4x4k4: it only plays 3×3"):
        run_arena(["random", "parsons"], Board(4, 4))
    with pytest.raises(UnsupportedBoardError, match=r"Perfect .* cannot play 7x7k5"):
        run_arena(["random", "perfect"], Board(7, 7))  # the same probe as the audit test: asked once
    with pytest.raises(UnknownPlayerError):
        run_arena(["random", "nobody"])
    with pytest.raises(ArenaError, match="at least two"):
        run_arena(["random"])
    with pytest.raises(ArenaError, match="more than once: random"):
        run_arena(["random", "Random"])
    with pytest.raises(ArenaError, match="from 1"):
        run_arena(["random", "arduino"], games=0)
    for text in ("4y4", "x", "", "3x3kk"):
        with pytest.raises(ArenaError, match="like 3x3k3"):
            parse_board(text)
    assert parse_board(" 7×7k5 ").k == 5


# the command -----------------------------------------------------------------------------------

def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "noughts", *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "src")})


def test_command_line(tmp_path: Path) -> None:
    chart = tmp_path / "ratings.svg"
    one = run_cli("arena", "random", "arduino", "mdttt", "--games", "8", "--seed", "3", "--jobs", "1", "--json",
                  "--chart", str(chart))
    picture = tmp_path / "ratings.png"
    two = run_cli("arena", "random", "arduino", "mdttt", "--games", "8", "--seed", "3", "--jobs", "2", "--json",
                  "--chart", str(picture))
    assert one.returncode == two.returncode == 0, one.stderr + two.stderr
    first, second = json.loads(one.stdout), json.loads(two.stdout)
    assert first["pairs"] == second["pairs"] and first["players"] == second["players"]
    assert first["played"] == 48 and first["complete"]
    ET.parse(chart)
    width, height = struct.unpack(">II", picture.read_bytes()[16:24])  # the PNG header's size
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and width > 200 and height > 100
    refused = run_cli("arena", "random", "parsons", "--board", "4x4")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and "cannot play 4x4k4" in refused.stderr
    bad = run_cli("arena", "random", "arduino", "--chart", "ratings.jpg")
    assert bad.returncode == 2 and "--chart writes SVG or PNG" in bad.stderr


def test_ctrl_c_prints_the_games_finished() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "noughts", "arena", "random", "minimax", "--board", "7x7k5", "--games", "500",
         "--seed", "1", "--jobs", "2", "--nodes", "5000"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        preexec_fn=default_sigint)
    time.sleep(1.2)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "stopped after" in out and "Elo" in out
    assert "Traceback" not in err and "arena stopped" in err
