"""Plug-in players: register() and the noughts.players entry points, through the registry, the engine,
a match and the command line; broken plug-ins never break noughts."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from noughts import Board, NoughtsError, players
from noughts.engine import handle
from noughts.match import Match
from noughts.players import PluginError, PluginWarning

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "plugin_player"


def dist_info(site: Path, name: str, entry_points: str) -> None:
    """What pip leaves for an installed package, as far as importlib.metadata reads it."""
    info = site / f"{name.replace('-', '_')}-1.0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[noughts.players]\n{entry_points}\n", encoding="utf-8")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder like site-packages: the example plug-in, and a package of broken ones."""
    site = tmp_path_factory.mktemp("site")
    shutil.copy(EXAMPLE / "noughts_corner_first.py", site)
    dist_info(site, "noughts-corner-first", "corner-first = noughts_corner_first:CornerFirstPlayer")
    dist_info(site, "noughts-broken", "\n".join([
        "broken = noughts_no_such_module:Player",  # cannot be imported
        "not-a-factory = noughts_corner_first:__doc__",  # a string, not something that makes players
        "perfect = noughts_corner_first:CornerFirstPlayer",  # a built-in's name: skipped
    ]))
    return site


@pytest.fixture
def discovered(site: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The registry as a process with ``site`` on its path sees it, read afresh."""
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(players, "_plugins", {})
    monkeypatch.setattr(players, "_discovery", [])
    skipped = "skipped the plug-in player 'perfect' from noughts-broken: its name is taken"
    with pytest.warns(PluginWarning, match=skipped):
        return players.names()


def test_entry_points_are_found_when_names_are_first_asked(discovered: list[str]) -> None:
    builtin = discovered[:discovered.index("strong") + 1]
    assert discovered == [*builtin, "broken", "corner-first", "not-a-factory"]  # built-ins first, then by name
    assert players.label("corner-first") == "Corner first (plug-in)"
    assert players.describe("Corner-First") == "Corner first (plug-in): win, block, else a free corner, else any cell"
    assert players.unable("corner-first", Board(4, 5)) is None


def test_broken_plug_ins_are_listed_with_the_reason(discovered: list[str]) -> None:
    assert players.describe("broken").startswith(
        "broken: cannot be used: noughts_no_such_module:Player from noughts-broken cannot be loaded: "
        "ModuleNotFoundError")
    assert "is not a class or function that makes a player" in players.describe("not-a-factory")
    for name in ("broken", "not-a-factory"):
        with pytest.raises(PluginError, match=f"the plug-in player '{name}' cannot be used"):
            players.get(name)
        assert players.unable(name, Board()) is not None
        assert name not in players.able(Board())


def test_the_example_plug_in_plays(discovered: list[str]) -> None:
    player = players.get("corner-first", random.Random(1))
    assert player.choose(Board()) == 0
    assert player.choose(Board.parse("XX./OO./...")) == 2  # wins
    assert player.choose(Board.parse("X../OO./X..")) == 5  # blocks
    assert player.choose(Board.parse("X.X/.O./O..")) == 1  # wins before it blocks


def test_the_engine_and_a_match_use_plug_ins(discovered: list[str]) -> None:
    assert handle({"cmd": "move", "player": "corner-first", "position": "X.../.O../..../...."}) == {
        "index": 3, "cell": "d1"}
    reply = handle({"cmd": "players"})
    assert reply["players"][-3:] == ["broken", "corner-first", "not-a-factory"]
    assert reply["descriptions"]["corner-first"].startswith("Corner first (plug-in)")
    assert "cannot be used" in handle({"cmd": "move", "player": "broken"})["error"]
    match = Match("corner-first", names=["Ann"], first="computer", seed=1)  # what every front end plays on
    match.new_game()
    assert match.apply_now() == 0 and match.board.x == 1  # the corner a1


def test_register_and_unregister(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(players, "_plugins", {})
    monkeypatch.setattr(players, "_discovery", [True])  # no entry points in this test

    class Last:
        name = "last"

        def __init__(self, rng: random.Random | None, *, budget: object = None) -> None:
            self.budget = budget

        def choose(self, board: Board) -> int:
            return board.legal_moves[-1]

    players.register("Last", Last, label="Last cell", description="the last free cell", boards="3x3")
    assert players.names()[-1] == "last" and players.describe("last") == "Last cell: the last free cell"
    assert players.get("LAST").choose(Board()) == 8
    assert players.unable("last", Board(4, 4)) == "it only plays 3×3 with 3 in a row"
    from noughts.budget import Budget

    budget = Budget(10)
    assert players.get("last", budget=budget).budget is budget  # passed through to the factory
    players.register("last", Last, boards=lambda board: None if board.size < 20 else "too big")
    assert players.unable("last", Board(5, 5)) == "too big" and players.label("last") == "last"
    players.unregister("last")
    assert "last" not in players.names()
    with pytest.raises(players.UnknownPlayerError):
        players.get("last")


@pytest.mark.parametrize(("args", "words"), [
    (("perfect", lambda rng, budget=None: None), "is a built-in player's name"),
    (("seed001-rules", lambda rng, budget=None: None), "is a built-in player's name"),
    (("two words", lambda rng, budget=None: None), "is a word such as"),
    (("", lambda rng, budget=None: None), "is a word such as"),
    (("x", "not callable"), "must be callable"),
])
def test_register_refuses_what_cannot_work(monkeypatch: pytest.MonkeyPatch, args: tuple[str, object],
                                           words: str) -> None:
    monkeypatch.setattr(players, "_plugins", {})
    monkeypatch.setattr(players, "_discovery", [True])
    with pytest.raises(PluginError, match=words):
        players.register(*args)  # type: ignore[arg-type]
    with pytest.raises(PluginError, match="boards is 'any'"):
        players.register("x", lambda rng, budget=None: None, boards="4x4")


def test_a_plug_in_failing_in_play_is_an_error_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(players, "_plugins", {})
    monkeypatch.setattr(players, "_discovery", [True])

    class Chooser:
        def __init__(self, answer: object) -> None:
            self.answer = answer

        def choose(self, board: Board) -> object:
            if isinstance(self.answer, Exception):
                raise self.answer
            return self.answer

    def failing_factory(rng: object, budget: object = None) -> object:
        raise RuntimeError("no GPU")

    players.register("raises", lambda rng, budget=None: Chooser(ZeroDivisionError("oops")))
    players.register("cheats", lambda rng, budget=None: Chooser(0))
    players.register("fails", failing_factory)
    players.register("nothing", lambda rng, budget=None: object())
    players.register("checks", lambda rng, budget=None: Chooser(1), boards=lambda board: 1 / 0)
    board = Board.parse("X........")
    with pytest.raises(PluginError, match="'raises' failed: ZeroDivisionError: oops"):
        players.get("raises").choose(board)
    with pytest.raises(PluginError, match="'cheats' chose 0, which is not a legal move"):
        players.get("cheats").choose(board)
    with pytest.raises(PluginError, match="'fails' could not be made: RuntimeError: no GPU"):
        players.get("fails")
    with pytest.raises(PluginError, match="has no choose"):
        players.get("nothing")
    assert players.unable("checks", board) == "its check of the board failed: ZeroDivisionError: division by zero"
    assert handle({"cmd": "move", "player": "raises"}) == {
        "error": "the plug-in player 'raises' failed: ZeroDivisionError: oops"}
    assert issubclass(PluginError, NoughtsError)


# as an installed package, in a new process --------------------------------------------------

def noughts(site: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(site)])}
    return subprocess.run([sys.executable, "-m", "noughts", *args], input=stdin, capture_output=True, text=True,
                          env=env, timeout=60, check=False)


def test_the_command_line_and_the_engine_play_an_installed_plug_in(site: Path) -> None:
    listed = noughts(site, "players")
    assert listed.returncode == 0
    assert "corner-first   Corner first (plug-in): win, block, else a free corner, else any cell" in listed.stdout
    assert "broken         broken: cannot be used: noughts_no_such_module:Player" in listed.stdout
    assert "PluginWarning: noughts: skipped the plug-in player 'perfect'" in listed.stderr
    assert "Traceback" not in listed.stderr
    moved = noughts(site, "move", "--player", "corner-first", ".O./.X./...")
    assert (moved.returncode, moved.stdout) == (0, "corner-first plays a1 (cell 1)\n")
    broken = noughts(site, "move", "--player", "broken")
    assert broken.returncode == 2 and broken.stderr.splitlines()[-1].startswith(
        "noughts: the plug-in player 'broken' cannot be used: noughts_no_such_module:Player")
    engine = noughts(site, "engine", stdin='{"cmd":"move","player":"corner-first","rows":4,"cols":4,"id":1}\n')
    assert json.loads(engine.stdout) == {"id": 1, "index": 0, "cell": "a1"}


@pytest.mark.slow
def test_pip_installs_the_example_and_noughts_plays_it(tmp_path: Path) -> None:
    """The example package as a user installs it: pip builds it (setuptools) and writes its entry point."""
    source = shutil.copytree(EXAMPLE, tmp_path / "source")  # setuptools builds inside the source folder
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "--no-build-isolation", "--no-deps", "--no-index", "--target", str(target), str(source)],
                   check=True, capture_output=True, timeout=300)
    assert (target / "noughts_corner_first-1.0.0.dist-info" / "entry_points.txt").is_file()
    moved = noughts(target, "move", "--player", "corner-first", "--json", "X.../.O../..../....")
    assert (moved.returncode, json.loads(moved.stdout), moved.stderr) == (0, {"index": 3, "cell": "d1"}, "")
