"""Speed of the noughts environments beside PettingZoo's and OpenSpiel's tic-tac-toe, in one run.

    python benchmarks/envs.py [--quick] [--seconds 2] [--boards 4096] [--json FILE]

``make bench`` runs it after ``run.py`` with the same ``BENCH_ARGS``: ``--quick`` makes each timed
run 0.5 s, ``--json results.json`` writes these figures to ``results-envs.json`` (beside, not over,
run.py's), and run.py's other options are ignored.

Every row plays random legal moves on 3×3 (the actions drawn from the action masks, the draw
counted in the time) and prints the best of three timed runs, per second of CPU time:

* steps/s of the PettingZoo AEC env ``noughts.envs.mnk_v0`` and of PettingZoo's ``tictactoe_v3``
  (one ``step`` = one move, ``last()`` read before each);
* steps/s of the Gymnasium env ``noughts/Mnk-v0`` against the ``random`` player and against
  ``perfect`` (one ``step`` = the agent's move and the opponent's reply);
* board-steps/s of the vectorised env (``--boards`` games each step; target ≥ 1,000,000);
* the time of OpenSpiel's ``random_sim_test`` (100 games, serialising) on ``python_noughts_mnk``,
  on OpenSpiel's own ``python_tic_tac_toe`` and on its C++ ``tic_tac_toe``.

A framework that is not installed turns its rows into "n/a" with the reason; it never crashes.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import numpy as np

VECTOR_TARGET = 1_000_000.0


def rate(run: Callable[[float], int], seconds: float, repeats: int = 3) -> float:
    """Steps per CPU second: the best of ``repeats`` runs of ``run(seconds)``, which returns its steps.

    CPU time, not wall time, so that other work on a shared machine does not count against the
    environment; on an idle machine the two agree.
    """
    best = 0.0
    for _ in range(repeats):
        started = time.process_time()
        steps = run(seconds)
        best = max(best, steps / (time.process_time() - started))
    return best


def aec_steps(make: Callable[[], Any]) -> Callable[[float], int]:
    """Random legal moves through a PettingZoo AEC env, resetting at each game's end."""
    env = make()
    rng = np.random.default_rng(0)

    def run(seconds: float) -> int:
        steps = 0
        deadline = time.process_time() + seconds
        env.reset(seed=0)
        while time.process_time() < deadline:
            for _ in range(200):
                observation, _, terminated, truncated, _ = env.last()
                if terminated or truncated:
                    env.reset()
                    continue
                legal = np.flatnonzero(observation["action_mask"])
                env.step(int(legal[int(rng.integers(len(legal)))]))
                steps += 1
        return steps

    return run


def gymnasium_steps(opponent: str) -> Callable[[float], int]:
    import gymnasium

    import noughts.envs

    env = gymnasium.make(noughts.envs.GYMNASIUM_ID, opponent=opponent)
    rng = np.random.default_rng(0)

    def run(seconds: float) -> int:
        steps = 0
        deadline = time.process_time() + seconds
        observation, _ = env.reset(seed=0)
        while time.process_time() < deadline:
            for _ in range(200):
                legal = np.flatnonzero(observation["action_mask"])
                observation, _, terminated, truncated, _ = env.step(int(legal[int(rng.integers(len(legal)))]))
                steps += 1
                if terminated or truncated:
                    observation, _ = env.reset()
        return steps

    return run


def vector_steps(boards: int) -> Callable[[float], int]:
    from noughts.envs.vector import VectorMnkEnv

    env = VectorMnkEnv(boards, 3, 3, 3)
    rng = np.random.default_rng(0)

    def run(seconds: float) -> int:
        steps = 0
        env.reset()
        deadline = time.process_time() + seconds
        while time.process_time() < deadline:
            for _ in range(20):
                env.step(env.random_actions(rng))
                steps += boards
        return steps

    return run


def sim_test_seconds(name: str) -> float:
    import pyspiel

    import noughts.envs.openspiel  # noqa: F401  # registers python_noughts_mnk
    if name == "python_tic_tac_toe":
        import open_spiel.python.games.tic_tac_toe  # noqa: F401  # registers it

    game = pyspiel.load_game(name)
    started = time.process_time()
    pyspiel.random_sim_test(game, num_sims=100, serialize=True, verbose=False)
    return time.process_time() - started


def measure(label: str, unit: str, work: Callable[[], float], rows: list[dict[str, Any]]) -> None:
    print(f"[bench envs] {label}", file=sys.stderr, flush=True)
    try:
        value: float | None = work()
        note = ""
    except ImportError as error:
        value, note = None, f"not installed: {error}"
    rows.append({"name": label, "unit": unit, "value": value, "note": note})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="length of each timed run")
    parser.add_argument("--quick", action="store_true", help="timed runs of 0.5 s")
    parser.add_argument("--boards", type=int, default=4096, help="games the vectorised env steps at once")
    parser.add_argument("--json", type=Path, help="also write the figures to FILE-envs.json")
    options, _ = parser.parse_known_args(argv)  # make bench passes run.py's options too
    seconds = 0.5 if options.quick else options.seconds
    warnings.simplefilter("ignore")  # PettingZoo and Gymnasium warn about things that do not matter here
    rows: list[dict[str, Any]] = []

    def noughts_aec() -> float:
        from noughts.envs import mnk_v0

        return rate(aec_steps(mnk_v0.env), seconds)

    def pettingzoo_tictactoe() -> float:
        import pettingzoo

        return rate(aec_steps(lambda: pettingzoo.make("aec", "classic/tictactoe-v3")), seconds)

    measure("noughts mnk_v0 (PettingZoo AEC)", "steps/s", noughts_aec, rows)
    measure("PettingZoo tictactoe_v3 (AEC)", "steps/s", pettingzoo_tictactoe, rows)
    measure("noughts/Mnk-v0 (Gymnasium) vs random", "steps/s", lambda: rate(gymnasium_steps("random"), seconds), rows)
    measure("noughts/Mnk-v0 (Gymnasium) vs perfect", "steps/s", lambda: rate(gymnasium_steps("perfect"), seconds),
            rows)
    measure(f"noughts VectorMnkEnv, {options.boards} boards", "board-steps/s",
            lambda: rate(vector_steps(options.boards), seconds), rows)
    for game in ("python_noughts_mnk", "python_tic_tac_toe", "tic_tac_toe"):
        measure(f"OpenSpiel random_sim_test, 100 games: {game}", "s CPU", lambda game=game: sim_test_seconds(game),
                rows)

    width = max(len(row["name"]) for row in rows)
    print(f"{'3×3, random legal moves':<{width}}  {'figure':>14}  unit")
    for row in rows:
        figure = "n/a" if row["value"] is None else (
            f"{row['value']:,.0f}" if row["unit"] != "s CPU" else f"{row['value']:.3f}")
        print(f"{row['name']:<{width}}  {figure:>14}  {row['unit']}" + (f"  ({row['note']})" if row["note"] else ""))
    vector = next(row for row in rows if row["name"].startswith("noughts VectorMnkEnv"))
    if vector["value"] is not None:
        verdict = "PASS" if vector["value"] >= VECTOR_TARGET else "MISS"
        print(f"vectorised env target ≥ {VECTOR_TARGET:,.0f} board-steps/s: {verdict}")
    if options.json:
        path = options.json.with_name(f"{options.json.stem}-envs{options.json.suffix or '.json'}")
        path.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
