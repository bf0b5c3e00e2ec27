"""What an operator meets running ``noughts web``: secrets out of ``ps``, a trusted proxy too
broad, a supervisor killed outright, a malformed Redis address, a Redis that is full.

Real processes and a real ``redis-server`` (Debian's package), as in tests/test_web_scale.py,
whose helpers these are.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from child_signals import stop
from noughts.cli import main
from test_web_scale import ENV, free_port, running_redis, wait_until

pytestmark = pytest.mark.slow

PASSWORD = "hunter2-not-for-ps"


@pytest.fixture(scope="module")
def locked_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real redis-server that wants a password; its URL, password included."""
    folder = tmp_path_factory.mktemp("redis-locked")
    port = free_port()
    with running_redis(["--port", str(port), "--dir", str(folder), "--requirepass", PASSWORD],
                       redis.Redis(port=port, password=PASSWORD), "redis-server with a password"):
        yield f"redis://:{PASSWORD}@127.0.0.1:{port}/0"


def command_line(pid: int) -> bytes:
    return Path(f"/proc/{pid}/cmdline").read_bytes()


def children(pid: int) -> list[int]:
    """The live processes whose parent is ``pid``."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(stat.parent.name))
    return found


def alive(pid: int) -> bool:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] != "Z"


def can_listen(port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


@contextlib.contextmanager
def web(folder: Path, *flags: str, env: dict[str, str] | None = None
        ) -> Iterator[tuple[subprocess.Popen[bytes], int, Path]]:
    """``noughts web`` with these flags on a free port, until it answers /healthz; its output goes to a
    file in ``folder`` (never a pipe nobody reads: a full one would stall the server)."""
    import json
    import urllib.request

    port = free_port()
    output = folder / f"web-{port}.txt"
    with output.open("wb") as sink:
        process = subprocess.Popen([sys.executable, "-m", "noughts", "web", "--port", str(port), "--no-scores",
                                    *flags], env=env or ENV, stdout=sink, stderr=subprocess.STDOUT)

    def healthy() -> bool:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as reply:
            return bool(json.load(reply)["ok"])

    try:
        wait_until(healthy, f"noughts web on port {port}", process)
        yield process, port, output
    finally:
        stop(process)


# secrets: out of the command line -------------------------------------------------------------

def test_the_redis_password_can_come_from_a_file_or_the_environment_and_never_shows_in_ps(
        locked_redis: str, tmp_path: Path) -> None:
    secret = tmp_path / "redis-url"
    secret.write_text(locked_redis + "\n", encoding="utf-8")
    with web(tmp_path, "--redis-file", str(secret), "--workers", "2") as (process, _, output):
        processes = [process.pid, *children(process.pid)]
        assert len(processes) >= 3  # the supervisor and its workers
        for pid in processes:
            assert PASSWORD.encode() not in command_line(pid)
    said = output.read_text()
    assert "redis://:***@127.0.0.1" in said and PASSWORD not in said

    environ = {**ENV, "NOUGHTS_REDIS_URL": locked_redis}
    with web(tmp_path, env=environ) as (process, _, output):
        assert PASSWORD.encode() not in command_line(process.pid)
    said = output.read_text()
    assert "rooms in Redis at redis://:***@127.0.0.1" in said and PASSWORD not in said


def test_a_secrets_file_that_cannot_be_read_is_one_sentence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nowhere"
    assert main(["web", "--redis-file", str(missing), "--port", "0"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"noughts: cannot read --redis-file {str(missing)!r} (No such file or directory)\n"

    empty = tmp_path / "empty"
    empty.write_text("\n", encoding="utf-8")
    assert main(["web", "--db-file", str(empty), "--port", "0"]) == 2
    assert capsys.readouterr().err == (f"noughts: --db-file {str(empty)!r} is empty: its first line is the value "
                                       "of --db\n")

    binary = tmp_path / "binary"
    binary.write_bytes(b"\xff\xfe\x00")
    assert main(["web", "--redis-file", str(binary), "--port", "0"]) == 2
    assert capsys.readouterr().err == f"noughts: cannot read --redis-file {str(binary)!r} (it is not UTF-8 text)\n"

    assert main(["web", "--redis", "redis://127.0.0.1:1/0", "--redis-file", str(binary), "--port", "0"]) == 2
    assert capsys.readouterr().err == "noughts: give --redis or --redis-file, not both\n"


def test_the_database_address_comes_from_its_file(tmp_path: Path) -> None:
    from noughts.cli import build_parser
    from noughts.cli.play import secret_option

    secret = tmp_path / "db"
    secret.write_text("postgresql://nou:s3cret@db/nou\nignored\n", encoding="utf-8")
    options = build_parser().parse_args(["web", "--db-file", str(secret)])
    assert secret_option(options.db, options.db_file, "--db") == "postgresql://nou:s3cret@db/nou"


# operator mistakes said in one sentence ---------------------------------------------------------

def test_a_trusted_proxy_that_takes_in_everyone_is_warned_about(tmp_path: Path) -> None:
    with web(tmp_path, "--trusted-proxy", "0.0.0.0/0", "--trusted-proxy", "10.0.0.0/8,::/0") as (_, _, output):
        pass
    lines = output.read_text().splitlines()
    warnings = [line for line in lines if "warning" in line]
    assert warnings == [
        f"noughts web: warning: the trusted proxy {network} takes in most of the Internet, so any client can pick "
        "the address its limits count (name the proxy's own address)" for network in ("0.0.0.0/0", "::/0")]
    with web(tmp_path, "--trusted-proxy", "127.0.0.1,10.0.0.0/8") as (_, _, output):
        pass
    assert "warning" not in output.read_text()


@pytest.mark.parametrize("address", ["redis://[::1", "redis://:pw@[::1", "redis://127.0.0.1:port/0"])
def test_a_malformed_redis_address_is_one_sentence_naming_redis(address: str,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["web", "--redis", address, "--port", "0"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("noughts: --redis '") and "is not a Redis address like" in err, err
    assert err.count("\n") == 1 and "internal error" not in err and "pw" not in err


# workers die with their supervisor --------------------------------------------------------------

def test_workers_stop_when_their_supervisor_is_killed_outright(tmp_path: Path) -> None:
    port = free_port()
    folder = tmp_path / "redis"
    folder.mkdir()
    with running_redis(["--port", str(port), "--dir", str(folder)], redis.Redis(port=port), "redis-server"), \
            web(tmp_path, "--redis", f"redis://127.0.0.1:{port}/0", "--workers", "2") as (supervisor, web_port, _):
        workers = [pid for pid in children(supervisor.pid) if b"spawn_main" in command_line(pid)]
        assert len(workers) == 2
        supervisor.kill()  # SIGKILL: the supervisor cannot stop them itself
        supervisor.wait(10)
        try:
            wait_until(lambda: not any(map(alive, workers)), "the workers' exit", seconds=30)
        finally:
            for pid in filter(alive, workers):
                os.kill(pid, signal.SIGKILL)
        wait_until(lambda: can_listen(web_port), "the port's release", seconds=10)


@pytest.mark.parametrize("kernel", [True, False], ids=["prctl", "watching thread"])
def test_a_worker_whose_supervisor_is_already_gone_stops(kernel: bool) -> None:
    # the supervisor named is not this child's parent: as if it had died before the child started
    code = ("import time\nfrom noughts.web.supervisor import die_with_supervisor\n"
            f"die_with_supervisor(1, kernel={kernel})\ntime.sleep(60)\n")
    child = subprocess.run([sys.executable, "-c", code], env=ENV, timeout=30, check=False)
    assert child.returncode == -signal.SIGTERM


def test_a_worker_gets_sigterm_when_its_parent_dies() -> None:
    # a parent that starts a worker and is killed: the worker (its pid written to stdout) must go too
    code = ("import os, subprocess, sys, time\n"
            "worker = subprocess.Popen([sys.executable, '-c', 'import os, time\\n"
            "from noughts.web.supervisor import die_with_supervisor\\n"
            "die_with_supervisor(%d)\\nprint(\"ready\", flush=True)\\ntime.sleep(60)' % os.getpid()],"
            " stdout=subprocess.PIPE)\n"
            "worker.stdout.readline()\nprint(worker.pid, flush=True)\ntime.sleep(60)\n")
    parent = subprocess.Popen([sys.executable, "-c", code], env=ENV, stdout=subprocess.PIPE)
    assert parent.stdout is not None
    worker = int(parent.stdout.readline())
    try:
        assert alive(worker)
        parent.kill()
        parent.wait(10)
        wait_until(lambda: not alive(worker), "the worker's exit", seconds=30)
    finally:
        if alive(worker):
            os.kill(worker, signal.SIGKILL)
        parent.stdout.close()


# Redis at its maxmemory -------------------------------------------------------------------------

def fill(client: redis.Redis) -> None:
    """Write until Redis refuses for want of memory."""
    for size in (10_000, 100, 1):  # (a big write's own buffer counts: smaller ones fit after it)
        with contextlib.suppress(redis.exceptions.OutOfMemoryError):
            for n in range(100_000):
                client.set(f"junk:{size}:{n}", "x" * size)
    with pytest.raises(redis.exceptions.OutOfMemoryError):
        client.set("junk:more", "x")


def test_a_full_redis_is_said_to_be_full_and_no_process_is_taken_for_dead(tmp_path: Path) -> None:
    import asyncio

    from noughts.text import WEB_STORE_FULL, WEB_STORE_UNREACHABLE
    from noughts.web import running
    from test_web_scale import Player

    port = free_port()
    client = redis.Redis(port=port)
    with running_redis(["--port", str(port), "--dir", str(tmp_path), "--maxmemory", "4mb",
                        "--maxmemory-policy", "noeviction"], client, "redis-server with a small maxmemory"), \
            running(redis=f"redis://127.0.0.1:{port}/0", scores=False, heartbeat=0.05) as base:
        beats = redis.Redis(port=port)
        wait_until(lambda: beats.zcard("noughts:processes") == 1, "the first heartbeat", seconds=20)
        fill(client)
        before = beats.zrange("noughts:processes", 0, -1, withscores=True)

        async def create_room() -> dict[str, object]:
            player = await Player.open(int(base.rsplit(":", 1)[1]))
            try:
                await player.send(type="create_room", name="Ann")
                while (message := await player.next())["type"] not in ("error", "joined"):
                    pass
                return message
            finally:
                await player.close()

        refused = asyncio.run(create_room())
        assert refused["type"] == "error" and refused["message"] == WEB_STORE_FULL, refused
        assert WEB_STORE_UNREACHABLE not in str(refused)
        # the heartbeat goes on while Redis is full: the process's lease is renewed, not run out
        wait_until(lambda: beats.zrange("noughts:processes", 0, -1, withscores=True)[0][1] > before[0][1],
                   "a heartbeat while Redis is full", seconds=20)
        beats.close()
