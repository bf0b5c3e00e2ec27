"""``noughts gomocup``, ``arena`` and ``audit``: noughts as another program's brain, and the tools
that measure the computer players (:mod:`noughts.gomocup`, :mod:`noughts.arena`, :mod:`noughts.audit`).
"""

from __future__ import annotations

import sys

from noughts.cli.common import EXIT_INTERRUPTED, PROG, nodes

TYPE_CHECKING = False  # typing and argparse cost milliseconds
if TYPE_CHECKING:
    import argparse
    from typing import Any


def add_other_programs(sub: Any) -> None:
    p = sub.add_parser("gomocup", help="play in Gomocup (Piskvork) gomoku managers, on stdin/stdout",
                       description="Speak the Gomocup brain protocol on stdin and stdout (START, BEGIN, TURN, "
                                   "BOARD, INFO, END, ABOUT, ...), so noughts plays in Piskvork and other gomoku "
                                   "managers; coordinates are x,y from 0. Moves keep to the time limits the "
                                   "manager sends with INFO. See docs/gomocup.md.")
    p.add_argument("--player", default="minimax", metavar="NAME",
                   help="the player that moves (default: minimax; see 'noughts players')")
    p.add_argument("--k", type=int, metavar="K",
                   help="marks in a row to win (default: five, or the board's smaller side if shorter)")
    p.add_argument("--seed", type=int, metavar="N", help="seed for the player's random choices")
    p.add_argument("--nodes", type=nodes, metavar="N",
                   help="search at most N positions a move, besides the time limits (the same moves on any machine)")
    p.set_defaults(run=_cmd_gomocup)


def _cmd_gomocup(args: argparse.Namespace) -> int:
    from noughts import gomocup

    brain = gomocup.Brain(args.player, k=args.k, seed=args.seed, nodes=args.nodes)
    if sys.stdin.isatty():
        print(f"{PROG}: a Gomocup brain, waiting for a manager's commands (START 15, BEGIN, TURN 7,7, END); "
              "see docs/gomocup.md", file=sys.stderr)
    return gomocup.run(sys.stdin.buffer, sys.stdout, brain)


def add_arena_commands(sub: Any) -> None:
    def whole(text: str) -> int:
        import argparse

        if not (text.isascii() and text.isdigit() and 0 < len(text) <= 9 and int(text) > 0):
            raise argparse.ArgumentTypeError(f"a whole number from 1, like 100, not {text!r:.20}")
        return int(text)

    def fraction(text: str) -> float:
        import argparse

        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if not 0 < value < 1:
            raise argparse.ArgumentTypeError(f"a fraction between 0 and 1, like 0.95, not {text!r:.20}")
        return value

    def seed(text: str) -> int:
        import argparse

        try:
            return int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"a whole number, like 7, not {text!r:.20}") from None

    p = sub.add_parser("arena", help="a round robin between computer players, with ratings",
                       description="Every pair of PLAYERs plays GAMES games with each colour. Prints each pair's "
                                   "wins, draws and losses, each player's score and an Elo-style rating with its "
                                   "95%% interval; --chart draws the ratings as SVG or PNG. Games are seeded from "
                                   "--seed, the two names and the game's number: the same command gives the same table "
                                   "with any --jobs. Ctrl-C stops it and prints the games finished. "
                                   "See docs/arena.md.")
    p.add_argument("players", nargs="+", metavar="PLAYER", help="two or more players (see 'noughts players')")
    p.add_argument("--board", default="3x3k3", metavar="RxCkK",
                   help="the board, e.g. 4x4 or 7x7k5 (rows x columns, k in a row; default 3x3k3)")
    p.add_argument("--games", type=whole, default=20, metavar="N",
                   help="games per pairing and colour (default 20)")
    p.add_argument("--seed", type=seed, metavar="S", help="the tournament's seed (default: a random one, printed)")
    p.add_argument("--jobs", type=whole, metavar="J", help="processes to play in (default: one per core; 1: this one)")
    p.add_argument("--nodes", type=whole, metavar="N",
                   help="positions a searching player may look at per move (default 100000; no time limit, so "
                        "the results do not depend on the machine)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--chart", metavar="FILE", help="also draw the ratings as a chart: FILE.svg, or FILE.png "
                                                   "(pip install 'noughts[picture]')")
    p.set_defaults(run=_cmd_arena)

    p = sub.add_parser("audit", help="how a computer player can be beaten",
                       description="Over every position PLAYER can reach (exhaustive on 3×3: every move it may "
                                   "pick against every reply), as X and as O: whether it ever loses, the shortest "
                                   "loss, the opponent's fastest forced win if there is one, and the moves that "
                                   "throw away a win or a draw (by the solver), with the positions drawn. On "
                                   "boards over 9 cells (or with --samples) it plays sampled games against "
                                   "--opponent and states a loss rate bound with --confidence. See docs/audit.md.")
    p.add_argument("player", metavar="PLAYER", help="the player to audit (see 'noughts players')")
    p.add_argument("--board", default="3x3k3", metavar="RxCkK",
                   help="the board, e.g. 4x4 or 7x7k5 (rows x columns, k in a row; default 3x3k3)")
    p.add_argument("--as", dest="sides", default="both", metavar="X|O|both", help="the side(s) it plays (default both)")
    p.add_argument("--samples", type=whole, metavar="N",
                   help="sample N games per side instead of the exhaustive walk (the default above 9 cells: 200)")
    p.add_argument("--confidence", type=fraction, default=0.95, metavar="C",
                   help="confidence of the sampled loss-rate bound (default 0.95)")
    p.add_argument("--opponent", default="random", metavar="NAME",
                   help="who the sampled games are played against (default random)")
    p.add_argument("--seed", type=seed, default=0, metavar="S", help="seed of the sampled games (default 0)")
    p.add_argument("--jobs", type=whole, metavar="J", help="processes for the sampled games (default: one per core)")
    p.add_argument("--show", type=int, default=3, metavar="N", help="positions drawn for each finding (default 3)")
    p.add_argument("--json", action="store_true", help="print the audit as JSON")
    p.add_argument("--out", metavar="DIR", help="also write the positions as pictures into DIR")
    p.set_defaults(run=_cmd_audit)


