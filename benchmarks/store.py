"""Recording finished games into SQLite and PostgreSQL: ``python benchmarks/store.py [--quick] [--json FILE]``.

For each backend (a SQLite file in a temporary folder; a PostgreSQL server from Debian's
packages started in a temporary folder, as the tests do, with fsync on) it reports:

- games/s recorded one per transaction (``Store.record``) and in batches of 100
  (``Store.record_many``, what the web's recorder does under load);
- ms per game with 10,000 names in the people table, the web's way before this change (record
  the game, then read the whole score table for the ``scores`` message) beside the way now (the
  ten leading names through an index), each game alone and in batches of 100;
- games lost to SIGKILL: a child process records through the web's Recorder (batches of 100)
  as fast as it can and is killed; the loss is what it had accepted minus what the store kept;
  then the same at people's pace (60 and 400 games ending a second, for 3 s), where a game that
  ends alone waits the recorder's ``gather`` for others to share its commit.

Each figure is the median of several runs, peers measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src"), str(HERE.parent / "tests")]

from noughts import Game  # noqa: E402
from noughts.store import Finished, Participant, Store, open_store  # noqa: E402

GAME = Game.from_text("a1 b1 a2 b2 a3")
CHILD = """
import asyncio, signal, sys, time
sys.path.insert(0, sys.argv[3])
from noughts import Game
from noughts.store import Participant
from noughts.web.recording import Recorder

async def main():
    recorder = Recorder(sys.argv[1], batch=int(sys.argv[2]))
    await recorder.start()
    game, hard = Game.from_text("a1 b1 a2 b2 a3"), Participant.computer("hard")
    number, rate, start = 0, float(sys.argv[4]), time.monotonic()  # rate 0: as fast as it can
    while True:
        number += 1
        refused = await recorder.reserve()  # as the lobby does before the change that ends a game is stored
        recorder.write_later("room", game, Participant.human(f"p{number % 5000}"), hard, lambda *a: None,
                             game_key=f"game-{number}", reserved=refused is None, refused=refused)
        if refused is None:
            print(number, flush=True)
        await asyncio.sleep(max(0.0, start + number / rate - time.monotonic()) if rate else 0)

asyncio.run(main())
"""


def fill_people(store: Store, names: int) -> None:
    """``names`` two-person players, in one transaction."""
    people = [Participant.human(f"person-{n}") for n in range(names)]
    store.record_many([Finished(GAME, people[n], people[(n + 1) % names]) for n in range(names)])


def timed(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def old_scores_message(store: Store) -> object:
    """What the web sent after each game before: the whole table read, sorted in Python."""
    scores = store.scores()
    return sorted(scores.people.items(), key=lambda item: (-item[1].wins, item[0]))[:10]


def measure(where: Callable[[], str], runs: int, games: int) -> dict[str, Any]:
    ann, hard = Participant.human("Ann"), Participant.computer("hard")
    single, batched = [], []
    for _ in range(runs):
        with open_store(where()) as store:
            single.append(games / timed(lambda s=store: [s.record(GAME, ann, hard) for _ in range(games)]))
        with open_store(where()) as store:
            batch = [Finished(GAME, ann, hard) for _ in range(100)]
            batched.append(games / timed(lambda s=store, b=batch: [s.record_many(b) for _ in range(games // 100)]))
    per_game: dict[str, list[float]] = {"before, alone": [], "now, alone": [], "now, batches of 100": []}
    for _ in range(runs):
        with open_store(where()) as store:
            fill_people(store, 10_000)
            count = max(games // 20, 10)
            per_game["before, alone"].append(timed(lambda s=store, n=count: [
                (s.record(GAME, ann, hard), old_scores_message(s)) for _ in range(n)]) / count)
            per_game["now, alone"].append(timed(lambda s=store, n=count: [
                (s.record(GAME, ann, hard), s.scores(top_people=10)) for _ in range(n)]) / count)
            batch = [Finished(GAME, ann, hard) for _ in range(100)]
            per_game["now, batches of 100"].append(timed(lambda s=store, b=batch: [
                (s.record_many(b), s.scores(top_people=10)) for _ in range(games // 100)]) / (games // 100 * 100))
    return {"games_per_s": {"one per transaction": statistics.median(single),
                            "batches of 100": statistics.median(batched)},
            "ms_per_game_10000_people": {k: 1000 * statistics.median(v) for k, v in per_game.items()}}


def sigkill_loss(where: Callable[[], str], runs: int, batch: int = 100, rate: float = 0.0) -> list[int]:
    """Games lost to a SIGKILL after 3,000 accepted (``rate`` 0: ended as fast as a loop can), or
    after 3 s at ``rate`` games a second."""
    losses = []
    for _ in range(runs):
        db = where()
        with tempfile.TemporaryDirectory() as folder:
            script, out = Path(folder, "child.py"), Path(folder, "out")
            script.write_text(CHILD)
            with out.open("w") as sink:
                child = subprocess.Popen([sys.executable, str(script), db, str(batch), str(HERE.parent / "src"),
                                          str(rate)], stdout=sink)
                deadline = time.monotonic() + (60 if not rate else 30)
                while time.monotonic() < deadline and child.poll() is None:
                    written = out.read_text().count("\n")
                    if (written >= 3000) if not rate else (written >= 3 * rate + 1):  # 3 s of games (after the first)
                        break
                    time.sleep(0.01)
                child.send_signal(signal.SIGKILL)
                child.wait()
            accepted = sum(1 for line in out.read_text().splitlines(keepends=True) if line.endswith("\n"))
        with open_store(db, read_only=True) as store:
            losses.append(accepted - store.count_games())
    return losses


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer games and runs")
    parser.add_argument("--json", metavar="FILE", help="write the figures here too")
    args = parser.parse_args()
    runs, games = (3, 1000) if args.quick else (5, 3000)
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as folder:
        files = iter(range(10**6))
        backends: dict[str, Callable[[], str]] = {"sqlite": lambda: str(Path(folder, f"{next(files)}.db"))}
        server = None
        try:
            from pg_server import PostgresServer

            server = PostgresServer()
            server.fsync = True  # a real server's durability, not the tests' shortcut
            server.start()
            backends["postgresql"] = server.fresh_url
        except Exception as error:  # no PostgreSQL here: its rows say why
            print(f"PostgreSQL: n/a ({error})")
        try:
            for name, where in backends.items():
                figures = measure(where, runs, games)
                figures["sigkill_lost"] = sigkill_loss(where, runs)
                paced = {rate: sigkill_loss(where, runs, rate=rate) for rate in (60, 400)}
                figures["sigkill_lost_paced"] = {str(rate): lost for rate, lost in paced.items()}
                results[name] = figures
                print(f"\n{name}")
                for label, value in figures["games_per_s"].items():
                    print(f"  games/s, {label:<28} {value:10,.0f}")
                for label, value in figures["ms_per_game_10000_people"].items():
                    print(f"  ms/game with 10,000 names, {label:<20} {value:8.3f}")
                lost = figures["sigkill_lost"]
                print(f"  SIGKILL, batches of 100: games lost {lost} (median {statistics.median(lost):g}, "
                      f"max {max(lost)}; the bound is 100)")
                for rate, lost in paced.items():
                    print(f"  SIGKILL after 3 s of {rate} games ending a second: games lost {lost} "
                          f"(median {statistics.median(lost):g}, max {max(lost)})")
        finally:
            if server is not None:
                server.stop()
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
