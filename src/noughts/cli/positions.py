"""``noughts move``, ``analyse``, ``status``, ``players`` and ``engine``: questions about a position.

Each answer goes through the engine's own handler, so ``--json`` prints exactly the engine's reply.
"""

from __future__ import annotations

import sys

from noughts.board import Board
from noughts.cli.common import PROG, CommandFailure, board_options, budget_options
from noughts.errors import NoughtsError

TYPE_CHECKING = False  # typing and argparse cost milliseconds; `noughts engine` needs neither
if TYPE_CHECKING:
    import argparse
    from typing import Any


def add_commands(sub: Any) -> None:
    """The subcommands about positions, in the order --help lists them."""
    p = sub.add_parser("move", help="ask a computer player for its move",
                       description="Ask a computer player which move it makes in POSITION. "
                                   "Prints e.g. 'perfect plays b2 (cell 5)'.")
    board_options(p)
    p.add_argument("--player", default="perfect", metavar="NAME",
                   help="the player to ask (default: perfect; see 'noughts players')")
    p.add_argument("--seed", type=int, metavar="N",
                   help="seed for the player's random choices: the same seed gives the same move "
                        "(default: a fresh random seed)")
    budget_options(p, "default: the player's own limit, 30 s for perfect, 1 s for minimax")
    p.set_defaults(run=_cmd_move)

    p = sub.add_parser("analyse", aliases=["analyze"], help="solve a position exactly, move by move",
                       description="The value of POSITION for the side to move under perfect play, and "
                                   "the result of every legal move for the player who makes it "
                                   "(win in N plies / draw / loss in N plies), best first. Gives up "
                                   "with an error on boards too big to solve in the engine's budget.")
    board_options(p)
    budget_options(p, "default: 30 s or 2,000,000 positions")
    p.add_argument("--explain", action="store_true",
                   help="also show how a draw is held without search, if it is: a pairing of cells "
                        "(a diagram with each pair's letter)")
    p.add_argument("--value-only", action="store_true",
                   help="only the position's value, not every move's: the value is proved first, then its "
                        "length is searched for in what is left of the budget, and if not found the answer "
                        "says so (for big boards, e.g. --rows 4 --cols 9 --k 4 --seconds 600)")
    p.set_defaults(run=_cmd_analyse)

    p = sub.add_parser("status", help="whose turn, who has won, the legal moves",
                       description="Whose turn it is in POSITION, whether the game is over and how, "
                                   "and the legal moves.")
    board_options(p)
    p.set_defaults(run=_cmd_status)

    p = sub.add_parser("players", help="list the computer players",
                       description="The computer players, with a line about each.")
    p.add_argument("--json", action="store_true", help="print the engine's JSON reply instead of text")
    p.set_defaults(run=_cmd_players)

    p = sub.add_parser("engine", help="answer JSON requests on stdin, one per line",
                       description="Read one JSON request per line on stdin and write one JSON reply "
                                   "per line on stdout, in order, until end of input. Requests: "
                                   '{"cmd":"move"|"analyse"|"status"|"players", ...}; see '
                                   "docs/engine-protocol.md.")
    p.set_defaults(run=run_engine)


def _ask(args: argparse.Namespace, cmd: str, **extra: Any) -> dict[str, Any]:
    """Send a request through the engine's own handler, so the JSON is the engine's exactly."""
    from noughts import engine

    _read_size(args)
    request: dict[str, Any] = {"cmd": cmd, **extra}
    for field in ("position", "rows", "cols", "k"):
        if getattr(args, field, None) is not None:
            request[field] = getattr(args, field)
    show_progress = cmd == "analyse" and sys.stderr.isatty()
    thinking = Thinking(_label(extra.get("player"))) if cmd == "move" else None
    try:
        reply = engine.handle(request, progress=_show_progress if show_progress else None)
    except KeyboardInterrupt:
        if show_progress:
            print(f"\r\033[K{PROG}: solving stopped", file=sys.stderr, flush=True)
        raise
    finally:
        if thinking is not None:
            thinking.stop()
    if show_progress:
        print("\r\033[K", end="", file=sys.stderr, flush=True)  # clear the progress line
    if "error" in reply:
        raise CommandFailure(reply["error"])
    if getattr(args, "json", False):
        print(engine.encode(reply))
    return reply


THINKING_AFTER: float | None = None  # seconds of silence before `noughts move` says it is thinking (None:
# noughts.match.THINKING_AFTER, as every front end; read when a move is asked, so --help imports no match)