def _cmd_arena(args: argparse.Namespace) -> int:
    import json
    import random

    from noughts import arena

    if args.chart is not None and not args.chart.lower().endswith((".svg", ".png")):
        raise arena.ArenaError(f"--chart writes SVG or PNG: give a file name ending in .svg or .png, "
                               f"not {args.chart[:40]!r}")
    board = arena.parse_board(args.board)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1_000_000)
    jobs = args.jobs if args.jobs is not None else arena.default_jobs()
    progress = arena.Progress("arena")
    try:
        result = arena.run_arena(args.players, board, games=args.games, seed=seed, jobs=jobs,
                                 nodes=args.nodes or arena.DEFAULT_NODES, progress=progress)
    finally:
        progress.close()
    if not result.complete:
        print(f"{PROG}: arena stopped: {result.played:,} of {result.scheduled:,} games played", file=sys.stderr)
    table = arena.standings(result)
    if args.chart is not None:
        chart = arena.chart_svg(result, table)
        if args.chart.lower().endswith(".png"):
            from noughts.picture import png

            data = png(chart)
        else:
            data = chart.encode("utf-8")
        try:
            with open(args.chart, "wb") as file:
                file.write(data)
        except OSError as error:
            raise arena.ArenaError(f"cannot write the chart to {args.chart[:60]!r}: {error.strerror}") from None
    print(json.dumps(arena.results_json(result, table)) if args.json else arena.results_text(result, table))
    return 0 if result.complete else EXIT_INTERRUPTED


def _cmd_audit(args: argparse.Namespace) -> int:
    import json

    from noughts import arena, audit

    progress = arena.Progress("audit")
    try:
        report = audit.audit(args.player, arena.parse_board(args.board), sides=args.sides, samples=args.samples,
                             confidence=args.confidence, opponent=args.opponent, seed=args.seed,
                             jobs=args.jobs if args.jobs is not None else arena.default_jobs(), progress=progress)
    finally:
        progress.close()
    if args.out is not None:
        try:
            written = audit.write_pictures(report, args.out, max(args.show, 1))
        except OSError as error:
            raise arena.ArenaError(f"cannot write pictures to {args.out[:60]!r}: {error.strerror}") from None
        print(f"{PROG}: {len(written)} pictures written to {args.out}", file=sys.stderr)
    print(json.dumps(audit.report_json(report)) if args.json else audit.report_text(report, max(args.show, 0)))
    return 0 if report.complete else EXIT_INTERRUPTED


