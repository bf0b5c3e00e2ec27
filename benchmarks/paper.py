"""Paper mode on simulated games: ``python benchmarks/paper.py [--games N] [--quick] [--seed S] [--json FILE]``.

Plays N games (default 100; 10 with ``--quick``) with :mod:`noughts.robot.sim.paper_video`: mostly
3×3, some 4×4 and 5×5 (four in a row), against easy and medium, either side first; the simulated
person draws both sides' marks, filmed at 2 frames a second by a hand-held phone (a hand and a pen
over the sheet while drawing, the camera moving a little every frame, now and then motion blur, a
glare spot, the sheet pushed and turned, some games in a dark room). Each frame is sent as a JPEG
(quality 80, as the page sends them), decoded and read with :func:`noughts.sheet.camera.read_image`
and fed to :class:`noughts.paper_game.PaperGame` on the same seeded match as the simulation's.
Prints:

* wrong moves played: a square the person did not draw in, or the computer's mark taken as drawn
  with no pen in its square (target 0);
* games finished (every mark drawn taken, the result reached);
* frames from a mark fully drawn to the move taken (the person's: their move played and the
  computer's announced), median and 95th percentile, and the same in seconds at 2 frames a second;
* the server's CPU a frame (JPEG decode + read), median and 95th percentile (target ≤ 100 ms);
* frames that asked the person something (a hand over the sheet, a half-drawn mark).

The photos are synthetic, standing in for real phones; real videos are needed to confirm the figures.
Progress goes to stderr, the table to stdout.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parent.parent / "src"
sys.path.insert(0, str(SRC))

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from noughts.robot.sim.paper_video import PaperFrame, paper_game_frames, plan_game, watch_game  # noqa: E402
from noughts.sheet.camera import read_image  # noqa: E402
from noughts.sheet.geometry import Sheet  # noqa: E402
from noughts.sheet.reading import SheetReading  # noqa: E402

FPS = 2.0
TARGET_CPU_MS = 100.0
SHAPES = ((3, 3, None), (4, 4, None), (5, 5, 4))
SHAPE_WEIGHTS = (80, 12, 8)
SIZE = (800, 600)  # the page downscales a phone's frames to about this before sending them


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def run(games: int, seed: int, verbose: bool = True) -> dict[str, Any]:
    rng = random.Random(seed)
    cpu_ms: list[float] = []
    latencies: list[int] = []
    wrong = finished = frames = questions = diverged = 0
    unfinished: list[str] = []
    by_shape: dict[str, list[int]] = {}
    started = time.perf_counter()
    for number in range(games):
        rows, cols, k = rng.choices(SHAPES, SHAPE_WEIGHTS)[0]
        opponent, first = rng.choice((("easy", "me"), ("easy", "computer"), ("medium", "me"), ("medium", "computer")))
        if (rows, cols) != (3, 3):
            opponent = "easy"  # Medium's search stops on a clock above 3×3: its replies would not match the film
        plan = plan_game(rows=rows, cols=cols, k=k, opponent=opponent, first=first, seed=rng.getrandbits(32),
                         person_seed=rng.getrandbits(32))
        sheet = Sheet(rows, cols)

        def read(frame: PaperFrame, sheet: Sheet = sheet) -> SheetReading:
            ok, jpeg = cv2.imencode(".jpg", frame.image, [cv2.IMWRITE_JPEG_QUALITY, 80])
            assert ok
            began = time.process_time()
            image = cv2.imdecode(np.frombuffer(jpeg.tobytes(), np.uint8), cv2.IMREAD_COLOR)
            reading = read_image(image, sheet)
            cpu_ms.append((time.process_time() - began) * 1000)
            return reading

        watched = watch_game(plan, paper_game_frames(plan, seed=rng.getrandbits(32), fps=FPS, size=SIZE), read)
        wrong += watched.wrong
        finished += watched.finished
        frames += watched.frames
        questions += watched.questions
        diverged += watched.diverged
        latencies.extend(watched.latencies)
        shape = f"{rows}×{cols}" + (f"k{k}" if k else "")
        tally = by_shape.setdefault(shape, [0, 0])
        tally[0] += watched.finished
        tally[1] += 1
        if not watched.finished or watched.wrong or watched.diverged:
            unfinished.append(f"game {number} ({shape}, {opponent}, {first} first): played {watched.played} of "
                              f"{[d.cell for d in plan.marks]}, {watched.wrong} wrong")
        if verbose:
            print(f"[paper] game {number + 1}/{games} {shape}: {'finished' if watched.finished else 'NOT finished'}, "
                  f"{watched.frames} frames, {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    return {
        "games": games, "seed": seed, "wrong_moves": wrong, "finished": finished, "frames": frames,
        "question_frames": questions, "diverged": diverged,
        "latency_frames_median": statistics.median(latencies) if latencies else None,
        "latency_frames_p95": percentile([float(v) for v in latencies], 0.95),
        "latency_seconds_median": statistics.median(latencies) / FPS if latencies else None,
        "latency_seconds_p95": percentile([float(v) for v in latencies], 0.95) / FPS,
        "cpu_ms_median": statistics.median(cpu_ms), "cpu_ms_p95": percentile(cpu_ms, 0.95),
        "finished_by_shape": {shape: f"{done}/{count}" for shape, (done, count) in sorted(by_shape.items())},
        "problems": unfinished,
    }


def report(result: dict[str, Any]) -> str:
    cpu_ok = result["cpu_ms_p95"] <= TARGET_CPU_MS
    lines = [
        f"paper mode: {result['games']} simulated games (seed {result['seed']}), filmed at {FPS:g} frames a second, "
        f"{SIZE[0]}×{SIZE[1]}, {result['frames']} frames",
        f"  wrong moves played               {result['wrong_moves']:>8d}   target 0   "
        f"{'PASS' if result['wrong_moves'] == 0 else 'MISS'}",
        f"  games finished                   {result['finished']:>8d} of {result['games']}   "
        + ", ".join(f"{shape} {share}" for shape, share in result["finished_by_shape"].items()),
        f"  mark drawn → move taken, frames  {result['latency_frames_median']!s:>8}   p95 "
        f"{result['latency_frames_p95']:g}",
        f"  mark drawn → move taken, seconds {result['latency_seconds_median']!s:>8}   p95 "
        f"{result['latency_seconds_p95']:g}",
        f"  CPU a frame (decode + read), ms  {result['cpu_ms_median']:>8.1f}   p95 {result['cpu_ms_p95']:.1f}   "
        f"target ≤ {TARGET_CPU_MS:g}   {'PASS' if cpu_ok else 'MISS'}",
        f"  frames that asked a question     {result['question_frames']:>8d}",
        f"  games whose computer strayed from the film {result['diverged']:>2d}   (a search stopped by the clock; "
        "not counted above)",
    ]
    lines += [f"  {problem}" for problem in result["problems"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, help="games to play (default 100, 10 with --quick)")
    parser.add_argument("--quick", action="store_true", help="10 games")
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--json", metavar="FILE", help="write the figures here too")
    args = parser.parse_args(argv)
    games = args.games or (10 if args.quick else 100)
    result = run(games, args.seed)
    print(report(result), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
