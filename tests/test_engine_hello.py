"""The engine's version handshake: hello, and what it promises."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from noughts import __version__
from noughts.engine import _FIELDS, DEPRECATED, PROTOCOL, handle

ROOT = Path(__file__).resolve().parent.parent


def test_hello_names_the_engine_its_version_protocol_and_commands() -> None:
    reply = handle({"cmd": "hello", "id": 1})
    assert reply == {"id": 1, "protocol": PROTOCOL, "compatible": True, "engine": "noughts",
                     "version": __version__, "commands": ["hello", "move", "analyse", "status", "players"],
                     "deprecated": DEPRECATED}
    assert set(reply["commands"]) == set(_FIELDS)  # every command the engine answers, and no other
    for command in reply["commands"]:  # each is really there: no "unknown cmd"
        assert "unknown cmd" not in handle({"cmd": command}).get("error", "")


@pytest.mark.parametrize(("wanted", "compatible", "words"), [
    (PROTOCOL, True, None),
    (PROTOCOL + 1, False, f"older than the client's {PROTOCOL + 1}: upgrade noughts"),
    (PROTOCOL + 40, False, "upgrade noughts"),
    (0, False, "there is no protocol 0: versions count from 1"),
    (-3, False, "there is no protocol -3"),
])
def test_hello_says_whether_the_clients_version_fits(wanted: int, compatible: bool, words: str | None) -> None:
    reply = handle({"cmd": "hello", "protocol": wanted})
    assert reply["compatible"] is compatible and reply["protocol"] == PROTOCOL
    if words is None:
        assert "message" not in reply
    else:
        assert words in reply["message"]


@pytest.mark.parametrize("request_", [
    {"cmd": "hello", "protocol": "1"}, {"cmd": "hello", "protocol": 1.0}, {"cmd": "hello", "protocol": True},
    {"cmd": "hello", "client": "me"}, {"cmd": "hello", "position": "X........"},
])
def test_hello_refuses_what_it_does_not_know(request_: dict[str, object]) -> None:
    reply = handle(request_)
    assert set(reply) == {"error"} and "internal error" not in reply["error"]


def test_hello_through_the_real_engine() -> None:
    done = subprocess.run([sys.executable, "-m", "noughts", "engine"], input='{"cmd":"hello","protocol":1}\n',
                          capture_output=True, text=True, timeout=60, check=True,
                          env={"PYTHONPATH": str(ROOT / "src"), "PATH": ""})
    assert json.loads(done.stdout)["compatible"] is True and done.stderr == ""


def test_the_promise_is_in_the_document() -> None:
    text = (ROOT / "docs" / "engine-protocol.md").read_text(encoding="utf-8")
    promise = text[text.index("## Compatibility promise"):]
    for words in ("Never changes", "May change in a minor release", "Deprecation", f"is **{PROTOCOL}**"):
        assert words in promise
