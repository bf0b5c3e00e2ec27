"""The drawing robot's figures: ``python benchmarks/robot.py [--quick]``.

1. Pen-up travel of the ordered plan against drawing the strokes in their natural order (as they
   are generated: markers, then the grid lines, then each mark), for the sheet and for whole games,
   and the time each robot move takes on the default plotter model, beside the seed's EV3 robot
   (about 20 s a move, most of it its minimax on the brick).
2. The camera reading synthetic photos (benchmarks/robot_camera.py), when the robot extra is installed, and
   photos with marks that are neither X nor O (its confusion table).
3. The light sensor: the sweep's X/O/empty accuracy against the seed's single reading.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src"), str(HERE)]

from noughts.board import Board  # noqa: E402
from noughts.sheet.geometry import Machine  # noqa: E402
from noughts.sheet.strokes import grid_strokes, mark_strokes, marker_strokes, plan_strokes  # noqa: E402

SEED_SECONDS_PER_MOVE = 20.0  # seed 003: "about 20 s" a move on the brick


def pen_travel(games: int) -> list[str]:
    lines = ["1 pen-up travel: ordered plan vs natural order (default plotter model)"]
    rng = random.Random(1)
    for rows, cols, travel in ((3, 3, (200.0, 200.0)), (7, 7, (297.0, 297.0)), (15, 15, (420.0, 420.0))):
        machine = Machine.plotter(travel=travel)
        sheet = machine.fit(rows, cols)
        strokes = marker_strokes(sheet) + grid_strokes(sheet)
        natural = plan_strokes(strokes, machine, ordered=False)
        started = time.perf_counter()
        ordered = plan_strokes(strokes, machine)
        planning = time.perf_counter() - started
        lines.append(f"  {rows}×{cols} sheet ({sheet.cell_mm:g} mm cells): {natural.pen_up_mm:7.0f} mm natural → "
                     f"{ordered.pen_up_mm:6.0f} mm ordered ({ordered.pen_up_mm / natural.pen_up_mm:.0%}), "
                     f"about {ordered.seconds:.0f} s to draw; planned in {planning * 1000:.1f} ms")
    machine = Machine.plotter()
    sheet = machine.fit(3, 3)
    parked = (sheet.width, 0.0)
    move_seconds, natural_up, ordered_up = [], 0.0, 0.0
    for _ in range(games):
        board = Board()
        while not board.is_over:
            cell = rng.choice(board.legal_moves)
            strokes = mark_strokes(sheet, cell, board.turn or "X")
            plan = plan_strokes(strokes, machine, parked, finish=parked)
            natural_up += plan_strokes(strokes, machine, parked, ordered=False, finish=parked).pen_up_mm
            ordered_up += plan.pen_up_mm
            move_seconds.append(plan.seconds)
            board = board.play(cell)
    moves = len(move_seconds)
    lines.append(f"  3×3 moves over {games} random games: pen-up {natural_up / moves:.0f} mm natural → "
                 f"{ordered_up / moves:.0f} mm ordered a move; a move takes {statistics.median(move_seconds):.1f} s "
                 f"(median) to draw, against about {SEED_SECONDS_PER_MOVE:g} s a move for the seed's EV3 robot")
    return lines


def camera_games(games: int) -> list[str]:
    """Whole games on the sim read by the camera: a move the human did not make must never be played."""
    from noughts.match import Match
    from noughts.robot.backends.sim import SimRobot
    from noughts.robot.game import RobotGame
    from noughts.robot.rig import PaperCamera
    from noughts.robot.sim.human import draw_human_mark
    from noughts.sheet.paper import Paper

    machine = Machine.plotter()
    sheet = machine.fit(3, 3)
    paper = Paper(sheet)
    rng = random.Random(5)
    counts = {"moves": 0, "wrong": 0, "asked again": 0}

    class Human:
        drawn: int | None = None

        def show(self, text: str) -> None:
            if text.startswith("You played") and match.game is not None:
                counts["moves"] += 1
                counts["wrong"] += match.game.moves[-1] != self.drawn

        def wait_for_human(self, prompt: str, *, move: bool = False) -> bool:
            if prompt.startswith("Put a fresh sheet"):
                paper.clear()
                return True
            if self.drawn is not None and match.board[self.drawn] is None:
                counts["asked again"] += 1  # the mark is there already: only look again
                return True
            board = match.board
            self.drawn = rng.choice(board.legal_moves)
            draw_human_mark(paper, self.drawn, board.turn or "X", rng)
            return True

    started = time.perf_counter()
    for number in range(games):
        match = Match(rng.choice(["easy", "medium", "hard"]), seed=number)
        RobotGame(match, SimRobot(machine, paper), PaperCamera(paper, rng), Human(), sheet).play_game()
    seconds = time.perf_counter() - started
    return [f"  {games} whole games read by the camera: {counts['moves']} human moves, {counts['wrong']} wrong moves "
            f"played (target 0), {counts['asked again']} times the robot asked and looked again; {seconds:.0f} s"]


def light_sweep(boards: int) -> list[str]:
    from noughts.robot.sensing.light import measure_accuracy

    return ["3 light sensor: the sweep against the seed's single reading (simulated sensor)",
            "  " + measure_accuracy(boards=boards).describe().replace("\n", "\n  ")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer games, photos and boards")
    args = parser.parse_args(argv)
    print("\n".join(pen_travel(20 if args.quick else 200)), flush=True)
    print("2 camera on synthetic photos (benchmarks/robot_camera.py)", flush=True)
    try:
        import robot_camera
    except ImportError as error:
        print(f"  n/a: {error} (the robot extra: pip install 'noughts[robot]')")
    else:
        robot_camera.main(["--photos", "100" if args.quick else "1000", "--stray-photos", "50" if args.quick else "300",
                           "--quiet"])
        print("\n".join(camera_games(10 if args.quick else 100)), flush=True)
    print("\n".join(light_sweep(20 if args.quick else 100)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
