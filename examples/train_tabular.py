"""Train a tabular agent for 3×3 noughts and crosses by self-play until it never loses.

    python examples/train_tabular.py [--seed 0] [--boards 512] [--max-steps 20000] [--no-symmetries]

The agent is a table of action values, one row per position seen by the side to move (its own
marks and the opponent's, read from the observation planes). Both sides are the same table:
thousands of games run at once in :class:`noughts.envs.vector.VectorMnkEnv`, every move chosen
ε-greedily, every move's value moved towards what the position after it is worth to the
mover (+1 for a win, 0 for a draw, otherwise minus the best value the opponent has there:
negamax Q-learning). With symmetries on, each update is made in all 8 symmetric images of the
position at once (:class:`noughts.envs.symmetry.Symmetries`).

Every so often the greedy policy is audited: as X and as O, against every sequence of replies
an opponent can make (which covers random play and the perfect player), from every position
it can face; training stops when no line beats it. Then it plays the perfect player a few
games as a second, direct check. It takes a few seconds on a laptop.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))  # run from a checkout without installing

from noughts import players
from noughts.board import Board
from noughts.envs.symmetry import Symmetries
from noughts.envs.vector import VectorMnkEnv

CELLS = 9
POWERS = 1 << np.arange(CELLS, dtype=np.int64)


def keys(observations: np.ndarray) -> np.ndarray:
    """Table rows of observations ``[..., 3, 3, planes]``: own marks' bits + 512 × the opponent's."""
    flat = observations.reshape(*observations.shape[:-3], CELLS, observations.shape[-1]).astype(np.int64)
    return (flat[..., 0] * POWERS).sum(-1) + ((flat[..., 1] * POWERS).sum(-1) << CELLS)


@dataclass
class TabularAgent:
    """Action values for 3×3, indexed by :func:`keys` and the action (cells in reading order)."""

    values: np.ndarray = field(default_factory=lambda: np.zeros((1 << 2 * CELLS, CELLS), dtype=np.float32))

    def greedy(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The best-valued legal action for each observation (the lowest cell among equals)."""
        rows = self.values[keys(observations)]
        return np.where(masks == 1, rows, -np.inf).argmax(axis=-1)

    def choose(self, board: Board) -> int:
        """The greedy move on a :class:`~noughts.board.Board`, so the agent can play like any player."""
        own, other = (board.x, board.o) if board.ply % 2 == 0 else (board.o, board.x)
        row = self.values[own | other << CELLS]  # the row keys() gives this position's planes
        moves = list(board.legal_moves)
        return moves[int(row[moves].argmax())]


@dataclass
class Audit:
    """What an exhaustive audit found: the positions the agent faced and the lines that beat it."""

    positions: int = 0
    losing_lines: list[tuple[str, tuple[int, ...]]] = field(default_factory=list)

    @property
    def never_loses(self) -> bool:
        return not self.losing_lines


def audit(agent: TabularAgent) -> Audit:
    """Play the agent's greedy policy as X and as O against every reply an opponent can make."""
    found = Audit()
    seen: set[tuple[str, Board]] = set()

    def explore(board: Board, side: str, line: tuple[int, ...]) -> None:
        if (side, board) in seen:
            return
        seen.add((side, board))
        found.positions += 1
        if board.winner is not None:
            if board.winner != side:
                found.losing_lines.append((side, line))
            return
        if board.is_over:
            return
        if board.turn == side:
            move = agent.choose(board)
            explore(board.play(move), side, (*line, move))
        else:
            for move in board.legal_moves:
                explore(board.play(move), side, (*line, move))

    for side in ("X", "O"):
        explore(Board(), side, ())
    return found


def against_perfect(agent: TabularAgent, games: int, seed: int) -> dict[str, int]:
    """Results of ``games`` games against the perfect player, half as X, half as O (from the agent's side)."""
    perfect = players.get("perfect", random.Random(seed))
    tally = {"won": 0, "drawn": 0, "lost": 0}
    for game in range(games):
        side = "X" if game % 2 == 0 else "O"
        board = Board()
        while not board.is_over:
            board = board.play(agent.choose(board) if board.turn == side else perfect.choose(board))
        tally["drawn" if board.winner is None else "won" if board.winner == side else "lost"] += 1
    return tally


@dataclass
class Training:
    """The result of :func:`train`."""

    agent: TabularAgent
    steps: int
    games: int
    audit: Audit
    seconds: float


def train(seed: int = 0, boards: int = 512, max_steps: int = 20_000, audit_every: int = 25,
          learning_rate: float = 0.5, exploration: float = 0.3, use_symmetries: bool = True,
          progress: bool = False) -> Training:
    """Self-play until the audit finds no losing line, or ``max_steps`` vector steps."""
    started = time.perf_counter()
    rng = np.random.default_rng(seed)
    agent = TabularAgent()
    envs = VectorMnkEnv(boards, 3, 3, 3)
    group = Symmetries(3, 3) if use_symmetries else None
    observations, masks = envs.reset()
    games = 0
    found = Audit(losing_lines=[("X", ())])
    step = 0
    while step < max_steps:
        step += 1
        explore = rng.random(boards) < exploration
        actions = np.where(explore, envs.random_actions(rng), agent.greedy(observations, masks))
        result = envs.step(actions)
        # What the move is worth to the mover: the reward when the game ended, otherwise minus
        # the opponent's best value in the position it now faces.
        follow = agent.values[keys(result.observations)]
        best_reply = np.where(result.masks == 1, follow, -np.inf).max(axis=-1)
        targets = np.where(result.terminated, result.rewards, -best_reply).astype(np.float32)
        if group is None:
            rows, cells, goals = keys(observations), actions, targets
        else:
            rows = keys(group.observations(observations)).ravel()
            cells = group.actions(actions).ravel()
            goals = np.tile(targets, len(group))
        agent.values[rows, cells] += learning_rate * (goals - agent.values[rows, cells])
        games += int(result.terminated.sum())
        observations, masks = result.observations, result.masks
        if step % audit_every == 0:
            found = audit(agent)
            if progress:
                print(f"step {step}: {games} games, {len(found.losing_lines)} losing lines in "
                      f"{found.positions} positions", file=sys.stderr)
            if found.never_loses:
                break
    return Training(agent, step, games, found, time.perf_counter() - started)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--boards", type=int, default=512, help="games played at once")
    parser.add_argument("--max-steps", type=int, default=20_000, help="vector steps before giving up")
    parser.add_argument("--no-symmetries", action="store_true", help="update only the position played")
    options = parser.parse_args(argv)
    result = train(options.seed, options.boards, options.max_steps, use_symmetries=not options.no_symmetries,
                   progress=True)
    print(f"{result.games} self-play games ({result.steps} steps of {options.boards} boards) "
          f"in {result.seconds:.1f} s")
    if not result.audit.never_loses:
        side, line = result.audit.losing_lines[0]
        print(f"it still loses: as {side}, after {' '.join(Board().cell_name(c) for c in line)}")
        return 1
    print(f"audit: never loses as X or O, in all {result.audit.positions} positions it can face")
    tally = against_perfect(result.agent, 20, options.seed)
    print(f"against perfect: {tally['won']} won, {tally['drawn']} drawn, {tally['lost']} lost")
    return 0 if tally["lost"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