def _label(name: object) -> str:
    """The player's name as every menu shows it; an unknown name as typed (the engine says it is unknown)."""
    from noughts import players

    try:
        return players.label(str(name))
    except NoughtsError:
        return str(name)


class Thinking:
    """Says "Perfect is thinking…" on stderr if a move is not ready after THINKING_AFTER seconds.

    On a terminal the line is erased when the move comes; elsewhere it stays, a line of its own.
    """

    def __init__(self, name: str) -> None:
        import threading

        self.name = name
        self._lock = threading.Lock()
        self._done = False
        self._shown = False
        from noughts import match

        self._timer = threading.Timer(match.THINKING_AFTER if THINKING_AFTER is None else THINKING_AFTER, self._show)
        self._timer.name = "noughts-thinking"
        self._timer.daemon = True
        self._timer.start()

    def _show(self) -> None:
        from noughts.text import thinking

        with self._lock:
            if self._done:
                return
            self._shown = True
            if sys.stderr.isatty():
                print(f"{thinking(self.name)} (Ctrl-C to stop)", end="", file=sys.stderr, flush=True)
            else:
                print(f"{PROG}: {thinking(self.name)}", file=sys.stderr, flush=True)

    def stop(self) -> None:
        with self._lock:
            self._done = True
            self._timer.cancel()
            if self._shown and sys.stderr.isatty():
                print("\r\033[K", end="", file=sys.stderr, flush=True)
        self._timer.join()


def _show_progress(nodes: int, seconds: float) -> None:
    """One line on the terminal, rewritten as a long solve goes on (Ctrl-C stops it)."""
    print(f"\rsolving: {nodes:,} positions searched in {seconds:.0f} s (Ctrl-C to stop)",
          end="", file=sys.stderr, flush=True)


def _read_size(args: argparse.Namespace) -> None:
    """Turn --size (7x7k5) into --rows, --cols and --k, refusing any of them that says otherwise."""
    size = getattr(args, "size", None)
    if size is None:
        return
    from noughts.board import Geometry

    try:
        shape = Geometry.parse(size)
    except NoughtsError as error:
        raise NoughtsError(f"--size takes a board like 4 (4×4), 4x5 (4 rows, 5 columns) or 7x7k5 "
                           f"(and 5 in a row): {error}") from None
    for flag, given, said in (("--rows", args.rows, shape.rows), ("--cols", args.cols, shape.cols),
                              ("--k", args.k, shape.k if "k" in size.lower() else None)):
        if given is not None and said is not None and given != said:
            raise NoughtsError(f"--size {size.strip()} says {said} {'in a row' if flag == '--k' else flag[2:]}, "
                               f"but {flag} says {given}: give one or make them agree")
    if "k" in size.lower():
        args.k = shape.k
    if args.position is None:
        args.rows, args.cols = shape.rows, shape.cols
    else:  # the position has its own shape: --size may only agree with it
        board = Board.parse(args.position, args.k)
        if (board.rows, board.cols) != (shape.rows, shape.cols):
            raise NoughtsError(f"--size {size.strip()} is {shape.rows}×{shape.cols}, but the position is "
                               f"{board.rows}×{board.cols}: leave --size out or make them agree")
    args.size = None


def _board(args: argparse.Namespace) -> Board:
    if args.position is not None:
        return Board.parse(args.position, args.k)
    return Board(3 if args.rows is None else args.rows, 3 if args.cols is None else args.cols, args.k)


def _cmd_move(args: argparse.Namespace) -> int:
    reply = _ask(args, "move", player=args.player, seed=args.seed, seconds=args.seconds, nodes=args.nodes)
    if not args.json:
        name = args.player.strip().lower()  # as the registry reads it
        print(f"{name} plays {reply['cell']} (cell {reply['index'] + 1})")
    return 0


def _cmd_analyse(args: argparse.Namespace) -> int:
    extra = {"value_only": True} if args.value_only else {}
    reply = _ask(args, "analyse", seconds=args.seconds, nodes=args.nodes, **extra)
    if not args.json:
        print(_analysis_text(_board(args), reply))
    if args.explain:
        print(_pairing_text(_board(args)))
    return 0


