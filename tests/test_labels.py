"""One vocabulary: every front end offers who starts and the opponents in the same words.

Each front end is asked what it shows a person (the terminal's menus, the window's start screen,
the page's welcome and its static files, the panel's LCD, the robot's menu) and the labels are
compared with each other, so a front end that words a choice its own way fails here.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from noughts import Board, players, text
from noughts.match import PERSON

WHO_STARTS = [label for _, label, _ in text.first_choices()]
OPPONENTS = {name: text.opponent_label(name) for name in players.names()}


def terminal_menus(tmp_path: Path) -> tuple[list[str], dict[str, str]]:
    """The labels of the terminal's opponent menu and who-starts menu (Enter through both, then EOF)."""
    env = {**os.environ, "NOUGHTS_DB": str(tmp_path / "noughts.db"), "NO_COLOR": "1", "HOME": str(tmp_path)}
    shown = subprocess.run([sys.executable, "-m", "noughts", "play", "--seed", "1"], input=b"\n\n",
                           capture_output=True, env=env, timeout=60, check=False).stdout.decode()
    menus: list[list[str]] = []
    for line in shown.splitlines():
        choice = re.match(r"^ +(\d+)  (\S+(?: \S+)*?)(?:  +.*)?$", line)
        if choice and len(line) - len(line.lstrip()) < 6:
            if choice.group(1) == "1":
                menus.append([])
            menus[-1].append(choice.group(2))
    opponents, firsts = menus[0], menus[1]
    return firsts, dict(zip([*players.names(), PERSON], opponents, strict=True))


def window_choices() -> tuple[list[str], dict[str, str]]:
    from noughts.desktop.controller import Controller

    class Worker:  # the window's worker, doing nothing: only the start screen is looked at
        def submit(self, token: int, job: Callable[[], object], delay: float = 0.0) -> None:
            pass

    view = Controller(worker=Worker()).view()  # type: ignore[arg-type]
    return [c.label for c in view.sides], {c.key: c.label for c in view.opponents}


def web_welcome(tmp_path: Path) -> tuple[list[str], dict[str, str]]:
    from noughts.web import create_app

    app = create_app(str(tmp_path / "web.db"), notify=lambda line: None)
    welcome = json.loads(app.state.lobby.welcome())
    return [c["label"] for c in welcome["first"]], {p["name"]: p["label"] for p in welcome["players"]}


def panel_choices() -> list[str]:
    """What the panel's LCD says of each column of its choice grid, against the computer."""
    from noughts.hardware.controller import ButtonEvent, PanelController, PanelSettings
    from noughts.hardware.defaults import GRID_FIRST

    class Lcd:
        lines = ("", "")

        def set_led(self, name: str, on: bool) -> None:
            pass

        def lcd_write(self, line1: str, line2: str) -> None:
            self.lines = (line1, line2)

    said = []
    for column in range(len(GRID_FIRST)):
        out = Lcd()
        panel = PanelController(out, PanelSettings(flash=False, seed=1))  # type: ignore[arg-type]
        panel.start(0.0)
        cell = str(column + 1)  # the first row of the grid
        panel.handle(ButtonEvent(cell, True), 1.0)
        panel.handle(ButtonEvent("reset", True), 1.1)
        panel.handle(ButtonEvent("reset", False), 1.2)
        panel.handle(ButtonEvent(cell, False), 1.3)
        said.append(out.lines[1])
    return said


def robot_menu() -> str:
    """The robot's menu line in the terminal, as a person reads it before choosing."""
    from noughts.robot import app

    source = Path(app.__file__).read_text(encoding="utf-8")
    assert "text.opponent_label(name)" in source  # the menu below is what the robot builds
    return ", ".join(f"{key} {text.opponent_label(name)}" for key, name in app.SEED_MENU.items())


def test_every_front_end_says_who_starts_in_the_same_words(tmp_path: Path) -> None:
    terminal, _ = terminal_menus(tmp_path)
    window, _ = window_choices()
    web, _ = web_welcome(tmp_path)
    assert terminal == window == web == WHO_STARTS
    from noughts.hardware.defaults import GRID_FIRST

    assert panel_choices() == [text.first_label(rule) for rule in GRID_FIRST]
    assert len(set(WHO_STARTS)) == len(WHO_STARTS)


def test_every_front_end_names_the_opponents_in_the_same_words(tmp_path: Path) -> None:
    _, terminal = terminal_menus(tmp_path)
    _, window = window_choices()
    _, web = web_welcome(tmp_path)
    assert terminal == {**OPPONENTS, PERSON: text.PERSON_LABEL}
    assert window == {**OPPONENTS, PERSON: text.PERSON_LABEL}
    able = players.able(Board())
    assert web == {name: label for name, label in OPPONENTS.items() if name in able}
    assert all(f"{key} {OPPONENTS[name]}" in robot_menu() for key, name in [("e", "easy"), ("h", "hard")])


@pytest.mark.parametrize("static", ["index.html", "app.js"])
def test_the_page_words_no_choice_itself(static: str) -> None:
    from noughts import web

    page = (Path(web.__file__).parent / "static" / static).read_text(encoding="utf-8")
    page = re.sub(r"^\s*//.*$|  // .*$", "", page, flags=re.M)  # comments may give examples
    for label in [*WHO_STARTS, *OPPONENTS.values(), text.PERSON_LABEL]:
        assert f">{label}<" not in page and f'"{label}"' not in page, label


def test_the_page_template_words_nothing_itself() -> None:
    """index.html holds only {{placeholders}} where a person reads words: the server fills them from text.py."""
    from noughts import web

    page = (Path(web.__file__).parent / "static" / "index.html").read_text(encoding="utf-8")
    between_tags = [part.strip() for part in re.findall(r">([^<]+)<", page) if part.strip()]
    labels = re.findall(r'\b(?:placeholder|aria-label|alt|title|value)="([^"]*)"', page)
    worded = [said for said in [*between_tags, *labels] if re.search(r"[A-Za-z]", re.sub(r"\{\{\w+\}\}", "", said))]
    assert worded == []
    assert set(re.findall(r"\{\{(\w+)\}\}", page)) <= {*text.WEB_PAGE, "words"}
    # the labels the page shares with the other front ends' vocabulary are text.py's own
    assert text.WEB_PAGE["play_computer"] == text.WEB_WORDS["play_computer"]


def test_every_front_end_heads_the_two_choices_in_the_same_words(tmp_path: Path) -> None:
    from noughts import web
    from noughts.desktop.controller import Controller
    from noughts.web.app import render_page

    env = {**os.environ, "NOUGHTS_DB": str(tmp_path / "noughts.db"), "NO_COLOR": "1", "HOME": str(tmp_path)}
    terminal = subprocess.run([sys.executable, "-m", "noughts", "play", "--seed", "1"], input=b"\n\n",
                              capture_output=True, env=env, timeout=60, check=False).stdout.decode().splitlines()
    assert f"{text.OPPONENT_HEADING}:" in terminal and any(line.startswith(text.FIRST_HEADING) for line in terminal)

    class Worker:
        def submit(self, token: int, job: Callable[[], object], delay: float = 0.0) -> None:
            pass

    assert Controller(worker=Worker()).view().side_heading == text.FIRST_HEADING  # type: ignore[arg-type]
    page = render_page((Path(web.__file__).parent / "static" / "index.html").read_text(encoding="utf-8")).decode()
    assert f">{text.OPPONENT_HEADING}</label>" in page and f">{text.FIRST_HEADING}</label>" in page
    robot_said = text.who_starts("alternate")
    assert robot_said.startswith(f"{text.FIRST_HEADING}: Take turns")
