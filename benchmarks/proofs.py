"""The boards noughts proves: ``python benchmarks/proofs.py [--quick] [--markdown FILE] [--json FILE]``.

``--boards 4x7k4,4x8k4`` measures only those boards (in that order).

Each board is solved from the empty position in a fresh process (so the times are cold and the
memory is that process's high-water mark, ``ru_maxrss``), by ``noughts.solver.outcome`` with a
budget of ``--cap`` CPU seconds (600, the issue's ten minutes, by default): the value first, then
the length of a win in what is left, "not found" with its bounds when it does not fit. Each is
set beside the value published for it where one is known. The median of ``--runs`` runs is quoted
(1 by default: the long ones take minutes). ``--markdown`` writes the table for docs/proofs.md.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"

# (rows, cols, k): the published value for the first player and where it is published (only
# values whose source we could check; 7×7 with five is reported a draw, but we found no source to cite)
PUBLISHED: dict[tuple[int, int, int], tuple[str, str]] = {
    (3, 3, 3): ("draw", "folklore; every tic-tac-toe analysis"),
    (4, 4, 4): ("draw", "Uiterwijk & van den Herik 2000"),
    (5, 5, 4): ("draw", "C. Y. Lee, in Berlekamp, Conway & Guy, *Winning Ways*"),
    **{(4, cols, 4): ("draw", "reported in Charatsidis 2017") for cols in (5, 6, 7, 8)},
    (4, 9, 4): ("first player wins", "Charatsidis 2017"),
    (5, 5, 5): ("draw", "Hales & Jewett pairing (*Winning Ways*: k×k with k ≥ 5)"),
    (6, 6, 6): ("draw", "Hales & Jewett pairing (*Winning Ways*: k×k with k ≥ 5)"),
    (7, 7, 7): ("draw", "Hales & Jewett pairing (*Winning Ways*: k×k with k ≥ 5)"),
}
BOARDS_QUICK = [(3, 3, 3), (3, 4, 3), (4, 4, 3), (4, 4, 4), (4, 5, 4), (5, 5, 4), (5, 6, 4), (5, 5, 5),
                (6, 6, 5), (6, 6, 6), (7, 7, 7)]
BOARDS_FULL = [*BOARDS_QUICK[:6], (4, 6, 4), (4, 7, 4), *BOARDS_QUICK[6:], (4, 8, 4), (4, 9, 4), (7, 7, 5)]

# solver.outcome within the cap, in CPU seconds: the value, and the length if found in what is left
CHILD = """
import json, resource, sys, time
sys.path.insert(0, {src!r})
from noughts.board import Board
from noughts.budget import Budget
from noughts import solver
start = time.process_time()
budget = Budget(seconds={cap}, clock=time.process_time)
found = solver.outcome(Board({rows}, {cols}, {k}), budget=budget)
seconds = time.process_time() - start
nodes = solver._solver(Board({rows}, {cols}, {k}).geometry)._prover
print(json.dumps({{"value": found.value, "plies": found.plies, "fewest_plies": found.fewest_plies,
                  "most_plies": found.most_plies, "seconds": seconds, "positions": budget.spent,
                  "nodes": nodes.nodes if nodes is not None else 0,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""


def measure(shape: tuple[int, int, int], cap: float) -> dict[str, float] | str:
    """One solve in a fresh process, at most ``cap`` CPU seconds (the machine may be shared, so
    the limit is on CPU time; the wall clock gets six times as long)."""
    rows, cols, k = shape
    code = CHILD.format(src=str(SRC), rows=rows, cols=cols, k=k, cap=cap)

    def limit() -> None:  # a backstop: the budget stops the search at ``cap``
        resource.setrlimit(resource.RLIMIT_CPU, (int(cap) + 30, int(cap) + 35))

    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=6 * cap, preexec_fn=limit)
    except subprocess.TimeoutExpired:
        return f"not within {6 * cap:g} s"
    if done.returncode < 0:
        return f"not within {cap:g} CPU s"
    if done.returncode:
        return "failed: " + (done.stderr.strip().splitlines() or ["?"])[-1]
    result: dict[str, float] = json.loads(done.stdout)
    return result


def _shapes(text: str) -> list[tuple[int, int, int]]:
    """``4x7k4,4x8k4`` -> [(4, 7, 4), (4, 8, 4)]."""
    shapes = []
    for part in text.split(","):
        try:
            size, k = part.strip().lower().split("k")
            rows, cols = size.split("x")
            shape = (int(rows), int(cols), int(k))
        except ValueError:
            raise argparse.ArgumentTypeError(f"boards like 4x7k4,4x8k4, not {part!r:.20}") from None
        shapes.append(shape)
    return shapes


def value_words(value: int) -> str:
    return {1: "first player wins", 0: "draw", -1: "second player wins"}[value]


def plies_text(run: dict[str, float]) -> str:
    """The win's length, or its bounds when the budget ran out before it was found."""
    if run["plies"] is not None:
        return str(int(run["plies"]))
    return f"not found in the cap ({int(run['fewest_plies'])}–{int(run['most_plies'])})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the boards that take seconds")
    parser.add_argument("--runs", type=int, default=1, help="runs per board; the median is quoted")
    parser.add_argument("--cap", type=float, default=600.0,
                        help="CPU seconds a board may take (its budget: the value, then the length in what is left)")
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    parser.add_argument("--json", type=Path, help="also write the figures to this file, as JSON")
    parser.add_argument("--boards", type=_shapes, metavar="RxCkK,...",
                        help="only these boards, e.g. 4x7k4,4x8k4 (any board, in this order)")
    args = parser.parse_args()
    figures: dict[str, object] = {}
    rows = ["| board | k | noughts proves | plies | CPU s | positions | peak MB | published | source |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for shape in args.boards or (BOARDS_QUICK if args.quick else BOARDS_FULL):
        print(f"solving {shape[0]}×{shape[1]} k={shape[2]} ...", file=sys.stderr, flush=True)
        runs = [measure(shape, args.cap) for _ in range(args.runs)]
        good = [run for run in runs if isinstance(run, dict)]
        figures[f"{shape[0]}×{shape[1]} k={shape[2]}"] = runs
        published, source = PUBLISHED.get(shape, ("—", ""))
        if not good:
            rows.append(f"| {shape[0]}×{shape[1]} | {shape[2]} | {runs[0]} | | | | | {published} | {source} |")
            continue
        seconds = statistics.median(run["seconds"] for run in good)
        memory = max(run["rss_mb"] for run in good)
        value = int(good[0]["value"])
        agrees = "" if published == "—" or published == value_words(value) else " **(differs!)**"
        rows.append(f"| {shape[0]}×{shape[1]} | {shape[2]} | {value_words(value)}{agrees} | "
                    f"{plies_text(good[0])} | {seconds:.2f} | {int(good[0]['positions']):,} | {memory:.0f} | "
                    f"{published} | {source} |")
    table = "\n".join(rows)
    print(table)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1), encoding="utf-8")
    if args.markdown:
        args.markdown.write_text(table + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