def _pairing_text(board: Board) -> str:
    """The pairings that hold each side's draw here, as diagrams, or a line saying there are none."""
    from noughts import solver

    if board.is_over:
        return "the game is over: nothing to explain"
    parts = []
    for defender, attacker in (("O", "X"), ("X", "O")):
        pairs = solver.pairing(board, defender)
        if pairs is None:
            parts.extend(_set_matching_text(board, defender, attacker))
            continue
        if not pairs:
            parts.append(f"{attacker} has no line left to complete.")
            continue
        parts.append(f"{defender} stops {attacker} by pairing ({len(pairs)} pairs): whenever {attacker} "
                     f"takes a lettered cell, {defender} takes the other cell with the same letter, "
                     f"and every line {attacker} could complete holds both cells of a pair.")
        parts.append(solver.pairing_diagram(board, pairs))
    if not parts:
        return ("no pairing covers every line here: the value was proved by search "
                "(pairings deeper in the game cut it short)")
    return "\n".join(parts)


def _set_matching_text(board: Board, defender: str, attacker: str) -> list[str]:
    """Where no pairing holds: the set matching (Uiterwijk) that does, if one is found."""
    from noughts.solver.matching import find_set_matching, set_matching_text

    mine, theirs = (board.x, board.o) if defender == "X" else (board.o, board.x)
    matching = find_set_matching(board.geometry, theirs, mine, defender_to_move=board.turn == defender)
    if matching is None:
        return []
    how = "set matching (Uiterwijk)" if any(block.answers for block in matching.blocks) else "pairing"
    return [f"{defender} stops {attacker} by {how}, with no search:", set_matching_text(board, defender, matching)]


def _cmd_status(args: argparse.Namespace) -> int:
    reply = _ask(args, "status")
    if not args.json:
        from noughts.text import board_diagram

        board = _board(args)
        print(board_diagram(board))
        print(_status_text(board, reply))
    return 0


def _cmd_players(args: argparse.Namespace) -> int:
    reply = _ask(args, "players")
    if not args.json:
        names = reply["players"]
        width = max((len(n) for n in names), default=0)
        for name in names:
            print(f"{name:<{width}}  {reply['descriptions'][name]}")
    return 0


def run_engine(args: argparse.Namespace | None) -> int:
    from noughts import engine

    return engine.run(sys.stdin.buffer, sys.stdout)



# text output --------------------------------------------------------------------------------

def _plies(n: int) -> str:
    return f"{n} ply" if n == 1 else f"{n} plies"


def _outcome(value: int, plies: int, *, short: bool) -> str:
    """'win in 3', 'draw', 'loss in 4' (short) or with 'plies' and the draw's length (long)."""
    if value == 0:
        return "draw" if short else f"draw in {_plies(plies)}"
    word = "win" if value > 0 else "loss"
    return f"{word} in {plies}" if short else f"{word} in {_plies(plies)}"


def _analysis_text(board: Board, reply: dict[str, Any]) -> str:
    if board.is_over:
        return _over_text(board)
    side = board.turn
    if "moves" not in reply:  # --value-only
        return f"{side} to move: {_value_text(reply)}"
    lines = [f"{side} to move: {_outcome(reply['value'], reply['plies'], short=False)}"]

    def preference(move: dict[str, Any]) -> tuple[int, int, int]:
        # quick wins first, then draws, then the slowest losses
        v, p = move["value"], move["plies"]
        return (-v, p if v > 0 else -p if v < 0 else 0, move["index"])

    lines.append(f"  cell  no.  result for {side}")
    for move in sorted(reply["moves"], key=preference):
        best = (move["value"], move["plies"]) == (reply["value"], reply["plies"])
        result = _outcome(move["value"], move["plies"], short=True)
        lines.append(f"  {move['cell']:<4}  {move['index'] + 1:>3}  {result}{'  (best)' if best else ''}")
    return "\n".join(lines)


def _value_text(reply: dict[str, Any]) -> str:
    """The value of a --value-only reply, saying so when the length was not found."""
    value, plies = reply["value"], reply["plies"]
    if plies is not None:
        return _outcome(value, plies, short=False)
    word = "win" if value > 0 else "loss"
    fewest, most = reply["fewest_plies"], reply["most_plies"]
    return (f"{word} (proved); the length of the {word} was not found within the budget: "
            f"between {fewest} and {most} plies")


def _status_text(board: Board, reply: dict[str, Any]) -> str:
    if reply["over"]:
        return _over_text(board)
    import textwrap

    legal = " ".join(board.cell_name(c) for c in reply["legal"])
    return textwrap.fill(f"{reply['turn']} to move; legal moves: {legal}", 80, subsequent_indent="  ")


def _over_text(board: Board) -> str:
    if board.winner:
        cells = " ".join(board.cell_name(c) for c in board.winning_line or ())
        return f"game over: {board.winner} has won ({cells})"
    return "game over: a draw (the board is full)"
